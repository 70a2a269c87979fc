// allgather instance_rdh: every rank's block first goes to the ranks at the same place in the other
// instances, over recursive halving/doubling between pairs of instances (the odd rest of N as one
// direct exchange) (each NIC carries its own chip's blocks), then each instance gathers what its
// ranks hold with its torus-aware stages.
//
// Cost = lg(N) a_e + (N-1) n c b_e + T_ag(q) on blocks of N n,
// q ranks per instance, N instances, c ranks per chip (they share the chip's NIC), a_e b_e one
// network message and byte, T_rs/T_ag the instance's own stages (torus_ring's on a full torus)
// (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each.
//
//   2 instances x 2 ranks (0 1 | 2 3), blocks b0..b3
//     inter: 0<->2 swap b0 b2, 1<->3 swap b1 b3
//     intra: 0<->1 swap what they hold (b0 b2 <-> b1 b3); 2<->3 likewise
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return hier_allgather_cost(m, p, n, patterns::NetKind::kHalving);
}

}  // namespace

extern const Algorithm kAllgatherInstanceRdh = {
    Coll::kAllgather,
    "instance_rdh",
    allgather_instance_rdh,
    kNeedsInstances,
    "Cost = lg(N) a_e + (N-1) n c b_e + T_ag(q) on blocks of N n",
    cost,
    "recursive doubling across the instances per place, then the instance's own allgather"};

void allgather_instance_rdh(Builder& b, const Args& a) {
  const patterns::StagedRing s = patterns::hier_stages(a.topo, a.size, patterns::NetKind::kHalving);
  patterns::staged_allgather(b, a, {s});
}

}  // namespace torusmpi::coll
