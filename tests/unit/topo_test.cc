// The emulated machine (src/topo/machine.h): model names good and bad, placement, dense link ids,
// dimension-order routes checked against the torus distance for every pair of chips, load() and
// its errors, a host job's nodes as instances (by node, uneven), and the NUMA-aware core
// assignment used for binding.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "core/params.h"
#include "topo/host.h"
#include "topo/machine.h"

namespace torusmpi::topo {
namespace {

Machine parse_ok(const std::string& text) {
  Machine m;
  std::string error;
  EXPECT_TRUE(parse_machine(text, &m, &error)) << text << ": " << error;
  return m;
}

std::string parse_error(const std::string& text) {
  Machine m;
  std::string error;
  EXPECT_FALSE(parse_machine(text, &m, &error)) << text << " parsed";
  return error;
}

// Distance on a ring of `size`, the shorter way round.
int ring_distance(int a, int b, int size) {
  int d = ((b - a) % size + size) % size;
  return std::min(d, size - d);
}

TEST(Machine, NamedModels) {
  Machine trn1 = parse_ok("trn1.32xl");
  EXPECT_EQ(trn1.ndims, 2);
  EXPECT_EQ(trn1.dims[0], 4);
  EXPECT_EQ(trn1.dims[1], 4);
  EXPECT_EQ(trn1.dims[2], 1);
  EXPECT_EQ(trn1.cores, 2);
  EXPECT_EQ(trn1.chips(), 16);
  EXPECT_EQ(trn1.ranks(), 32);
  EXPECT_EQ(trn1.instances, 1);

  Machine trn2 = parse_ok("trn2.48xl");
  EXPECT_EQ(trn2.cores, 4);
  EXPECT_EQ(trn2.ranks(), 64);
  EXPECT_EQ(parse_ok("trn2.48xl:lnc=1").cores, 8);
  EXPECT_EQ(parse_ok("trn2.48xl:lnc=2").cores, 4);

  Machine u = parse_ok("trn2u");
  EXPECT_EQ(u.ndims, 3);
  EXPECT_EQ(u.chips(), 64);
  EXPECT_EQ(u.ranks(), 256);
  EXPECT_EQ(u.instances, 1) << "the UltraServer is one torus for placement and links";
  EXPECT_EQ(parse_ok("trn2u:lnc=1").ranks(), 512);

  for (const std::string& name : model_names()) {
    Machine m = parse_ok(name);
    EXPECT_EQ(m.name, name);
    EXPECT_TRUE(m.emulated());
    EXPECT_FALSE(m.source.empty()) << name << " has no source for its figures";
    // Figures in the documented ranges: NeuronLink tens to hundreds of GB/s per direction and
    // 1-2 us per hop, EFA far slower and ~15 us, HBM faster than any link.
    EXPECT_GE(m.neuronlink.bandwidth, 10e9) << name;
    EXPECT_LE(m.neuronlink.bandwidth, 1e12) << name;
    EXPECT_GE(m.neuronlink.latency, 1e-6) << name;
    EXPECT_LE(m.neuronlink.latency, 2e-6) << name;
    EXPECT_LT(m.efa.bandwidth, m.neuronlink.bandwidth) << name;
    EXPECT_NEAR(m.efa.latency, 15e-6, 1e-9) << name;
    EXPECT_GT(m.hbm_bandwidth, m.neuronlink.bandwidth) << name;
    EXPECT_GT(m.reduce_bandwidth, 0) << name;
    EXPECT_GT(m.intra_chip.bandwidth, 0) << name;
  }
  // EFA: 800 Gbps per trn1 instance over 16 chips; 200 Gbps per trn2 chip.
  EXPECT_NEAR(trn1.efa.bandwidth, 800e9 / 8 / 16, 1);
  EXPECT_NEAR(trn2.efa.bandwidth, 200e9 / 8, 1);
}

TEST(Machine, Host) {
  Machine h = parse_ok("host");
  EXPECT_FALSE(h.emulated());
  EXPECT_EQ(h.ndims, 0);
  EXPECT_EQ(h.chips(), 1);
  EXPECT_EQ(link_count(h), 0);
  std::vector<Link> r{Link{}};
  route(h, 0, 0, &r);
  EXPECT_TRUE(r.empty());
}

TEST(Machine, TestTori) {
  Machine m = parse_ok("torus:2x2:cores=1");
  EXPECT_EQ(m.ndims, 2);
  EXPECT_EQ(m.chips(), 4);
  EXPECT_EQ(m.ranks(), 4);
  Machine m3 = parse_ok("torus:2x3x4:cores=3");
  EXPECT_EQ(m3.ndims, 3);
  EXPECT_EQ(m3.dims[0], 2);
  EXPECT_EQ(m3.dims[1], 3);
  EXPECT_EQ(m3.dims[2], 4);
  EXPECT_EQ(m3.ranks(), 72);
  EXPECT_EQ(parse_ok("torus:16x16x16:cores=64").ranks(), 16 * 16 * 16 * 64);
  EXPECT_EQ(parse_ok("torus:1x1:cores=1").ranks(), 1);

  Machine slow = parse_ok("torus:2x2:cores=1:link=1,20");
  EXPECT_DOUBLE_EQ(slow.neuronlink.bandwidth, 1e9);
  EXPECT_DOUBLE_EQ(slow.neuronlink.latency, 20e-6);
  Machine frac = parse_ok("torus:2x4:link=0.5,0:cores=2");
  EXPECT_DOUBLE_EQ(frac.neuronlink.bandwidth, 0.5e9);
  EXPECT_DOUBLE_EQ(frac.neuronlink.latency, 0);
  EXPECT_EQ(frac.cores, 2);
  // Without link=, the test tori carry a real model's figures, not zeros.
  EXPECT_GT(m.neuronlink.bandwidth, 0);
  EXPECT_GT(m.neuronlink.latency, 0);
}

TEST(Machine, BadNamesSayWhatIsExpected) {
  std::string e = parse_error("trn3");
  EXPECT_NE(e.find("'trn3'"), std::string::npos) << e;
  EXPECT_NE(e.find("trn2.48xl"), std::string::npos) << e;
  EXPECT_NE(e.find("torus:AxB"), std::string::npos) << e;
  for (const char* bad : {"",
                          "Host",
                          "trn2.48xl:lnc=3",
                          "trn1.32xl ",
                          "torus:",
                          "torus:4",
                          "torus:2x2",
                          "torus:2x2:cores=0",
                          "torus:2x2:cores=65",
                          "torus:0x2:cores=1",
                          "torus:17x2:cores=1",
                          "torus:2x2x2x2:cores=1",
                          "torus:2x-2:cores=1",
                          "torus:2x2:cores=1:cores=1",
                          "torus:2x2:cores=x",
                          "torus:2x2:cores=1:link=1",
                          "torus:2x2:cores=1:link=0,1",
                          "torus:2x2:cores=1:link=1,-1",
                          "torus:2x2:cores=1:link=a,b",
                          "torus:2x2:cores=1:speed=3",
                          "torus:2x2:cores=1:",
                          "torus:2xx2:cores=1"}) {
    std::string err = parse_error(bad);
    EXPECT_NE(err.find(std::string("'") + bad), std::string::npos)
        << "the error for '" << bad << "' does not quote it: " << err;
  }
  EXPECT_NE(parse_error("torus:2x17:cores=1").find("1 to 16"), std::string::npos);
  EXPECT_NE(parse_error("torus:2x2:cores=99").find("1 to 64"), std::string::npos);
  EXPECT_NE(parse_error("torus:2x2").find("cores=N is missing"), std::string::npos);
}

TEST(Machine, PlacementCoreThenChip) {
  for (const std::string& name :
       {std::string("trn1.32xl"), std::string("trn2.48xl"), std::string("trn2.48xl:lnc=1"),
        std::string("trn2u"), std::string("trn2u:lnc=1"), std::string("torus:2x2:cores=1"),
        std::string("torus:2x2:cores=2"), std::string("torus:2x4:cores=1"),
        std::string("torus:3x2x2:cores=3")}) {
    Machine m = parse_ok(name);
    std::set<std::pair<int, int>> seen;
    for (int r = 0; r < m.ranks(); ++r) {
      Place p = place(m, r);
      EXPECT_EQ(p.instance, 0) << name << " rank " << r;
      EXPECT_EQ(p.core, r % m.cores) << name << " rank " << r;
      EXPECT_EQ(p.chip, r / m.cores) << name << " rank " << r;
      EXPECT_TRUE(seen.insert({p.chip, p.core}).second) << name << ": two ranks on one core";
    }
    EXPECT_EQ(static_cast<int>(seen.size()), m.chips() * m.cores);
    // Beyond one instance, placement goes on to the next instance.
    Place next = place(m, m.ranks());
    EXPECT_EQ(next.instance, 1) << name;
    EXPECT_EQ(next.chip, 0) << name;
    EXPECT_EQ(next.core, 0) << name;
  }
  Machine trn2 = parse_ok("trn2.48xl");
  Place p = place(trn2, 13);  // 4 ranks per chip: chip 3, core 1
  EXPECT_EQ(p.chip, 3);
  EXPECT_EQ(p.core, 1);
}

TEST(Machine, ChipCoordinatesRoundTrip) {
  Machine m = parse_ok("torus:2x3x4:cores=1");
  for (int chip = 0; chip < m.chips(); ++chip) {
    int c[3];
    chip_coords(m, chip, c);
    EXPECT_EQ(chip, c[0] + 2 * (c[1] + 3 * c[2]));
    EXPECT_EQ(chip_at(m, c), chip);
  }
  int wrapped[3] = {-1, 3, 4};  // (1, 0, 0) after wrap-around
  EXPECT_EQ(chip_at(m, wrapped), 1);
}

// Every link id names a link whose ends are neighbours, every id is hit exactly once, and each
// link's id is its own: link_count, link_id and link_of agree.
void check_links(const std::string& name, int expected) {
  Machine m = parse_ok(name);
  ASSERT_EQ(link_count(m), expected) << name;
  std::set<std::pair<int, int>> pairs;
  for (int id = 0; id < link_count(m); ++id) {
    Link l = link_of(m, id);
    EXPECT_EQ(link_id(m, l), id) << name << " link " << id;
    EXPECT_EQ(hops(m, l.from, l.to), 1) << name << " link " << id << " joins non-neighbours";
    EXPECT_TRUE(pairs.insert({l.from, l.to}).second)
        << name << ": two links from " << l.from << " to " << l.to;
  }
  // Each directed link has its reverse.
  for (const auto& p : pairs) EXPECT_EQ(pairs.count({p.second, p.first}), 1u) << name;
}

TEST(Machine, LinkIdsAreDenseAndRoundTrip) {
  check_links("torus:4x4:cores=1", 64);  // 16 chips x 4 neighbours
  check_links("trn2.48xl", 64);
  check_links("torus:2x2:cores=1", 8);   // 4 chips x 1 link per size-2 dimension
  check_links("torus:2x4:cores=1", 24);  // 8 chips x (1 + 2)
  check_links("trn2u", 384);             // 64 chips x 6
  check_links("torus:1x4:cores=1", 8);   // a ring of 4; the size-1 dimension has no link
  check_links("torus:1x1:cores=1", 0);
  check_links("torus:2x2x2:cores=1", 24);  // 8 chips x 3
  check_links("torus:3x1x2:cores=1", 18);  // 6 chips x (2 + 0 + 1)
  Machine m = parse_ok("torus:2x2:cores=1");
  // Both directions of a size-2 dimension are the one link to the other chip.
  EXPECT_EQ(link_id(m, Link{0, 1, 0, 1}), link_id(m, Link{0, 1, 0, -1}));
  Machine line = parse_ok("torus:1x4:cores=1");
  EXPECT_EQ(link_id(line, Link{0, 0, 0, 1}), -1) << "a dimension of size 1 has no link";
  EXPECT_EQ(link_id(m, Link{4, 0, 0, 1}), -1) << "no chip 4";
  EXPECT_EQ(link_id(m, Link{0, 1, 2, 1}), -1) << "no dimension 2";
  EXPECT_EQ(link_id(m, Link{0, 1, 0, 0}), -1) << "no direction 0";
}

// For every pair of chips: the route is as long as the torus distance, starts and ends at the right
// chips, steps between neighbours over real links, keeps dimension order and does not turn back.
void check_routes(const std::string& name) {
  Machine m = parse_ok(name);
  std::vector<Link> r;
  for (int a = 0; a < m.chips(); ++a) {
    for (int b = 0; b < m.chips(); ++b) {
      route(m, a, b, &r);
      int ca[3], cb[3];
      chip_coords(m, a, ca);
      chip_coords(m, b, cb);
      int distance = 0;
      for (int d = 0; d < m.ndims; ++d) distance += ring_distance(ca[d], cb[d], m.dims[d]);
      ASSERT_EQ(static_cast<int>(r.size()), distance) << name << " " << a << "->" << b;
      EXPECT_EQ(hops(m, a, b), distance) << name;
      EXPECT_EQ(hops(m, a, b), hops(m, b, a)) << name;
      int at = a, last_dim = 0;
      for (size_t i = 0; i < r.size(); ++i) {
        const Link& l = r[i];
        EXPECT_EQ(l.from, at) << name << " " << a << "->" << b << " hop " << i;
        EXPECT_GE(l.dim, last_dim) << name << ": dimension order broken";
        if (i > 0 && l.dim == r[i - 1].dim) {
          EXPECT_EQ(l.dir, r[i - 1].dir) << name << ": the route turns back";
        }
        int id = link_id(m, l);
        ASSERT_GE(id, 0) << name << " " << a << "->" << b << " hop " << i;
        Link named = link_of(m, id);
        EXPECT_EQ(named.from, l.from);
        EXPECT_EQ(named.to, l.to);
        last_dim = l.dim;
        at = l.to;
      }
      EXPECT_EQ(at, b) << name << " " << a << "->" << b;
    }
  }
}

TEST(Machine, RoutesAreShortestDimensionOrder) {
  check_routes("torus:4x4:cores=1");
  check_routes("trn2u");
  check_routes("torus:2x2:cores=1");
  check_routes("torus:2x4:cores=1");
  check_routes("torus:5x3x2:cores=1");
}

TEST(Machine, RouteTieGoesPlus) {
  Machine m = parse_ok("torus:4x4:cores=1");
  std::vector<Link> r;
  route(m, 0, 2, &r);  // two steps either way along x
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].dir, 1);
  EXPECT_EQ(r[0].to, 1);
  route(m, 0, 3, &r);  // one step back across the wrap-around
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].dir, -1);
  EXPECT_EQ(r[0].to, 3);
  route(m, 5, 10, &r);  // (1,1) -> (2,2): x first, then y
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].dim, 0);
  EXPECT_EQ(r[0].to, 6);
  EXPECT_EQ(r[1].dim, 1);
  EXPECT_EQ(r[1].to, 10);
}

class LoadTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("TORUSMPI_INSTANCE");
    reload();
    std::string error;
    ASSERT_EQ(load(1, &error), Status::kOk) << error;
  }
  static void reload() {
    std::vector<std::string> errors, warnings;
    params::load(&errors, &warnings);
  }
  static Status load_with(const char* instance, int job_size, std::string* error) {
    setenv("TORUSMPI_INSTANCE", instance, 1);
    reload();
    return load(job_size, error);
  }
};

TEST_F(LoadTest, FitsAndSetsTheMachine) {
  std::string error;
  ASSERT_EQ(load_with("torus:2x2:cores=1", 4, &error), Status::kOk) << error;
  EXPECT_EQ(machine().name, "torus:2x2:cores=1");
  EXPECT_EQ(machine().chips(), 4);
  ASSERT_EQ(load_with("trn2.48xl", 3, &error), Status::kOk) << error;
  EXPECT_EQ(machine().cores, 4) << "a job smaller than the instance keeps the model's cores";
}

TEST_F(LoadTest, TooManyRanksNamesModelCapacityAndJob) {
  std::string error;
  EXPECT_EQ(load_with("torus:2x2:cores=1", 5, &error), Status::kErrArg);
  EXPECT_NE(error.find("torus:2x2:cores=1 holds 4 ranks; this job has 5"), std::string::npos)
      << error;
  EXPECT_EQ(load_with("trn2u", 257, &error), Status::kErrArg);
  EXPECT_NE(error.find("trn2u holds 256 ranks; this job has 257"), std::string::npos) << error;
}

