// allgather instance_ring: every rank's block first goes to the ranks at the same place in the
// other instances, over a ring of the N instances (each NIC carries its own chip's blocks), then
// each instance gathers what its ranks hold with its torus-aware stages.
//
// Cost = (N-1) a_e + (N-1) n c b_e + T_ag(q) on blocks of N n,
// q ranks per instance, N instances, c ranks per chip (they share the chip's NIC), a_e b_e one
// network message and byte, T_rs/T_ag the instance's own stages (torus_ring's on a full torus)
// (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each.
//
//   3 instances x 2 ranks (0 1 | 2 3 | 4 5), blocks b0..b5
//     inter: ring 0 2 4 passes b0 b2 b4 (2 steps), ring 1 3 5 b1 b3 b5
//     intra: 0 and 1 swap their three blocks; 2 3 and 4 5 likewise
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return hier_allgather_cost(m, p, n, patterns::NetKind::kRing);
}

}  // namespace

extern const Algorithm kAllgatherInstanceRing = {
    Coll::kAllgather,
    "instance_ring",
    allgather_instance_ring,
    kNeedsInstances,
    "Cost = (N-1) a_e + (N-1) n c b_e + T_ag(q) on blocks of N n",
    cost,
    "ring across the instances per place, then the instance's own allgather"};

void allgather_instance_ring(Builder& b, const Args& a) {
  const patterns::StagedRing s = patterns::hier_stages(a.topo, a.size, patterns::NetKind::kRing);
  patterns::staged_allgather(b, a, {s});
}

}  // namespace torusmpi::coll
