// allgather recursive_doubling: in round k every rank swaps all the blocks it has gathered with
// the rank 2^k away (in folded ranks), so the run of blocks each holds doubles. Blocks land
// straight in their places in recv: the ranks a folded group stands for are consecutive, so
// what is swapped is one contiguous piece of recv. When p is not a power of two, the extra ranks
// fold in first, handing their block to a neighbour, and get the whole result last
// (patterns/pow2.h).
//
// Cost = (lg p2 + 2f) a + (p-1) n b (+ f p n b), with n one rank's block, p2 the largest power
// of two <= p and f = 1 when p is not one (the result sent back to the folded-out ranks).
// Latency-optimal for powers of two: for small blocks.
// Restrictions: none.
//
//   p = 4:  round 0: 0<->1 2<->3 (1 block)    round 1: 0<->2 1<->3 (2 blocks)
//   p = 5:  fold: 0->1 (b0)          rounds on 1 2 3 4 (folded 0 1 2 3):
//           round 0: 1<->2 (b0 b1 | b2), 3<->4 (b3 | b4)   round 1: 1<->3 2<->4 (b0-b2 | b3 b4)
//           unfold: 1->0 (b0-b4)
#include "coll/algorithms.h"
#include "coll/patterns/pow2.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return (lg_floor(p) + 2 * folds(p)) * m.alpha + (p - 1 + folds(p) * p) * n * m.beta;
}

}  // namespace

extern const Algorithm kAllgatherRecursiveDoubling = {
    Coll::kAllgather,
    "recursive_doubling",
    allgather_recursive_doubling,
    0,
    "Cost = (lg p2 + 2f) a + (p-1) n b (+ f p n b)",
    cost,
    "swap all blocks gathered so far with rank^2^k"};

void allgather_recursive_doubling(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  if (n == 0) return;
  const int r = a.rank;
  const BufRef mine = a.in_place ? a.recv + r * n : a.send;
  const patterns::Fold fold(r, a.size);
  // The first real rank folded rank f stands for (f = p2 gives p).
  auto first = [&](int f) { return f < fold.extra ? 2 * f : f + fold.extra; };

  if (fold.sits_out()) {
    b.send(r + 1, mine, n);
    b.step();
    b.recv(r + 1, a.recv, a.size * n);
    return;
  }
  // Whether this rank's block is in recv yet; until then it is sent from `mine`.
  bool in_recv = a.in_place;
  if (r < 2 * fold.extra) {
    b.recv(r - 1, a.recv + (r - 1) * n, n);
    b.copy(a.recv + r * n, mine, n);
    b.step();
    in_recv = true;
  }

  for (int mask = 1; mask < fold.p2; mask <<= 1) {
    const int mine_lo = fold.folded & ~(mask - 1), peer_lo = mine_lo ^ mask;
    const int partner = fold.unfold(fold.folded ^ mask);
    const uint64_t at = first(mine_lo) * n, len = (first(mine_lo + mask) - first(mine_lo)) * n;
    const uint64_t peer_at = first(peer_lo) * n;
    const uint64_t peer_len = (first(peer_lo + mask) - first(peer_lo)) * n;
    // Only a lone own block can still be outside recv: it leaves from there and is copied over.
    b.send(partner, in_recv ? a.recv + at : mine, len);
    b.recv(partner, a.recv + peer_at, peer_len);
    if (!in_recv) b.copy(a.recv + r * n, mine, n);
    in_recv = true;
    b.step();
  }
  if (!in_recv) b.copy(a.recv + r * n, mine, n);  // p = 1

  if (r < 2 * fold.extra) b.send(r - 1, a.recv, a.size * n);
}

}  // namespace torusmpi::coll
