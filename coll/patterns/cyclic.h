// Ranges of ranks (or of the blocks they own) taken around the ring, mod p: [start, start+len)
// is one run of consecutive ranks, or two when it passes rank p-1. A message is one contiguous
// piece of a buffer, so a range that wraps in a rank-ordered buffer travels as two messages;
// sender and receiver split the same range at the same place, so the pieces match in order.
//   p = 5: [3, 3+4) is the runs 3 4 | 0 1 (start 3, len 2; start 0, len 2)
#ifndef TORUSMPI_COLL_PATTERNS_CYCLIC_H_
#define TORUSMPI_COLL_PATTERNS_CYCLIC_H_

namespace torusmpi::coll::patterns {

struct Run {
  int start;  // first rank, 0 <= start < p
  int len;    // ranks in the run
  int pos;    // where the run begins within the range: 0 for the first, the first's len after
};

struct CyclicRuns {
  Run run[2];
  int count;  // 0 (empty range), 1 or 2
};

// The runs of [start, start+len) mod p, in the range's order (0 <= start < p, 0 <= len <= p).
inline CyclicRuns cyclic_runs(int start, int len, int p) {
  CyclicRuns r{};
  if (len <= 0) return r;
  int first = len < p - start ? len : p - start;
  r.run[r.count++] = {start, first, 0};
  if (first < len) r.run[r.count++] = {0, len - first, first};
  return r;
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_CYCLIC_H_
