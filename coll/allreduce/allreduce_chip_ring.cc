// allreduce chip_ring: a reduce-scatter among the cores of each chip, then an allreduce of each
// core's piece among the same-core ranks of all chips (a ring along the chips' Hamiltonian cycle
// on 4x4 and 4x4x4 tori, else their snake order), then an allgather within each chip. A
// communicator that does not fill its torus but holds the same number of ranks on every chip it
// touches runs the same stages over the chips as they are, in snake order; any other (the host
// included: one chip) is one ring in snake order, allreduce ring.
//
// Cost = 2(c-1) a_c + 2((c-1)/c) n b_c + 2(C-1) a + 2((C-1)/C)(n/c) c b + ((p-1)/p) n g, c the
// cores per chip, C the chips, a_c b_c within a chip, a b one link (its c rings share it).
// Restrictions: commutative ops (ring order).
//
//   2x2 torus, 2 cores per chip (ranks 2x+4y, +1), halves H0 H1, chip ring (0,0) (1,0) (1,1) (0,1)
//     in each chip: core 0 keeps H0, core 1 H1 (one swap)
//     cores 0: ring 0 2 6 4 allreduces H0; cores 1: ring 1 3 7 5 allreduces H1
//     in each chip: swap the halves back
#include "coll/algorithms.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return torus_shaped(m) ? stages_cost(m, chip_ring_stages(m), n, 2, true)
                         : kAllreduceRing.cost(m, p, n);
}

}  // namespace

extern const Algorithm kAllreduceChipRing = {
    Coll::kAllreduce,
    "chip_ring",
    allreduce_chip_ring,
    kNeedsCommutative,
    "Cost = 2(c-1) a_c + 2((c-1)/c) n b_c + 2(C-1) a + 2((C-1)/C)(n/c) c b + ((p-1)/p) n g",
    cost,
    "reduce-scatter in each chip, ring allreduce across chips per core, allgather in the chip"};

void allreduce_chip_ring(Builder& b, const Args& a) {
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  patterns::staged_allreduce(b, a, {patterns::chip_stages(g, a.topo)});
}

}  // namespace torusmpi::coll
