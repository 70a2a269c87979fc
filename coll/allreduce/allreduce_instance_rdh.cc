// allreduce instance_rdh: a reduce-scatter inside each instance (its torus-aware stages), then an
// allreduce of each rank's piece among the ranks holding the same piece in every instance, over
// recursive halving/doubling between pairs of instances (the odd rest of N as one direct exchange),
// then an allgather inside each instance.
//
// Cost = T_rs(q) + T_ag(q) + 2 lg(N) a_e + 2((N-1)/N)(n/q) c b_e + ((N-1)/N)(n/q) g,
// q ranks per instance, N instances, c ranks per chip (they share the chip's NIC), a_e b_e one
// network message and byte, T_rs/T_ag the instance's own stages (torus_ring's on a full torus)
// (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each; commutative ops (stage order).
//
//   4 instances x 1 rank (0 | 1 | 2 | 3), vector ABCD
//     halving: 0<->2 (0 keeps AB, 2 CD), 1<->3 likewise; then 0<->1 (A, B), 2<->3 (C, D)
//     doubling: the same pairs backwards, finished pieces back
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return hier_allreduce_cost(m, p, n, patterns::NetKind::kHalving);
}

}  // namespace

extern const Algorithm kAllreduceInstanceRdh = {
    Coll::kAllreduce,
    "instance_rdh",
    allreduce_instance_rdh,
    kNeedsCommutative | kNeedsInstances,
    "Cost = T_rs(q) + T_ag(q) + 2 lg(N) a_e + 2((N-1)/N)(n/q) c b_e + ((N-1)/N)(n/q) g",
    cost,
    "reduce-scatter in each instance, recursive halving/doubling of each piece across the "
    "instances, allgather in each instance"};

void allreduce_instance_rdh(Builder& b, const Args& a) {
  const patterns::StagedRing s = patterns::hier_stages(a.topo, a.size, patterns::NetKind::kHalving);
  patterns::staged_allreduce(b, a, {s});
}

}  // namespace torusmpi::coll
