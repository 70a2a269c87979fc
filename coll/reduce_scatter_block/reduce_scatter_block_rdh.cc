// reduce_scatter_block rdh: recursive halving over the hypercube view of the torus (p blocks of
// count elements): each round swaps half of what a rank holds with its neighbour across one bit of
// the Gray-labelled coordinates (a ring of 4 is a 2-cube under labels 0 1 3 2), so every partner is
// one link away or on the chip. A power-of-two communicator that is not such a torus halves over
// its snake-order positions; any other size is reduce_scatter_block recursive_halving (extra ranks
// fold into the first and last rounds).
//
// Cost = lg(p) a + ((p-1)/p) n (b + g), n the whole vector; other sizes as recursive_halving.
// Restrictions: commutative ops (hypercube order).
//
//   2x2 torus, ranks at (x,y): 0 (0,0) 1 (1,0) 2 (0,1) 3 (1,1); blocks A-D
//     round 1 (x): 0<->1, 2<->3 swap halves      round 2 (y): 0<->2, 1<->3 swap quarters
#include "coll/algorithms.h"
#include "coll/patterns/staged.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return kReduceScatterRdh.cost(m, p, n); }

}  // namespace

extern const Algorithm kReduceScatterBlockRdh = {
    Coll::kReduceScatterBlock,
    "rdh",
    reduce_scatter_block_rdh,
    kNeedsCommutative,
    "Cost = lg(p) a + ((p-1)/p) n (b + g)",
    cost,
    "recursive halving over the torus as a hypercube (Gray labels)"};

void reduce_scatter_block_rdh(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  auto at = [&](int q) { return q * n; };
  auto len = [&](int) { return n; };
  const uint64_t total = n * a.size;
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  patterns::StagedRing cube = patterns::hypercube(g);
  if (cube.owner.empty()) {
    reduce_scatter_block_recursive_halving(b, a);
    return;
  }
  patterns::staged_reduce_scatter(b, a, {cube}, at, len, total);
}

}  // namespace torusmpi::coll
