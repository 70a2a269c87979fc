// The hierarchical algorithms (instance_ring, instance_rdh, instance_direct of allreduce,
// allgather, reduce_scatter and reduce_scatter_block) through the simulator's semantic check on
// jobs that span 2 and 3 instances (and 4 and 6) of small tori and of the host, whole and as
// subsets (counts 0, 1, p-1, p, p+1 and a prime, in place and not); what the registry refuses them
// (one instance, uneven instances); a host job on real nodes (by node, uneven) and the selector's
// hierarchical pick there; the simulator's network: a chip's interface queues its messages
// and counts the bytes its chip receives; and the selector's pick on 2 x trn2.48xl and 2 x
// trn1.32xl, simulated, within 25% of the fastest algorithm from 8 B to 1 GiB.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "coll/patterns/hier.h"
#include "coll/select/registry.h"
#include "coll/select/select.h"
#include "coll/sim/calls.h"
#include "coll/sim/sim.h"
#include "tests/unit/sim_helpers.h"
#include "topo/machine.h"

namespace torusmpi::coll {
namespace {

topo::Machine machine(const std::string& name, int instances, int host_ranks = 0) {
  topo::Machine m;
  std::string error;
  EXPECT_TRUE(topo::parse_machine(name, &m, &error)) << error;
  m.instances = instances;
  // A host instance is one chip holding its share of the job (as topo::load places it).
  if (!m.emulated()) m.cores = host_ranks;
  return m;
}

// A host job on real nodes: node_of[r] is job rank r's node, as the launcher placed the ranks
// (topo::load with the map, as MPI_Init calls it); the library's machine is left as it was.
topo::Machine host_nodes(const std::vector<int>& node_of) {
  std::string error;
  EXPECT_EQ(topo::load(static_cast<int>(node_of.size()), node_of, &error), Status::kOk) << error;
  topo::Machine m = topo::machine();
  EXPECT_EQ(topo::load(1, &error), Status::kOk) << error;
  return m;
}

std::string nodes_name(const std::vector<int>& node_of) {
  std::string name = "host on nodes";
  for (int n : node_of) name += " " + std::to_string(n);
  return name;
}

std::vector<const Algorithm*> hier_algorithms() {
  std::vector<const Algorithm*> v;
  for (const Algorithm& a : algorithms()) {
    if (a.restrictions & kNeedsInstances) v.push_back(&a);
  }
  return v;
}

// A communicator: the job ranks `job` of a job on `m`.
struct Comm {
  std::string name;
  topo::Machine m;
  std::vector<int> job;
};

Comm whole(const std::string& model, int instances, int host_ranks = 0) {
  Comm c{model + " x" + std::to_string(instances), machine(model, instances, host_ranks), {}};
  c.job.resize(c.m.ranks());
  std::iota(c.job.begin(), c.job.end(), 0);
  return c;
}

std::vector<Comm> comms() {
  std::vector<Comm> v;
  for (int n : {2, 3}) {
    for (const char* model : {"torus:2x2:cores=1", "torus:2x2:cores=2", "torus:2x1:cores=1",
                              "torus:2x1:cores=2", "torus:3x1:cores=1"}) {
      v.push_back(whole(model, n));
    }
    for (int each : {1, 2, 3}) v.push_back(whole("host", n, each));
    // Subsets: core 0 of every chip (chip_ring's stages in each instance); three of the four
    // chips of each instance; the chips of each instance taken in another order (the intra
    // orders differ, their shape does not); two ranks on one chip in instance 0 against two
    // chips in the others (the shapes differ: every instance takes its snake ring).
    Comm c = whole("torus:2x2:cores=2", n);
    c.name = "core 0 of each chip of " + c.name;
    c.job.clear();
    for (int r = 0; r < c.m.ranks(); r += 2) c.job.push_back(r);
    v.push_back(c);
    c = whole("torus:2x2:cores=1", n);
    c.name = "three chips of each instance of " + c.name;
    c.job.clear();
    for (int i = 0; i < n; ++i) {
      for (int k : {0, 1, 3}) c.job.push_back(4 * i + k);
    }
    v.push_back(c);
    c = whole("torus:2x2:cores=1", n);
    c.name = "instance 1 reversed, " + c.name;
    std::reverse(c.job.begin() + 4, c.job.begin() + 8);
    v.push_back(c);
    c = whole("torus:2x2:cores=2", n);
    c.name = "one chip in instance 0, two in the others, " + c.name;
    c.job = {0, 1};
    for (int i = 1; i < n; ++i) c.job.push_back(8 * i), c.job.push_back(8 * i + 2);
    v.push_back(c);
  }
  // rdh's pairs: two stages of two on 4 instances, a pair then a direct three on 6.
  v.push_back(whole("torus:2x1:cores=1", 4));
  v.push_back(whole("torus:2x1:cores=2", 6));
  v.push_back(whole("host", 4, 2));
  // Real nodes as the launcher fills them: by node (mpirun --map-by node: a node's ranks are not
  // consecutive) on 3 nodes of 2 and 2 nodes of 3, and by slot in another order of the nodes.
  for (const std::vector<int>& nodes :
       {std::vector<int>{0, 1, 2, 0, 1, 2}, std::vector<int>{0, 1, 0, 1, 0, 1},
        std::vector<int>{0, 0, 2, 2, 1, 1}}) {
    Comm c{nodes_name(nodes), host_nodes(nodes), std::vector<int>(nodes.size())};
    std::iota(c.job.begin(), c.job.end(), 0);
    v.push_back(c);
  }
  return v;
}

using test::sweep_counts;

// A call of `alg` by the ranks placed as `view` says.
std::unique_ptr<sim::Call> call_of(const Algorithm& alg, const TopoView& view, size_t count,
                                   bool in_place) {
  sim::CallShape shape;
  shape.coll = alg.coll;
  shape.size = static_cast<int>(view.instance.size());
  shape.count = count;
  shape.in_place = in_place;
  std::unique_ptr<sim::Call> call = sim::make_call(shape);
  for (Args& a : call->args) {
    a.topo = &view;
    // The switch's algorithms are simulated with one (the simulator's --switch).
    a.in_network = (alg.restrictions & kNeedsSwitch) != 0;
  }
  return call;
}

sim::Result run(const Algorithm& alg, const sim::Call& call, const sim::Costs& costs = {}) {
  return sim::run(
      call.args, [&](Builder& b, const Args& a) { alg.build(b, a); }, costs);
}

// The calls of `alg` on `c`, timed on the machine (host: the flat model); returns calls checked.
int check(const Algorithm& alg, const Comm& c) {
  const TopoView view = topo_view(c.m, c.job);
  int checked = 0;
  for (size_t count : sweep_counts(static_cast<int>(c.job.size()))) {
    for (bool in_place : {false, true}) {
      auto call = call_of(alg, view, count, in_place);
      std::string why;
      if (!supports(alg, call->args[0], &why)) {
        ADD_FAILURE() << alg.token << " refuses " << c.name << ": " << why;
        return checked;
      }
      const sim::Result r = run(alg, *call, sim::machine_costs(c.m, view));
      ++checked;
      if (!r.ok) {
        ADD_FAILURE() << coll_name(alg.coll) << "/" << alg.token << " on " << c.name
                      << " count=" << count << (in_place ? " in place" : "") << ": " << r.error;
        return checked;
      }
    }
  }
  return checked;
}

class Hier : public testing::TestWithParam<const Algorithm*> {};

TEST_P(Hier, TwoAndThreeInstancesWholeAndSubsets) {
  int checked = 0;
  for (const Comm& c : comms()) checked += check(*GetParam(), c);
  EXPECT_GT(checked, 0);
}

// Not theirs: one instance, instances holding different numbers of the communicator's ranks, no
// placement; the selector then falls back to the others. Forced there, they run as one ring.
TEST_P(Hier, RefusedOffEvenInstances) {
  const Algorithm& alg = *GetParam();
  Comm one = whole("torus:2x2:cores=1", 1);
  Comm uneven = whole("torus:2x2:cores=1", 2);
  uneven.job.pop_back();
  // 5 ranks on 3 nodes of 2 slots.
  const std::vector<int> five = {0, 0, 1, 1, 2};
  Comm nodes{nodes_name(five), host_nodes(five), {0, 1, 2, 3, 4}};
  for (const Comm* c : {&one, &uneven, &nodes}) {
    const TopoView view = topo_view(c->m, c->job);
    auto call = call_of(alg, view, 8, false);
    std::string why;
    EXPECT_FALSE(supports(alg, call->args[0], &why)) << c->name;
    EXPECT_TRUE(runs_forced(alg, call->args[0], &why)) << c->name << ": " << why;
    for (size_t count : sweep_counts(static_cast<int>(c->job.size()))) {
      const sim::Result r = run(alg, *call_of(alg, view, count, false));
      EXPECT_TRUE(r.ok) << c->name << " count " << count << ": " << r.error;
    }
    TorusModel torus;
    Choice pick = select_algorithm(call->args[0], topo_model(c->m, view, false, &torus));
    ASSERT_NE(pick.alg, nullptr);
    EXPECT_FALSE(pick.alg->restrictions & kNeedsInstances) << pick.alg->token;
  }
  sim::CallShape shape;  // no placement
  shape.coll = alg.coll;
  shape.size = 4;
  std::string why;
  EXPECT_FALSE(supports(alg, sim::make_call(shape)->args[0], &why));
}

std::string test_name(const testing::TestParamInfo<const Algorithm*>& info) {
  return std::string(coll_name(info.param->coll)) + "_" + info.param->token;
}

INSTANTIATE_TEST_SUITE_P(Registry, Hier, testing::ValuesIn(hier_algorithms()), test_name);

// Every instance joined per place: on 2 x torus:2x2:cores=2 every rank talks across instances
// only to its counterpart (the rank at its place in the other instance).
TEST(HierStages, NetworkMessagesGoToTheCounterpart) {
  const Comm c = whole("torus:2x2:cores=2", 2);
  const TopoView view = topo_view(c.m, c.job);
  for (patterns::NetKind k :
       {patterns::NetKind::kRing, patterns::NetKind::kHalving, patterns::NetKind::kDirect}) {
    const patterns::StagedRing s = patterns::hier_stages(&view, 16, k);
    ASSERT_EQ(s.slots(), 16);
    ASSERT_EQ(s.extent.back(), 2);
    for (int slot = 0; slot < 16; slot += 2) {
      EXPECT_EQ(s.owner[slot + 1], s.owner[slot] + 8);  // intra slot * N + instance
      EXPECT_EQ(view.instance[s.owner[slot]], 0);
    }
  }
}

// scatter linear: the root (chip 0 of instance 0, torus:2x1:cores=2) sends every rank its block
// at once. Its port lets the messages go one per `port` (ranks 1, 2, 3 first), then the four to
// instance 1 share the root chip's interface, each `wire` long, so the last ends at 3 port +
// 4 wire + alpha + the network's latency; each chip of instance 1 received two blocks.
TEST(HierSim, InterfacesQueueAndCountReceivedBytes) {
  const topo::Machine m = machine("torus:2x1:cores=2", 2);
  const Algorithm* linear = find_algorithm(Coll::kScatter, "linear");
  ASSERT_NE(linear, nullptr);
  sim::CallShape shape;
  shape.coll = Coll::kScatter;
  shape.size = m.ranks();
  shape.count = 1 << 18;  // 1 MiB a block
  shape.machine = &m;
  auto call = sim::make_call(shape);
  const uint64_t n = shape.count * shape.elem;
  const sim::Costs costs = sim::machine_costs(m, call->view);
  const sim::Result r = run(*linear, *call, costs);
  ASSERT_TRUE(r.ok) << r.error;
  const double wire = n / m.efa.bandwidth, port = n * costs.beta;
  EXPECT_NEAR(r.time, 3 * port + 4 * wire + costs.alpha + m.efa.latency, 1e-3 * r.time);
  EXPECT_EQ(r.nic_bytes, (std::vector<uint64_t>{0, 0, 2 * n, 2 * n}));
}

// instance_ring allreduce of 8 ints on 2 x torus:2x1:cores=1: each rank keeps 16 B after the intra
// reduce-scatter, then sends 8 B of it across and gets 8 B back, twice (reduce-scatter,
// allgather): 16 B through every chip's interface. Nothing for 0 ints.
TEST(HierSim, AllreduceNetworkBytes) {
  const topo::Machine m = machine("torus:2x1:cores=1", 2);
  const Algorithm* alg = find_algorithm(Coll::kAllreduce, "instance_ring");
  ASSERT_NE(alg, nullptr);
  for (size_t count : {size_t{8}, size_t{0}}) {
    sim::CallShape shape;
    shape.size = 4;
    shape.count = count;
    shape.machine = &m;
    auto call = sim::make_call(shape);
    const sim::Result r = run(*alg, *call, sim::machine_costs(m, call->view));
    ASSERT_TRUE(r.ok) << r.error;
    const uint64_t each = count * 2;
    EXPECT_EQ(std::accumulate(r.nic_bytes.begin(), r.nic_bytes.end(), uint64_t{0}), 4 * each);
    for (uint64_t b : r.nic_bytes) EXPECT_EQ(b, each);
  }
}

// What the selector picks, simulated, against the fastest algorithm simulated, with the Model the
// library builds for the placement (the code Team runs), on two instances.
void pick_within_a_quarter(Coll coll, const std::vector<size_t>& sizes) {
  for (const char* name : {"trn2.48xl", "trn1.32xl"}) {
    const topo::Machine m = machine(name, 2);
    for (size_t bytes : sizes) {
      sim::CallShape shape;
      shape.coll = coll;
      shape.size = m.ranks();
      shape.count = coll == Coll::kAllreduce ? bytes / 4 : bytes / 4 / m.ranks();
      shape.machine = &m;
      const test::PickReport rep = test::pick_vs_best(shape);
      EXPECT_TRUE(rep.wrong.empty()) << name << " x2 " << bytes << " B: " << rep.wrong;
      EXPECT_LE(rep.picked, 1.25 * rep.best)
          << name << " x2 " << coll_name(coll) << " " << bytes << " B: picked " << rep.pick
          << ", fastest " << rep.fastest << ";" << rep.table << "; " << rep.why;
    }
  }
}

TEST(HierSelect, AllreducePickIsWithinAQuarterOfTheBest) {
  std::vector<size_t> sizes;
  for (size_t b = 8; b <= (size_t{1} << 30); b *= 8) sizes.push_back(b);
  sizes.push_back(size_t{1} << 30);
  pick_within_a_quarter(Coll::kAllreduce, sizes);
}

// A host job on 3 nodes of 2 ranks, filled by slot or by node: the cost model sees the network
// between the nodes and takes a hierarchical algorithm for the calls of tests/integration/
// multinode.sh (1 MiB allreduce, 256 KiB blocks of allgather, 64 KiB blocks of
// reduce_scatter_block); on one node, the same calls stay flat.
TEST(HierSelect, HostNodesTakeTheHierarchicalAlgorithms) {
  struct Case {
    Coll coll;
    size_t count;  // ints
  };
  const Case cases[] = {
      {Coll::kAllreduce, 262144}, {Coll::kAllgather, 65536}, {Coll::kReduceScatterBlock, 16384}};
  for (const std::vector<int>& nodes :
       {std::vector<int>{0, 0, 1, 1, 2, 2}, std::vector<int>{0, 1, 2, 0, 1, 2},
        std::vector<int>{0, 0, 0, 0, 0, 0}}) {
    const topo::Machine m = host_nodes(nodes);
    std::vector<int> job(nodes.size());
    std::iota(job.begin(), job.end(), 0);
    const TopoView view = topo_view(m, job);
    const bool spans = m.instances > 1;
    for (const Case& c : cases) {
      sim::CallShape shape;
      shape.coll = c.coll;
      shape.size = static_cast<int>(job.size());
      shape.count = c.count;
      shape.elem = 4;
      auto call = sim::make_call(shape);
      Args a = call->args[0];
      a.topo = spans ? &view : nullptr;  // as Team::prepare gives it
      TorusModel torus;
      const Model model = spans ? topo_model(m, view, false, &torus) : host_model(false);
      const Choice pick = select_algorithm(a, model);
      ASSERT_NE(pick.alg, nullptr) << nodes_name(nodes);
      EXPECT_EQ(static_cast<bool>(pick.alg->restrictions & kNeedsInstances), spans)
          << nodes_name(nodes) << ": " << coll_name(c.coll) << " of " << c.count << " ints picks "
          << pick.alg->token << ": " << pick.why;
    }
  }
}

TEST(HierSelect, ReduceScatterBlockPickIsWithinAQuarterOfTheBest) {
  pick_within_a_quarter(Coll::kReduceScatterBlock,
                        {size_t{4} << 10, size_t{1} << 20, size_t{64} << 20, size_t{1} << 30});
}

}  // namespace
}  // namespace torusmpi::coll
