// The two-phase plan (src/io/two_phase.h): aggregators per node and cb_nodes, file domains that
// cover the touched range exactly, rounds of cb_buffer_size, every byte of every rank in exactly
// one piece of one (aggregator, round) and its slice contiguous in the rank's packed data; what
// an aggregator plans from the clipped extents it is told matches what the ranks send; and a 3-D
// block decomposition whose rows interleave becomes one file call per round.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "io/coll_io.h"
#include "io/two_phase.h"

namespace torusmpi::io {
namespace {

TEST(IoPlanAggregators, TwoPerNodeByDefault) {
  // Ranks 0-3 on node 7, 4-7 on node 3: the lowest two ranks of each.
  static_assert(kAggregatorsPerNode == 2);
  std::vector<int> node_of = {7, 7, 7, 7, 3, 3, 3, 3};
  EXPECT_EQ(choose_aggregators(node_of, 0), (std::vector<int>{0, 1, 4, 5}));
  EXPECT_EQ(choose_aggregators(node_of, 1), (std::vector<int>{0}));
  EXPECT_EQ(choose_aggregators(node_of, 2), (std::vector<int>{0, 4}));
  // More than the nodes: second ranks of each node, spread before any node gets a third.
  EXPECT_EQ(choose_aggregators(node_of, 3), (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(choose_aggregators(node_of, 4), (std::vector<int>{0, 1, 4, 5}));
  EXPECT_EQ(choose_aggregators(node_of, 100).size(), 8u);
  // Ranks placed round-robin over nodes.
  EXPECT_EQ(choose_aggregators({0, 1, 0, 1}, 0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(choose_aggregators({0, 1, 0, 1, 0}, 0), (std::vector<int>{0, 1, 2, 3}));
  // A node of one rank: that one.
  EXPECT_EQ(choose_aggregators({5}, 0), (std::vector<int>{0}));
  EXPECT_EQ(choose_aggregators({5, 6, 6}, 0), (std::vector<int>{0, 1, 2}));
}

TEST(IoPlanDomains, CoverTheRangeAlignedAndInRounds) {
  for (int naggr : {1, 2, 3, 5}) {
    for (int64_t begin : {int64_t{0}, int64_t{12345}}) {
      for (int64_t len : {int64_t{0}, int64_t{1}, int64_t{1000}, int64_t{10} << 20}) {
        Domains d = split_domains(begin, begin + len, naggr, 4096);
        ASSERT_EQ(d.count(), naggr);
        EXPECT_EQ(d.begin(0), begin);
        EXPECT_EQ(d.end(naggr - 1), begin + len);
        int64_t rounds_bytes = 0;
        for (int a = 0; a < naggr; ++a) {
          EXPECT_LE(d.begin(a), d.end(a));
          if (a > 0 && len >= 4 * kAlign * naggr) {
            EXPECT_EQ(d.begin(a) % kAlign, 0);
          }
          for (int k = 0; k < d.rounds(a); ++k) {
            EXPECT_LE(d.round_end(a, k) - d.round_begin(a, k), 4096);
            EXPECT_GT(d.round_end(a, k), d.round_begin(a, k));
            rounds_bytes += d.round_end(a, k) - d.round_begin(a, k);
          }
          if (d.end(a) > d.begin(a)) {
            EXPECT_EQ(d.owner(d.begin(a)), a);
            EXPECT_EQ(d.owner(d.end(a) - 1), a);
          }
        }
        EXPECT_EQ(rounds_bytes, len);
      }
    }
  }
}

// Each rank's extents in the 3-D block decomposition of a global array of nx x ny x nz elements
// of `elem` bytes over px x py x pz ranks (C order, rank r at coordinates in C order).
std::vector<std::vector<Extent>> blocks3d(int nx, int ny, int nz, int px, int py, int pz,
                                          int elem) {
  std::vector<std::vector<Extent>> out;
  int lx = nx / px, ly = ny / py, lz = nz / pz;
  for (int r = 0; r < px * py * pz; ++r) {
    int cx = r / (py * pz), cy = r / pz % py, cz = r % pz;
    std::vector<Extent> e;
    for (int x = 0; x < lx; ++x)
      for (int y = 0; y < ly; ++y) {
        int64_t g = (static_cast<int64_t>(cx * lx + x) * ny + cy * ly + y) * nz + cz * lz;
        e.push_back(Extent{g * elem, static_cast<int64_t>(lz) * elem});
      }
    out.push_back(e);
  }
  return out;
}

// Plans every rank's access and checks the whole exchange: coverage, slices, the aggregators'
// view. Returns the file calls a write makes (covered runs over all rounds).
size_t check_exchange(const std::vector<std::vector<Extent>>& access, int naggr, int64_t cb) {
  int64_t lo = INT64_MAX, hi = 0;
  for (const auto& e : access)
    for (const Extent& x : e) {
      lo = std::min(lo, x.off);
      hi = std::max(hi, x.off + x.len);
    }
  if (lo > hi) lo = hi = 0;
  Domains d = split_domains(lo, hi, naggr, cb);
  // (aggregator, round) -> the pieces every rank sends there.
  std::map<std::pair<int, int>, std::vector<Extent>> rounds;
  std::map<std::tuple<int, int, int>, int64_t> sent;  // (agg, round, rank) -> bytes
  for (size_t r = 0; r < access.size(); ++r) {
    RankPlan p = plan_rank(access[r], d);
    int64_t want = 0;
    for (const Extent& x : access[r]) want += x.len;
    EXPECT_EQ(p.bytes, want);
    int64_t pos = 0;
    for (const Slice& s : p.slices) {
      EXPECT_GT(s.bytes, 0);
      EXPECT_EQ(s.pos, pos) << "slices follow each other in the packed data";
      int64_t in = s.pos;
      for (size_t i = s.first; i < s.first + s.count; ++i) {
        const Piece& q = p.pieces[i];
        EXPECT_EQ(q.pos, in);
        EXPECT_GE(q.off, d.round_begin(s.agg, s.round));
        EXPECT_LE(q.off + q.len, d.round_end(s.agg, s.round));
        in += q.len;
        rounds[{s.agg, s.round}].push_back(Extent{q.off, q.len});
      }
      EXPECT_EQ(in, s.pos + s.bytes);
      EXPECT_EQ(sent.count({s.agg, s.round, static_cast<int>(r)}), 0u) << "one slice per round";
      sent[{s.agg, s.round, static_cast<int>(r)}] = s.bytes;
      pos += s.bytes;
    }
    EXPECT_EQ(pos, want);
    // The aggregators' side: from what rank r tells each of them, the same slices.
    for (int a = 0; a < d.count(); ++a) {
      RankPlan q = plan_rank(clip(access[r], d.begin(a), d.end(a)), d);
      for (const Slice& s : q.slices) {
        EXPECT_EQ(s.agg, a);
        auto it = sent.find({a, s.round, static_cast<int>(r)});
        EXPECT_NE(it, sent.end());
        if (it != sent.end()) {
          EXPECT_EQ(it->second, s.bytes);
        }
      }
    }
  }
  // Every byte touched once: the rounds' pieces, merged, are the union of the accesses.
  std::vector<Extent> all, got;
  for (const auto& e : access) all.insert(all.end(), e.begin(), e.end());
  size_t calls = 0;
  for (auto& [key, pieces] : rounds) {
    int64_t bytes = 0;
    for (const Extent& x : pieces) bytes += x.len;
    std::vector<Extent> runs = covered_runs(pieces);
    int64_t covered = 0;
    for (const Extent& x : runs) covered += x.len;
    EXPECT_EQ(bytes, covered) << "no byte twice in a round";
    calls += runs.size();
    got.insert(got.end(), runs.begin(), runs.end());
  }
  EXPECT_EQ(covered_runs(got).size(), covered_runs(all).size());
  int64_t a = 0, b = 0;
  for (const Extent& x : covered_runs(all)) a += x.len;
  for (const Extent& x : covered_runs(got)) b += x.len;
  EXPECT_EQ(a, b);
  return calls;
}

TEST(IoPlanExchange, BlockDecompositionIsOneFileCallPerRound) {
  // 64^3 doubles (2 MiB) over 2 x 2 x 2 ranks: rows of 32 doubles interleave.
  auto access = blocks3d(64, 64, 64, 2, 2, 2, 8);
  EXPECT_TRUE(interleaved([&] {
    std::vector<Extent> ranges;
    for (const auto& e : access)
      ranges.push_back(Extent{e.front().off, e.back().off + e.back().len - e.front().off});
    return ranges;
  }()));
  const int64_t file = 64 * 64 * 64 * 8;
  for (int naggr : {1, 2, 4}) {
    for (int64_t cb : {int64_t{1} << 20, int64_t{64} << 10, int64_t{4096}}) {
      Domains d = split_domains(0, file, naggr, cb);
      size_t rounds = 0;
      for (int a = 0; a < naggr; ++a) rounds += static_cast<size_t>(d.rounds(a));
      EXPECT_EQ(check_exchange(access, naggr, cb), rounds)
          << naggr << " aggregators, cb " << cb << ": one pwrite per round";
    }
  }
}

TEST(IoPlanExchange, HolesEmptyRanksAndOddSizes) {
  // Rank 0: nothing; rank 1: scattered extents; rank 2: one large extent; holes between.
  std::vector<std::vector<Extent>> access = {
      {}, {{10, 5}, {100, 1}, {5000, 3000}}, {{9000, 70000}}, {{8000, 1000}}};
  for (int naggr : {1, 2, 3})
    for (int64_t cb : {int64_t{7}, int64_t{4096}, int64_t{1} << 20})
      check_exchange(access, naggr, cb);
  // A round with a hole is two file calls, not one call over the hole.
  Domains d = split_domains(0, 100, 1, 1000);
  EXPECT_EQ(d.rounds(0), 1);
  EXPECT_EQ(covered_runs({{0, 10}, {50, 50}, {10, 5}}).size(), 2u);
  // No access at all: no domain has a round.
  EXPECT_EQ(check_exchange({{}, {}}, 2, 4096), 0u);
}

TEST(IoPlanExchange, ClipKeepsOnlyTheDomain) {
  std::vector<Extent> e = {{0, 10}, {20, 10}, {40, 10}};
  auto c = clip(e, 5, 45);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].off, 5);
  EXPECT_EQ(c[0].len, 5);
  EXPECT_EQ(c[2].off, 40);
  EXPECT_EQ(c[2].len, 5);
  EXPECT_TRUE(clip(e, 10, 20).empty());
}

TEST(IoPlanAutomatic, InterleavedOnlyWhenRangesOverlap) {
  EXPECT_FALSE(interleaved({{0, 100}, {100, 100}, {200, 0}, {300, 5}}));
  EXPECT_TRUE(interleaved({{0, 100}, {50, 100}}));
  // A range inside an earlier long one, past the previous range's end.
  EXPECT_TRUE(interleaved({{0, 1000}, {10, 10}, {500, 10}}));
  EXPECT_FALSE(interleaved({}));
}

TEST(IoPlanHints, RomioNamesDefaultsAndReport) {
  CollHints h;
  EXPECT_EQ(h.cb_buffer_size, 1 << 20);
  EXPECT_EQ(h.write, CbMode::kAutomatic);
  EXPECT_TRUE(h.set("romio_cb_write", "enable"));
  EXPECT_TRUE(h.set("romio_cb_read", "disable"));
  EXPECT_TRUE(h.set("cb_buffer_size", "4096"));
  EXPECT_TRUE(h.set("cb_nodes", "2"));
  EXPECT_FALSE(h.set("striping_unit", "65536"));
  // Values that do not parse leave the hint as it was.
  EXPECT_TRUE(h.set("cb_buffer_size", "-5"));
  EXPECT_TRUE(h.set("cb_buffer_size", "12x"));
  EXPECT_TRUE(h.set("romio_cb_write", "sometimes"));
  EXPECT_EQ(h.write, CbMode::kEnable);
  EXPECT_EQ(h.read, CbMode::kDisable);
  EXPECT_EQ(h.cb_buffer_size, 4096);
  EXPECT_EQ(h.cb_nodes, 2);
  auto r = h.report(2);
  std::map<std::string, std::string> m(r.begin(), r.end());
  EXPECT_EQ(m["cb_buffer_size"], "4096");
  EXPECT_EQ(m["romio_cb_write"], "enable");
  EXPECT_EQ(m["romio_cb_read"], "disable");
  EXPECT_EQ(m["cb_nodes"], "2");
}

}  // namespace
}  // namespace torusmpi::io
