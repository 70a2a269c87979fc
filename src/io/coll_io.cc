#include "io/coll_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <utility>

#include "core/progress.h"
#include "core/status.h"

namespace torusmpi::io {
namespace {

// The messages of one phase of an access, on its channel.
class Pending {
 public:
  explicit Pending(TwoPhaseResult* res) : res_(res) {}
  ~Pending() { wait_all(); }

  void send(const TwoPhaseArgs& a, int dest, int tag, const void* buf, size_t bytes) {
    ch_ = a.channel;
    ids_.push_back(ch_->send(dest, tag, buf, bytes));
  }
  void recv(const TwoPhaseArgs& a, int source, int tag, void* buf, size_t bytes) {
    ch_ = a.channel;
    ids_.push_back(ch_->recv(source, tag, buf, bytes));
  }
  // Whether every message is done (then they are forgotten); never waits.
  bool test_all() {
    while (!ids_.empty()) {
      bool failed = false;
      std::string why;
      if (!ch_->test(ids_.front(), &failed, &why)) return false;
      if (failed && res_->ok) {
        res_->ok = false;
        res_->what = "two-phase exchange failed: " + why;
      }
      ids_.pop_front();
    }
    return true;
  }
  void wait_all() {
    for (int id : ids_) ch_->wait(id);
    test_all();
  }

 private:
  TwoPhaseResult* res_;
  Channel* ch_ = nullptr;
  std::deque<int> ids_;
};

void os_fail(TwoPhaseResult* res, const char* call, int64_t off, int64_t len) {
  if (!res->ok) return;
  res->ok = false;
  res->os_error = errno != 0 ? errno : EIO;
  res->what = std::string(call) + " of " + std::to_string(len) + " bytes at offset " +
              std::to_string(off) + " failed: " + std::strerror(res->os_error);
}

// The whole of [off, off + len) or the end of file: bytes done, or -1 (errno set).
int64_t full_pwrite(int fd, const char* buf, int64_t len, int64_t off) {
  int64_t done = 0;
  while (done < len) {
    ssize_t n = pwrite(fd, buf + done, static_cast<size_t>(len - done), off + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n == 0 ? (errno = ENOSPC, -1) : -1;
    done += n;
  }
  return done;
}
int64_t full_pread(int fd, char* buf, int64_t len, int64_t off) {
  int64_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd, buf + done, static_cast<size_t>(len - done), off + done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;  // end of file
    done += n;
  }
  return done;
}

// This rank's bytes below the end of file: what a read of its extents transfers.
int64_t bytes_before_eof(int fd, const std::vector<Extent>& extents) {
  struct stat st;
  if (fstat(fd, &st) != 0) return 0;
  int64_t n = 0;
  for (const Extent& e : extents) n += std::clamp<int64_t>(st.st_size - e.off, 0, e.len);
  return n;
}

// No aggregation: each rank its own extents, adjacent ones in one call (a read returns the bytes
// it found before the end of file: what the caller's status counts); writes in calls of at
// most a round's bytes: ranks writing their own parts of one file at once (a 2-rank block
// decomposition) then take turns at it instead of one long write holding the other up (osu_io,
// 2 ranks, 8 MiB on tmpfs and on disk: 1.1x the bandwidth of one pwrite per run).
int64_t independent(const TwoPhaseArgs& a, TwoPhaseResult* res) {
  const int64_t most = std::max<int64_t>(a.cb_buffer_size, 1);
  int64_t got = 0;
  int64_t pos = 0;
  size_t i = 0;
  while (i < a.extents.size() && res->ok) {
    int64_t off = a.extents[i].off, len = a.extents[i].len;
    for (++i; i < a.extents.size() && a.extents[i].off == off + len; ++i) len += a.extents[i].len;
    if (a.write) {
      for (int64_t done = 0; done < len && res->ok; ++res->file_calls) {
        const int64_t n = std::min(len - done, most);
        errno = 0;
        if (full_pwrite(a.fd, a.data + pos + done, n, off + done) != n)
          os_fail(res, "pwrite", off + done, n);
        done += n;
      }
    } else {
      errno = 0;
      int64_t n = full_pread(a.fd, a.data + pos, len, off);
      if (n < 0) os_fail(res, "pread", off, len);
      got += std::max<int64_t>(n, 0);
      ++res->file_calls;
    }
    pos += len;
  }
  return a.write ? pos : got;
}

}  // namespace

bool CollHints::set(const std::string& key, const std::string& value) {
  auto mode = [&](CbMode* m) {
    if (value == "enable") *m = CbMode::kEnable;
    if (value == "disable") *m = CbMode::kDisable;
    if (value == "automatic") *m = CbMode::kAutomatic;
    return true;
  };
  auto positive = [&](int64_t* out) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (errno == 0 && end != value.c_str() && *end == '\0' && v > 0) *out = v;
    return true;
  };
  if (key == "romio_cb_read") return mode(&read);
  if (key == "romio_cb_write") return mode(&write);
  if (key == "cb_buffer_size") return positive(&cb_buffer_size);
  if (key == "cb_nodes") {
    int64_t n = cb_nodes;
    positive(&n);
    cb_nodes = static_cast<int>(std::min<int64_t>(n, 1 << 30));
    return true;
  }
  return false;
}

