#include "io/coll_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>

#include "core/status.h"

namespace torusmpi::io {
namespace {

// Requests whose addresses the pml keeps until they are done: a deque never moves its elements.
class Pending {
 public:
  explicit Pending(TwoPhaseResult* res) : res_(res) {}
  ~Pending() { wait_all(); }

  void send(const TwoPhaseArgs& a, int dest, int tag, const void* buf, size_t bytes) {
    reqs_.emplace_back();
    Status s = pml::isend(*a.comm, a.context, buf, bytes, dest, tag, pml::SendMode::kStandard,
                          &reqs_.back());
    if (s != Status::kOk) fail("send to rank", dest, s);
  }
  void recv(const TwoPhaseArgs& a, int source, int tag, void* buf, size_t bytes) {
    reqs_.emplace_back();
    Status s = pml::irecv(*a.comm, a.context, buf, bytes, source, tag, &reqs_.back());
    if (s != Status::kOk) fail("receive from rank", source, s);
  }
  void wait_all() {
    for (pml::Request& r : reqs_) {
      pml::wait(&r);
      if (r.error != Status::kOk) fail("exchange with rank", r.source, r.error);
    }
    reqs_.clear();
  }

 private:
  void fail(const char* what, int rank, Status s) {
    if (!res_->ok) return;
    res_->ok = false;
    res_->what = std::string("two-phase ") + what + " " + std::to_string(rank) +
                 " failed: " + status_string(s);
  }
  TwoPhaseResult* res_;
  std::deque<pml::Request> reqs_;
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

// No aggregation: each rank its own extents, adjacent ones in one call.
void independent(const TwoPhaseArgs& a, TwoPhaseResult* res) {
  int64_t pos = 0;
  size_t i = 0;
  while (i < a.extents.size() && res->ok) {
    int64_t off = a.extents[i].off, len = a.extents[i].len;
    for (++i; i < a.extents.size() && a.extents[i].off == off + len; ++i) len += a.extents[i].len;
    errno = 0;
    if (a.write) {
      if (full_pwrite(a.fd, a.data + pos, len, off) != len) os_fail(res, "pwrite", off, len);
    } else if (full_pread(a.fd, a.data + pos, len, off) < 0) {
      os_fail(res, "pread", off, len);
    }
    ++res->file_calls;
    pos += len;
  }
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

TwoPhaseResult two_phase(const TwoPhaseArgs& a) {
  TwoPhaseResult res;
  const int p = a.comm->size, me = a.comm->rank;
  int64_t mine = 0;
  for (const Extent& e : a.extents) mine += e.len;

  // 1. Everyone's range.
  std::vector<Extent> ranges(static_cast<size_t>(p));
  if (!a.extents.empty()) {
    ranges[me] = Extent{a.extents.front().off,
                        a.extents.back().off + a.extents.back().len - a.extents.front().off};
  }
  {
    Pending x(&res);
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      x.recv(a, r, a.tag, &ranges[r], sizeof(Extent));
      x.send(a, r, a.tag, &ranges[me], sizeof(Extent));
    }
  }
  if (!res.ok) return res;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const Extent& e : ranges) {
    if (e.len <= 0) continue;
    lo = std::min(lo, e.off);
    hi = std::max(hi, e.off + e.len);
  }
  if (lo > hi) return res;  // nobody moves a byte
  bool aggregate = a.mode == CbMode::kEnable ||
                   (a.mode == CbMode::kAutomatic && interleaved(ranges) && !a.aggregators.empty());
  if (a.aggregators.empty()) aggregate = false;
  if (!aggregate) {
    independent(a, &res);
    res.transferred = a.write ? mine : bytes_before_eof(a.fd, a.extents);
    return res;
  }
  res.aggregated = true;
  const int naggr = static_cast<int>(a.aggregators.size());
  Domains d = split_domains(lo, hi, naggr, a.cb_buffer_size);
  RankPlan plan = plan_rank(a.extents, d);
  int my_agg = -1;
  for (int i = 0; i < naggr; ++i)
    if (a.aggregators[i] == me) my_agg = i;

  // 2. Each aggregator learns every rank's extents in its domain.
  std::vector<std::vector<Extent>> told(static_cast<size_t>(naggr));
  std::vector<int64_t> told_count(static_cast<size_t>(naggr));
  std::vector<RankPlan> from;  // aggregators: each rank's plan in this domain
  {
    Pending x(&res);
    for (int i = 0; i < naggr; ++i) {
      told[i] = clip(a.extents, d.begin(i), d.end(i));
      told_count[i] = static_cast<int64_t>(told[i].size());
      x.send(a, a.aggregators[i], a.tag + 1, &told_count[i], sizeof(int64_t));
      if (!told[i].empty()) {
        x.send(a, a.aggregators[i], a.tag + 2, told[i].data(), told[i].size() * sizeof(Extent));
      }
    }
    if (my_agg >= 0) {
      std::vector<int64_t> counts(static_cast<size_t>(p));
      Pending y(&res);
      for (int r = 0; r < p; ++r) y.recv(a, r, a.tag + 1, &counts[r], sizeof(int64_t));
      y.wait_all();
      std::vector<std::vector<Extent>> lists(static_cast<size_t>(p));
      for (int r = 0; r < p && res.ok; ++r) {
        lists[r].resize(static_cast<size_t>(counts[r]));
        if (counts[r] > 0) {
          y.recv(a, r, a.tag + 2, lists[r].data(), lists[r].size() * sizeof(Extent));
        }
      }
      y.wait_all();
      for (int r = 0; r < p; ++r) from.push_back(plan_rank(lists[r], d));
    }
  }
  if (!res.ok) return res;

