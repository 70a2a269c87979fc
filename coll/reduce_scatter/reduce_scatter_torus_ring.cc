// reduce_scatter torus_ring: per-axis rings (block q of counts[q] elements (uneven, zeros
// allowed)). A reduce-scatter ring along the cores of each chip over the whole vector, then along x
// over what each core keeps, then y (then z), the reduce-scatter half of allreduce torus_ring. The
// blocks are laid in the order of the grid's coordinates (cores first), mapped to ranks through
// TorusGrid::order, so block r still ends at rank r; where a part's blocks are not adjacent in the
// vector it goes as one message per run. A communicator that does not fill its torus is one ring in
// snake order.
//
// Cost = sum over axes k of (e_k-1) a_k + ((e_k-1)/e_k) n_k (b_k + g), e_k the extent of axis
// k, n_k = n / (e_0 ... e_{k-1}), n the whole vector, a_k b_k one link's (shared by the chip's
// cores) or the chip's own for axis 0. Unshaped: (p-1) a + ((p-1)/p) n (b + g).
// Restrictions: commutative ops (ring order).
//
//   2x2 torus, one core per chip, ranks at (x,y): 0 (0,0) 1 (1,0) 2 (0,1) 3 (1,1); blocks A-D
//     along x: 0<->1 and 2<->3 swap halves: 0 and 2 keep A C (rows summed), 1 and 3 keep B D
//     along y: 0<->2 swap: 0 keeps A, 2 keeps C; 1<->3: 1 keeps B, 3 keeps D (all summed)
#include "coll/algorithms.h"
#include "coll/patterns/reduce_scatter.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return torus_shaped(m) ? stages_cost(m, axis_stages(m), n, 1, true, kTorusRingBytes)
                         : kReduceScatterRing.cost(m, p, n);
}

}  // namespace

extern const Algorithm kReduceScatterTorusRing = {
    Coll::kReduceScatter,
    "torus_ring",
    reduce_scatter_torus_ring,
    kNeedsCommutative,
    "Cost = sum over axes k of (e_k-1) a_k + ((e_k-1)/e_k) n_k (b_k + g)",
    cost,
    "per-axis reduce-scatter rings: along the chip's cores, then x, y, z"};

void reduce_scatter_torus_ring(Builder& b, const Args& a) {
  const patterns::VectorBlocks v = patterns::VectorBlocks::of_counts(a.counts, a.size, a.elem);
  auto at = [&](int q) { return v.at(q); };
  auto len = [&](int q) { return v.len(q); };
  const uint64_t total = v.total();
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  patterns::staged_reduce_scatter(b, a, {patterns::torus_axes(g)}, at, len, total);
}

}  // namespace torusmpi::coll