std::vector<std::pair<std::string, std::string>> CollHints::report(int aggregators) const {
  auto name = [](CbMode m) {
    return m == CbMode::kEnable ? "enable" : m == CbMode::kDisable ? "disable" : "automatic";
  };
  return {{"cb_buffer_size", std::to_string(cb_buffer_size)},
          {"romio_cb_read", name(read)},
          {"romio_cb_write", name(write)},
          {"cb_nodes", std::to_string(aggregators)}};
}

// What a call in flight keeps between steps.
struct TwoPhase::Impl {
  explicit Impl(TwoPhaseResult* res) : x(res), mine_x(res), slot{Slot(res), Slot(res)} {}
  Pending x;       // the current phase's messages
  Pending mine_x;  // this rank's lists and slices
  // What each rank tells every other one first: its touched range [off, off + len) and how many
  // extents it has (the length of the list it sends each aggregator).
  struct Head {
    int64_t off = 0;
    int64_t len = 0;
    int64_t count = 0;
  };
  std::vector<Head> heads;
  bool lists_out = false;  // lists were sent to the aggregators
  int64_t read_here = -1;  // without aggregation: the bytes this rank's reads found
  int64_t mine = 0;
  Domains d;
  RankPlan plan;
  int my_agg = -1;
  std::vector<std::vector<Extent>> lists;  // an aggregator's: every rank's whole extents
  std::vector<RankPlan> from;              // an aggregator's: each rank's plan in its domain
  // Rounds of an aggregator, two at a time: while one round's pieces go to the file (writes) or
  // to their ranks (reads), the next one's messages are already under way. Round k uses slot
  // k % 2; `posted` rounds have their messages out, `done` ones are finished.
  struct Part {
    int rank;
    const Slice* s;
    // Offset in staging, or kDirect when its one piece goes straight to buf, or kOwn: the
    // aggregator's own slice, placed from (writes) or to (reads) its packed data, no message.
    int64_t staged;
  };
  static constexpr int64_t kDirect = -1, kOwn = -2;
  struct Slot {
    explicit Slot(TwoPhaseResult* res) : x(res) {}
    Pending x;
    Bytes own_buf, own_staging;
    // The caller's (TwoPhaseArgs::scratch), or the slot's own.
    Bytes* buf_ = &own_buf;
    Bytes* staging_ = &own_staging;
    Bytes& buf() { return *buf_; }
    Bytes& staging() { return *staging_; }
    std::vector<Part> parts;
    std::vector<Extent> pieces;
  };
  Slot slot[2];
  int posted = 0, done = 0;
  std::vector<size_t> next;  // each rank's next slice here
};

TwoPhase::TwoPhase(TwoPhaseArgs a) : a_(std::move(a)), impl_(new Impl(&res_)) {}

TwoPhase::~TwoPhase() {
  // A call given up half way (an error) still lets its messages finish before the buffers go.
  for (Impl::Slot& sl : impl_->slot) sl.x.wait_all();
  impl_->mine_x.wait_all();
  impl_->x.wait_all();
  delete impl_;
}

bool TwoPhase::step() {
  // Each phase that finishes lets the next one start in the same step.
  while (state_ != State::kDone && advance()) {
  }
  return state_ == State::kDone;
}

