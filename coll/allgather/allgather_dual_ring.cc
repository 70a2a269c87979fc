// allgather dual_ring: every block cut in two halves; the first halves go round one Hamiltonian
// cycle of the chips, the second halves round another that shares no link with it, side by side
// (4x4 and 4x4x4 tori, patterns/torus_rings.h). Elsewhere they go round the snake ring in
// opposite directions. Within a chip a cycle visits the chip's cores in a row.
//
// Cost = (p-1) a + (p-1)(n/2) b, n one rank's block: each link carries half of what one ring's
// would.
// Restrictions: none.
//
//   p = 4 on a ring 0 1 3 2 (a 2x2 torus): step s, first halves: rank at ring position i sends
//   the half it got last to position i+1; second halves to position i-1, side by side.
#include "coll/algorithms.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return torus_shaped(m) ? dual_cost(m, p, p * n, 1, false) : kAllgatherRing.cost(m, p, n);
}

}  // namespace

extern const Algorithm kAllgatherDualRing = {
    Coll::kAllgather,
    "dual_ring",
    allgather_dual_ring,
    0,
    "Cost = (p-1) a + (p-1)(n/2) b",
    cost,
    "each half of every block round one of two link-disjoint Hamiltonian cycles"};

void allgather_dual_ring(Builder& b, const Args& a) {
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  auto rings = patterns::dual_cycles(g, a.topo);
  patterns::staged_allgather(b, a, {rings.first, rings.second});
}

}  // namespace torusmpi::coll
