// allgather rdh: recursive doubling over the hypercube view of the torus (the allgather half of
// allreduce rdh): round k swaps everything gathered so far with the neighbour across bit k of
// the Gray-labelled coordinates, so every partner is one link away or on the chip. A
// power-of-two communicator that is not such a torus doubles over its snake-order positions;
// any other size is allgather recursive_doubling (its own fold of the extra ranks).
//
// Cost = lg(p) a + (p-1) n b, n one rank's block; other sizes as recursive_doubling.
// Restrictions: none.
//
//   2x2 torus, ranks at (x,y): 0 (0,0) 1 (1,0) 2 (0,1) 3 (1,1)
//     round 1 (y): 0<->2, 1<->3 swap blocks     round 2 (x): 0<->1, 2<->3 swap pairs
#include "coll/algorithms.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  if (torus_shaped(m) && !cube_stages(m, p).empty()) {
    return stages_cost(m, cube_stages(m, p), p * n, 1, false, kRdhBytes);
  }
  return kAllgatherRecursiveDoubling.cost(m, p, n);
}

}  // namespace

extern const Algorithm kAllgatherRdh = {
    Coll::kAllgather,
    "rdh",
    allgather_rdh,
    0,
    "Cost = lg(p) a + (p-1) n b",
    cost,
    "recursive doubling over the torus as a hypercube (Gray labels)"};

void allgather_rdh(Builder& b, const Args& a) {
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  patterns::StagedRing cube = patterns::hypercube(g);
  if (cube.owner.empty()) {
    allgather_recursive_doubling(b, a);
    return;
  }
  patterns::staged_allgather(b, a, {cube});
}

}  // namespace torusmpi::coll
