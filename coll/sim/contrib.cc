#include "coll/sim/contrib.h"

namespace torusmpi::coll::sim {

std::string Sets::text(int id) const {
  std::string s = "{";
  for (const auto& [lo, hi] : get(id)) {
    if (s.size() > 1) s += ",";
    s += lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
  }
  return s + "}";
}

int Sets::make(const Intervals& v) {
  if (p_ <= kRunLimit) {
    if (v.size() == 1) return run(v[0].first, v[0].second);
    // Two pieces touching both ends of the ranks are one run that wraps.
    if (v.size() == 2 && v[0].first == 0 && v[1].second == p_ - 1)
      return run(v[1].first, v[0].second);
  }
  auto it = ids_.find(v);
  if (it != ids_.end()) return it->second;
  sets_.push_back(v);
  ids_.emplace(v, static_cast<int>(sets_.size() - 1));
  return static_cast<int>(sets_.size() - 1);
}

Intervals Sets::get(int id) const {
  if (!is_run(id)) return sets_[id];
  if (lo_of(id) <= hi_of(id)) return {{lo_of(id), hi_of(id)}};
  return {{0, hi_of(id)}, {lo_of(id), p_ - 1}};
}

int Sets::compute_join(int left, int right, bool ordered, std::string* why) {
  const Intervals a = get(left);
  const Intervals b = get(right);
  if (ordered) {
    if (a.size() != 1 || b.size() != 1 || a[0].second + 1 != b[0].first) {
      *why = "non-commutative reduction out of rank order: " + text(left) + " op " + text(right);
      return kFail;
    }
    return range(a[0].first, b[0].second);
  }
  Intervals all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  Intervals out;
  for (const auto& iv : all) {
    if (!out.empty() && iv.first <= out.back().second) {
      *why = "rank " + std::to_string(iv.first) + " counted twice: " + text(left) + " op " +
             text(right);
      return kFail;
    }
    if (!out.empty() && iv.first == out.back().second + 1) {
      out.back().second = iv.second;
    } else {
      out.push_back(iv);
    }
  }
  return make(out);
}

std::string describe(const Sets& sets, const Piece& x, uint64_t at, uint64_t len) {
  if (!x.defined) return "undefined bytes";
  uint64_t o = x.origin + (at - x.off);
  std::string range = "[" + std::to_string(o) + ", " + std::to_string(o + len) + ")";
  switch (key_kind(x.key)) {
    case kVec:
      return "the reduction over ranks " + sets.text(x.set) + " of vector bytes " + range;
    case kSendOf:
      return "rank " + std::to_string(key_rank(x.key)) + "'s send bytes " + range;
    case kRecvOf:
      return "rank " + std::to_string(key_rank(x.key)) + "'s receive bytes " + range +
             " as they were before the call";
  }
  return "?";
}

void ExpectedRecv::data(uint64_t at, uint64_t len, int rank, uint64_t origin) {
  want_->fill(at, len, make_key(kSendOf, rank), sets_->range(rank, rank), origin);
}

void ExpectedRecv::reduction(uint64_t at, uint64_t len, int lo, int hi, uint64_t origin) {
  want_->fill(at, len, make_key(kVec, 0), sets_->range(lo, hi), origin);
}

void ExpectedRecv::skip(uint64_t lo, uint64_t hi) { skip_->push_back({lo, hi}); }

const Args& ExpectedRecv::args(int rank) const { return (*args_)[rank]; }

}  // namespace torusmpi::coll::sim
