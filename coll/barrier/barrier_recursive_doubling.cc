// barrier recursive_doubling: in round k every rank swaps a zero-byte message with rank^2^k.
// After round k a rank has heard, directly or not, from the 2^(k+1) ranks of its aligned block,
// so lg p rounds cover all. Other rank counts fold first (coll/patterns/pow2.h): each even rank
// of the first 2*extra signals its odd neighbour before the rounds and hears from it after them.
//
// Cost = (lg p2 + 2f) a, f = 1 when p is not a power of two.
// Restrictions: none.
//
// At a power of two it has dissemination's rounds and messages, and is chosen there (it is
// registered first): each round is a swap within a pair, so a rank that runs late holds up its
// partner only, where dissemination chains every rank to the one before it. With more ranks than
// cores, late is the rule (a waiting rank gives its core to another): 4 ranks on 2 cores looping
// over an MPI_Barrier and a 32 B MPI_Allreduce, 48 alternating runs, took a median 7.7 us a loop
// against 8.1 with dissemination, the allreduce after it 2.85 us against 3.41 in the best
// quarter of the runs.
//
//   p = 4:  k = 0: 0<->1, 2<->3    k = 1: 0<->2, 1<->3
//   p = 6:  0->1, 2->3 (fold) | ranks 1, 3, 4, 5 as 0-3 above | 1->0, 3->2
#include "coll/algorithms.h"
#include "coll/patterns/pow2.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double) {
  const int p2 = patterns::floor_pow2(p);
  return (lg(p2) + (p2 == p ? 0 : 2)) * m.alpha;
}

}  // namespace

extern const Algorithm kBarrierRecursiveDoubling = {Coll::kBarrier,
                                                    "recursive_doubling",
                                                    barrier_recursive_doubling,
                                                    0,
                                                    "Cost = (lg p2 + 2f) a",
                                                    cost,
                                                    "round k: swap a signal with rank^2^k"};

void barrier_recursive_doubling(Builder& b, const Args& a) {
  const patterns::Fold fold(a.rank, a.size);
  // A barrier has no buffers: the messages name an empty scratch area.
  const BufRef none = b.scratch(0);
  if (fold.sits_out()) {
    b.send(a.rank + 1, none, 0);
    b.step();
    b.recv(a.rank + 1, none, 0);
    b.step();
    return;
  }
  const bool folds_in = a.rank < 2 * fold.extra;  // an odd rank with an even one sitting out
  if (folds_in) {
    b.recv(a.rank - 1, none, 0);
    b.step();
  }
  for (int d = 1; d < fold.p2; d *= 2) {
    const int peer = fold.unfold(fold.folded ^ d);
    b.send(peer, none, 0);
    b.recv(peer, none, 0);
    b.step();
  }
  if (folds_in) {
    b.send(a.rank - 1, none, 0);
    b.step();
  }
}

}  // namespace torusmpi::coll
