// allreduce instance_direct: a reduce-scatter inside each instance (its torus-aware stages), then
// an allreduce of each rank's piece among the ranks holding the same piece in every instance, over
// a direct exchange among the N instances, one step, then an allgather inside each instance.
//
// Cost = T_rs(q) + T_ag(q) + 2 a_e + 2((N-1)/N)(n/q) c b_e + ((N-1)/N)(n/q) g,
// q ranks per instance, N instances, c ranks per chip (they share the chip's NIC), a_e b_e one
// network message and byte, T_rs/T_ag the instance's own stages (torus_ring's on a full torus)
// (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each; commutative ops (stage order).
//
//   3 instances x 2 ranks (0 1 | 2 3 | 4 5), vector of thirds per piece
//     intra: 0 keeps the first half, 1 the second (likewise 2 3, 4 5)
//     inter: 0 2 4 send each other their thirds of the first half at once, fold, send back;
//            1 3 5 the second half
//     intra: swap the halves back
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return hier_allreduce_cost(m, p, n, patterns::NetKind::kDirect);
}

}  // namespace

extern const Algorithm kAllreduceInstanceDirect = {
    Coll::kAllreduce,
    "instance_direct",
    allreduce_instance_direct,
    kNeedsCommutative | kNeedsInstances,
    "Cost = T_rs(q) + T_ag(q) + 2 a_e + 2((N-1)/N)(n/q) c b_e + ((N-1)/N)(n/q) g",
    cost,
    "reduce-scatter in each instance, direct allreduce of each piece across the instances, "
    "allgather in each instance"};

void allreduce_instance_direct(Builder& b, const Args& a) {
  const patterns::StagedRing s = patterns::hier_stages(a.topo, a.size, patterns::NetKind::kDirect);
  patterns::staged_allreduce(b, a, {s});
}

}  // namespace torusmpi::coll
