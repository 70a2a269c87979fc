// barrier ina: each instance's ranks tell their first rank they have arrived, the first ranks of
// all instances meet at the in-network aggregation switch (a record that completes when every
// member has come), and each first rank tells its instance. Three latencies, one of them the
// network's, whatever the number of instances.
//
// Cost = 2 a_i + 2 a_e + a_s
// a_i a message within an instance, a_e the network's, a_s the switch's (coll/select/cost.h).
// Restrictions: two or more instances with as many ranks in each; a switch. Forced elsewhere,
// every rank meets at the switch (dissemination beyond the switch's 256 members).
//
//   2 instances x 2 ranks (0 1 | 2 3):  1 -> 0, 3 -> 2;  switch {0, 2};  0 -> 1, 2 -> 3
#include "coll/algorithms.h"
#include "coll/patterns/hier.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double) {
  if (!spans_instances(m)) return kBarrierDissemination.cost(m, p, 0);
  return 2 * m.torus->instance_alpha + switch_stage_cost(m, 0);
}

}  // namespace

extern const Algorithm kBarrierIna = {
    Coll::kBarrier,
    "ina",
    barrier_ina,
    kNeedsInstances | kNeedsSwitch,
    "Cost = 2 a_i + 2 a_e + a_s",
    cost,
    "each instance's ranks to its first, the first ranks meet at the in-network aggregation "
    "switch, then back"};

void barrier_ina(Builder& b, const Args& a) {
  const BufRef none = b.scratch(0);
  std::vector<std::vector<int>> groups = patterns::instance_groups(a.topo, a.size);
  if (groups.empty()) {
    if (a.size > kMaxAggregationMembers) return barrier_dissemination(b, a);
    groups.clear();
    for (int r = 0; r < a.size; ++r) groups.push_back({r});
  }
  std::vector<int> leaders;
  int inst = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    leaders.push_back(groups[i][0]);
    for (int r : groups[i]) {
      if (r == a.rank) inst = static_cast<int>(i);
    }
  }
  const std::vector<int>& mine = groups[inst];
  const bool leader = mine[0] == a.rank;
  if (leader) {
    for (size_t j = 1; j < mine.size(); ++j) b.recv(mine[j], none, 0);
    b.step();
    b.aggregate(AggMode::kBarrier, 0, leaders, inst, none, none, 0);
    b.step();
    for (size_t j = 1; j < mine.size(); ++j) b.send(mine[j], none, 0);
  } else {
    b.send(mine[0], none, 0);
    b.step();
    b.recv(mine[0], none, 0);
  }
  b.step();
}

}  // namespace torusmpi::coll