TEST_F(LoadTest, BadNameIsAnError) {
  std::string error;
  EXPECT_EQ(load_with("trn9", 1, &error), Status::kErrArg);
  EXPECT_NE(error.find("TORUSMPI_INSTANCE"), std::string::npos) << error;
  EXPECT_NE(error.find("'trn9'"), std::string::npos) << error;
}

TEST_F(LoadTest, HostAlwaysFits) {
  std::string error;
  ASSERT_EQ(load_with("host", 1000, &error), Status::kOk) << error;
  EXPECT_FALSE(machine().emulated());
  EXPECT_EQ(machine().cores, 1000);
  EXPECT_EQ(place(machine(), 999).chip, 0);
  EXPECT_EQ(place(machine(), 999).core, 999);
  EXPECT_EQ(place(machine(), 999).instance, 0);
}

// A host job across nodes: one host instance per node, each rank where the launcher put it.
class NodesTest : public LoadTest {
 protected:
  static Status load_nodes(const char* instance, const char* instances, int job_size,
                           const std::vector<int>& nodes, std::string* error) {
    setenv("TORUSMPI_INSTANCE", instance, 1);
    setenv("TORUSMPI_INSTANCES", instances, 1);
    reload();
    return load(job_size, nodes, error);
  }
  void TearDown() override {
    unsetenv("TORUSMPI_INSTANCES");
    LoadTest::TearDown();
  }
  static std::vector<std::pair<int, int>> places(int job_size) {
    std::vector<std::pair<int, int>> v;
    for (int r = 0; r < job_size; ++r) {
      const Place p = place(machine(), r);
      EXPECT_EQ(p.chip, 0) << "rank " << r;
      v.push_back({p.instance, p.core});
    }
    return v;
  }
};

