// Direct ("direct") exchanges, where every rank talks to every other in one step: the reduce
// half of allreduce, reduce_scatter and reduce_scatter_block direct. One step of messages, so the
// latency is one message's whatever the size; each rank's ports carry p-1 messages at once, so
// it suits small vectors (Neuron uses it under about 1 MB).
//
// Rank r receives every rank's contribution to its block in one step, into p slots (its own is
// copied into slot r), and folds them over adjacent pairs, the right one of each pair keeping
// the sum: lg(p) local steps, and the operands stay in rank order, so non-commutative ops work.
//   p = 5, slots 0..4:  step 1: 1 <- 0+1, 3 <- 2+3;  step 2: 3 <- (0..1)+(2..3);
//                       step 3: 4 <- (0..3)+4        the block is whole in slot 4
#ifndef TORUSMPI_COLL_PATTERNS_DIRECT_H_
#define TORUSMPI_COLL_PATTERNS_DIRECT_H_

#include <algorithm>
#include <cstdint>

#include "coll/coll.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll::patterns {

// Block q is len(q) bytes at mine + at(q). Returns where rank r's reduced block is (scratch), or
// the own block itself for one rank.
template <typename At, typename Len>
BufRef direct_reduce(Builder& b, int rank, int p, BufRef mine, At at, Len len) {
  const uint64_t n = len(rank);
  if (p == 1) return mine + at(rank);
  const BufRef slots = n > 0 ? b.scratch(n * p) : BufRef{};
  for (int j = 0; j < p; ++j) {
    if (j != rank && len(j) > 0) b.send(j, mine + at(j), len(j));
  }
  if (n > 0) {
    for (int i = 0; i < p; ++i) {
      if (i != rank) b.recv(i, slots + i * n, n);
    }
  }
  b.copy(slots + rank * n, mine + at(rank), n);
  b.step();
  for (int s = 1; s < p; s *= 2) {
    for (int i = 0; i + s < p; i += 2 * s) {
      const int left = i + s - 1, right = std::min(i + 2 * s, p) - 1;
      b.reduce(slots + right * n, slots + left * n, n);
    }
    b.step();
  }
  return slots + (p - 1) * n;
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_DIRECT_H_
