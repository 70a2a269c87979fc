// The simulator's contribution tracking: what every byte of every buffer holds, as "bytes [o, o+n)
// of rank r's send buffer" or "the reduction over ranks S of the vector at [o, o+n)", never the
// data itself. Sets (of ranks, joined by reductions), Piece and SegMap (a buffer's runs of bytes
// of one meaning), and ExpectedRecv, which turns a descriptor's expected result (expect.h) into
// them. The simulator (sim.cc) moves and combines these as schedules run and compares them.
#ifndef TORUSMPI_COLL_SIM_CONTRIB_H_
#define TORUSMPI_COLL_SIM_CONTRIB_H_

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory_resource>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "coll/coll.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::sim {

// What a byte range holds: whose data (a key) and from where in it (an origin offset), and for
// reductions, over which ranks (a set).
enum KeyKind : uint32_t {
  kVec = 0,     // the vector a reduction combines: every rank's send holds a contribution to it
  kSendOf = 1,  // rank r's send buffer (data that moves, and the root's bcast buffer)
  kRecvOf = 2,  // rank r's receive buffer as it was before the call
};
inline uint32_t make_key(KeyKind kind, int rank) {
  return (static_cast<uint32_t>(kind) << 24) | rank;
}
inline KeyKind key_kind(uint32_t key) { return static_cast<KeyKind>(key >> 24); }
inline int key_rank(uint32_t key) { return static_cast<int>(key & 0xffffff); }

using Intervals = std::vector<std::pair<int, int>>;  // sorted, disjoint, not adjacent

// Sets of ranks as ints. A cyclic run lo..hi (lo > hi: it wraps past rank p-1; what most
// reductions hold, rings included) is the int itself, with the top bit set: joining two adjacent
// runs is arithmetic. Other sets are interned: an index into a table, and joining them is a lookup
// once it has been seen. Every set has one form, so equal sets have equal ints.
class Sets {
 public:
  explicit Sets(int p) : p_(p) { make({}); }  // id 0: the empty set, carried by data that moves

  // What join() gives when the two sets cannot be joined (never a set: bit 30 of a run is 0).
  static constexpr int kFail = -1;

  int range(int lo, int hi) { return lo > hi ? 0 : make({{lo, hi}}); }

