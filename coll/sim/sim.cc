#include "coll/sim/sim.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory_resource>
#include <queue>
#include <unordered_map>
#include <utility>

#include "coll/select/select.h"

namespace torusmpi::coll::sim {
namespace {

// What a byte range holds: whose data (a key) and from where in it (an origin offset), and for
// reductions, over which ranks (a set).
enum KeyKind : uint32_t {
  kVec = 0,     // the vector a reduction combines: every rank's send holds a contribution to it
  kSendOf = 1,  // rank r's send buffer (data that moves, and the root's bcast buffer)
  kRecvOf = 2,  // rank r's receive buffer as it was before the call
};
uint32_t make_key(KeyKind kind, int rank) { return (static_cast<uint32_t>(kind) << 24) | rank; }
KeyKind key_kind(uint32_t key) { return static_cast<KeyKind>(key >> 24); }
int key_rank(uint32_t key) { return static_cast<int>(key & 0xffffff); }

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
    const uint64_t k = (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
                       static_cast<uint32_t>(right);
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

  std::string text(int id) const {
    std::string s = "{";
    for (const auto& [lo, hi] : get(id)) {
      if (s.size() > 1) s += ",";
      s += lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
    }
    return s + "}";
  }

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

  int make(const Intervals& v) {
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
  Intervals get(int id) const {
    if (!is_run(id)) return sets_[id];
    if (lo_of(id) <= hi_of(id)) return {{lo_of(id), hi_of(id)}};
    return {{0, hi_of(id)}, {lo_of(id), p_ - 1}};
  }

  int compute_join(int left, int right, bool ordered, std::string* why) {
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

bool continues(const Piece& a, const Piece& b) {
  return a.defined && b.defined && a.key == b.key && a.set == b.set &&
         a.origin + a.len == b.origin && a.off + a.len == b.off;
}

// What every byte of one buffer holds: segments by start; bytes in none are undefined.
class SegMap {
 public:
  // Nodes come from the simulation's pool: a million-message run makes and drops millions of
  // them, and the pool hands them back at once when the run ends.
  explicit SegMap(std::pmr::memory_resource* pool = std::pmr::get_default_resource()) : m_(pool) {}

  struct Seg {
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
    auto it = m_.upper_bound(start);
    if (it != m_.begin()) --it;
    for (; it != m_.end() && it->first < end && pos < end; ++it) {
      const Seg& s = it->second;
      if (s.end <= pos) continue;
      if (it->first > pos) {
        out.push_back(Piece{pos - start, it->first - pos, false, 0, 0, 0});
        pos = it->first;
      }
      uint64_t e = std::min(s.end, end);
      out.push_back(Piece{pos - start, e - pos, true, s.key, s.set, s.origin + (pos - it->first)});
      pos = e;
    }
    if (pos < end) out.push_back(Piece{pos - start, end - pos, false, 0, 0, 0});
    return out;
  }

  // Replaces [start, start+len) with pieces (offsets relative to start).
  void write(uint64_t start, uint64_t len, const std::vector<Piece>& pieces) {
    if (len == 0) return;
    uint64_t end = start + len;
    // Whole blocks overwritten by one piece are the common case: no node to make or drop.
    if (pieces.size() == 1 && pieces[0].defined) {
      auto it = m_.find(start);
      if (it != m_.end() && it->second.end == end) {
        it->second = Seg{end, pieces[0].key, pieces[0].set, pieces[0].origin};
        merge_around(start, end);
        return;
      }
    }
    split(start);
    split(end);
    m_.erase(m_.lower_bound(start), m_.lower_bound(end));
    for (const Piece& p : pieces) {
      if (p.defined && p.len > 0) m_[start + p.off] = Seg{start + p.off + p.len, p.key, p.set, p.origin};
    }
    merge_around(start, end);
  }

 private:
  void split(uint64_t pos) {
    auto it = m_.upper_bound(pos);
    if (it == m_.begin()) return;
    --it;
    Seg& s = it->second;
    if (it->first < pos && pos < s.end) {
      Seg right{s.end, s.key, s.set, s.origin + (pos - it->first)};
      s.end = pos;
      m_.emplace(pos, right);
    }
  }
  // Joins segments that continue each other, from the one before start to the one after end.
  void merge_around(uint64_t start, uint64_t end) {
    auto it = m_.lower_bound(start);
    if (it != m_.begin()) --it;
    while (it != m_.end()) {
      auto next = std::next(it);
      if (next == m_.end() || it->first > end) break;
      Seg& a = it->second;
      const Seg& b = next->second;
      if (a.end == next->first && a.key == b.key && a.set == b.set &&
          a.origin + (a.end - it->first) == b.origin) {
        a.end = b.end;
        m_.erase(next);
      } else {
        it = next;
      }
    }
  }

  std::pmr::map<uint64_t, Seg> m_;
};

uint64_t sum(const size_t* v, int n) {
  uint64_t s = 0;
  for (int i = 0; i < n; ++i) s += v[i];
  return s;
}
uint64_t span(const size_t* counts, const size_t* displs, int n) {
  uint64_t s = 0;
  for (int i = 0; i < n; ++i) {
    if (counts[i] > 0) s = std::max<uint64_t>(s, displs[i] + counts[i]);
  }
  return s;
}
uint64_t prefix(const size_t* v, int n) { return sum(v, n); }

const char* kBufNames[] = {"send", "recv", "scratch"};

struct Posted {
  int rank;
  uint32_t op;
  double t;
};
// The messages of one (sender, receiver) pair posted but not matched yet: all sends or all
// receives (one of each would have matched). Kept once made: rings and trees reuse a few pairs.
struct PairQueue {
  std::vector<Posted> waiting;
  size_t head = 0;
  bool sends = false;
};

struct RankState {
  explicit RankState(std::pmr::memory_resource* pool)
      : buf{SegMap(pool), SegMap(pool), SegMap(pool)}, initial_recv(pool) {}

  const Schedule* s = nullptr;
  const Args* a = nullptr;
  SegMap buf[kBufCount];
  uint64_t size[kBufCount] = {0, 0, 0};
  SegMap initial_recv;
  size_t step = 0;
  int pending = 0;
  bool done = false;
  double t = 0;         // when the current step started
  double step_end = 0;  // when its last op ends, so far
  std::vector<uint64_t> heard;  // barrier: ranks known to have entered
};

class Sim {
 public:
  Sim(const std::vector<Schedule>& s, const std::vector<Args>& a, const Costs& c)
      : p_(static_cast<int>(a.size())), costs_(c), out_free_(a.size(), 0),
        in_free_(a.size(), 0), pairs_(&pool_), sets_(static_cast<int>(a.size())) {
    ranks_.reserve(a.size());
    for (int r = 0; r < p_; ++r) {
      ranks_.emplace_back(&pool_);
      ranks_[r].s = &s[r];
      ranks_[r].a = &a[r];
    }
  }

  Result run() {
    track_heard_ = p_ > 0 && ranks_[0].a->coll == Coll::kBarrier;
    if (costs_.machine != nullptr && !init_machine()) return res_;
    for (int r = 0; r < p_ && res_.ok; ++r) init_rank(r);
    for (int r = 0; r < p_ && res_.ok; ++r) start_step(r);
    while (res_.ok && (!ready_.empty() || !timed_ready_.empty())) {
      int r = 0;
      if (machine_ != nullptr) {
        r = timed_ready_.top().second;
        timed_ready_.pop();
      } else {
        r = ready_.back();
        ready_.pop_back();
      }
      advance(r);
    }
    if (!res_.ok) return res_;
    if (machine_ != nullptr) {
      res_.link_bytes = link_bytes_;
      for (size_t l = 0; l < link_bytes_.size(); ++l) {
        if (link_bytes_[l] > res_.busiest_bytes) {
          res_.busiest_bytes = link_bytes_[l];
          res_.busiest_link = static_cast<int>(l);
        }
      }
    }
    check_finished();
    for (int r = 0; r < p_ && res_.ok; ++r) check_output(r);
    for (const RankState& st : ranks_) {
      res_.time = std::max(res_.time, st.t);
      res_.max_steps = std::max(res_.max_steps, st.s->steps());
    }
    return res_;
  }

 private:
  bool fail(int rank, const std::string& what) {
    if (!res_.ok) return false;
    res_.ok = false;
    const RankState& st = ranks_[rank];
    char where[64];
    if (st.done) {
      std::snprintf(where, sizeof where, "rank %d, after its last step: ", rank);
    } else {
      std::snprintf(where, sizeof where, "rank %d step %zu: ", rank, st.step);
    }
    res_.error = where + what;
    return false;
  }
  bool fail_op(int rank, const Op& op, const std::string& what) {
    return fail(rank, op_text(op) + ": " + what);
  }

  // --- The machine: where each rank is, and what its links and ports are doing.
  bool init_machine() {
    const topo::Machine& m = *costs_.machine;
    const TopoView* v = costs_.view;
    if (!m.emulated() || v == nullptr || static_cast<int>(v->chip.size()) != p_ ||
        static_cast<int>(v->instance.size()) != p_) {
      res_.ok = false;
      res_.error = "the machine's placement does not give one chip per rank of the call (" +
                   std::to_string(v == nullptr ? 0 : v->chip.size()) + " for " +
                   std::to_string(p_) + " ranks)";
      return false;
    }
    machine_ = &m;
    chips_ = m.chips();
    links_ = topo::link_count(m);
    int instances = 1;
    for (int r = 0; r < p_; ++r) {
      if (v->chip[r] < 0 || v->chip[r] >= chips_ || v->instance[r] < 0) {
        res_.ok = false;
        res_.error = "rank " + std::to_string(r) + " is placed on no chip of " + m.name;
        return false;
      }
      instances = std::max(instances, v->instance[r] + 1);
    }
    link_free_.assign(static_cast<size_t>(links_) * instances, 0);
    link_bytes_.assign(link_free_.size(), 0);
    nic_out_free_.assign(static_cast<size_t>(chips_) * instances, 0);
    nic_in_free_.assign(nic_out_free_.size(), 0);
    routes_.assign(static_cast<size_t>(chips_) * chips_, {});
    routed_.assign(routes_.size(), false);
    return true;
  }

  // The link ids (within one instance) a message from chip a to chip b crosses, computed once.
  const std::vector<int>& route_of(int a, int b) {
    size_t k = static_cast<size_t>(a) * chips_ + b;
    if (!routed_[k]) {
      std::vector<topo::Link> hops;
      topo::route(*machine_, a, b, &hops);
      for (const topo::Link& l : hops) routes_[k].push_back(topo::link_id(*machine_, l));
      routed_[k] = true;
    }
    return routes_[k];
  }

  static double seconds(uint64_t bytes, double bandwidth) {
    return bandwidth > 0 ? static_cast<double>(bytes) / bandwidth : 0;
  }

  // When a message from rank a to rank b, ready at `ready`, ends; takes its ports, links or
  // network interfaces for as long as it holds them.
  double machine_transfer(int a, int b, uint64_t bytes, double ready) {
    const topo::Machine& m = *machine_;
    const TopoView& v = *costs_.view;
    const int ia = v.instance[a], ib = v.instance[b], ca = v.chip[a], cb = v.chip[b];
    double start = std::max({ready, out_free_[a], in_free_[b]});
    const double port = bytes * costs_.beta;
    double latency = 0, wire = 0;
    if (ia == ib && ca == cb) {
      latency = m.intra_chip.latency;
      wire = seconds(bytes, m.intra_chip.bandwidth);
      out_free_[a] = in_free_[b] = start + std::max(port, wire);
    } else if (ia == ib) {
      // Each link is a first-come first-served server of its own: the message's bytes pass each
      // one as soon as it is free, pipelined through the route, and the last link to be done
      // with them decides. (Waiting for the whole route to be free at one instant instead would
      // leave links idle behind a message held up elsewhere: with thousands of small messages
      // of a direct algorithm the convoy overstated the time fourfold.)
      const std::vector<int>& path = route_of(ca, cb);
      const size_t base = static_cast<size_t>(ia) * links_;
      wire = seconds(bytes, m.neuronlink.bandwidth);
      latency = static_cast<double>(path.size()) * m.neuronlink.latency;
      double done = start + wire;
      for (int l : path) {
        double& free = link_free_[base + l];
        free = std::max(free, start) + wire;
        done = std::max(done, free);
        link_bytes_[base + l] += bytes;
      }
      out_free_[a] = in_free_[b] = start + port;
      return done + costs_.alpha + latency;
    } else {
      // The sender's interface and the receiver's are servers of their own, as links are: the
      // bytes leave through one as soon as it is free and arrive through the other as soon as
      // it is (waiting for both at one instant would leave each idle behind the other's queue).
      const size_t na = static_cast<size_t>(ia) * chips_ + ca;
      const size_t nb = static_cast<size_t>(ib) * chips_ + cb;
      wire = seconds(bytes, m.efa.bandwidth);
      double& out = nic_out_free_[na];
      double& in = nic_in_free_[nb];
      out = std::max(out, start) + wire;
      in = std::max(in, start) + wire;
      out_free_[a] = in_free_[b] = start + port;
      return std::max(out, in) + costs_.alpha + m.efa.latency;
    }
    return start + costs_.alpha + latency + wire;
  }

  // Payload from rank a to rank b of another instance arrives through b's chip's interface.
  void count_network(int a, int b, uint64_t bytes) {
    const TopoView* v = costs_.view;
    if (v == nullptr || static_cast<int>(v->instance.size()) != p_ ||
        static_cast<int>(v->chip.size()) != p_ || v->instance[a] == v->instance[b]) {
      return;
    }
    const bool chips = costs_.machine != nullptr && costs_.machine->emulated();
    const size_t k = static_cast<size_t>(v->instance[b]) * (chips ? costs_.machine->chips() : 1) +
                     (chips ? v->chip[b] : 0);
    if (k >= res_.nic_bytes.size()) res_.nic_bytes.resize(k + 1, 0);
    res_.nic_bytes[k] += bytes;
  }

  // --- Before: what each buffer holds.
  void init_rank(int r) {
    RankState& st = ranks_[r];
    const Args& a = *st.a;
    for (int b = 0; b < kBufCount; ++b) st.size[b] = buffer_bytes(a, static_cast<Buf>(b));
    st.size[static_cast<int>(Buf::kScratch)] = st.s->scratch_bytes;
    if (track_heard_) {
      st.heard.assign((p_ + 63) / 64, 0);
      st.heard[r / 64] |= uint64_t{1} << (r % 64);
    }
    SegMap& send = st.buf[static_cast<int>(Buf::kSend)];
    SegMap& recv = st.buf[static_cast<int>(Buf::kRecv)];
    uint64_t recv_size = st.size[static_cast<int>(Buf::kRecv)];
    if (recv_size != kUnavailable) recv.fill(0, recv_size, make_key(kRecvOf, r), 0, 0);
    int me = sets_.range(r, r);
    bool reduces = coll_reduces(a.coll);
    uint32_t own = reduces ? make_key(kVec, 0) : make_key(kSendOf, r);
    uint64_t send_size = st.size[static_cast<int>(Buf::kSend)];
    if (send_size != kUnavailable) send.fill(0, send_size, own, me, 0);
    if (!a.in_place) {
      if (a.coll == Coll::kBcast && r == a.root) recv.fill(0, recv_size, own, me, 0);
    } else {
      // Where MPI_IN_PLACE puts this rank's contribution.
      uint64_t blk = a.block_bytes();
      switch (a.coll) {
        case Coll::kAllreduce:
        case Coll::kReduce:
        case Coll::kScan:
        case Coll::kExscan:
        case Coll::kReduceScatter:
        case Coll::kReduceScatterBlock:
        case Coll::kAlltoall:
        case Coll::kAlltoallv:
        case Coll::kAlltoallw:
          if (recv_size != kUnavailable) recv.fill(0, recv_size, own, me, 0);
          break;
        case Coll::kAllgather:
          recv.fill(r * blk, blk, own, me, 0);
          break;
        case Coll::kAllgatherv:
          recv.fill(a.displs[r] * a.elem, a.counts[r] * a.elem, own, me, 0);
          break;
        case Coll::kGather:
          if (r == a.root) recv.fill(r * blk, blk, own, me, 0);
          break;
        case Coll::kGatherv:
          if (r == a.root) recv.fill(a.displs[r] * a.elem, a.counts[r] * a.elem, own, me, 0);
          break;
        default:
          break;  // bcast, scatter(v), barrier: nothing moves in
      }
    }
    if (recv_size != kUnavailable) st.initial_recv = recv;
  }

  // --- During.
  bool in_bounds(int r, const Op& op, BufRef ref, uint64_t bytes, bool write) {
    const RankState& st = ranks_[r];
    int b = static_cast<int>(ref.buf);
    if (bytes == 0) return true;  // touches nothing: a barrier's messages may name any buffer
    if (st.size[b] == kUnavailable) {
      return fail_op(r, op, std::string("this call has no ") + kBufNames[b] + " buffer on rank " +
                                std::to_string(r));
    }
    if (ref.offset + bytes > st.size[b]) {
      return fail_op(r, op, "bytes [" + std::to_string(ref.offset) + ", " +
                                std::to_string(ref.offset + bytes) + ") are outside the " +
                                kBufNames[b] + " buffer of " + std::to_string(st.size[b]) + " B");
    }
    if (write && ref.buf == Buf::kSend) return fail_op(r, op, "writes into the send buffer");
    return true;
  }

  // Checks one step's ops against each other: no op writes what another reads or writes.
  struct Access {
    int buf;
    uint64_t lo, hi;
    bool write;
    uint32_t op;
  };
  std::vector<Access> access_;

  bool check_races(int r, uint32_t begin, uint32_t end) {
    std::vector<Access>& acc = access_;
    acc.clear();
    const Schedule& s = *ranks_[r].s;
    for (uint32_t k = begin; k < end; ++k) {
      const Op& op = s.ops[k];
      if (op.bytes == 0) continue;
      auto add = [&](BufRef ref, bool write) {
        acc.push_back({static_cast<int>(ref.buf), ref.offset, ref.offset + op.bytes, write, k});
      };
      switch (op.type) {
        case OpType::kSend: add(op.src_ref(), false); break;
        case OpType::kRecv: add(op.dst_ref(), true); break;
        case OpType::kCopy:
        case OpType::kReduce:
          if (op.src_buf == op.dst_buf && op.src < op.dst + op.bytes && op.dst < op.src + op.bytes)
            return fail_op(r, op, "its source and destination overlap");
          add(op.src_ref(), false);
          add(op.dst_ref(), true);
          break;
      }
    }
    if (acc.size() < 2) return true;
    std::sort(acc.begin(), acc.end(), [](const Access& x, const Access& y) {
      return x.buf != y.buf ? x.buf < y.buf : x.lo < y.lo;
    });
    int buf = -1;
    uint64_t hi_any = 0, hi_write = 0;
    uint32_t op_any = 0, op_write = 0;
    for (const Access& x : acc) {
      if (x.buf != buf) {
        buf = x.buf;
        hi_any = hi_write = 0;
      }
      uint32_t other = ~0u;
      if (x.lo < hi_write) other = op_write;
      else if (x.write && x.lo < hi_any) other = op_any;
      if (other != ~0u) {
        return fail_op(r, s.ops[x.op], "races with " + op_text(s.ops[other]) +
                                           " in the same step (ops of a step run at once)");
      }
      if (x.hi > hi_any) hi_any = x.hi, op_any = x.op;
      if (x.write && x.hi > hi_write) hi_write = x.hi, op_write = x.op;
    }
    return true;
  }

  void start_step(int r) {
    RankState& st = ranks_[r];
    const Schedule& s = *st.s;
    if (st.step >= s.steps()) {
      st.done = true;
      return;
    }
    uint32_t begin = s.step_begin(st.step), end = s.step_end[st.step];
    if (!check_races(r, begin, end)) return;
    // One for the posting itself: a message that matches at once must not end the step before the
    // rest of it is posted.
    st.pending = 1;
    st.step_end = st.t;
    double local = st.t;
    for (uint32_t k = begin; k < end && res_.ok; ++k) {
      const Op& op = s.ops[k];
      switch (op.type) {
        case OpType::kSend:
        case OpType::kRecv: {
          bool send = op.type == OpType::kSend;
          if (op.peer < 0 || op.peer >= p_) {
            fail_op(r, op, "peer " + std::to_string(op.peer) + " is not a rank");
            return;
          }
          if (!in_bounds(r, op, send ? op.src_ref() : op.dst_ref(), op.bytes, !send)) return;
          ++st.pending;
          int src = send ? r : op.peer, dst = send ? op.peer : r;
          uint64_t key = static_cast<uint64_t>(src) * p_ + dst;
          if (send && track_heard_) sent_heard_[sent_key(r, k)] = st.heard;
          post(pairs_[key], send, Posted{r, k, st.t});
          break;
        }
        case OpType::kCopy:
          if (!in_bounds(r, op, op.src_ref(), op.bytes, false) ||
              !in_bounds(r, op, op.dst_ref(), op.bytes, true))
            return;
          st.buf[static_cast<int>(op.dst_buf)].write(
              op.dst, op.bytes, st.buf[static_cast<int>(op.src_buf)].read(op.src, op.bytes, &in_));
          local += op.bytes * costs_.copy;
          break;
        case OpType::kReduce:
          if (!in_bounds(r, op, op.src_ref(), op.bytes, false) ||
              !in_bounds(r, op, op.dst_ref(), op.bytes, true) || !reduce(r, op))
            return;
          local += op.bytes * costs_.gamma;
          break;
      }
    }
    st.step_end = std::max(st.step_end, local);
    if (res_.ok) complete(r, local);
  }

  static uint64_t sent_key(int r, uint32_t k) { return (static_cast<uint64_t>(r) << 32) | k; }

  bool reduce(int r, const Op& op) {
    RankState& st = ranks_[r];
    const Args& a = *st.a;
    if (a.elem == 0 || op.bytes % a.elem != 0) {
      return fail_op(r, op, "reduces " + std::to_string(op.bytes) + " B, not whole elements of " +
                                std::to_string(a.elem) + " B");
    }
    SegMap& dstmap = st.buf[static_cast<int>(op.dst_buf)];
    const std::vector<Piece>& in = st.buf[static_cast<int>(op.src_buf)].read(op.src, op.bytes, &in_);
    const std::vector<Piece>& io = dstmap.read(op.dst, op.bytes, &io_);
    std::vector<Piece>& out = out_;
    out.clear();
    size_t i = 0, j = 0;
    uint64_t pos = 0;
    while (pos < op.bytes) {
      const Piece& x = in[i];
      const Piece& y = io[j];
      uint64_t end = std::min(x.off + x.len, y.off + y.len);
      if (!x.defined || !y.defined) {
        return fail_op(r, op, "reduces undefined bytes at offset " + std::to_string(pos) +
                                  " (nothing was received or copied there)");
      }
      uint64_t xo = x.origin + (pos - x.off), yo = y.origin + (pos - y.off);
      if (x.key != y.key || xo != yo || key_kind(x.key) != kVec) {
        return fail_op(r, op, "combines " + describe(x, pos, end - pos) + " with " +
                                  describe(y, pos, end - pos));
      }
      std::string why;
      int set = sets_.join(x.set, y.set, !a.commutative, &why);
      if (set == Sets::kFail) return fail_op(r, op, why + " at vector bytes [" + std::to_string(xo) + ", " +
                                             std::to_string(xo + end - pos) + ")");
      Piece piece{pos, end - pos, true, x.key, set, xo};
      if (!out.empty() && continues(out.back(), piece)) {
        out.back().len += piece.len;
      } else {
        out.push_back(piece);
      }
      pos = end;
      if (pos == x.off + x.len) ++i;
      if (pos == y.off + y.len) ++j;
    }
    dstmap.write(op.dst, op.bytes, out);
    return true;
  }

  void post(PairQueue& q, bool send, const Posted& x) {
    if (q.head < q.waiting.size() && q.sends != send) {
      Posted other = q.waiting[q.head++];
      if (q.head == q.waiting.size()) q.waiting.clear(), q.head = 0;
      send ? transfer(x, other) : transfer(other, x);
      return;
    }
    q.sends = send;
    q.waiting.push_back(x);
  }

  void transfer(const Posted& s, const Posted& v) {
    RankState& from = ranks_[s.rank];
    RankState& to = ranks_[v.rank];
    const Op& sop = from.s->ops[s.op];
    const Op& rop = to.s->ops[v.op];
    if (sop.bytes != rop.bytes) {
      fail_op(v.rank, rop, "matches " + op_text(sop) + " of rank " + std::to_string(s.rank) +
                               ", whose size differs");
      return;
    }
    to.buf[static_cast<int>(rop.dst_buf)].write(
        rop.dst, rop.bytes, from.buf[static_cast<int>(sop.src_buf)].read(sop.src, sop.bytes, &in_));
    if (track_heard_) {
      auto it = sent_heard_.find(sent_key(s.rank, s.op));
      for (size_t w = 0; w < to.heard.size(); ++w) to.heard[w] |= it->second[w];
      sent_heard_.erase(it);
    }
    double end = 0;
    if (machine_ != nullptr) {
      end = machine_transfer(s.rank, v.rank, sop.bytes, std::max(s.t, v.t));
    } else {
      double start = std::max({s.t, v.t, out_free_[s.rank], in_free_[v.rank]});
      double wire = sop.bytes * costs_.beta;
      out_free_[s.rank] = in_free_[v.rank] = start + wire;
      end = start + costs_.alpha + wire;
    }
    ++res_.messages;
    res_.bytes += sop.bytes;
    if (sop.bytes > 0) count_network(s.rank, v.rank, sop.bytes);
    complete(s.rank, end);
    complete(v.rank, end);
  }

  void complete(int r, double t) {
    RankState& st = ranks_[r];
    st.step_end = std::max(st.step_end, t);
    if (--st.pending > 0) return;
    // With a machine, ranks advance in time order, so messages reach the links in the order
    // they become ready (first come, first served); the flat model keeps its order.
    if (machine_ != nullptr) {
      timed_ready_.push({st.step_end, r});
    } else {
      ready_.push_back(r);
    }
  }

  void advance(int r) {
    RankState& st = ranks_[r];
    st.t = st.step_end;
    ++st.step;
    start_step(r);
  }

  void check_finished() {
    std::string stuck;
    int n = 0;
    for (int r = 0; r < p_; ++r) {
      const RankState& st = ranks_[r];
      if (st.done) continue;
      if (n++ < 4) {
        stuck += (stuck.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) +
                 " in step " + std::to_string(st.step);
        uint32_t begin = st.s->step_begin(st.step);
        stuck += " (" + op_text(st.s->ops[begin]) + (st.s->step_end[st.step] - begin > 1 ? ", ..." : "") + ")";
      }
    }
    // A message that never matches leaves its rank in its step (a send waits for its receive):
    // every schedule error of that kind ends here.
    if (n > 0) {
      res_.ok = false;
      res_.error = "deadlock: " + std::to_string(n) + " rank(s) wait forever: " + stuck +
                   (n > 4 ? "; ..." : "");
    }
  }

  // --- After: what each output must hold.
  std::string describe(const Piece& x, uint64_t at, uint64_t len) const {
    if (!x.defined) return "undefined bytes";
    uint64_t o = x.origin + (at - x.off);
    std::string range = "[" + std::to_string(o) + ", " + std::to_string(o + len) + ")";
    switch (key_kind(x.key)) {
      case kVec:
        return "the reduction over ranks " + sets_.text(x.set) + " of vector bytes " + range;
      case kSendOf:
        return "rank " + std::to_string(key_rank(x.key)) + "'s send bytes " + range;
      case kRecvOf:
        return "rank " + std::to_string(key_rank(x.key)) + "'s receive bytes " + range +
               " as they were before the call";
    }
    return "?";
  }

  void check_output(int r) {
    RankState& st = ranks_[r];
    const Args& a = *st.a;
    if (a.coll == Coll::kBarrier) {
      for (int q = 0; q < p_; ++q) {
        if (!(st.heard[q / 64] >> (q % 64) & 1)) {
          fail(r, "left the barrier without having heard, directly or not, from rank " +
                      std::to_string(q));
          return;
        }
      }
      return;
    }
    uint64_t size = st.size[static_cast<int>(Buf::kRecv)];
    if (size == kUnavailable || size == 0) return;
    SegMap want(&pool_);
    want = st.initial_recv;
    std::vector<std::pair<uint64_t, uint64_t>> skip;  // [lo, hi): MPI leaves these undefined
    expect(r, &want, &skip);
    std::sort(skip.begin(), skip.end());
    const std::vector<Piece>& got = st.buf[static_cast<int>(Buf::kRecv)].read(0, size, &in_);
    const std::vector<Piece>& exp = want.read(0, size, &io_);
    size_t i = 0, j = 0, k = 0;
    uint64_t pos = 0;
    while (pos < size) {
      const Piece& x = got[i];
      const Piece& y = exp[j];
      uint64_t end = std::min(x.off + x.len, y.off + y.len);
      while (k < skip.size() && skip[k].second <= pos) ++k;
      bool skipped = k < skip.size() && skip[k].first <= pos;
      if (k < skip.size() && !skipped) end = std::min(end, skip[k].first);
      if (skipped) end = std::min(end, skip[k].second);
      bool same = x.defined == y.defined &&
                  (!x.defined || (x.key == y.key && x.set == y.set &&
                                  x.origin + (pos - x.off) == y.origin + (pos - y.off)));
      if (!skipped && !same) {
        fail(r, "receive bytes [" + std::to_string(pos) + ", " + std::to_string(end) +
                    ") hold " + describe(x, pos, end - pos) + "; expected " +
                    describe(y, pos, end - pos));
        return;
      }
      pos = end;
      if (pos == x.off + x.len) ++i;
      if (pos == y.off + y.len) ++j;
    }
  }

  // Writes into `want` what MPI defines the receive buffer of rank r to hold after the call.
  void expect(int r, SegMap* want, std::vector<std::pair<uint64_t, uint64_t>>* skip) {
    const Args& a = *ranks_[r].a;
    uint64_t blk = a.block_bytes(), e = a.elem;
    int all = sets_.range(0, p_ - 1);
    uint32_t vec = make_key(kVec, 0);
    auto from = [&](int q) { return make_key(kSendOf, q); };
    auto single = [&](int q) { return sets_.range(q, q); };
    uint64_t size = ranks_[r].size[static_cast<int>(Buf::kRecv)];
    switch (a.coll) {
      case Coll::kBarrier:
        break;
      case Coll::kAllreduce:
      case Coll::kReduce:
        want->fill(0, a.count * e, vec, all, 0);
        break;
      case Coll::kScan:
        want->fill(0, a.count * e, vec, sets_.range(0, r), 0);
        break;
      case Coll::kExscan:
        if (r == 0) skip->push_back({0, size});
        else want->fill(0, a.count * e, vec, sets_.range(0, r - 1), 0);
        break;
      case Coll::kBcast:
        want->fill(0, a.count * e, from(a.root), single(a.root), 0);
        break;
      case Coll::kAllgather:
      case Coll::kGather:
        for (int q = 0; q < p_; ++q) want->fill(q * blk, blk, from(q), single(q), 0);
        break;
      case Coll::kAllgatherv:
      case Coll::kGatherv:
        for (int q = 0; q < p_; ++q)
          want->fill(a.displs[q] * e, a.counts[q] * e, from(q), single(q), 0);
        break;
      case Coll::kScatter:
        want->fill(0, blk, from(a.root), single(a.root), r * blk);
        break;
      case Coll::kScatterv:
        // Off the root a rank knows no displacements: the root's say where its block came from.
        want->fill(0, a.counts[r] * e, from(a.root), single(a.root),
                   ranks_[a.root].a->displs[r] * e);
        break;
      case Coll::kReduceScatterBlock:
        want->fill(0, blk, vec, all, r * blk);
        if (a.in_place) skip->push_back({blk, size});
        break;
      case Coll::kReduceScatter: {
        uint64_t mine = a.counts[r] * e;
        want->fill(0, mine, vec, all, prefix(a.counts, r) * e);
        if (a.in_place) skip->push_back({mine, size});
        break;
      }
      case Coll::kAlltoall:
        for (int q = 0; q < p_; ++q) want->fill(q * blk, blk, from(q), single(q), r * blk);
        break;
      case Coll::kAlltoallv:
      case Coll::kAlltoallw:
        for (int q = 0; q < p_; ++q) {
          uint64_t origin = a.peer_sdispls != nullptr ? a.peer_sdispls[q][r] * e : 0;
          if (a.peer_sdispls == nullptr) {
            skip->push_back({a.rdispls[q] * e, (a.rdispls[q] + a.rcounts[q]) * e});
            continue;
          }
          want->fill(a.rdispls[q] * e, a.rcounts[q] * e, from(q), single(q), origin);
        }
        break;
      case Coll::kNeighborAllgather:
      case Coll::kNeighborAllgatherv:
      case Coll::kNeighborAlltoall:
      case Coll::kNeighborAlltoallv:
      case Coll::kNeighborAlltoallw:
        expect_neighbors(r, want);
        break;
      case Coll::kCount:
        break;
    }
  }

  // Block i of a neighbourhood collective's receive buffer holds what sources[i] sent along the
  // matching edge: the k-th time s is among r's sources pairs with the k-th time r is among s's
  // dests (MPI's order for repeated edges).
  void expect_neighbors(int r, SegMap* want) {
    const Args& a = *ranks_[r].a;
    const uint64_t e = a.elem, blk = a.block_bytes();
    for (int i = 0; i < a.indegree; ++i) {
      const int s = a.sources[i];
      if (s < 0) continue;  // MPI_PROC_NULL: the block stays as it was
      int k = 0;
      for (int x = 0; x < i; ++x) k += a.sources[x] == s;
      const Args& from = *ranks_[s].a;
      int j = 0;
      for (int seen = 0; j < from.outdegree; ++j) {
        if (from.dests[j] == r && seen++ == k) break;
      }
      if (j == from.outdegree) continue;  // an edge with no send: the schedule cannot match it
      uint32_t key = make_key(kSendOf, s);
      int set = sets_.range(s, s);
      switch (a.coll) {
        case Coll::kNeighborAllgather:
          want->fill(i * blk, blk, key, set, 0);
          break;
        case Coll::kNeighborAllgatherv:
          want->fill(a.displs[i] * e, a.counts[i] * e, key, set, 0);
          break;
        case Coll::kNeighborAlltoall:
          want->fill(i * blk, blk, key, set, j * blk);
          break;
        default:
          want->fill(a.rdispls[i] * e, a.rcounts[i] * e, key, set, from.sdispls[j] * e);
          break;
      }
    }
  }

  std::pmr::unsynchronized_pool_resource pool_;  // first: everything below allocates from it
  int p_;
  Costs costs_;
  std::vector<RankState> ranks_;
  std::vector<double> out_free_, in_free_;
  std::pmr::unordered_map<uint64_t, PairQueue> pairs_;
  std::unordered_map<uint64_t, std::vector<uint64_t>> sent_heard_;
  std::vector<int> ready_;
  // The machine's state: null without one.
  const topo::Machine* machine_ = nullptr;
  int chips_ = 0, links_ = 0;
  std::vector<double> link_free_, nic_out_free_, nic_in_free_;
  std::vector<uint64_t> link_bytes_;
  std::vector<std::vector<int>> routes_;
  std::vector<bool> routed_;
  using Timed = std::pair<double, int>;  // (when, rank): earliest first, then the lower rank
  std::priority_queue<Timed, std::vector<Timed>, std::greater<Timed>> timed_ready_;
  Sets sets_;
  bool track_heard_ = false;
  std::vector<Piece> in_, io_, out_;  // reused: reads and reductions allocate nothing in the end
  Result res_;
};

}  // namespace

uint64_t buffer_bytes(const Args& a, Buf buf) {
  const int p = a.size, r = a.rank;
  const uint64_t e = a.elem, n = a.count * a.elem, blk = a.block_bytes();
  const bool root = r == a.root;
  bool send = buf == Buf::kSend;
  if (buf == Buf::kScratch) return 0;
  if (send && a.in_place) {
    // MPI_IN_PLACE replaces sendbuf where MPI allows it; scatter(v) takes it as the root's recvbuf.
    bool scatter = a.coll == Coll::kScatter || a.coll == Coll::kScatterv;
    if (!scatter) return kUnavailable;
  }
  switch (a.coll) {
    case Coll::kBarrier:
      return kUnavailable;
    case Coll::kBcast:
      return send ? kUnavailable : n;
    case Coll::kAllreduce:
    case Coll::kScan:
    case Coll::kExscan:
      return n;
    case Coll::kReduce:
      return send ? n : (root ? n : kUnavailable);
    case Coll::kAllgather:
      return send ? blk : p * blk;
    case Coll::kAllgatherv:
      return send ? a.counts[r] * e : span(a.counts, a.displs, p) * e;
    case Coll::kReduceScatterBlock:
      return send || a.in_place ? p * blk : blk;
    case Coll::kReduceScatter:
      return send || a.in_place ? sum(a.counts, p) * e : a.counts[r] * e;
    case Coll::kAlltoall:
      return p * blk;
    case Coll::kAlltoallv:
    case Coll::kAlltoallw:
      return send ? span(a.scounts, a.sdispls, p) * e : span(a.rcounts, a.rdispls, p) * e;
    case Coll::kGather:
      return send ? blk : (root ? p * blk : kUnavailable);
    case Coll::kGatherv:
      return send ? a.counts[r] * e : (root ? span(a.counts, a.displs, p) * e : kUnavailable);
    case Coll::kScatter:
      if (send) return root ? p * blk : kUnavailable;
      return root && a.in_place ? kUnavailable : blk;
    case Coll::kScatterv:
      if (send) return root ? span(a.counts, a.displs, p) * e : kUnavailable;
      return root && a.in_place ? kUnavailable : a.counts[r] * e;
    case Coll::kNeighborAllgather:
      return send ? blk : a.indegree * blk;
    case Coll::kNeighborAllgatherv:
      return send ? blk : span(a.counts, a.displs, a.indegree) * e;
    case Coll::kNeighborAlltoall:
      return (send ? a.outdegree : a.indegree) * blk;
    case Coll::kNeighborAlltoallv:
    case Coll::kNeighborAlltoallw:
      return send ? span(a.scounts, a.sdispls, a.outdegree) * e
                  : span(a.rcounts, a.rdispls, a.indegree) * e;
    case Coll::kCount:
      break;
  }
  return kUnavailable;
}

Costs machine_costs(const topo::Machine& m, const TopoView& view) {
  Costs c;
  if (!m.emulated()) {
    if (m.instances > 1) c.view = &view;
    return c;
  }
  const DeviceFigures f = device_figures(m);
  c.alpha = f.software_alpha;
  c.beta = f.port_beta;
  c.gamma = f.gamma;
  c.copy = f.copy;
  c.machine = &m;
  c.view = &view;
  return c;
}

Result simulate(const std::vector<Schedule>& schedules, const std::vector<Args>& args,
                const Costs& costs) {
  return Sim(schedules, args, costs).run();
}

Result run(const std::vector<Args>& args, const BuildFn& build, const Costs& costs) {
  std::vector<Schedule> schedules(args.size());
  for (size_t r = 0; r < args.size(); ++r) {
    Builder b(&schedules[r]);
    build(b, args[r]);
    b.finish();
  }
  return simulate(schedules, args, costs);
}

}  // namespace torusmpi::coll::sim
