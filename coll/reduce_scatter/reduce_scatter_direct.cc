// reduce_scatter direct (block q of counts[q] elements (uneven, zeros allowed)). In one step
// every rank sends block j of its vector to rank j, which folds what it gets in rank order
// (patterns/direct.h). One message step whatever p: for small vectors, at the price of p-1 messages
// in flight per port.
//
// Cost = (p-1) a + ((p-1)/p) n b + ((p-1)/p) n g, n the whole vector, the messages of the step
// overlapping: on the torus a + ((p-1)/p) n b_link + ((p-1)/p) n g. With more ranks than cores,
// (p-2)s less for small blocks: a rank waits once (one_wait_saving).
// Restrictions: none (the fold keeps rank order).
//
//   p = 4, blocks A B C D: rank q sends A to 0, B to 1, C to 2, D to 3 at once; rank 0 folds
//   A0+A1 and A2+A3, then the two: its block, in rank order
#include "coll/algorithms.h"
#include "coll/patterns/direct.h"
#include "coll/patterns/reduce_scatter.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  if (spans_instances(m)) return net_direct_cost(m, p, frac(p) * n) + frac(p) * n * m.gamma;
  return torus_shaped(m) ? direct_cost(m, frac(p) * n) + frac(p) * n * m.torus->gamma
                         : (p - 1) * m.alpha - one_wait_saving(m, p - 1, n / p) +
                               frac(p) * n * (m.beta + m.gamma);
}

}  // namespace

extern const Algorithm kReduceScatterDirect = {
    Coll::kReduceScatter,
    "direct",
    reduce_scatter_direct,
    0,
    "Cost = (p-1) a + ((p-1)/p) n b + ((p-1)/p) n g",
    cost,
    "direct: block j to rank j in one step, folded in rank order"};

void reduce_scatter_direct(Builder& b, const Args& a) {
  const patterns::VectorBlocks v = patterns::VectorBlocks::of_counts(a.counts, a.size, a.elem);
  auto at = [&](int q) { return v.at(q); };
  auto len = [&](int q) { return v.len(q); };
  const uint64_t total = v.total();
  if (total == 0) return;
  const BufRef mine = a.in_place ? a.recv : a.send;
  const BufRef done = patterns::direct_reduce(b, a.rank, a.size, mine, at, len);
  b.copy(a.recv, done, len(a.rank));
  b.step();
}

}  // namespace torusmpi::coll