TEST_F(NodesTest, ByNodeRoundRobin) {
  // mpirun --map-by node on 3 nodes: ranks 0 3 on the first, 1 4 on the second, 2 5 on the third.
  std::string error;
  ASSERT_EQ(load_nodes("host", "1", 6, {0, 1, 2, 0, 1, 2}, &error), Status::kOk) << error;
  EXPECT_FALSE(machine().emulated());
  EXPECT_EQ(machine().instances, 3);
  EXPECT_EQ(machine().cores, 2);
  EXPECT_EQ(places(6),
            (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}}));
}

TEST_F(NodesTest, UnevenNodesAndLabelsInOrderOfTheirLowestRank) {
  // 5 ranks on 3 nodes of 2 slots, by slot; the labels are the launcher's, any numbers.
  std::string error;
  ASSERT_EQ(load_nodes("host", "1", 5, {7, 7, 3, 3, 9}, &error), Status::kOk) << error;
  EXPECT_EQ(machine().instances, 3);
  EXPECT_EQ(machine().cores, 2);
  EXPECT_EQ(places(5), (std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}}));
  ASSERT_EQ(load_nodes("host", "1", 4, {1, 0, 0, 0}, &error), Status::kOk) << error;
  EXPECT_EQ(machine().instances, 2);
  EXPECT_EQ(machine().cores, 3);
  EXPECT_EQ(places(4), (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}, {1, 1}, {1, 2}}));
}

