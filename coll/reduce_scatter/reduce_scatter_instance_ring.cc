// reduce_scatter instance_ring: a reduce-scatter inside each instance (its torus-aware stages)
// leaves each rank the blocks of its counterparts in every instance, reduced over its instance;
// then those ranks reduce-scatter them over a ring of the N instances. Block q is counts[q]
// elements (uneven, zeros allowed).
//
// Cost = T_rs(q) + (N-1) a_e + ((N-1)/N)(n/q)(c b_e + g),
// q ranks per instance, N instances, c ranks per chip (they share the chip's NIC), a_e b_e one
// network message and byte, T_rs/T_ag the instance's own stages (torus_ring's on a full torus)
// (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each; commutative ops (stage order).
//
//   2 instances x 2 ranks (0 1 | 2 3), blocks B0..B3
//     intra: 0 keeps B0 B2 reduced over 0 1, 1 keeps B1 B3; 2 3 likewise over 2 3
//     inter: ring 0 2 reduces B0 B2 (0 ends with B0, 2 with B2), ring 1 3 B1 B3
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return hier_rs_cost(m, p, n, patterns::NetKind::kRing);
}

}  // namespace

extern const Algorithm kReduceScatterInstanceRing = {
    Coll::kReduceScatter,
    "instance_ring",
    reduce_scatter_instance_ring,
    kNeedsCommutative | kNeedsInstances,
    "Cost = T_rs(q) + (N-1) a_e + ((N-1)/N)(n/q)(c b_e + g)",
    cost,
    "reduce-scatter in each instance, then rings across the instances per place"};

void reduce_scatter_instance_ring(Builder& b, const Args& a) {
  const patterns::StagedRing s = patterns::hier_stages(a.topo, a.size, patterns::NetKind::kRing);
  patterns::staged_reduce_scatter_counts(b, a, {s});
}

}  // namespace torusmpi::coll
