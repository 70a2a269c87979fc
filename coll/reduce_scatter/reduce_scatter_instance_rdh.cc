// reduce_scatter instance_rdh: a reduce-scatter inside each instance (its torus-aware stages)
// leaves each rank the blocks of its counterparts in every instance, reduced over its instance;
// then those ranks reduce-scatter them over recursive halving/doubling between pairs of instances
// (the odd rest of N as one direct exchange). Block q is counts[q] elements (uneven, zeros
// allowed).
//
// Cost = T_rs(q) + lg(N) a_e + ((N-1)/N)(n/q)(c b_e + g),
// q ranks per instance, N instances, c ranks per chip (they share the chip's NIC), a_e b_e one
// network message and byte, T_rs/T_ag the instance's own stages (torus_ring's on a full torus)
// (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each; commutative ops (stage order).
//
//   4 instances x 1 rank (0 | 1 | 2 | 3), blocks B0..B3
//     halving: 0<->2 (0 keeps B0 B1, 2 B2 B3), 1<->3 likewise; then 0<->1, 2<->3
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return hier_rs_cost(m, p, n, patterns::NetKind::kHalving);
}

}  // namespace

extern const Algorithm kReduceScatterInstanceRdh = {
    Coll::kReduceScatter,
    "instance_rdh",
    reduce_scatter_instance_rdh,
    kNeedsCommutative | kNeedsInstances,
    "Cost = T_rs(q) + lg(N) a_e + ((N-1)/N)(n/q)(c b_e + g)",
    cost,
    "reduce-scatter in each instance, then recursive halving across the instances per place"};

void reduce_scatter_instance_rdh(Builder& b, const Args& a) {
  const patterns::StagedRing s = patterns::hier_stages(a.topo, a.size, patterns::NetKind::kHalving);
  patterns::staged_reduce_scatter_counts(b, a, {s});
}

}  // namespace torusmpi::coll