  // The set of `left op right`: kFail when a rank would count twice (why says which), or, for a
  // non-commutative op, when left is not the run of ranks just below right's.
  int join(int left, int right, bool ordered, std::string* why) {
    if (is_run(left) && is_run(right)) {
      int total = length(left) + length(right);
      bool left_first = next(hi_of(left)) == lo_of(right);
      bool right_first = next(hi_of(right)) == lo_of(left);
      if (ordered) {
        // Rank order: left ends just below where right starts, and neither wraps.
        if (left_first && lo_of(left) <= hi_of(left) && lo_of(right) <= hi_of(right) &&
            hi_of(left) < lo_of(right))
          return run(lo_of(left), hi_of(right));
      } else if (total <= p_ && (left_first || right_first)) {
        if (total == p_) return run(0, p_ - 1);
        return left_first ? run(lo_of(left), hi_of(right)) : run(lo_of(right), hi_of(left));
      }
    }
    // Both ids whole: a run's top bit shifted out of the key made a run share its entry with
    // the interned set of the same low bits, and the join took the other's result.
    const uint64_t k =
        (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
    auto it = joins_[ordered].find(k);
    if (it != joins_[ordered].end()) {
      if (it->second == kFail) *why = why_[ordered][k];
      return it->second;
    }
    int id = compute_join(left, right, ordered, why);
    joins_[ordered].emplace(k, id);
    if (id == kFail) why_[ordered][k] = *why;
    return id;
  }

  std::string text(int id) const;

 private:
  static constexpr int kRunLimit = 1 << 15;  // runs of ranks below this fit in an int
  static constexpr uint32_t kRunBit = 1u << 31;
  static bool is_run(int id) { return static_cast<uint32_t>(id) & kRunBit; }
  static int lo_of(int id) { return static_cast<int>((static_cast<uint32_t>(id) >> 15) & 0x7fff); }
  static int hi_of(int id) { return static_cast<int>(static_cast<uint32_t>(id) & 0x7fff); }
  static int run(int lo, int hi) {
    return static_cast<int>(kRunBit | static_cast<uint32_t>(lo) << 15 | static_cast<uint32_t>(hi));
  }
  int next(int r) const { return r + 1 == p_ ? 0 : r + 1; }
  int length(int id) const { return (hi_of(id) - lo_of(id) + p_) % p_ + 1; }

  int make(const Intervals& v);
  Intervals get(int id) const;
  int compute_join(int left, int right, bool ordered, std::string* why);

  struct Hash {
    size_t operator()(const Intervals& v) const {
      size_t h = v.size();
      for (const auto& [lo, hi] : v) h = h * 1000003u ^ (static_cast<size_t>(lo) << 20 ^ hi);
      return h;
    }
  };
  int p_;
  std::vector<Intervals> sets_;
  std::unordered_map<Intervals, int, Hash> ids_;
  std::unordered_map<uint64_t, int> joins_[2];  // by ordered
  std::unordered_map<uint64_t, std::string> why_[2];
};

// A run of bytes with one meaning; origin is the offset, in the key's data, of its first byte.
struct Piece {
  uint64_t off = 0;  // relative to the range read
  uint64_t len = 0;
  bool defined = false;
  uint32_t key = 0;
  int set = 0;
  uint64_t origin = 0;
};

inline bool continues(const Piece& a, const Piece& b) {
  return a.defined && b.defined && a.key == b.key && a.set == b.set &&
         a.origin + a.len == b.origin && a.off + a.len == b.off;
}

// What bytes [at, at+len) of piece x hold, in words ("rank 3's send bytes [0, 8)").
std::string describe(const Sets& sets, const Piece& x, uint64_t at, uint64_t len);

// What every byte of one buffer holds: segments sorted by start, in one array; bytes in none are
// undefined. An array rather than a tree: reads walk neighbouring segments in memory, most writes
// replace a segment in place, and a thousand-rank run no longer makes and drops millions of nodes.
class SegMap {
 public:
  // The array comes from the simulation's pool, which hands everything back when the run ends.
  explicit SegMap(std::pmr::memory_resource* pool = std::pmr::get_default_resource()) : v_(pool) {}

  struct Seg {
    uint64_t start;
    uint64_t end;
    uint32_t key;
    int set;
    uint64_t origin;
  };

  void fill(uint64_t start, uint64_t len, uint32_t key, int set, uint64_t origin) {
    if (len == 0) return;
    write(start, len, {Piece{0, len, true, key, set, origin}});
  }

  // The pieces covering [start, start+len), gaps included as undefined pieces, into *out.
  const std::vector<Piece>& read(uint64_t start, uint64_t len, std::vector<Piece>* pieces) const {
    std::vector<Piece>& out = *pieces;
    out.clear();
    uint64_t end = start + len, pos = start;
    size_t i = upper_bound(start);
    if (i > 0) --i;
    for (; i < v_.size() && v_[i].start < end && pos < end; ++i) {
      const Seg& s = v_[i];
      if (s.end <= pos) continue;
      if (s.start > pos) {
        out.push_back(Piece{pos - start, s.start - pos, false, 0, 0, 0});
        pos = s.start;
      }
      uint64_t e = std::min(s.end, end);
      out.push_back(Piece{pos - start, e - pos, true, s.key, s.set, s.origin + (pos - s.start)});
      pos = e;
    }
    if (pos < end) out.push_back(Piece{pos - start, end - pos, false, 0, 0, 0});
    return out;
  }