  // 3. The rounds. Every rank's slices go out (or are awaited) at once, in file order, which for
  // each aggregator is round order: the pml keeps one sender's messages in order, so round k's
  // receive of rank r meets round k's message.
  Pending mine_x(&res);
  for (const Slice& s : plan.slices) {
    if (a.write) {
      mine_x.send(a, a.aggregators[s.agg], a.tag + 3, a.data + s.pos, static_cast<size_t>(s.bytes));
    } else {
      mine_x.recv(a, a.aggregators[s.agg], a.tag + 3, a.data + s.pos, static_cast<size_t>(s.bytes));
    }
  }
  if (my_agg >= 0) {
    // Per rank, its slices here in round order: next[r] is the first not done.
    std::vector<size_t> next(static_cast<size_t>(p), 0);
    std::vector<char> buf(static_cast<size_t>(std::min<int64_t>(d.cb, d.end(my_agg) - d.begin(my_agg))));
    std::vector<char> staging;
    for (int k = 0; k < d.rounds(my_agg) && res.ok; ++k) {
      const int64_t rb = d.round_begin(my_agg, k);
      // This round's slice of each rank, and where multi-piece ones sit in the staging buffer.
      struct Part {
        int rank;
        const Slice* s;
        int64_t staged;  // offset in staging, or -1 when its one piece goes straight to buf
      };
      std::vector<Part> parts;
      std::vector<Extent> pieces;
      int64_t staged_bytes = 0, span_lo = INT64_MAX, span_hi = INT64_MIN;
      for (int r = 0; r < p; ++r) {
        const RankPlan& rp = from[r];
        if (next[r] >= rp.slices.size() || rp.slices[next[r]].round != k) continue;
        const Slice* s = &rp.slices[next[r]++];
        int64_t at = -1;
        if (s->count > 1) {
          at = staged_bytes;
          staged_bytes += s->bytes;
        }
        parts.push_back(Part{r, s, at});
        for (size_t i = s->first; i < s->first + s->count; ++i) {
          const Piece& q = rp.pieces[i];
          pieces.push_back(Extent{q.off, q.len});
          span_lo = std::min(span_lo, q.off);
          span_hi = std::max(span_hi, q.off + q.len);
        }
      }
      if (parts.empty()) continue;
      if (static_cast<int64_t>(staging.size()) < staged_bytes) {
        staging.resize(static_cast<size_t>(staged_bytes));
      }
      Pending x(&res);
      if (a.write) {
        for (const Part& pt : parts) {
          const Piece& q0 = from[pt.rank].pieces[pt.s->first];
          char* to = pt.staged < 0 ? buf.data() + (q0.off - rb) : staging.data() + pt.staged;
          x.recv(a, pt.rank, a.tag + 3, to, static_cast<size_t>(pt.s->bytes));
        }
        x.wait_all();
        for (const Part& pt : parts) {
          if (pt.staged < 0) continue;
          const char* src = staging.data() + pt.staged;
          for (size_t i = pt.s->first; i < pt.s->first + pt.s->count; ++i) {
            const Piece& q = from[pt.rank].pieces[i];
            std::memcpy(buf.data() + (q.off - rb), src, static_cast<size_t>(q.len));
            src += q.len;
          }
        }
        for (const Extent& run : covered_runs(pieces)) {
          errno = 0;
          if (full_pwrite(a.fd, buf.data() + (run.off - rb), run.len, run.off) != run.len) {
            os_fail(&res, "pwrite", run.off, run.len);
          }
          ++res.file_calls;
        }
      } else {
        // Data sieving inside the round: one read of the span, holes and all.
        errno = 0;
        int64_t got = full_pread(a.fd, buf.data() + (span_lo - rb), span_hi - span_lo, span_lo);
        ++res.file_calls;
        if (got < 0) {
          os_fail(&res, "pread", span_lo, span_hi - span_lo);
          got = 0;
        }
        // Past the end of file: zeros (a reader's count says how much was there).
        std::memset(buf.data() + (span_lo - rb) + got, 0,
                    static_cast<size_t>(span_hi - span_lo - got));
        for (const Part& pt : parts) {
          const Piece& q0 = from[pt.rank].pieces[pt.s->first];
          const char* src = buf.data() + (q0.off - rb);
          if (pt.staged >= 0) {
            char* to = staging.data() + pt.staged;
            src = to;
            for (size_t i = pt.s->first; i < pt.s->first + pt.s->count; ++i) {
              const Piece& q = from[pt.rank].pieces[i];
              std::memcpy(to, buf.data() + (q.off - rb), static_cast<size_t>(q.len));
              to += q.len;
            }
          }
          x.send(a, pt.rank, a.tag + 3, src, static_cast<size_t>(pt.s->bytes));
        }
        x.wait_all();
      }
    }
  }
  mine_x.wait_all();
  res.transferred = a.write ? mine : bytes_before_eof(a.fd, a.extents);
  return res;
}

}  // namespace torusmpi::io
