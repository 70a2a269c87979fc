// allreduce instance_ring: a reduce-scatter inside each instance (its torus-aware stages), then an
// allreduce of each rank's piece among the ranks holding the same piece in every instance, over a
// ring of the N instances, then an allgather inside each instance.
//
// Cost = T_rs(q) + T_ag(q) + 2(N-1) a_e + 2((N-1)/N)(n/q) c b_e + ((N-1)/N)(n/q) g,
// q ranks per instance, N instances, c ranks per chip (they share the chip's NIC), a_e b_e one
// network message and byte, T_rs/T_ag the instance's own stages (torus_ring's on a full torus)
// (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each; commutative ops (stage order).
//
//   2 instances x 2 ranks (0 1 | 2 3), vector ABCD
//     intra: 0 keeps AB+, 1 CD+ (one swap); 2 and 3 likewise
//     inter: 0<->2 ring-allreduce AB, 1<->3 CD: every NIC busy at once
//     intra: 0 and 1 swap their finished halves; 2 and 3 likewise
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return hier_allreduce_cost(m, p, n, patterns::NetKind::kRing);
}

}  // namespace

extern const Algorithm kAllreduceInstanceRing = {
    Coll::kAllreduce,
    "instance_ring",
    allreduce_instance_ring,
    kNeedsCommutative | kNeedsInstances,
    "Cost = T_rs(q) + T_ag(q) + 2(N-1) a_e + 2((N-1)/N)(n/q) c b_e + ((N-1)/N)(n/q) g",
    cost,
    "reduce-scatter in each instance, ring allreduce of each piece across the instances, allgather "
    "in each instance"};

void allreduce_instance_ring(Builder& b, const Args& a) {
  const patterns::StagedRing s = patterns::hier_stages(a.topo, a.size, patterns::NetKind::kRing);
  patterns::staged_allreduce(b, a, {s});
}

}  // namespace torusmpi::coll
