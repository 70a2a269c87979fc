// allreduce recursive_doubling: in round k every rank swaps its whole partial result with the rank
// 2^k away (in folded ranks) and combines the two. Ranks beyond a power of two fold in first and
// get the result last (patterns/pow2.h).
//
// Cost = (lg p2 + 2f) a + n (lg p2 + 2f) b + n (lg p2 + f) g, with p2 the largest power of two
// <= p and f = 1 when p is not one. Latency-optimal: the choice for small vectors.
// Restrictions: none (non-commutative ops combine in rank order).
//
//   p = 4:  round 0: 0<->1 2<->3      round 1: 0<->2 1<->3       each ends with the full result
//   p = 5:  fold: 0->1;  rounds on 1 2 3 4 (folded 0 1 2 3);  unfold: 1->0
#include "coll/algorithms.h"
#include "coll/patterns/pow2.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

// Across instances of q ranks each, p a power of two: ranks fill the instances in order, so the
// rounds with rank^2^k, 2^k < q, stay in the instance (the instance's figures) and the lg(N)
// others cross the network, every rank at once (the average pair's alpha would price every
// round as a network one).
double instances_cost(const Model& m, int p, double n) {
  const TorusModel& t = *m.torus;
  const double across = lg_floor(t.instances), within = lg_floor(p) - across;
  return within * (t.instance_alpha + n * t.instance_beta) +
         across * (t.efa_alpha + n * t.efa_beta) + lg_floor(p) * n * m.gamma;
}

double cost(const Model& m, int p, double n) {
  if (spans_instances(m) && folds(p) == 0) return instances_cost(m, p, n);
  const double steps = lg_floor(p) + 2 * folds(p);
  return steps * (m.alpha + n * m.beta) + (lg_floor(p) + folds(p)) * n * m.gamma;
}

}  // namespace

extern const Algorithm kAllreduceRecursiveDoubling = {
    Coll::kAllreduce,
    "recursive_doubling",
    allreduce_recursive_doubling,
    0,
    "Cost = (lg p2 + 2f) a + n (lg p2 + 2f) b + n (lg p2 + f) g",
    cost,
    "swap whole vectors with rank^2^k, lg(p) rounds"};

void allreduce_recursive_doubling(Builder& b, const Args& a) {
  const uint64_t n = a.count * a.elem;
  if (n == 0) return;
  const BufRef acc = a.recv;
  const BufRef mine = a.in_place ? a.recv : a.send;
  const BufRef tmp = b.scratch(n);
  const patterns::Fold fold(a.rank, a.size);
  // The contribution is first read from `mine`; once combined, from acc.
  bool in_acc = a.in_place;

  if (a.rank < 2 * fold.extra) {
    if (fold.sits_out()) {
      b.send(a.rank + 1, mine, n);
      b.step();
      b.recv(a.rank + 1, acc, n);
      return;
    }
    b.copy(acc, mine, n);
    b.recv(a.rank - 1, tmp, n);
    b.step();
    b.reduce(acc, tmp, n);  // the lower rank's data is the left operand
    b.step();
    in_acc = true;
  }

  for (int mask = 1; mask < fold.p2; mask <<= 1) {
    int partner = fold.unfold(fold.folded ^ mask);
    // Send from where the data is; the first round copies it to acc meanwhile.
    b.send(partner, in_acc ? acc : mine, n);
    b.recv(partner, tmp, n);
    if (!in_acc) b.copy(acc, mine, n);
    in_acc = true;
    b.step();
    if (a.commutative || partner < a.rank) {
      b.reduce(acc, tmp, n);
    } else {
      // acc holds the lower ranks: acc op tmp, computed in tmp.
      b.reduce(tmp, acc, n);
      b.step();
      b.copy(acc, tmp, n);
    }
    b.step();
  }
  if (!in_acc) b.copy(acc, mine, n);  // p = 1

  if (a.rank < 2 * fold.extra) b.send(a.rank - 1, acc, n);
}

}  // namespace torusmpi::coll
