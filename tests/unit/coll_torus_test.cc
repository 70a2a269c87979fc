// The torus algorithms (torus_ring, dual_ring, rdh, direct, chip_ring of every collective that has
// them) through the simulator's semantic check on emulated placements: small tori, trn1 (4x4, 2
// cores), trn2.48xl (4x4, 4 cores), trn2u (4x4x4, 4 cores), a subset that does not fill its
// torus, and the host. The coll_sweep test runs them on the host only (no TopoView), where
// every one is a plain ring or fold; here they take their torus shapes. Then what makes them
// torus algorithms: every message of torus_ring, rdh and dual_ring on a shaped torus goes to the
// same chip or a neighbouring one, and dual_ring's two cycles share no link.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "coll/patterns/staged.h"
#include "coll/patterns/torus_rings.h"
#include "coll/sched/schedule.h"
#include "coll/select/registry.h"
#include "coll/sim/calls.h"
#include "coll/sim/sim.h"
#include "tests/unit/sim_helpers.h"

namespace torusmpi::coll {
namespace {

struct Placement {
  std::string name;
  int ndims;
  std::vector<int> dims;
  int cores;
  int ranks;  // the first `ranks` of the full placement (fewer: a subset, not torus-shaped)
};

// Core, then chip: rank r is core r % cores of chip r / cores, all on instance 0.
TopoView make_topo(const Placement& pl) {
  TopoView t;
  t.ndims = pl.ndims;
  for (int k = 0; k < pl.ndims; ++k) t.dims[k] = pl.dims[k];
  for (int r = 0; r < pl.ranks; ++r) {
    t.instance.push_back(0);
    t.chip.push_back(r / pl.cores);
    t.core.push_back(r % pl.cores);
  }
  return t;
}

bool is_torus_token(const std::string& t) {
  return t == "torus_ring" || t == "dual_ring" || t == "rdh" || t == "direct" || t == "chip_ring";
}

std::vector<const Algorithm*> torus_algorithms() {
  std::vector<const Algorithm*> v;
  for (const Algorithm& a : algorithms()) {
    if (is_torus_token(a.token)) v.push_back(&a);
  }
  return v;
}

bool allows_in_place(Coll c) { return c != Coll::kBcast; }

// Runs `alg` on placement `pl` (topo nullptr: the host) for the given counts, in place and not,
// commutative and not where allowed, every root up to 8 ranks (else 0 and p-1). Returns calls
// checked; adds a failure naming the call at the first that does not pass.
int check(const Algorithm& alg, const Placement& pl, const TopoView* topo,
          const std::vector<size_t>& counts, bool both_ways) {
  const int p = pl.ranks;
  int checked = 0;
  std::vector<int> roots = {0};
  if (coll_rooted(alg.coll)) {
    roots.clear();
    for (int r = 0; r < p; ++r) {
      if (p <= 8 || r == 0 || r == p - 1) roots.push_back(r);
    }
  }
  for (size_t count : counts) {
    for (int in_place = 0; in_place < (both_ways && allows_in_place(alg.coll) ? 2 : 1);
         ++in_place) {
      for (int comm = 1; comm >= (both_ways && coll_reduces(alg.coll) ? 0 : 1); --comm) {
        for (int root : roots) {
          sim::CallShape shape;
          shape.coll = alg.coll;
          shape.size = p;
          shape.count = count;
          shape.elem = 4;
          shape.root = root;
          shape.in_place = in_place;
          shape.commutative = comm;
          auto call = sim::make_call(shape);
          for (Args& a : call->args) a.topo = topo;
          std::string why;
          if (!supports(alg, call->args[0], &why)) continue;
          sim::Result res =
              sim::run(call->args, [&](Builder& b, const Args& a) { alg.build(b, a); });
          ++checked;
          if (!res.ok) {
            ADD_FAILURE() << coll_name(alg.coll) << "/" << alg.token << " on " << pl.name
                          << " p=" << p << " count=" << count << " root=" << root
                          << (in_place ? " in place" : "") << (comm ? "" : " non-commutative")
                          << ": " << res.error;
            return checked;
          }
        }
      }
    }
  }
  return checked;
}

using test::sweep_counts;

const std::vector<Placement>& placements() {
  static const std::vector<Placement> v = {
      {"torus:2x2:cores=1", 2, {2, 2}, 1, 4},
      {"torus:2x2:cores=2", 2, {2, 2}, 2, 8},
      {"torus:2x4:cores=1", 2, {2, 4}, 1, 8},
      {"trn1.32xl", 2, {4, 4}, 2, 32},
      {"trn2.48xl", 2, {4, 4}, 4, 64},
      {"ranks 0-6 of torus:2x2x2:cores=1", 3, {2, 2, 2}, 1, 7},
      {"ranks 0-20 of trn1.32xl", 2, {4, 4}, 2, 21},
      {"one chip of torus:2x2:cores=4 and half of another", 2, {2, 2}, 4, 6},
  };
  return v;
}

class Torus : public testing::TestWithParam<const Algorithm*> {};

TEST_P(Torus, SmallAndInstanceTori) {
  const Algorithm& alg = *GetParam();
  int checked = 0;
  for (const Placement& pl : placements()) {
    const TopoView topo = make_topo(pl);
    checked += check(alg, pl, &topo, sweep_counts(pl.ranks), true);
    if (HasFailure()) return;
  }
  EXPECT_GT(checked, 0);
}

TEST_P(Torus, Host) {
  const Algorithm& alg = *GetParam();
  int checked = 0;
  for (int p : {1, 2, 6, 16}) {
    const Placement pl{"host", 0, {}, 1, p};
    checked += check(alg, pl, nullptr, sweep_counts(p), true);
    if (HasFailure()) return;
  }
  EXPECT_GT(checked, 0);
}

// trn2u: 4 instances' chips joined along z, 256 ranks. The simulator's model of it as one torus
// (instance 0): a few counts, as each call is 256 schedules.
TEST_P(Torus, UltraServer) {
  const Algorithm& alg = *GetParam();
  const Placement pl{"trn2u", 3, {4, 4, 4}, 4, 256};
  const TopoView topo = make_topo(pl);
  EXPECT_GT(check(alg, pl, &topo, {257}, false), 0);
}

std::string test_name(const testing::TestParamInfo<const Algorithm*>& info) {
  return std::string(coll_name(info.param->coll)) + "_" + info.param->token;
}

INSTANTIATE_TEST_SUITE_P(Registry, Torus, testing::ValuesIn(torus_algorithms()), test_name);

// The torus distance in hops between two chips.
int hops(const TopoView& t, int a, int b) {
  int h = 0;
  for (int k = 0; k < t.ndims; ++k) {
    const int d = std::abs(a % t.dims[k] - b % t.dims[k]);
    h += std::min(d, t.dims[k] - d);
    a /= t.dims[k], b /= t.dims[k];
  }
  return h;
}

// Every rank's schedule of `alg` for a call of `count` on the placement.
std::vector<Schedule> schedules(const Algorithm& alg, const TopoView& topo, int p, size_t count) {
  sim::CallShape shape;
  shape.coll = alg.coll;
  shape.size = p;
  shape.count = count;
  shape.elem = 4;
  auto call = sim::make_call(shape);
  std::vector<Schedule> s(p);
  for (int r = 0; r < p; ++r) {
    call->args[r].topo = &topo;
    Builder b(&s[r]);
    alg.build(b, call->args[r]);
    b.finish();
  }
  return s;
}

// Every message between chips one link apart or within a chip; returns the undirected links
// the messages used.
std::set<std::pair<int, int>> links_used(const Algorithm& alg, const TopoView& topo, int p,
                                         size_t count) {
  std::set<std::pair<int, int>> used;
  const std::vector<Schedule> s = schedules(alg, topo, p, count);
  for (int r = 0; r < p; ++r) {
    for (const Op& op : s[r].ops) {
      if (op.type != OpType::kSend) continue;
      const int a = topo.chip[r], b = topo.chip[op.peer];
      EXPECT_LE(hops(topo, a, b), 1)
          << coll_name(alg.coll) << "/" << alg.token << ": rank " << r << " (chip " << a
          << ") sends to rank " << op.peer << " (chip " << b << ")";
      if (a != b) used.insert({std::min(a, b), std::max(a, b)});
    }
  }
  return used;
}

TEST(TorusLinks, EveryMessageIsOneLinkOnA4x4Torus) {
  for (int cores : {1, 2}) {
    const Placement pl{"4x4", 2, {4, 4}, cores, 16 * cores};
    const TopoView topo = make_topo(pl);
    for (const Algorithm& alg : algorithms()) {
      const std::string t = alg.token;
      if (t != "torus_ring" && t != "rdh" && t != "dual_ring") continue;
      const size_t count = alg.coll == Coll::kAllreduce || alg.coll == Coll::kBcast ? 5000 : 3;
      const auto used = links_used(alg, topo, pl.ranks, count);
      EXPECT_FALSE(used.empty()) << coll_name(alg.coll) << "/" << t;
    }
  }
}

TEST(TorusLinks, DualRingUsesEveryLinkOfA4x4Torus) {
  // Two edge-disjoint Hamiltonian cycles of a 4-regular torus use all of its 32 links; one
  // cycle run both ways would use 16.
  const Placement pl{"4x4", 2, {4, 4}, 2, 32};
  const TopoView topo = make_topo(pl);
  EXPECT_EQ(links_used(*find_algorithm(Coll::kAllreduce, "dual_ring"), topo, 32, 6400).size(), 32u);
  EXPECT_EQ(links_used(*find_algorithm(Coll::kAllgather, "dual_ring"), topo, 32, 8).size(), 32u);
}

// The cycles themselves: each visits every chip once, consecutive chips (and last to first)
// are one link apart, and no link is on both.
void expect_disjoint_cycles(int ndims, std::vector<int> dims) {
  int d[3] = {1, 1, 1};
  for (int k = 0; k < ndims; ++k) d[k] = dims[k];
  const patterns::ChipCycles* c = patterns::disjoint_cycles(ndims, d);
  ASSERT_NE(c, nullptr);
  TopoView t;
  t.ndims = ndims;
  for (int k = 0; k < 3; ++k) t.dims[k] = d[k];
  const int chips = d[0] * d[1] * d[2];
  std::set<std::pair<int, int>> edges[2];
  int i = 0;
  for (const std::vector<int>* cyc : {&c->a, &c->b}) {
    ASSERT_EQ(static_cast<int>(cyc->size()), chips);
    EXPECT_EQ(static_cast<int>(std::set<int>(cyc->begin(), cyc->end()).size()), chips);
    for (int j = 0; j < chips; ++j) {
      const int a = (*cyc)[j], b = (*cyc)[(j + 1) % chips];
      EXPECT_EQ(hops(t, a, b), 1) << "cycle " << i << " position " << j;
      edges[i].insert({std::min(a, b), std::max(a, b)});
    }
    EXPECT_EQ(static_cast<int>(edges[i].size()), chips);
    ++i;
  }
  for (const auto& e : edges[0]) EXPECT_EQ(edges[1].count(e), 0u) << e.first << "-" << e.second;
}

TEST(TorusCycles, TwoEdgeDisjointHamiltonianCycles) {
  expect_disjoint_cycles(2, {4, 4});
  expect_disjoint_cycles(3, {4, 4, 4});
  // Chips with fewer than four links have no such pair: dual_ring runs the snake ring both ways.
  const int small[3] = {2, 2, 1}, narrow[3] = {2, 4, 1};
  EXPECT_EQ(patterns::disjoint_cycles(2, small), nullptr);
  EXPECT_EQ(patterns::disjoint_cycles(2, narrow), nullptr);
}

// Without two disjoint cycles dual_ring runs the halves round one ring in opposite directions,
// so each link carries traffic both ways. Run directly on the staged engine: every order of
// directions must pass the simulator's check, in place and not, at counts where some slots are
// empty (8 ranks, 8 elements: four per half) and at others. In place, ring then reversed once
// failed here ("counted twice") through the simulator's join cache
// (Sim.RunAndInternedSetJoinApart).
TEST(TorusStaged, HalvesInOppositeDirections) {
  const Placement pl{"torus:2x2:cores=2", 2, {2, 2}, 2, 8};
  const TopoView topo = make_topo(pl);
  const patterns::TorusGrid g = patterns::torus_grid(&topo, pl.ranks);
  const std::vector<int> ring = patterns::snake_ring(g, &topo);
  const std::vector<int> back(ring.rbegin(), ring.rend());
  const patterns::StagedRing fwd = patterns::StagedRing::one(ring);
  const patterns::StagedRing rev = patterns::StagedRing::one(back);
  const std::pair<const char*, std::vector<patterns::StagedRing>> cases[] = {
      {"ring, ring", {fwd, fwd}},
      {"reversed, reversed", {rev, rev}},
      {"ring, reversed", {fwd, rev}},
      {"reversed, ring", {rev, fwd}},
  };
  for (const auto& c : cases) {
    for (size_t count : {1, 7, 8, 9, 16, 1009}) {
      for (int in_place = 0; in_place < 2; ++in_place) {
        sim::CallShape shape;
        shape.coll = Coll::kAllreduce;
        shape.size = pl.ranks;
        shape.count = count;
        shape.elem = 4;
        shape.in_place = in_place;
        auto call = sim::make_call(shape);
        for (Args& a : call->args) a.topo = &topo;
        const sim::Result res = sim::run(call->args, [&](Builder& b, const Args& a) {
          patterns::staged_allreduce(b, a, c.second);
        });
        EXPECT_TRUE(res.ok) << c.first << " count=" << count << (in_place ? " in place" : "")
                            << ": " << res.error;
      }
    }
  }
}

TEST(TorusLinks, UltraServerDualRingAndRdhStayOnLinks) {
  const Placement pl{"4x4x4", 3, {4, 4, 4}, 1, 64};
  const TopoView topo = make_topo(pl);
  EXPECT_EQ(links_used(*find_algorithm(Coll::kAllreduce, "dual_ring"), topo, 64, 6400).size(),
            128u);
  EXPECT_FALSE(links_used(*find_algorithm(Coll::kAllreduce, "rdh"), topo, 64, 6400).empty());
  EXPECT_FALSE(links_used(*find_algorithm(Coll::kAllreduce, "torus_ring"), topo, 64, 6400).empty());
}

}  // namespace
}  // namespace torusmpi::coll
