// allreduce ina: a reduce-scatter inside each instance (its torus-aware stages, as instance_ring),
// then each rank's piece reduced across the instances by the in-network aggregation switch, then
// an allgather inside each instance. The ranks holding the same piece in every instance form one
// switch group: each sends its piece to the switch once and gets the sum once, so a chip's NIC
// carries its ranks' pieces out and in once (a ring across N instances sends 2(N-1)/N of them).
//
// Cost = T_rs(q) + T_ag(q) + 2 a_e + a_s + (n/q) c max(b_e, b_s)
// q ranks per instance, c ranks per chip (they share its NIC), a_e b_e the network's figures, a_s
// b_s the switch's (coll/select/cost.h), T_rs/T_ag the instance's own stages (patterns/hier.h).
// Restrictions: two or more instances with as many ranks in each; commutative ops; a switch that
// can do the op and type. Forced elsewhere, every rank is an instance of its own
// (patterns/ina.h).
//
//   2 instances x 2 ranks (0 1 | 2 3), vector AB
//     intra:  0 keeps A+ (its instance's), 1 B+; 2 A+, 3 B+
//     switch: group {0, 2} sums A, group {1, 3} sums B; results back to both members
//     intra:  0 and 1 swap their finished halves; 2 and 3 likewise
#include "coll/algorithms.h"
#include "coll/patterns/ina.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {

extern const Algorithm kAllreduceIna = {
    Coll::kAllreduce,
    "ina",
    allreduce_ina,
    kNeedsCommutative | kNeedsInstances | kNeedsSwitch,
    "Cost = T_rs(q) + T_ag(q) + 2 a_e + a_s + (n/q) c max(b_e, b_s)",
    ina_allreduce_cost,
    "reduce-scatter in each instance, each piece summed across the instances by the in-network "
    "aggregation switch, allgather in each instance"};

void allreduce_ina(Builder& b, const Args& a) {
  if (a.count == 0) return;
  const patterns::InaShape s = patterns::ina_shape(a);
  if (!patterns::ina_fits(s)) return allreduce_instance_ring(b, a);
  patterns::ina_allreduce(b, a, s);
}

}  // namespace torusmpi::coll
