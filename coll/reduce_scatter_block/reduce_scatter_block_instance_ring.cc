// reduce_scatter_block instance_ring: reduce_scatter over p blocks of count elements: a
// reduce-scatter inside each instance (its torus-aware stages), then one among the ranks at the
// same place in every instance, over a ring of the N instances.
//
// Cost = T_rs(q) + (N-1) a_e + ((N-1)/N)(n/q)(c b_e + g),
// q ranks per instance, N instances, c ranks per chip (they share the chip's NIC), a_e b_e one
// network message and byte, T_rs/T_ag the instance's own stages (torus_ring's on a full torus)
// (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each; commutative ops (stage order).
//
//   3 instances x 1 rank (0 | 1 | 2), blocks B0 B1 B2
//     inter: ring 0 1 2, two steps of partial blocks, each rank ending with its own
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return kReduceScatterInstanceRing.cost(m, p, n); }

}  // namespace

extern const Algorithm kReduceScatterBlockInstanceRing = {
    Coll::kReduceScatterBlock,
    "instance_ring",
    reduce_scatter_block_instance_ring,
    kNeedsCommutative | kNeedsInstances,
    "Cost = T_rs(q) + (N-1) a_e + ((N-1)/N)(n/q)(c b_e + g)",
    cost,
    "reduce-scatter in each instance, then rings across the instances per place"};

void reduce_scatter_block_instance_ring(Builder& b, const Args& a) {
  const patterns::StagedRing s = patterns::hier_stages(a.topo, a.size, patterns::NetKind::kRing);
  patterns::staged_reduce_scatter_block(b, a, {s});
}

}  // namespace torusmpi::coll
