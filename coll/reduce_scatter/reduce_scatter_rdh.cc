// reduce_scatter rdh: recursive halving over the hypercube view of the torus (block q of counts[q]
// elements (uneven, zeros allowed)): each round swaps half of what a rank holds with its neighbour
// across one bit of the Gray-labelled coordinates (a ring of 4 is a 2-cube under labels 0 1 3 2),
// so every partner is one link away or on the chip. A power-of-two communicator that is not such a
// torus halves over its snake-order positions; any other size is reduce_scatter recursive_halving
// (extra ranks fold into the first and last rounds).
//
// Cost = lg(p) a + ((p-1)/p) n (b + g), n the whole vector; other sizes as recursive_halving.
// Restrictions: commutative ops (hypercube order).
//
//   2x2 torus, ranks at (x,y): 0 (0,0) 1 (1,0) 2 (0,1) 3 (1,1); blocks A-D
//     round 1 (x): 0<->1, 2<->3 swap halves      round 2 (y): 0<->2, 1<->3 swap quarters
#include "coll/algorithms.h"
#include "coll/patterns/reduce_scatter.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  if (torus_shaped(m) && !cube_stages(m, p).empty()) {
    return stages_cost(m, cube_stages(m, p), n, 1, true, kRdhBytes);
  }
  return kReduceScatterRecursiveHalving.cost(m, p, n);
}

}  // namespace

extern const Algorithm kReduceScatterRdh = {
    Coll::kReduceScatter,
    "rdh",
    reduce_scatter_rdh,
    kNeedsCommutative,
    "Cost = lg(p) a + ((p-1)/p) n (b + g)",
    cost,
    "recursive halving over the torus as a hypercube (Gray labels)"};

void reduce_scatter_rdh(Builder& b, const Args& a) {
  const patterns::VectorBlocks v = patterns::VectorBlocks::of_counts(a.counts, a.size, a.elem);
  auto at = [&](int q) { return v.at(q); };
  auto len = [&](int q) { return v.len(q); };
  const uint64_t total = v.total();
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  patterns::StagedRing cube = patterns::hypercube(g);
  if (cube.owner.empty()) {
    reduce_scatter_recursive_halving(b, a);
    return;
  }
  patterns::staged_reduce_scatter(b, a, {cube}, at, len, total);
}

}  // namespace torusmpi::coll