// One move from the current state: true when it moved (call again), false when it must wait.
bool TwoPhase::advance() {
  Impl& m = *impl_;
  const TwoPhaseArgs& a = a_;
  const int p = a.channel->size(), me = a.channel->rank();
  // A read's count: its own reads', or (aggregated: others read for it) the file's size's.
  auto finish = [&] {
    if (res_.ok) {
      res_.transferred = a.write            ? m.mine
                         : m.read_here >= 0 ? m.read_here
                                            : bytes_before_eof(a.fd, a.extents);
    }
    state_ = State::kDone;
    return true;
  };
  switch (state_) {
    case State::kStart: {
      // 1. Everyone's range and extent count to everyone; each rank's extents to every
      // aggregator at once (whole: the domains are not known yet; the aggregator clips them), so
      // that they travel with the ranges instead of a phase of their own after them.
      for (const Extent& e : a.extents) m.mine += e.len;
      m.heads.assign(static_cast<size_t>(p), Impl::Head{});
      if (a.refused != 0) {
        m.heads[me] = Impl::Head{a.refused, 0, -1};
      } else if (!a.extents.empty()) {
        m.heads[me] =
            Impl::Head{a.extents.front().off,
                       a.extents.back().off + a.extents.back().len - a.extents.front().off,
                       static_cast<int64_t>(a.extents.size())};
      }
      for (int r = 0; r < p; ++r) {
        if (r == me) continue;
        m.x.recv(a, r, a.tag, &m.heads[r], sizeof(Impl::Head));
        m.x.send(a, r, a.tag, &m.heads[me], sizeof(Impl::Head));
      }
      // A mode that never aggregates sends no lists (the same on every rank: a file's hints).
      m.lists_out = a.mode != CbMode::kDisable && !a.aggregators.empty();
      if (m.lists_out) {
        // (A refusing rank has none: its count says -1.)
        for (int agg : a.aggregators) {
          if (agg == me) {
            m.my_agg = 0;  // its index is found below
          } else if (!a.extents.empty() && a.refused == 0) {
            m.mine_x.send(a, agg, a.tag + 2, a.extents.data(), a.extents.size() * sizeof(Extent));
          }
        }
      }
      state_ = State::kRanges;
      return true;
    }
    case State::kRanges: {
      if (!m.x.test_all()) return false;
      if (!res_.ok) return finish();
      std::vector<Extent> ranges(static_cast<size_t>(p));
      for (int r = 0; r < p; ++r) ranges[r] = Extent{m.heads[r].off, m.heads[r].len};
      const int naggr = static_cast<int>(a.aggregators.size());
      if (m.my_agg >= 0) {
        for (int i = 0; i < naggr; ++i)
          if (a.aggregators[i] == me) m.my_agg = i;
        // The lists every rank sent: taken in whatever is decided below, so that none is left
        // behind on the channel.
        m.lists.resize(static_cast<size_t>(p));
        for (int r = 0; r < p; ++r) {
          if (r == me) continue;
          m.lists[r].resize(static_cast<size_t>(std::max<int64_t>(m.heads[r].count, 0)));
          if (m.heads[r].count > 0) {
            m.x.recv(a, r, a.tag + 2, m.lists[r].data(), m.lists[r].size() * sizeof(Extent));
          }
        }
      }
      for (int r = 0; r < p && res_.refused == 0; ++r) {
        if (m.heads[r].count >= 0) continue;
        res_.ok = false;
        res_.refused = static_cast<int>(m.heads[r].off);
        res_.refused_by = r;
        res_.what = "rank " + std::to_string(r) + "'s arguments were wrong: no rank moved data";
      }
      if (!res_.ok) {
        state_ = State::kLists;  // where an aggregator's lists, unused, come in
        return true;
      }
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (const Extent& e : ranges) {
        if (e.len <= 0) continue;
        lo = std::min(lo, e.off);
        hi = std::max(hi, e.off + e.len);
      }
      bool aggregate =
          lo <= hi && m.lists_out && (a.mode == CbMode::kEnable || interleaved(ranges));
      if (!aggregate) {
        m.read_here = independent(a, &res_);
        m.my_agg = -1;
        state_ = State::kLists;  // where an aggregator's unused lists come in
        return true;
      }
      res_.aggregated = true;
      // 2. The rounds. This rank's slices go out (or are awaited) at once, in file order, which
      // for each aggregator is round order: the channel keeps one sender's messages in order, so
      // round k's receive of rank r meets round k's message.
      m.d = split_domains(lo, hi, naggr, a.cb_buffer_size);
      m.plan = plan_rank(a.extents, m.d);
      for (const Slice& s : m.plan.slices) {
        if (a.aggregators[s.agg] == me) continue;  // placed by the aggregator itself
        char* at = a.data + s.pos;
        if (a.write) {
          m.mine_x.send(a, a.aggregators[s.agg], a.tag + 3, at, static_cast<size_t>(s.bytes));
        } else {
          m.mine_x.recv(a, a.aggregators[s.agg], a.tag + 3, at, static_cast<size_t>(s.bytes));
        }
      }
      state_ = State::kLists;
      return true;
    }
    case State::kLists: {
      if (!m.x.test_all()) return false;
      if (!res_.ok || !res_.aggregated) return finish();
      if (m.my_agg < 0) {
        state_ = State::kRounds;
        return true;
      }
      // Each rank's extents in this aggregator's domain, cut by round as the rank cut them.
      const int64_t db = m.d.begin(m.my_agg), de = m.d.end(m.my_agg);
      m.from.reserve(static_cast<size_t>(p));
      for (int r = 0; r < p; ++r) {
        if (r != me) {
          m.from.push_back(plan_rank(clip(m.lists[r], db, de), m.d));
          continue;
        }
        // Its own: positions in its packed data, which holds first the bytes before the domain.
        int64_t before = 0;
        for (const Extent& e : a.extents) before += std::clamp<int64_t>(db - e.off, 0, e.len);
        m.from.push_back(plan_rank(clip(a.extents, db, de), m.d, before));
      }
      m.next.assign(static_cast<size_t>(p), 0);
      int64_t len = de - db;
      for (int i = 0; i < 2; ++i) {
        if (a.scratch != nullptr) {
          m.slot[i].buf_ = &a.scratch->buf[i];
          m.slot[i].staging_ = &a.scratch->staging[i];
        }
      }
      for (int i = 0; i < 2 && i < m.d.rounds(m.my_agg); ++i) {
        // Grown only (a kept scratch serves the next call as it is).
        m.slot[i].buf().reserve(static_cast<size_t>(std::min(m.d.cb, len)));
      }
      state_ = State::kRounds;
      return true;
    }
    case State::kRounds: {
      const int rounds = m.my_agg < 0 ? 0 : m.d.rounds(m.my_agg);
      if (!res_.ok) m.posted = m.done = rounds;  // the messages in flight end in the destructor
      if (m.done >= rounds) {
        if (!m.mine_x.test_all()) return false;
        return finish();
      }
      if (m.posted < rounds && m.posted - m.done < 2) {
        post_round(m.posted++);
        return true;
      }
      Impl::Slot& sl = m.slot[m.done % 2];
      if (!sl.x.test_all()) return false;
      if (a.write && res_.ok) {
        const int64_t rb = m.d.round_begin(m.my_agg, m.done);
        for (const Impl::Part& pt : sl.parts) {
          if (pt.staged == Impl::kDirect) continue;
          const char* src = pt.staged >= 0 ? sl.staging().data() + pt.staged : nullptr;
          for (size_t i = pt.s->first; i < pt.s->first + pt.s->count; ++i) {
            const Piece& q = m.from[pt.rank].pieces[i];
            if (pt.staged == Impl::kOwn) src = a.data + q.pos;
            std::memcpy(sl.buf().data() + (q.off - rb), src, static_cast<size_t>(q.len));
            src += q.len;
          }
        }
        for (const Extent& run : covered_runs(sl.pieces)) {
          errno = 0;
          if (full_pwrite(a.fd, sl.buf().data() + (run.off - rb), run.len, run.off) != run.len) {
            os_fail(&res_, "pwrite", run.off, run.len);
          }
          ++res_.file_calls;
        }
      }
      ++m.done;
      return true;
    }
    case State::kDone:
      return false;
  }
  return false;
}

