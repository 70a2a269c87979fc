// allreduce rdh: recursive halving reduce-scatter, then recursive doubling allgather, over the
// hypercube view of the torus. A ring of 4 is a 2-cube under the Gray labelling 0 1 3 2, so a 4x4
// torus with c cores per chip is a (lg c + 4)-cube whose every edge is one link or stays in a
// chip: each round swaps half of what a rank holds with a neighbour. A power-of-two communicator
// that is not such a torus runs the same rounds over its snake-order positions; any other size
// is allreduce rabenseifner over the snake order (extra ranks fold into the first and last
// rounds).
//
// Cost = 2 lg(p) a + 2((p-1)/p) n b + ((p-1)/p) n g with a, b one link's on the torus (the
// rounds within a chip are cheaper); other sizes as rabenseifner.
// Restrictions: commutative ops (halves combine in hypercube order).
//
//   2x2 torus, one core per chip, ranks at (x,y): 0 (0,0) 1 (1,0) 2 (0,1) 3 (1,1); blocks A-D
//     halving along x: 0:CD->1 1:AB->0 2:CD->3 3:AB->2   along y: 0:B->2 2:A->0 1:D->3 3:C->1
//     doubling along y, then x: the same pairs, the finished pieces back
#include "coll/algorithms.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  if (torus_shaped(m) && !cube_stages(m, p).empty()) {
    return stages_cost(m, cube_stages(m, p), n, 2, true, kRdhBytes);
  }
  return kAllreduceRabenseifner.cost(m, p, n);
}

}  // namespace

extern const Algorithm kAllreduceRdh = {
    Coll::kAllreduce,
    "rdh",
    allreduce_rdh,
    kNeedsCommutative,
    "Cost = 2 lg(p) a + 2((p-1)/p) n b + ((p-1)/p) n g",
    cost,
    "recursive halving, then doubling, over the torus as a hypercube (Gray labels)"};

void allreduce_rdh(Builder& b, const Args& a) {
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  patterns::StagedRing cube = patterns::hypercube(g);
  if (!cube.owner.empty()) {
    patterns::staged_allreduce(b, a, {cube});
    return;
  }
  const Builder::Group group(b, g.order);
  Args v = a;
  v.rank = g.vrank[a.rank];
  allreduce_rabenseifner(b, v);
}

}  // namespace torusmpi::coll
