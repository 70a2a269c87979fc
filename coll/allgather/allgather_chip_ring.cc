// allgather chip_ring: the allgather half of allreduce chip_ring. First the same-core ranks of
// all chips pass their blocks round the chips' ring (the Hamiltonian cycle on 4x4 and 4x4x4
// tori, else the snake), then the cores of each chip swap what they gathered. A communicator
// that does not fill its torus but holds as many ranks on every chip it touches runs the same
// two stages over the chips as they are; any other is one ring in snake order.
//
// Cost = (C-1) a + (C-1) n c b + (c-1) a_c + (c-1) C n b_c, c cores per chip, C chips, n one
// rank's block (the c rings of the chip stage share each link).
// Restrictions: none.
//
//   2x2 torus, 2 cores per chip (ranks 2x+4y, +1), chip ring (0,0) (1,0) (1,1) (0,1)
//     cores 0: ring 0 2 6 4 gathers b0 b2 b4 b6; cores 1: ring 1 3 7 5 gathers the odd blocks
//     in each chip: core 0 and core 1 swap their four blocks
#include "coll/algorithms.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return torus_shaped(m) ? stages_cost(m, chip_ring_stages(m), p * n, 1, false)
                         : kAllgatherRing.cost(m, p, n);
}

}  // namespace

extern const Algorithm kAllgatherChipRing = {
    Coll::kAllgather,
    "chip_ring",
    allgather_chip_ring,
    0,
    "Cost = (C-1) a + (C-1) n c b + (c-1) a_c + (c-1) C n b_c",
    cost,
    "ring across the chips per core, then the chip's cores swap what they gathered"};

void allgather_chip_ring(Builder& b, const Args& a) {
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  patterns::staged_allgather(b, a, {patterns::chip_stages(g, a.topo)});
}

}  // namespace torusmpi::coll
