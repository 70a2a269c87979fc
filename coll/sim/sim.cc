#include "coll/sim/sim.h"

#include <algorithm>
#include <cstdio>
#include <memory_resource>
#include <queue>
#include <unordered_map>
#include <utility>

#include "coll/collective.h"
#include "coll/select/cost.h"
#include "coll/select/select.h"
#include "coll/sim/contrib.h"
#include "topo/timing.h"

namespace torusmpi::coll::sim {
namespace {

const char* kBufNames[] = {"send", "recv", "scratch"};

uint64_t bytes_of(const Collective& c, const Args& a, Buf buf) {
  if (buf == Buf::kScratch) return 0;
  return buf == Buf::kSend ? c.send_bytes(a) : c.recv_bytes(a);
}

struct Posted {
  int rank;
  uint32_t op;
  double t;
};
// The messages posted but not matched yet, by (sender, receiver) pair: a pair's queue holds all
// sends or all receives (one of each would have matched), matched in posting order. Pairs with a
// queue sit in an open-addressing table (linear probing, emptied slots closed up at once), each
// with its oldest message, the later ones in one pool: all-to-all at a thousand ranks uses a
// million pairs, too many for a hash node and a vector each.
class PairQueues {
 public:
  // Matches x with the oldest message of the other kind of its pair into *other, or queues it.
  bool post(uint64_t pair, bool send, const Posted& x, Posted* other) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    size_t i = find(pair);
    Slot& q = slots_[i];
    if (q.pair == pair && q.sends != send) {
      *other = q.first;
      const uint32_t n = q.head;
      if (n == kNone) {
        erase(i);
        return true;
      }
      q.first = nodes_[n].x;
      q.head = nodes_[n].next;
      nodes_[n].next = free_;
      free_ = n;
      return true;
    }
    if (q.pair == kEmpty) {
      q = Slot{pair, x, kNone, kNone, send};
      ++used_;
      return false;
    }
    uint32_t n = free_;
    if (n != kNone) {
      free_ = nodes_[n].next;
      nodes_[n] = Node{x, kNone};
    } else {
      n = static_cast<uint32_t>(nodes_.size());
      nodes_.push_back(Node{x, kNone});
    }
    (q.head == kNone ? q.head : nodes_[q.tail].next) = n;
    q.tail = n;
    return false;
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static constexpr uint32_t kNone = ~0u;
  // The oldest message sits in the slot: most queues never hold more than one.
  struct Slot {
    uint64_t pair = kEmpty;
    Posted first{};
    uint32_t head = kNone, tail = kNone;  // the later ones, in nodes_
    bool sends = false;
  };
  struct Node {
    Posted x;
    uint32_t next;
  };