// An aggregator's round k: its receives posted (writes), or its span read and its pieces sent
// to their ranks (reads), in slot k % 2.
void TwoPhase::post_round(int k) {
  Impl& m = *impl_;
  const TwoPhaseArgs& a = a_;
  const int p = a.channel->size(), me = a.channel->rank();
  Impl::Slot& sl = m.slot[k % 2];
  const int64_t rb = m.d.round_begin(m.my_agg, k);
  // This round's slice of each rank, and where multi-piece ones sit in the staging buffer.
  sl.parts.clear();
  sl.pieces.clear();
  int64_t staged_bytes = 0;
  for (int r = 0; r < p; ++r) {
    const RankPlan& rp = m.from[r];
    if (m.next[r] >= rp.slices.size() || rp.slices[m.next[r]].round != k) continue;
    const Slice* s = &rp.slices[m.next[r]++];
    int64_t at = Impl::kDirect;
    if (r == me) {
      at = Impl::kOwn;
    } else if (s->count > 1) {
      at = staged_bytes;
      staged_bytes += s->bytes;
    }
    sl.parts.push_back(Impl::Part{r, s, at});
    for (size_t i = s->first; i < s->first + s->count; ++i) {
      sl.pieces.push_back(Extent{rp.pieces[i].off, rp.pieces[i].len});
    }
  }
  sl.staging().reserve(static_cast<size_t>(staged_bytes));
  if (a.write) {
    for (const Impl::Part& pt : sl.parts) {
      if (pt.staged == Impl::kOwn) continue;
      const Piece& q0 = m.from[pt.rank].pieces[pt.s->first];
      char* to = pt.staged == Impl::kDirect ? sl.buf().data() + (q0.off - rb)
                                            : sl.staging().data() + pt.staged;
      sl.x.recv(a, pt.rank, a.tag + 3, to, static_cast<size_t>(pt.s->bytes));
    }
    return;
  }
  if (sl.pieces.empty()) return;
  // Data sieving inside the round: one read of the span, holes and all.
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Extent& e : sl.pieces) {
    lo = std::min(lo, e.off);
    hi = std::max(hi, e.off + e.len);
  }
  errno = 0;
  int64_t got = full_pread(a.fd, sl.buf().data() + (lo - rb), hi - lo, lo);
  ++res_.file_calls;
  if (got < 0) {
    os_fail(&res_, "pread", lo, hi - lo);
    got = 0;
  }
  // Past the end of file: zeros (a reader's count says how much was there).
  std::memset(sl.buf().data() + (lo - rb) + got, 0, static_cast<size_t>(hi - lo - got));
  for (const Impl::Part& pt : sl.parts) {
    const Piece& q0 = m.from[pt.rank].pieces[pt.s->first];
    const char* src = sl.buf().data() + (q0.off - rb);
    if (pt.staged == Impl::kOwn) {
      for (size_t i = pt.s->first; i < pt.s->first + pt.s->count; ++i) {
        const Piece& q = m.from[pt.rank].pieces[i];
        std::memcpy(a.data + q.pos, sl.buf().data() + (q.off - rb), static_cast<size_t>(q.len));
      }
      continue;
    }
    if (pt.staged >= 0) {
      char* to = sl.staging().data() + pt.staged;
      src = to;
      for (size_t i = pt.s->first; i < pt.s->first + pt.s->count; ++i) {
        const Piece& q = m.from[pt.rank].pieces[i];
        std::memcpy(to, sl.buf().data() + (q.off - rb), static_cast<size_t>(q.len));
        to += q.len;
      }
    }
    sl.x.send(a, pt.rank, a.tag + 3, src, static_cast<size_t>(pt.s->bytes));
  }
}

TwoPhaseResult independent_access(int fd, bool write, const std::vector<Extent>& extents,
                                  char* data) {
  TwoPhaseArgs a;
  a.fd = fd;
  a.write = write;
  a.extents = extents;
  a.data = data;
  TwoPhaseResult res;
  const int64_t n = independent(a, &res);
  if (res.ok) res.transferred = n;
  return res;
}

TwoPhaseResult two_phase(const TwoPhaseArgs& a) {
  TwoPhase op(a);
  progress::wait_until([&op] { return op.step(); });
  return op.result();
}

}  // namespace torusmpi::io
