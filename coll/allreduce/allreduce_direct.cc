// allreduce direct: in one step every rank sends block j of its vector to rank j; rank j
// folds what it gets in rank order (patterns/direct.h) and, in one more step, sends its reduced
// block to everyone. Two message steps whatever p: for small vectors (Neuron uses a mesh algorithm
// under about 1 MB), at the price of p-1 messages in flight per port.
//
// Cost = 2(p-1) a + 2((p-1)/p) n b + ((p-1)/p) n g with the p-1 messages of a step overlapping:
// on the torus 2 a + 2((p-1)/p) n b_link + ((p-1)/p) n g, each link carrying its share.
// Restrictions: none (the fold keeps rank order).
//
//   p = 4, blocks A B C D
//     step 1: rank q sends A to 0, B to 1, C to 2, D to 3 (its own stays)
//     fold:   rank 0 makes A0+A1+A2+A3, rank 1 B0+..+B3, ...
//     step 2: rank 0 sends its A to 1 2 3, rank 1 its B to 0 2 3, ...
#include "coll/algorithms.h"
#include "coll/patterns/blocks.h"
#include "coll/patterns/direct.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  if (spans_instances(m)) return 2 * net_direct_cost(m, p, frac(p) * n) + frac(p) * n * m.gamma;
  return torus_shaped(m) ? 2 * direct_cost(m, frac(p) * n) + frac(p) * n * m.torus->gamma
                         : kAllreduceRing.cost(m, p, n);
}

}  // namespace

extern const Algorithm kAllreduceDirect = {
    Coll::kAllreduce,
    "direct",
    allreduce_direct,
    0,
    "Cost = 2(p-1) a + 2((p-1)/p) n b + ((p-1)/p) n g with the p-1 messages of a step overlapping",
    cost,
    "direct: block j to rank j in one step, fold in rank order, reduced blocks to all"};

void allreduce_direct(Builder& b, const Args& a) {
  const int p = a.size, r = a.rank;
  if (a.count == 0) return;
  const BufRef mine = a.in_place ? a.recv : a.send;
  auto at = [&](int q) { return patterns::block_start(a.count, p, q) * a.elem; };
  auto len = [&](int q) { return patterns::block_count(a.count, p, q) * a.elem; };
  const BufRef done = patterns::direct_reduce(b, r, p, mine, at, len);
  for (int q = 0; q < p; ++q) {
    if (q != r && len(r) > 0) b.send(q, done, len(r));
    if (q != r && len(q) > 0) b.recv(q, a.recv + at(q), len(q));
  }
  b.copy(a.recv + at(r), done, len(r));
  b.step();
}

}  // namespace torusmpi::coll
