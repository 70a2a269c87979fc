// scan recursive_doubling: in the round of distance d = 1, 2, 4, ... rank r sends its partial
// over ranks [r-d+1 .. r] to rank r+d and puts the one from rank r-d, over [r-2d+1 .. r-d], on its
// left (patterns/scan.h, shared with exscan). After ceil(lg p) rounds rank r holds [0 .. r].
//
// Cost = lg(p) (a + n b + n g). Latency-optimal; each round has one message out and one in.
// Restrictions: none (ranks combine in order: non-commutative ops are the point of a scan).
//
//   p = 5, [i..j] = ranks i to j combined
//     d = 1: 0->1 1->2 2->3 3->4     holds 0:[0] 1:[0..1] 2:[1..2] 3:[2..3] 4:[3..4]
//     d = 2: 0->2 1->3 2->4          holds 2:[0..2] 3:[0..3] 4:[1..4]
//     d = 4: 0->4                    holds 4:[0..4]
#include "coll/algorithms.h"
#include "coll/patterns/scan.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return lg(p) * (m.alpha + n * m.beta + n * m.gamma);
}

}  // namespace

extern const Algorithm kScanRecursiveDoubling = {Coll::kScan,
                                                 "recursive_doubling",
                                                 scan_recursive_doubling,
                                                 0,
                                                 "Cost = lg(p) (a + n b + n g)",
                                                 cost,
                                                 "round k: pass the partial prefix to rank+2^k"};

void scan_recursive_doubling(Builder& b, const Args& a) {
  patterns::recursive_doubling_scan(b, a, /*exclusive=*/false);
}

}  // namespace torusmpi::coll
