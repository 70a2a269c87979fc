// reduce_scatter ina: the vector laid out again so that the blocks of the ranks holding the same
// slot in every instance sit together, a reduce-scatter of that layout inside each instance (its
// torus-aware stages), each slot aggregated among its group by the in-network switch (every member
// gets the group's blocks back), and this rank's block copied out (patterns/ina.h).
//
// Cost = T_rs(q) + 2 a_e + a_s + (n/q) c max(b_e, b_s)
// q ranks per instance, c ranks per chip, n the whole vector (coll/select/cost.h).
// Restrictions: two or more instances with as many ranks in each; commutative ops; a switch that
// can do the op and type. Forced elsewhere, every rank is an instance of its own.
//
//   2 instances x 2 ranks (0 1 | 2 3), blocks A B C D (rank r keeps block r)
//     packed:  A C | B D    (slot 0: the group {0, 2}; slot 1: {1, 3})
//     intra:   0 keeps AC+ (its instance's), 1 BD+; 2 AC+, 3 BD+
//     switch:  {0, 2} sum AC, {1, 3} sum BD;  0 keeps A, 2 C, 1 B, 3 D
#include "coll/algorithms.h"
#include "coll/patterns/ina.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {

extern const Algorithm kReduceScatterIna = {
    Coll::kReduceScatter,
    "ina",
    reduce_scatter_ina,
    kNeedsCommutative | kNeedsInstances | kNeedsSwitch,
    "Cost = T_rs(q) + 2 a_e + a_s + (n/q) c max(b_e, b_s)",
    ina_rs_cost,
    "reduce-scatter in each instance of the vector packed by group, each group's slot summed "
    "across the instances by the in-network aggregation switch"};

void reduce_scatter_ina(Builder& b, const Args& a) {
  const patterns::InaShape s = patterns::ina_shape(a);
  if (!patterns::ina_fits(s)) return reduce_scatter_instance_ring(b, a);
  patterns::ina_reduce_scatter(b, a, s,
                               patterns::VectorBlocks::of_counts(a.counts, a.size, a.elem));
}

}  // namespace torusmpi::coll
