// Every registered algorithm through the simulator's checks, generated from the registry: rank
// counts 1-17, 24, 31, 32, 64, 128 (and 1000 in SweepLarge); counts 0, 1, p-1, p, p+1 and a large
// prime; in place and not; every root up to 32 ranks, then the first, second, middle and last;
// commutative ops, and non-commutative ones where the algorithm takes them. Each as forced: the
// hier algorithms, for jobs spanning instances, run here (no placement) as one ring.
//
// TORUSMPI_SWEEP=<collective>[/<token>] narrows the run to some algorithms (when writing one).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "coll/collective.h"
#include "coll/select/registry.h"
#include "coll/sim/calls.h"
#include "coll/sim/sim.h"

namespace torusmpi::coll {
namespace {

constexpr size_t kPrime = 1009;

bool allows_in_place(Coll c) { return collective(c).in_place(); }

std::vector<int> roots_for(Coll c, int p) {
  if (!coll_rooted(c)) return {0};
  std::vector<int> roots;
  if (p <= 32) {
    for (int r = 0; r < p; ++r) roots.push_back(r);
  } else {
    roots = {0, 1, p / 2, p - 1};
  }
  return roots;
}

std::vector<size_t> counts_for(int p) {
  std::vector<size_t> c = {
      0, 1, static_cast<size_t>(p - 1), static_cast<size_t>(p), static_cast<size_t>(p + 1), kPrime};
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

bool selected(const Algorithm& alg) {
  const char* want = std::getenv("TORUSMPI_SWEEP");
  if (want == nullptr || *want == '\0') return true;
  std::string name = std::string(coll_name(alg.coll)) + "/" + alg.token;
  std::string w = want;
  return name == w || name.rfind(w + "/", 0) == 0;
}

// Runs every combination for p ranks; returns how many calls were checked, and fails the test
// (with the call spelled out) at the first that does not pass.
int sweep(const Algorithm& alg, int p, const std::vector<size_t>& counts) {
  int checked = 0;
  for (size_t count : counts) {
    for (int in_place = 0; in_place < (allows_in_place(alg.coll) ? 2 : 1); ++in_place) {
      for (int comm = 1; comm >= (coll_reduces(alg.coll) ? 0 : 1); --comm) {
        for (int root : roots_for(alg.coll, p)) {
          sim::CallShape shape;
          shape.coll = alg.coll;
          shape.size = p;
          shape.count = count;
          shape.elem = alg.coll == Coll::kAlltoallw ? 1 : 4;
          shape.root = root;
          shape.in_place = in_place;
          shape.commutative = comm;
          auto call = sim::make_call(shape);
          std::string why;
          if (!runs_forced(alg, call->args[0], &why)) continue;
          sim::Result res =
              sim::run(call->args, [&](Builder& b, const Args& a) { alg.build(b, a); });
          ++checked;
          if (!res.ok) {
            ADD_FAILURE() << coll_name(alg.coll) << "/" << alg.token << " p=" << p
                          << " count=" << count << " root=" << root << (in_place ? " in place" : "")
                          << (comm ? "" : " non-commutative") << ": " << res.error;
            return checked;
          }
        }
      }
    }
  }
  return checked;
}

std::string test_name(const testing::TestParamInfo<size_t>& info) {
  const Algorithm& a = algorithms()[info.param];
  return std::string(coll_name(a.coll)) + "_" + a.token;
}

std::vector<size_t> all_indices() {
  std::vector<size_t> v;
  for (size_t i = 0; i < algorithms().size(); ++i) v.push_back(i);
  return v;
}

class Sweep : public testing::TestWithParam<size_t> {};

TEST_P(Sweep, SmallAndMediumRankCounts) {
  const Algorithm& alg = algorithms()[GetParam()];
  if (!selected(alg)) GTEST_SKIP() << "not in TORUSMPI_SWEEP";
  std::vector<int> sizes;
  for (int p = 1; p <= 17; ++p) sizes.push_back(p);
  for (int p : {24, 31, 32, 64, 128}) sizes.push_back(p);
  int checked = 0;
  for (int p : sizes) {
    checked += sweep(alg, p, counts_for(p));
    if (HasFailure()) return;
  }
  EXPECT_GT(checked, 0);
  RecordProperty("calls", checked);
}

// A thousand ranks: the counts that split unevenly (p+1 and a prime above p), one root besides 0.
TEST_P(Sweep, ThousandRanks) {
  const Algorithm& alg = algorithms()[GetParam()];
  if (!selected(alg)) GTEST_SKIP() << "not in TORUSMPI_SWEEP";
  const int p = 1000;
  int checked = 0;
  for (size_t count : {static_cast<size_t>(p + 1), kPrime}) {
    sim::CallShape shape;
    shape.coll = alg.coll;
    shape.size = p;
    shape.count = count;
    shape.elem = alg.coll == Coll::kAlltoallw ? 1 : 4;
    shape.root = coll_rooted(alg.coll) ? p - 1 : 0;
    shape.in_place = count == kPrime && allows_in_place(alg.coll);
    auto call = sim::make_call(shape);
    sim::Result res = sim::run(call->args, [&](Builder& b, const Args& a) { alg.build(b, a); });
    ++checked;
    ASSERT_TRUE(res.ok) << coll_name(alg.coll) << "/" << alg.token << " p=" << p
                        << " count=" << count << ": " << res.error;
  }
  EXPECT_EQ(checked, 2);
}

INSTANTIATE_TEST_SUITE_P(Registry, Sweep, testing::ValuesIn(all_indices()), test_name);

}  // namespace
}  // namespace torusmpi::coll
