// allreduce torus_ring: per-axis rings. A reduce-scatter along the cores of each chip (axis 0)
// over the whole vector, then along x over the piece kept, then y (then z); then allgathers back
// in the reverse order. Each axis's rings use only that axis's links (or stay in the chip), and
// every message is one link long. A communicator that does not fill its torus is one ring in
// snake order (consecutive ranks on one chip or neighbouring chips): allreduce ring on it.
//
// Cost = sum over axes k of 2(e_k-1) a_k + 2((e_k-1)/e_k) n_k b_k + ((e_k-1)/e_k) n_k g, e_k the
// extent of axis k, n_k = n / (e_0 ... e_{k-1}) the data that axis works on, a_k and b_k one
// link's (a chip's own for axis 0). The cores of a chip share its links, so with c cores an
// axis's link carries c n_k (b_k counts it). Unshaped: 2(p-1) a + 2((p-1)/p) n b + ((p-1)/p) n g.
// Restrictions: commutative ops (parts combine in ring order).
//
//   2x2 torus, one core per chip, ranks at (x,y): 0 (0,0)  1 (1,0)  2 (0,1)  3 (1,1); blocks A-D
//     reduce-scatter x: 0<->1 and 2<->3 swap halves: 0 keeps AB, 1 CD (rows summed)
//     reduce-scatter y: 0<->2 swap quarters of AB, 1<->3 of CD: 0 keeps A, 2 B, 1 C, 3 D whole
//     allgather y, then x: the same exchanges backwards
#include "coll/algorithms.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return torus_shaped(m) ? stages_cost(m, axis_stages(m), n, 2, true, kTorusRingBytes)
                         : kAllreduceRing.cost(m, p, n);
}

}  // namespace

extern const Algorithm kAllreduceTorusRing = {
    Coll::kAllreduce,
    "torus_ring",
    allreduce_torus_ring,
    kNeedsCommutative,
    "Cost = sum over axes k of 2(e_k-1) a_k + 2((e_k-1)/e_k) n_k b_k + ((e_k-1)/e_k) n_k g",
    cost,
    "per-axis rings: reduce-scatter along cores, x, y, z, then allgather back"};

void allreduce_torus_ring(Builder& b, const Args& a) {
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  patterns::staged_allreduce(b, a, {patterns::torus_axes(g)});
}

}  // namespace torusmpi::coll
