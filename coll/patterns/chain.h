// Pipelined broadcast down chains of ranks: the vector cut into chunks, the root sends chunk c in
// step c and each rank passes a chunk on in the step after it arrived, so all the links of a
// chain work at once. bcast torus_ring and dual_ring run two chains side by side.
//   chain 0 1 2 3, chunks x y z:  step 0: 0:x->1   step 1: 0:y->1 1:x->2
//                                 step 2: 0:z->1 1:y->2 2:x->3   step 3: 1:z->2 2:y->3 ...
#ifndef TORUSMPI_COLL_PATTERNS_CHAIN_H_
#define TORUSMPI_COLL_PATTERNS_CHAIN_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/coll.h"
#include "coll/patterns/blocks.h"
#include "coll/patterns/staged.h"

namespace torusmpi::coll::patterns {

// Chunks for `count` elements of `elem` bytes: about 32 KiB each, at most 64 and never empty
// (so a small vector is one message down the chain); every rank works it out alike.
inline int chain_chunks(size_t count, size_t elem) {
  const uint64_t bytes = count * elem;
  const uint64_t k = std::min<uint64_t>(64, std::max<uint64_t>(1, bytes / 32768));
  return static_cast<int>(std::min<uint64_t>(k, std::max<size_t>(count, 1)));
}

// Elements [first, first + count) of buf, down `chain` (chain[0] holds them).
inline void chain_bcast(StepList& s, const std::vector<int>& chain, int rank, BufRef buf,
                        size_t first, size_t count, size_t elem) {
  const int len = static_cast<int>(chain.size());
  const int pos = static_cast<int>(std::find(chain.begin(), chain.end(), rank) - chain.begin());
  if (count == 0 || pos == len || len < 2) return;
  const int k = chain_chunks(count, elem);
  auto at = [&](int c) { return buf + (first + block_start(count, k, c)) * elem; };
  auto bytes = [&](int c) { return block_count(count, k, c) * elem; };
  for (int t = 0; t < k + len - 2; ++t) {
    const int in = t - pos + 1, out = t - pos;
    if (pos > 0 && in >= 0 && in < k) s.recv(chain[pos - 1], at(in), bytes(in));
    if (pos + 1 < len && out >= 0 && out < k) s.send(chain[pos + 1], at(out), bytes(out));
    s.step();
  }
}

// `ring` from the root's place onwards (forward) or backwards, wrapping round.
inline std::vector<int> rotate_from(const std::vector<int>& ring, int root, bool forward) {
  const int p = static_cast<int>(ring.size());
  const int i = static_cast<int>(std::find(ring.begin(), ring.end(), root) - ring.begin());
  std::vector<int> c(p);
  for (int j = 0; j < p; ++j) c[j] = ring[((forward ? i + j : i - j) % p + p) % p];
  return c;
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_CHAIN_H_
