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
// can do the op and type. Forced elsewhere, the whole vector is one group of every rank.
//
//   2 instances x 2 ranks (0 1 | 2 3), vector AB
//     intra:  0 keeps A+ (its instance's), 1 B+; 2 A+, 3 B+
//     switch: group {0, 2} sums A, group {1, 3} sums B; results back to both members
//     intra:  0 and 1 swap their finished halves; 2 and 3 likewise
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/staged.h"
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
  const BufRef mine = a.in_place ? a.recv : a.send;
  const uint64_t n = a.block_bytes();
  const std::vector<std::vector<int>> groups = patterns::instance_groups(a.topo, a.size);
  if (groups.empty()) {
    if (a.size > kMaxAggregationMembers) return allreduce_ring(b, a);
    std::vector<int> all(a.size);
    for (int r = 0; r < a.size; ++r) all[r] = r;
    // The result lands beside the contribution, which a failed aggregation is done again from.
    const BufRef tmp = b.scratch(n);
    b.aggregate(AggMode::kReduce, 0, all, a.rank, tmp, mine, n);
    b.step();
    b.copy(a.recv, tmp, n);
    b.step();
    return;
  }
  // Every instance cuts the vector alike: the same stages in each (else each its snake ring).
  std::vector<patterns::StagedRing> in;
  for (const auto& g : groups) in.push_back(patterns::instance_stages(a.topo, g, false));
  for (const patterns::StagedRing& s : in) {
    if (s.extent != in[0].extent) {
      in.clear();
      for (const auto& g : groups) in.push_back(patterns::instance_stages(a.topo, g, true));
      break;
    }
  }
  int inst = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    for (int r : groups[i]) {
      if (r == a.rank) inst = static_cast<int>(i);
    }
  }
  const patterns::Staged g = patterns::vector_slots(in[inst], a.rank, 0, a.count, a.elem);
  patterns::StepList rs;
  g.reduce_scatter(rs, b, mine, a.recv);
  patterns::StepList::emit(b, {&rs});
  const int slot = g.me();
  std::vector<int> members;
  for (const patterns::StagedRing& s : in) members.push_back(s.owner[slot]);
  const uint64_t piece = g.len(slot);
  const BufRef tmp = b.scratch(piece);
  b.aggregate(AggMode::kReduce, static_cast<uint32_t>(slot), members, inst, tmp,
              a.recv + g.at(slot), piece);
  b.step();
  patterns::StepList ag;
  g.allgather(ag, a.recv, tmp);
  patterns::StepList::emit(b, {&ag});
}

}  // namespace torusmpi::coll