  // Replaces [start, start+len) with pieces (offsets relative to start, in order), then joins the
  // segments around it that continue each other: the same segments, split and joined at the same
  // places, as before the array (the simulator's messages name them).
  void write(uint64_t start, uint64_t len, const std::vector<Piece>& pieces) {
    if (len == 0) return;
    const uint64_t end = start + len;
    const size_t lo = lower_bound(start);
    // Whole blocks overwritten by one piece are the common case: nothing moves.
    if (pieces.size() == 1 && pieces[0].defined && lo < v_.size() && v_[lo].start == start &&
        v_[lo].end == end) {
      v_[lo] = Seg{start, end, pieces[0].key, pieces[0].set, pieces[0].origin};
      merge_from(lo, end);
      return;
    }
    // A segment from before start keeps its head, and its tail when it reaches past end.
    Seg tail{};
    bool has_tail = false;
    if (lo > 0) {
      Seg& s = v_[lo - 1];
      if (s.end > end) {
        tail = Seg{end, s.end, s.key, s.set, s.origin + (end - s.start)};
        has_tail = true;
      }
      if (s.end > start) s.end = start;
    }
    // Those starting inside go, but for the tail of the last one.
    size_t hi = lo;
    while (hi < v_.size() && v_[hi].start < end) {
      const Seg& s = v_[hi++];
      if (s.end > end) {
        tail = Seg{end, s.end, s.key, s.set, s.origin + (end - s.start)};
        has_tail = true;
        break;
      }
    }
    size_t n = has_tail ? 1 : 0;
    for (const Piece& p : pieces) n += p.defined && p.len > 0;
    // [lo, hi) becomes n segments: the array's tail moves at most once.
    if (n > hi - lo) {
      v_.insert(v_.begin() + hi, n - (hi - lo), Seg{});
    } else {
      v_.erase(v_.begin() + lo + n, v_.begin() + hi);
    }
    size_t k = lo;
    for (const Piece& p : pieces) {
      if (p.defined && p.len > 0)
        v_[k++] = Seg{start + p.off, start + p.off + p.len, p.key, p.set, p.origin};
    }
    if (has_tail) v_[k] = tail;
    merge_from(lo, end);
  }

 private:
  // The index of the first segment starting after x (upper) or at or after x (lower).
  size_t upper_bound(uint64_t x) const {
    return std::upper_bound(v_.begin(), v_.end(), x,
                            [](uint64_t y, const Seg& s) { return y < s.start; }) -
           v_.begin();
  }
  size_t lower_bound(uint64_t x) const {
    return std::lower_bound(v_.begin(), v_.end(), x,
                            [](const Seg& s, uint64_t y) { return s.start < y; }) -
           v_.begin();
  }

  // Joins segments that continue each other, from the one before i to the one after end,
  // closing up the array once.
  void merge_from(size_t i, uint64_t end) {
    if (i > 0) --i;
    size_t w = i, r = i + 1;
    for (; r < v_.size() && v_[w].start <= end; ++r) {
      Seg& a = v_[w];
      const Seg& b = v_[r];
      if (a.end == b.start && a.key == b.key && a.set == b.set &&
          a.origin + (a.end - a.start) == b.origin) {
        a.end = b.end;
      } else if (++w != r) {
        v_[w] = b;
      }
    }
    if (w + 1 < r) v_.erase(v_.begin() + w + 1, v_.begin() + r);
  }

  std::pmr::vector<Seg> v_;
};

// A descriptor's expected result (expect.h) for one rank's receive buffer, written into `want`
// (which starts as the buffer was before the call) and `skip` (ranges [lo, hi) MPI leaves
// undefined); args[q] is rank q's call.
class ExpectedRecv final : public Expect {
 public:
  ExpectedRecv(Sets* sets, const std::vector<Args>* args, SegMap* want,
               std::vector<std::pair<uint64_t, uint64_t>>* skip)
      : sets_(sets), args_(args), want_(want), skip_(skip) {}

  void data(uint64_t at, uint64_t len, int rank, uint64_t origin) override;
  void reduction(uint64_t at, uint64_t len, int lo, int hi, uint64_t origin) override;
  void skip(uint64_t lo, uint64_t hi) override;
  const Args& args(int rank) const override;

 private:
  Sets* sets_;
  const std::vector<Args>* args_;
  SegMap* want_;
  std::vector<std::pair<uint64_t, uint64_t>>* skip_;
};

}  // namespace torusmpi::coll::sim

#endif  // TORUSMPI_COLL_SIM_CONTRIB_H_
