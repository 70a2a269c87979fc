// reduce_scatter instance_direct: a reduce-scatter inside each instance (its torus-aware stages)
// leaves each rank the blocks of its counterparts in every instance, reduced over its instance;
// then those ranks reduce-scatter them over a direct exchange among the N instances, one step.
// Block q is counts[q] elements (uneven, zeros allowed).
//
// Cost = T_rs(q) + a_e + ((N-1)/N)(n/q)(c b_e + g),
// q ranks per instance, N instances, c ranks per chip (they share the chip's NIC), a_e b_e one
// network message and byte, T_rs/T_ag the instance's own stages (torus_ring's on a full torus)
// (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each; commutative ops (stage order).
//
//   3 instances x 2 ranks (0 1 | 2 3 | 4 5), blocks B0..B5
//     intra: 0 keeps B0 B2 B4 reduced over 0 1, 1 keeps B1 B3 B5; likewise in 2 3 and 4 5
//     inter: 0 sends B2 to 2 and B4 to 4, gets their partial B0s, folds them; likewise all
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return hier_rs_cost(m, p, n, patterns::NetKind::kDirect);
}

}  // namespace

extern const Algorithm kReduceScatterInstanceDirect = {
    Coll::kReduceScatter,
    "instance_direct",
    reduce_scatter_instance_direct,
    kNeedsCommutative | kNeedsInstances,
    "Cost = T_rs(q) + a_e + ((N-1)/N)(n/q)(c b_e + g)",
    cost,
    "reduce-scatter in each instance, then direct exchanges across the instances per place"};

void reduce_scatter_instance_direct(Builder& b, const Args& a) {
  const patterns::StagedRing s = patterns::hier_stages(a.topo, a.size, patterns::NetKind::kDirect);
  patterns::staged_reduce_scatter_counts(b, a, {s});
}

}  // namespace torusmpi::coll
