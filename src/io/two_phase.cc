#include "io/two_phase.h"

#include <algorithm>
#include <map>

namespace torusmpi::io {

std::vector<int> choose_aggregators(const std::vector<int>& node_of, int cb_nodes) {
  // Ranks grouped by node, nodes in order of first appearance: the k-th pass takes the k-th rank
  // of every node, so aggregators spread over the nodes before any node gets two.
  std::vector<int> node_order;
  std::map<int, std::vector<int>> by_node;
  for (int r = 0; r < static_cast<int>(node_of.size()); ++r) {
    auto& v = by_node[node_of[r]];
    if (v.empty()) node_order.push_back(node_of[r]);
    v.push_back(r);
  }
  std::vector<int> aggs;
  if (cb_nodes <= 0) {
    for (int n : node_order) {
      const auto& v = by_node[n];
      for (size_t i = 0; i < v.size() && i < static_cast<size_t>(kAggregatorsPerNode); ++i)
        aggs.push_back(v[i]);
    }
    std::sort(aggs.begin(), aggs.end());
    return aggs;
  }
  const size_t want = std::min(static_cast<size_t>(cb_nodes), node_of.size());
  for (size_t pass = 0; aggs.size() < want; ++pass) {
    for (int n : node_order) {
      const auto& v = by_node[n];
      if (pass < v.size() && aggs.size() < want) aggs.push_back(v[pass]);
    }
  }
  std::sort(aggs.begin(), aggs.end());
  return aggs;
}

int Domains::rounds(int a) const {
  int64_t len = end(a) - begin(a);
  return static_cast<int>((len + cb - 1) / cb);
}

int64_t Domains::round_end(int a, int k) const { return std::min(end(a), round_begin(a, k) + cb); }

int Domains::owner(int64_t off) const {
  // The last cut at or below off; empty domains (equal cuts) are skipped by upper_bound.
  auto it = std::upper_bound(bounds.begin(), bounds.end() - 1, off);
  return static_cast<int>(it - bounds.begin()) - 1;
}

int Domains::max_rounds() const {
  int m = 0;
  for (int a = 0; a < count(); ++a) m = std::max(m, rounds(a));
  return m;
}

Domains split_domains(int64_t begin, int64_t end, int naggr, int64_t cb) {
  Domains d;
  d.cb = std::max<int64_t>(cb, 1);
  d.bounds.assign(static_cast<size_t>(naggr) + 1, begin);
  int64_t total = end - begin;
  for (int a = 1; a < naggr; ++a) {
    int64_t cut = begin + total * a / naggr;
    // Aligned down when the domains are large enough that it changes little.
    if (total / naggr >= 4 * kAlign) cut = cut / kAlign * kAlign;
    d.bounds[a] = std::clamp(cut, d.bounds[a - 1], end);
  }
  d.bounds[naggr] = end;
  return d;
}

RankPlan plan_rank(const std::vector<Extent>& extents, const Domains& d, int64_t first_pos) {
  RankPlan plan;
  int64_t pos = first_pos;
  for (const Extent& e : extents) {
    int64_t off = e.off, left = e.len;
    while (left > 0) {
      // The aggregator and round holding off, and how much of the extent stays in that round.
      int a = d.owner(off);
      int k = static_cast<int>((off - d.begin(a)) / d.cb);
      int64_t len = std::min(left, d.round_end(a, k) - off);
      plan.pieces.push_back(Piece{off, len, pos});
      if (plan.slices.empty() || plan.slices.back().agg != a || plan.slices.back().round != k) {
        plan.slices.push_back(Slice{a, k, pos, 0, plan.pieces.size() - 1, 0});
      }
      Slice& s = plan.slices.back();
      s.bytes += len;
      ++s.count;
      off += len;
      pos += len;
      left -= len;
    }
  }
  plan.bytes = pos - first_pos;
  return plan;
}

std::vector<Extent> clip(const std::vector<Extent>& extents, int64_t begin, int64_t end) {
  std::vector<Extent> out;
  // Sorted: skip to the first extent ending after begin.
  auto it = std::lower_bound(extents.begin(), extents.end(), begin,
                             [](const Extent& e, int64_t b) { return e.off + e.len <= b; });
  for (; it != extents.end() && it->off < end; ++it) {
    int64_t lo = std::max(it->off, begin), hi = std::min(it->off + it->len, end);
    if (hi > lo) out.push_back(Extent{lo, hi - lo});
  }
  return out;
}

std::vector<Extent> covered_runs(std::vector<Extent> pieces) {
  std::sort(pieces.begin(), pieces.end(),
            [](const Extent& x, const Extent& y) { return x.off < y.off; });
  std::vector<Extent> runs;
  for (const Extent& p : pieces) {
    if (p.len <= 0) continue;
    if (!runs.empty() && p.off <= runs.back().off + runs.back().len) {
      Extent& r = runs.back();
      r.len = std::max(r.off + r.len, p.off + p.len) - r.off;
    } else {
      runs.push_back(p);
    }
  }
  return runs;
}

bool interleaved(const std::vector<Extent>& ranges) {
  std::vector<Extent> r;
  for (const Extent& e : ranges)
    if (e.len > 0) r.push_back(e);
  std::sort(r.begin(), r.end(), [](const Extent& x, const Extent& y) { return x.off < y.off; });
  int64_t reach = 0;  // the furthest end of the ranges before i
  for (size_t i = 0; i < r.size(); ++i) {
    if (i > 0 && r[i].off < reach) return true;
    reach = std::max(reach, r[i].off + r[i].len);
  }
  return false;
}

}  // namespace torusmpi::io
