// reduce_scatter_block instance_rdh: reduce_scatter over p blocks of count elements: a
// reduce-scatter inside each instance (its torus-aware stages), then one among the ranks at the
// same place in every instance, over recursive halving/doubling between pairs of instances (the odd
// rest of N as one direct exchange).
//
// Cost = T_rs(q) + lg(N) a_e + ((N-1)/N)(n/q)(c b_e + g),
// q ranks per instance, N instances, c ranks per chip (they share the chip's NIC), a_e b_e one
// network message and byte, T_rs/T_ag the instance's own stages (torus_ring's on a full torus)
// (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each; commutative ops (stage order).
//
//   2 instances x 2 ranks (0 1 | 2 3), blocks B0..B3
//     intra: 0<->1: 0 keeps B0 B2, 1 keeps B1 B3; 2<->3 likewise
//     inter: 0<->2 swap halves (0 ends with B0, 2 with B2); 1<->3 likewise
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return kReduceScatterInstanceRdh.cost(m, p, n); }

}  // namespace

extern const Algorithm kReduceScatterBlockInstanceRdh = {
    Coll::kReduceScatterBlock,
    "instance_rdh",
    reduce_scatter_block_instance_rdh,
    kNeedsCommutative | kNeedsInstances,
    "Cost = T_rs(q) + lg(N) a_e + ((N-1)/N)(n/q)(c b_e + g)",
    cost,
    "reduce-scatter in each instance, then recursive halving across the instances per place"};

void reduce_scatter_block_instance_rdh(Builder& b, const Args& a) {
  const patterns::StagedRing s = patterns::hier_stages(a.topo, a.size, patterns::NetKind::kHalving);
  patterns::staged_reduce_scatter_block(b, a, {s});
}

}  // namespace torusmpi::coll
