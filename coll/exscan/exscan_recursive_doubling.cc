// exscan recursive_doubling: the scan's rounds (distance d = 1, 2, 4, ...: rank r sends its
// partial over [r-d+1 .. r] to rank r+d), but each rank keeps two things: the partial it sends,
// which includes its own contribution, and its result, which does not; what arrives goes on the
// left of both (patterns/scan.h, shared with scan). Rank 0's receive buffer is left alone.
//
// Cost = lg(p) (a + n b + 2 n g). Latency-optimal; each round has one message out and one in.
// Restrictions: none (ranks combine in order).
//
//   p = 5, [i..j] = ranks i to j combined; result / partial
//     d = 1: 0->1 1->2 2->3 3->4     1:[0]/[0..1] 2:[1]/[1..2] 3:[2]/[2..3] 4:[3]/-
//     d = 2: 0->2 1->3 2->4          2:[0..1]/- 3:[0..2]/- 4:[1..3]/-
//     d = 4: 0->4                    4:[0..3]           (- : no longer sent, not kept)
#include "coll/algorithms.h"
#include "coll/patterns/scan.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return lg(p) * (m.alpha + n * m.beta + 2 * n * m.gamma);
}

}  // namespace

extern const Algorithm kExscanRecursiveDoubling = {Coll::kExscan,
                                                   "recursive_doubling",
                                                   exscan_recursive_doubling,
                                                   0,
                                                   "Cost = lg(p) (a + n b + 2 n g)",
                                                   cost,
                                                   "round k: pass the partial prefix to rank+2^k"};

void exscan_recursive_doubling(Builder& b, const Args& a) {
  patterns::recursive_doubling_scan(b, a, /*exclusive=*/true);
}

}  // namespace torusmpi::coll