  size_t home(uint64_t pair) const {
    return static_cast<size_t>((pair * 0x9e3779b97f4a7c15u) >> shift_);
  }
  // The pair's slot, or the empty one where it would go.
  size_t find(uint64_t pair) const {
    const size_t mask = slots_.size() - 1;
    size_t i = home(pair);
    while (slots_[i].pair != kEmpty && slots_[i].pair != pair) i = (i + 1) & mask;
    return i;
  }
  // Empties slot i, moving later entries of its probe run back so that lookups need no markers.
  void erase(size_t i) {
    const size_t mask = slots_.size() - 1;
    for (size_t j = (i + 1) & mask; slots_[j].pair != kEmpty; j = (j + 1) & mask) {
      if (((j - home(slots_[j].pair)) & mask) >= ((j - i) & mask)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --used_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(2 * old.size(), Slot{});
    --shift_;
    for (const Slot& q : old) {
      if (q.pair != kEmpty) slots_[find(q.pair)] = q;
    }
  }

  std::vector<Slot> slots_ = std::vector<Slot>(64);  // a power of two, at most half used
  size_t used_ = 0;
  int shift_ = 58;  // 64 - log2 of the slot count: home() takes the hash's top bits
  std::vector<Node> nodes_;
  uint32_t free_ = kNone;  // unused nodes, linked
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
  double t = 0;                 // when the current step started
  double step_end = 0;          // when its last op ends, so far
  std::vector<uint64_t> heard;  // barrier: ranks known to have entered
};

class Sim {
 public:
  Sim(const std::vector<Schedule>& s, const std::vector<Args>& a, const Collective& d,
      const Costs& c)
      : desc_(d),
        p_(static_cast<int>(a.size())),
        costs_(c),
        args_(a),
        out_free_(a.size(), 0),
        in_free_(a.size(), 0),
        sets_(static_cast<int>(a.size())) {
    ranks_.reserve(a.size());
    for (int r = 0; r < p_; ++r) {
      ranks_.emplace_back(&pool_);
      ranks_[r].s = &s[r];
      ranks_[r].a = &a[r];
    }
  }

  Result run() {
    track_heard_ = p_ > 0 && desc_.synchronizes();
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
      res_.link_bytes = fabric_.link_bytes();
      for (size_t l = 0; l < res_.link_bytes.size(); ++l) {
        if (res_.link_bytes[l] > res_.busiest_bytes) {
          res_.busiest_bytes = res_.link_bytes[l];
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
    // The runtime's cost of the call precedes every rank's first step alike.
    res_.time += call_;
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

  // --- The machine: where each rank is, and what its links and ports are doing. The links and
  // network interfaces follow the machine's timing model (topo/timing.h); the ranks' ports are
  // the simulator's own.
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
    int instances = 1;
    std::vector<uint64_t> chips;  // instance * chips + chip of every rank
    for (int r = 0; r < p_; ++r) {
      if (v->chip[r] < 0 || v->chip[r] >= m.chips() || v->instance[r] < 0) {
        res_.ok = false;
        res_.error = "rank " + std::to_string(r) + " is placed on no chip of " + m.name;
        return false;
      }
      instances = std::max(instances, v->instance[r] + 1);
      chips.push_back(static_cast<uint64_t>(v->instance[r]) * m.chips() + v->chip[r]);
    }
    fabric_ = topo::Fabric(m, instances);
    // The runtime's cost of the call, over the chips and instances its ranks use.
    std::sort(chips.begin(), chips.end());
    const int used_chips =
        static_cast<int>(std::unique(chips.begin(), chips.end()) - chips.begin());
    std::vector<bool> used(instances, false);
    for (int r = 0; r < p_; ++r) used[v->instance[r]] = true;
    call_ = topo::call_time(m, used_chips,
                            static_cast<int>(std::count(used.begin(), used.end(), true)));
    return true;
  }

  topo::ChipAt chip_of(int r) const { return {costs_.view->instance[r], costs_.view->chip[r]}; }

  // When a message from rank a to rank b, ready at `ready`, ends. It starts once the sender's and
  // the receiver's ports (their DMA queues) are both free and holds them for the port's time (a
  // copy within a chip, for as long as the copy takes); the machine times the rest.
  double machine_transfer(int a, int b, uint64_t bytes, double ready) {
    const topo::ChipAt from = chip_of(a), to = chip_of(b);
    const double start = std::max({ready, out_free_[a], in_free_[b]});
    double hold = bytes * costs_.beta;
    if (from == to) hold = std::max(hold, fabric_.wire(from, to, bytes));
    out_free_[a] = in_free_[b] = start + hold;
    return fabric_.deliver(from, to, bytes, start, costs_.alpha);
  }

  // Payload from rank a to rank b of another instance arrives through b's chip's interface.
  void count_network(int a, int b, uint64_t bytes) {
    const TopoView* v = costs_.view;
    if (v != nullptr && static_cast<int>(v->instance.size()) == p_ &&
        v->instance[a] != v->instance[b]) {
      count_nic(b, bytes);
    }
  }

  // Bytes that reach rank b through its chip's interface (a message from another instance, or
  // what the switch sends it).
  void count_nic(int b, uint64_t bytes) {
    const TopoView* v = costs_.view;
    if (v == nullptr || static_cast<int>(v->instance.size()) != p_ ||
        static_cast<int>(v->chip.size()) != p_) {
      return;
    }
    const bool chips = costs_.machine != nullptr && costs_.machine->emulated();
    topo::count_received(&res_.nic_bytes, chips ? costs_.machine->chips() : 1,
                         {v->instance[b], chips ? v->chip[b] : 0}, bytes);
  }

  // --- Before: what each buffer holds.
  void init_rank(int r) {
    RankState& st = ranks_[r];
    const Args& a = *st.a;
    for (int b = 0; b < kBufCount; ++b) st.size[b] = bytes_of(desc_, a, static_cast<Buf>(b));
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
    const Collective& c = desc_;
    uint32_t own = c.reduces() ? make_key(kVec, 0) : make_key(kSendOf, r);
    uint64_t send_size = st.size[static_cast<int>(Buf::kSend)];
    if (send_size != kUnavailable) send.fill(0, send_size, own, me, 0);
    // Where MPI_IN_PLACE (or bcast's root) puts this rank's contribution.
    const Region in = c.own_in_recv(a);
    recv.fill(in.at, in.len, own, me, 0);
    if (recv_size != kUnavailable) st.initial_recv = recv;
  }

  // --- During.
  bool in_bounds(int r, const Op& op, BufRef ref, uint64_t bytes, bool write) {
    const RankState& st = ranks_[r];
    int b = static_cast<int>(ref.buf);
    if (bytes == 0) return true;  // touches nothing: a barrier's messages may name any buffer
    if (st.size[b] == kUnavailable) {
      return fail_op(
          r, op,
          std::string("this call has no ") + kBufNames[b] + " buffer on rank " + std::to_string(r));
    }
    if (ref.offset + bytes > st.size[b]) {
      return fail_op(r, op,
                     "bytes [" + std::to_string(ref.offset) + ", " +
                         std::to_string(ref.offset + bytes) + ") are outside the " + kBufNames[b] +
                         " buffer of " + std::to_string(st.size[b]) + " B");
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
      auto add = [&](BufRef ref, bool write, uint64_t bytes) {
        acc.push_back({static_cast<int>(ref.buf), ref.offset, ref.offset + bytes, write, k});
      };
      switch (op.type) {
        case OpType::kSend:
          add(op.src_ref(), false, op.bytes);
          break;
        case OpType::kRecv:
          add(op.dst_ref(), true, op.bytes);
          break;
        case OpType::kAggregate: {
          const uint64_t out = aggregate_out(s, op);
          if (op.src_buf == op.dst_buf && op.src < op.dst + out && op.dst < op.src + op.bytes)
            return fail_op(r, op, "its source and destination overlap");
          add(op.src_ref(), false, op.bytes);
          add(op.dst_ref(), true, out);
          break;
        }
        case OpType::kCopy:
        case OpType::kReduce:
          if (op.src_buf == op.dst_buf && op.src < op.dst + op.bytes && op.dst < op.src + op.bytes)
            return fail_op(r, op, "its source and destination overlap");
          add(op.src_ref(), false, op.bytes);
          add(op.dst_ref(), true, op.bytes);
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
      if (x.lo < hi_write)
        other = op_write;
      else if (x.write && x.lo < hi_any)
        other = op_any;
      if (other != ~0u) {
        return fail_op(r, s.ops[x.op],
                       "races with " + op_text(s.ops[other]) +
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
          Posted other;
          const Posted x{r, k, st.t};
          if (pairs_.post(key, send, x, &other)) send ? transfer(x, other) : transfer(other, x);
          break;
        }
        case OpType::kAggregate:
          if (!post_aggregate(r, k)) return;
          break;
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
      return fail_op(r, op,
                     "reduces " + std::to_string(op.bytes) + " B, not whole elements of " +
                         std::to_string(a.elem) + " B");
    }
    SegMap& dstmap = st.buf[static_cast<int>(op.dst_buf)];
    const std::vector<Piece>& in =
        st.buf[static_cast<int>(op.src_buf)].read(op.src, op.bytes, &in_);
    const std::vector<Piece>& io = dstmap.read(op.dst, op.bytes, &io_);
    std::string why;
    if (!combine(in, io, op.bytes, a.commutative, &out_, &why)) return fail_op(r, op, why);
    dstmap.write(op.dst, op.bytes, out_);
    return true;
  }

  // The pieces of x op y over `bytes` (both the same vector bytes, each defined) into *out; false
  // with *why when they cannot be combined.
  bool combine(const std::vector<Piece>& in, const std::vector<Piece>& io, uint64_t bytes,
               bool commutative, std::vector<Piece>* result, std::string* why) {
    std::vector<Piece>& out = *result;
    out.clear();
    size_t i = 0, j = 0;
    uint64_t pos = 0;
    while (pos < bytes) {
      const Piece& x = in[i];
      const Piece& y = io[j];
      uint64_t end = std::min(x.off + x.len, y.off + y.len);
      if (!x.defined || !y.defined) {
        *why = "reduces undefined bytes at offset " + std::to_string(pos) +
               " (nothing was received or copied there)";
        return false;
      }
      uint64_t xo = x.origin + (pos - x.off), yo = y.origin + (pos - y.off);
      if (x.key != y.key || xo != yo || key_kind(x.key) != kVec) {
        *why = "combines " + describe(x, pos, end - pos) + " with " + describe(y, pos, end - pos);
        return false;
      }
      int set = sets_.join(x.set, y.set, !commutative, why);
      if (set == Sets::kFail) {
        *why +=
            " at vector bytes [" + std::to_string(xo) + ", " + std::to_string(xo + end - pos) + ")";
        return false;
      }
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
    return true;
  }

  // --- Aggregation through the switch: the members post, the last one in delivers to all.
  static uint64_t aggregate_out(const Schedule& s, const Op& op) {
    const AggGroup& g = s.groups[op.peer];
    return g.mode == AggMode::kGather ? op.bytes * g.members.size() : op.bytes;
  }

  bool post_aggregate(int r, uint32_t k) {
    RankState& st = ranks_[r];
    const Schedule& s = *st.s;
    const Op& op = s.ops[k];
    if (op.peer < 0 || op.peer >= static_cast<int>(s.groups.size()))
      return fail_op(r, op, "names no group of its schedule");
    const AggGroup& g = s.groups[op.peer];
    const int n = static_cast<int>(g.members.size());
    if (n < 1 || n > kMaxAggregationMembers || g.me < 0 || g.me >= n || g.members[g.me] != r)
      return fail_op(r, op, "its group does not have this rank as its member `me`");
    for (int m : g.members) {
      if (m < 0 || m >= p_) return fail_op(r, op, "its group has a member that is not a rank");
    }
    if (!in_bounds(r, op, op.src_ref(), op.bytes, false) ||
        !in_bounds(r, op, op.dst_ref(), aggregate_out(s, op), true))
      return false;
    ++st.pending;
    std::vector<Posted>& posted = aggs_[g.number];
    posted.push_back({r, k, st.t});
    if (static_cast<int>(posted.size()) < n) return true;
    std::vector<Posted> all = std::move(posted);
    aggs_.erase(g.number);
    return deliver_aggregate(all);
  }

  // Bytes [at, at+len) of pieces read from one range, as pieces of a range of their own.
  static std::vector<Piece> slice(const std::vector<Piece>& pieces, uint64_t at, uint64_t len) {
    std::vector<Piece> out;
    for (const Piece& p : pieces) {
      const uint64_t lo = std::max(p.off, at), hi = std::min(p.off + p.len, at + len);
      if (lo >= hi) continue;
      Piece q = p;
      q.off = lo - at;
      q.len = hi - lo;
      q.origin = p.origin + (lo - p.off);
      out.push_back(q);
    }
    return out;
  }

  bool deliver_aggregate(std::vector<Posted>& all) {
    // In member order, each checked against the first.
    const Schedule& s0 = *ranks_[all[0].rank].s;
    const Op& op0 = s0.ops[all[0].op];
    const AggGroup& g0 = s0.groups[op0.peer];
    const int n = static_cast<int>(g0.members.size());
    std::vector<Posted> by(n, Posted{-1, 0, 0});
    double ready = 0;
    for (const Posted& x : all) {
      const Op& op = ranks_[x.rank].s->ops[x.op];
      const AggGroup& g = ranks_[x.rank].s->groups[op.peer];
      if (g.members != g0.members || g.mode != g0.mode || g.parts != g0.parts ||
          op.bytes != op0.bytes || by[g.me].rank >= 0) {
        return fail_op(x.rank, op,
                       "meets " + op_text(op0) + " of rank " + std::to_string(all[0].rank) +
                           " in group " + std::to_string(g.number) +
                           ", whose members, mode or size differ");
      }
      by[g.me] = x;
      ready = std::max(ready, x.t);
    }
    const uint64_t bytes = op0.bytes;
    auto src_of = [&](int m) {
      const Op& op = ranks_[by[m].rank].s->ops[by[m].op];
      return ranks_[by[m].rank].buf[static_cast<int>(op.src_buf)].read(op.src, bytes, &in_);
    };
    auto dst_map = [&](int m, const Op** op) -> SegMap& {
      *op = &ranks_[by[m].rank].s->ops[by[m].op];
      return ranks_[by[m].rank].buf[static_cast<int>((*op)->dst_buf)];
    };
    const bool scatter = g0.mode == AggMode::kReduceScatter;
    if (scatter && (g0.parts.size() != static_cast<size_t>(n) || g0.part_at(n) != bytes))
      return fail_op(by[0].rank, op0, "has parts that are not its members' shares of its bytes");
    if ((g0.mode == AggMode::kReduce || scatter) && bytes > 0) {
      const Args& a = *ranks_[by[0].rank].a;
      if (a.elem == 0 || bytes % a.elem != 0) {
        return fail_op(by[0].rank, op0,
                       "aggregates " + std::to_string(bytes) + " B, not whole elements of " +
                           std::to_string(a.elem) + " B");
      }
      std::vector<Piece> acc = src_of(0), next;
      for (int m = 1; m < n; ++m) {
        const std::vector<Piece> x = src_of(m);
        std::string why;
        if (!combine(x, acc, bytes, a.commutative, &next, &why))
          return fail_op(by[m].rank, ranks_[by[m].rank].s->ops[by[m].op], why);
        acc.swap(next);
      }
      for (int m = 0; m < n; ++m) {
        const Op* op = nullptr;
        SegMap& dst = dst_map(m, &op);
        if (!scatter) {
          dst.write(op->dst, bytes, acc);
        } else if (g0.parts[m] > 0) {  // its part only, where it sits in the vector
          const uint64_t at = g0.part_at(m);
          dst.write(op->dst + at, g0.parts[m], slice(acc, at, g0.parts[m]));
        }
      }
    } else if (g0.mode == AggMode::kGather && bytes > 0) {
      for (int k = 0; k < n; ++k) {
        const std::vector<Piece> x = src_of(k);
        for (int m = 0; m < n; ++m) {
          const Op* op = nullptr;
          dst_map(m, &op).write(op->dst + k * bytes, bytes, x);
        }
      }
    }
    if (track_heard_) {
      std::vector<uint64_t> heard = ranks_[by[0].rank].heard;
      for (int m = 1; m < n; ++m) {
        for (size_t w = 0; w < heard.size(); ++w) heard[w] |= ranks_[by[m].rank].heard[w];
      }
      for (int m = 0; m < n; ++m) ranks_[by[m].rank].heard = heard;
    }
    if (!ranks_[by[0].rank].a->in_network) return exchange_aggregate(by, bytes, ready);
    // Out through each member's NIC to the switch, aggregated at its ports' rate, back (a
    // reduce-scatter's member gets its part only).
    const uint64_t out = bytes, in = g0.mode == AggMode::kGather ? bytes * n : bytes;
    double end = ready;
    if (machine_ != nullptr) {
      const double bw = std::min(machine_->efa.bandwidth, kSwitch.port_bandwidth);
      end += 2 * (costs_.alpha + machine_->efa.latency) + kSwitch.latency +
             static_cast<double>(std::max(out, in)) / bw;
    } else {
      end += 2 * costs_.alpha + kSwitch.latency +
             static_cast<double>(std::max(out, in)) *
                 std::max(costs_.beta, 1.0 / kSwitch.port_bandwidth);
    }
    res_.messages += 2 * n;
    res_.bytes += out * n;
    for (int m = 0; m < n; ++m) {
      const uint64_t got = scatter ? g0.parts[m] : in;
      if (got > 0) count_nic(by[m].rank, got);
      complete(by[m].rank, end);
    }
    return true;
  }

  // No switch serves the call (a forced ina algorithm): the executor finishes each aggregation
  // over the network (exec.cc, rescue.h): every member sends every other its request, then its
  // answer (a header, then its contribution), so its time, links and NIC bytes are those
  // messages'.
  bool exchange_aggregate(const std::vector<Posted>& by, uint64_t bytes, double ready) {
    const int n = static_cast<int>(by.size());
    std::vector<double> end(n, ready);
    for (int m = 0; m < n; ++m) {
      for (int k = 0; k < n; ++k) {
        if (k == m) continue;
        const int from = by[m].rank, to = by[k].rank;
        for (const uint64_t len : {kRescueRequestBytes, kRescueAnswerBytes, bytes}) {
          double t = 0;
          if (machine_ != nullptr) {
            t = machine_transfer(from, to, len, ready);
          } else {
            const double start = std::max({ready, out_free_[from], in_free_[to]});
            out_free_[from] = in_free_[to] = start + len * costs_.beta;
            t = start + costs_.alpha + len * costs_.beta;
          }
          end[k] = std::max(end[k], t);
          ++res_.messages;
          res_.bytes += len;
          if (len > 0) count_network(from, to, len);
        }
      }
    }
    for (int k = 0; k < n; ++k) complete(by[k].rank, end[k] + (n - 1) * bytes * costs_.gamma);
    return true;
  }

  void transfer(const Posted& s, const Posted& v) {
    RankState& from = ranks_[s.rank];
    RankState& to = ranks_[v.rank];
    const Op& sop = from.s->ops[s.op];
    const Op& rop = to.s->ops[v.op];
    if (sop.bytes != rop.bytes) {
      fail_op(v.rank, rop,
              "matches " + op_text(sop) + " of rank " + std::to_string(s.rank) +
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
        stuck += " (" + op_text(st.s->ops[begin]) +
                 (st.s->step_end[st.step] - begin > 1 ? ", ..." : "") + ")";
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
    return sim::describe(sets_, x, at, len);
  }

  void check_output(int r) {
    RankState& st = ranks_[r];
    if (track_heard_) {
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
    ExpectedRecv expected(&sets_, &args_, &want, &skip);
    desc_.expect(*st.a, expected);
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
        fail(r, "receive bytes [" + std::to_string(pos) + ", " + std::to_string(end) + ") hold " +
                    describe(x, pos, end - pos) + "; expected " + describe(y, pos, end - pos));
        return;
      }
      pos = end;
      if (pos == x.off + x.len) ++i;
      if (pos == y.off + y.len) ++j;
    }
  }

  std::pmr::unsynchronized_pool_resource pool_;  // first: everything below allocates from it
  const Collective& desc_;
  int p_;
  Costs costs_;
  const std::vector<Args>& args_;  // every rank's call
  std::vector<RankState> ranks_;
  std::vector<double> out_free_, in_free_;
  PairQueues pairs_;
  std::unordered_map<uint64_t, std::vector<uint64_t>> sent_heard_;
  std::unordered_map<uint32_t, std::vector<Posted>> aggs_;  // by group number, as members post
  std::vector<int> ready_;
  // The machine's state: null without one.
  const topo::Machine* machine_ = nullptr;
  topo::Fabric fabric_;
  double call_ = 0;                      // topo::call_time() of the call's chips and instances
  using Timed = std::pair<double, int>;  // (when, rank): earliest first, then the lower rank
  std::priority_queue<Timed, std::vector<Timed>, std::greater<Timed>> timed_ready_;
  Sets sets_;
  bool track_heard_ = false;
  std::vector<Piece> in_, io_, out_;  // reused: reads and reductions allocate nothing in the end
  Result res_;
};

}  // namespace

uint64_t buffer_bytes(const Args& a, Buf buf) { return bytes_of(collective(a.coll), a, buf); }

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
  const Collective& desc = collective(args.empty() ? Coll::kBarrier : args[0].coll);
  return Sim(schedules, args, desc, costs).run();
}

Result simulate(const std::vector<Schedule>& schedules, const std::vector<Args>& args,
                const Collective& desc, const Costs& costs) {
  return Sim(schedules, args, desc, costs).run();
}

Result run(const std::vector<Args>& args, const BuildFn& build, const Costs& costs) {
  return run(args, build, collective(args.empty() ? Coll::kBarrier : args[0].coll), costs);
}

Result run(const std::vector<Args>& args, const BuildFn& build, const Collective& desc,
           const Costs& costs) {
  std::vector<Schedule> schedules(args.size());
  for (size_t r = 0; r < args.size(); ++r) {
    Builder b(&schedules[r]);
    build(b, args[r]);
    b.finish();
  }
  return simulate(schedules, args, desc, costs);
}

}  // namespace torusmpi::coll::sim