TEST_F(NodesTest, OneNodeEmulationInstancesOrNoMapKeepTheArithmetic) {
  std::string error;
  // One node: the host alone, as without a map.
  ASSERT_EQ(load_nodes("host", "1", 4, {5, 5, 5, 5}, &error), Status::kOk) << error;
  EXPECT_EQ(machine().instances, 1);
  EXPECT_EQ(machine().cores, 4);
  EXPECT_TRUE(machine().placement.empty());
  EXPECT_EQ(places(4), (std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {0, 2}, {0, 3}}));
  // TORUSMPI_INSTANCES asks for host instances of its own: ranks fill them in order.
  ASSERT_EQ(load_nodes("host", "2", 4, {0, 1, 0, 1}, &error), Status::kOk) << error;
  EXPECT_EQ(machine().instances, 2);
  EXPECT_TRUE(machine().placement.empty());
  EXPECT_EQ(places(4), (std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
  // An emulated model places its ranks on its chips whatever the nodes.
  ASSERT_EQ(load_nodes("torus:2x2:cores=1", "1", 4, {0, 1, 0, 1}, &error), Status::kOk) << error;
  EXPECT_EQ(machine().instances, 1);
  EXPECT_TRUE(machine().placement.empty());
  EXPECT_EQ(place(machine(), 3).chip, 3);
  // A map that is not one node per rank is not used.
  for (const std::vector<int>& bad : {std::vector<int>{0, 1, 0}, std::vector<int>{0, -1, 0, 1}}) {
    ASSERT_EQ(load_nodes("host", "1", 4, bad, &error), Status::kOk) << error;
    EXPECT_EQ(machine().instances, 1);
    EXPECT_TRUE(machine().placement.empty());
  }
  // Beyond the job: instance 0, as a place with no rank.
  ASSERT_EQ(load_nodes("host", "1", 2, {0, 1}, &error), Status::kOk) << error;
  EXPECT_EQ(place(machine(), 2).instance, 0);
}

TEST(AssignCores, ChipsStayOnOneNumaNodeAndSpread) {
  // Two NUMA nodes of 4 cores; 4 ranks, 2 per chip: one chip per node.
  std::vector<int> numa = {0, 0, 0, 0, 1, 1, 1, 1};
  std::vector<int> got = assign_cores(numa, {0, 0, 1, 1});
  EXPECT_EQ(got, (std::vector<int>{0, 1, 4, 5}));
  // Chips of 3 ranks: each on a node of its own.
  got = assign_cores(numa, {0, 0, 0, 1, 1, 1});
  EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 4, 5, 6}));
  // A chip bigger than a node spills, and every core is used once.
  got = assign_cores(numa, {0, 0, 0, 0, 0, 0, 1, 1});
  std::set<int> used(got.begin(), got.end());
  EXPECT_EQ(used.size(), 8u);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(numa[got[r]], 0) << "rank " << r;
  // One node: consecutive cores.
  EXPECT_EQ(assign_cores({0, 0, 0}, {5, 5, 7}), (std::vector<int>{0, 1, 2}));
  // More ranks than cores: round robin.
  EXPECT_EQ(assign_cores({0, 0}, {0, 0, 1}), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(assign_cores({}, {0}), (std::vector<int>{-1}));
}

}  // namespace
}  // namespace torusmpi::topo
