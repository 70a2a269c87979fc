// reduce_scatter_block instance_direct: reduce_scatter over p blocks of count elements: a
// reduce-scatter inside each instance (its torus-aware stages), then one among the ranks at the
// same place in every instance, over a direct exchange among the N instances, one step.
//
// Cost = T_rs(q) + a_e + ((N-1)/N)(n/q)(c b_e + g),
// q ranks per instance, N instances, c ranks per chip (they share the chip's NIC), a_e b_e one
// network message and byte, T_rs/T_ag the instance's own stages (torus_ring's on a full torus)
// (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each; commutative ops (stage order).
//
//   2 instances x 3 ranks on 3 chips (0 1 2 | 3 4 5), blocks B0..B5
//     intra: ring 0 1 2 leaves 0 with B0 B3, 1 with B1 B4, 2 with B2 B5; likewise 3 4 5
//     inter: 0<->3, 1<->4, 2<->5 swap their counterpart's block and fold
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return kReduceScatterInstanceDirect.cost(m, p, n); }

}  // namespace

extern const Algorithm kReduceScatterBlockInstanceDirect = {
    Coll::kReduceScatterBlock,
    "instance_direct",
    reduce_scatter_block_instance_direct,
    kNeedsCommutative | kNeedsInstances,
    "Cost = T_rs(q) + a_e + ((N-1)/N)(n/q)(c b_e + g)",
    cost,
    "reduce-scatter in each instance, then direct exchanges across the instances per place"};

void reduce_scatter_block_instance_direct(Builder& b, const Args& a) {
  const patterns::StagedRing s = patterns::hier_stages(a.topo, a.size, patterns::NetKind::kDirect);
  patterns::staged_reduce_scatter_block(b, a, {s});
}

}  // namespace torusmpi::coll
