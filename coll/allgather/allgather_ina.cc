// allgather ina: this rank's block gathered with those of the ranks holding the same slot in every
// instance by the in-network switch (each sends its block once and gets its group's N blocks),
// then an allgather of the groups' gathers inside each instance (its torus-aware stages), then
// every block copied to its place (patterns/ina.h).
//
// Cost = 2 a_e + a_s + N n c max(b_e, b_s) + T_ag(q) on p n
// N instances, q ranks per instance, c ranks per chip, n one rank's block (coll/select/cost.h).
// Restrictions: two or more instances with as many ranks in each; a switch. Forced elsewhere,
// every rank is an instance of its own.
//
//   2 instances x 2 ranks (0 1 | 2 3), blocks A B C D
//     switch: {0, 2} gather A C, {1, 3} gather B D
//     intra:  0 and 1 swap AC and BD; 2 and 3 likewise; each lays out A B C D
#include "coll/algorithms.h"
#include "coll/patterns/ina.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {

extern const Algorithm kAllgatherIna = {
    Coll::kAllgather,
    "ina",
    allgather_ina,
    kNeedsInstances | kNeedsSwitch,
    "Cost = 2 a_e + a_s + N n c max(b_e, b_s) + T_ag(q) on p n",
    ina_allgather_cost,
    "blocks gathered across the instances by the in-network aggregation switch, then allgather "
    "in each instance"};

void allgather_ina(Builder& b, const Args& a) {
  const patterns::InaShape s = patterns::ina_shape(a);
  if (!patterns::ina_fits(s)) return allgather_instance_ring(b, a);
  patterns::ina_allgather(b, a, s);
}

}  // namespace torusmpi::coll
