#include "core/flight.h"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

namespace torusmpi::flight {

uint64_t detail::g_names_epoch = 0;

namespace {

Book* g_book = nullptr;
bool g_mapped = false;  // g_book is the memfd mapping (else the heap: the memfd could not be made)
WaitingFor g_waiting_for = nullptr;
OnTimeout g_on_timeout = nullptr;
double g_timeout_s = 0;
int64_t g_next_look_ns = 0;
// Time that does not count as waiting in the operation g_discount_index: the process did not run
// (stopped, held by a debugger) or a debugger held a peer.
uint64_t g_discount_index = 0;
int64_t g_discount_ns = 0;
int64_t g_last_look_ns = 0;
// The call text each record holds, as the caller passed it (always a literal: same text, same
// pointer): a loop of calls folds by comparing pointers, and a record that gets the text it
// already holds is not copied again.
const char* g_call_at[kDepth] = {};
// The comm text each record holds, as the caller passed it, and the names' epoch it was copied at.
const char* g_comm_at[kDepth] = {};
uint64_t g_comm_epoch_at[kDepth] = {};
int64_t g_last_begin_ns = 0;
int g_last_begin_slot = -1;
// A gap this long between two looks means the process was not running.
constexpr int64_t kAbsentNs = int64_t{5} * kLookPeriodMs * 1000000;

void copy_text(char* to, size_t cap, const char* from) {
  const size_t n = from != nullptr ? strnlen(from, cap - 1) : 0;
  if (n > 0) std::memcpy(to, from, n);
  to[n] = '\0';
}

// A record is rewritten between two generation bumps; other processes see it odd meanwhile.
void open_write(Op& op) {
  __atomic_store_n(&op.gen, op.gen + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
}
void close_write(Op& op) { __atomic_store_n(&op.gen, op.gen + 1, __ATOMIC_RELEASE); }

bool is_active_slot(const Header& h, int slot) {
  for (int i = 0; i < h.depth; ++i) {
    if (h.active[i] == slot) return true;
  }
  return false;
}

// The record a call that begins now folds into, or -1: the newest one when the call repeats it
// (a loop of allreduces is one record, "#1-#500": rewriting a record costs less than writing a
// new one, on every call of the small-message path), or the one before it when the call takes
// turns with the newest (OSU's timed call and its barrier, a ping-pong's send and receive). Only
// at the top level, where every record has ended; between the two records appended last; and for
// a call equal to the record's: the same literal (the same pointer: another pointer may hold the
// same text, which would only write a record of its own, but comparing texts would cost more than
// the fold saves), the same communicator and name, the same peer, and for a collective the
// number `stride` after the record's.
[[gnu::always_inline]] inline int fold_slot(const char* call, uint32_t context, const char* comm,
                                            uint32_t comm_seq, int32_t peer, uint32_t* stride) {
  const Header& h = g_book->h;
  if (h.depth != 0) return -1;
  const uint64_t n = h.next_index;
  const int appended = static_cast<int>((n - 1) % kDepth);
  const int before = static_cast<int>((n - 2) % kDepth);
  int slot = appended;
  uint32_t k = 1;
  if (g_call_at[appended] != call) {
    if (g_call_at[before] != call || h.last != appended) return -1;
    slot = before;
    k = 2;
  } else if (h.last != appended) {
    if (h.last != before) return -1;
    k = 2;  // the newest is the record before (a turn folded into it)
  }
  if (k == 2) {
    // The record between takes turns too (one call, or folded the same way), and the slot
    // before holds the record before (append() skips slots of operations in progress).
    const Op& newest = g_book->ops[h.last];
    if (newest.repeats > 0 && newest.stride != 2) return -1;
    if (g_book->ops[before].index != n - 2) return -1;
  }
  const Op& op = g_book->ops[slot];
  if (op.repeats > 0 && op.stride != k) return -1;
  if (g_comm_at[slot] != comm || g_comm_epoch_at[slot] != detail::g_names_epoch) return -1;
  const uint32_t seq_after = op.comm_seq == 0 ? 0 : op.comm_seq + k;
  if (op.context != context || seq_after != comm_seq || op.peer != peer) return -1;
  *stride = k;
  return slot;
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

// Where the book's mapping starts in process `pid`, 0 if it has none.
uintptr_t book_address(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  const std::string name = std::string("/memfd:") + kMapName;
  while (std::getline(maps, line)) {
    if (line.find(name) == std::string::npos) continue;
    return static_cast<uintptr_t>(std::strtoull(line.c_str(), nullptr, 16));
  }
  return 0;
}

std::string seconds_text(double s) {
  char text[32];
  if (s < 10) {
    std::snprintf(text, sizeof text, "%.1f s", s);
  } else {
    std::snprintf(text, sizeof text, "%.0f s", s);
  }
  return text;
}

bool names_source(const char* call) {
  return std::strstr(call, "recv") != nullptr || std::strstr(call, "robe") != nullptr;
}

// "MPI_Allreduce #58 on MPI_COMM_WORLD, step 1 of 2" / "MPI_Recv on MPI_COMM_WORLD from rank 3".
std::string op_text(const Op& op) {
  std::string t = op.call;
  if (op.comm_seq > 0) t += " #" + std::to_string(op.comm_seq);
  if (op.comm[0] != '\0') t += std::string(" on ") + op.comm;
  if (op.peer >= 0) {
    t += (names_source(op.call) ? " from rank " : " to rank ") + std::to_string(op.peer);
  } else if (op.peer == kAnyPeer) {
    t += " from any rank";
  }
  if (op.steps > 0 && op.state == State::kActive)
    t += ", step " + std::to_string(op.step) + " of " + std::to_string(op.steps);
  return t;
}

std::string waited_text(const Header& h, const Op& outer) {
  if (h.nwait <= 0 || h.wait_seen_ns < outer.entered_ns) return "";
  std::vector<int> ranks;
  bool any = false;
  for (int i = 0; i < std::min(h.nwait, kWaitMax); ++i) {
    if (h.wait_for[i] == kAnyPeer) {
      any = true;
    } else {
      ranks.push_back(h.wait_for[i]);
    }
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string t = ", waiting for ";
  if (!ranks.empty()) t += (ranks.size() == 1 ? "rank " : "ranks ") + rank_ranges(ranks);
  if (any) t += ranks.empty() ? "any rank" : " or any rank";
  return t;
}

std::string state_text(char state) {
  switch (state) {
    case 'T':
      return "stopped (state T) ";
    case 't':
      return "stopped by a debugger (state t) ";
    case 'Z':
    case 'X':
    case '?':
      return "gone ";
    default:
      return "";
  }
}

// Where a rank is, without times: ranks whose texts are equal share a line.
struct Place {
  std::string where;
  double age_s;  // how long it has been there (the oldest of a line is shown)
};

Place place_of(const Seen& s, int64_t now) {
  const Header& h = s.book.h;
  Place p;
  std::string state = state_text(s.state);
  int depth = std::clamp(h.depth, 0, kNest);
  if (depth > 0) {
    const Op& outer = s.book.ops[h.active[0] % kDepth];
    const Op& inner = s.book.ops[h.active[depth - 1] % kDepth];
    p.where = state + "in " + op_text(inner);
    if (depth > 1) p.where += std::string(" (inside ") + outer.call + ")";
    p.where += waited_text(h, outer);
    p.age_s = (now - outer.entered_ns) * 1e-9;
    return p;
  }
  const Op* last = nullptr;
  if (h.next_index > 1) last = &s.book.ops[static_cast<uint32_t>(h.last) % kDepth];
  if (state.empty()) state = s.state == 'R' ? "running (state R) " : "sleeping ";
  p.where = state + "outside MPI";
  if (last != nullptr && last->state != State::kFree) {
    p.where += std::string(", last in ") + op_text(*last);
    p.age_s = (now - std::max(last->ended_ns, last->entered_ns)) * 1e-9;
  } else {
    p.age_s = (now - h.opened_ns) * 1e-9;
  }
  return p;
}

const char* state_name(State s) {
  switch (s) {
    case State::kActive:
      return "in progress";
    case State::kDone:
      return "done";
    case State::kStarted:
      return "started";
    case State::kFailed:
      return "failed";
    case State::kFree:
      break;
  }
  return "?";
}

}  // namespace

int64_t now_ns() {
  // The coarse clock (a few milliseconds) is all a hang report needs, and costs a fraction of the
  // precise one on every recorded call, more so where the precise one is a system call (VMs).
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void open(int rank, int size, const std::string& nspace, const std::string& host) {
  if (g_book != nullptr) return;
  void* p = MAP_FAILED;
  int fd = memfd_create(kMapName, MFD_CLOEXEC);
  if (fd >= 0) {
    if (ftruncate(fd, sizeof(Book)) == 0) {
      p = mmap(nullptr, sizeof(Book), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    ::close(fd);  // the mapping keeps it
  }
  g_mapped = p != MAP_FAILED;
  // A process the rank forks (system(), a helper) must not show up as the rank.
  if (g_mapped) madvise(p, sizeof(Book), MADV_DONTFORK);
  // Without the mapping the recorder still serves this rank's own report.
  g_book = g_mapped ? static_cast<Book*>(p) : static_cast<Book*>(std::calloc(1, sizeof(Book)));
  if (g_book == nullptr) return;
  Header& h = g_book->h;
  h.layout = kLayout;
  h.pid = static_cast<int32_t>(getpid());
  h.rank = rank;
  h.size = size;
  h.next_index = 1;
  h.opened_ns = now_ns();
  copy_text(h.nspace, sizeof h.nspace, nspace.c_str());
  copy_text(h.host, sizeof h.host, host.c_str());
  __atomic_store_n(&h.magic, kMagic, __ATOMIC_RELEASE);
}

void close() {
  if (g_book == nullptr) return;
  if (g_mapped) {
    munmap(g_book, sizeof(Book));
  } else {
    std::free(g_book);
  }
  g_book = nullptr;
  std::fill(std::begin(g_call_at), std::end(g_call_at), nullptr);
  std::fill(std::begin(g_comm_at), std::end(g_comm_at), nullptr);
  g_last_begin_slot = -1;
  g_waiting_for = nullptr;
  g_on_timeout = nullptr;
}

bool is_open() { return g_book != nullptr; }
const Book* self() { return g_book; }

namespace {

// A new record, in the next slot that no operation in progress holds. Out of line: the fold
// above it is the path of every call in a loop, and stays short without this one's registers.
[[gnu::noinline]] int append(const char* call, uint32_t context, const char* comm,
                             uint32_t comm_seq, int64_t bytes, int32_t peer, State state,
                             int64_t now) {
  Header& h = g_book->h;
  int slot;
  do {
    slot = static_cast<int>(h.next_index++ % kDepth);
  } while (is_active_slot(h, slot));
  Op& op = g_book->ops[slot];
  open_write(op);
  op.state = state;
  op.index = h.next_index - 1;
  op.entered_ns = now;
  op.ended_ns = state == State::kActive ? 0 : now;
  op.repeats = 0;
  op.bytes = bytes;
  op.context = context;
  op.comm_seq = comm_seq;
  op.peer = peer;
  op.step = 0;
  op.steps = 0;
  op.stride = 1;
  if (g_call_at[slot] != call) copy_text(op.call, sizeof op.call, call);
  g_call_at[slot] = call;
  if (g_comm_at[slot] != comm || g_comm_epoch_at[slot] != detail::g_names_epoch) {
    copy_text(op.comm, sizeof op.comm, comm);
    g_comm_at[slot] = comm;
    g_comm_epoch_at[slot] = detail::g_names_epoch;
  }
  close_write(op);
  h.last = slot;
  return slot;
}

// Writes the record of a call that begins now in `state` (folded into the last one when it can
// be) and returns its slot.
[[gnu::always_inline]] inline int record(const char* call, uint32_t context, const char* comm,
                                         uint32_t comm_seq, int64_t bytes, int32_t peer,
                                         State state, int64_t now) {
  uint32_t stride;
  const int slot = fold_slot(call, context, comm, comm_seq, peer, &stride);
  if (slot < 0) return append(call, context, comm, comm_seq, bytes, peer, state, now);
  Op& op = g_book->ops[slot];
  open_write(op);
  ++op.repeats;
  op.stride = stride;
  op.comm_seq = comm_seq;
  op.state = state;
  op.entered_ns = now;
  op.ended_ns = state == State::kActive ? 0 : now;
  op.bytes = bytes;
  close_write(op);
  g_book->h.last = slot;
  return slot;
}

}  // namespace

int begin(const char* call, uint32_t context, const char* comm, uint32_t comm_seq, int64_t bytes,
          int32_t peer) {
  if (g_book == nullptr) return -1;
  Header& h = g_book->h;
  const int64_t now = now_ns();
  g_last_begin_ns = now;
  const int slot = record(call, context, comm, comm_seq, bytes, peer, State::kActive, now);
  g_last_begin_slot = slot;
  if (h.depth < kNest) {
    h.active[h.depth] = slot;
    __atomic_store_n(&h.depth, h.depth + 1, __ATOMIC_RELEASE);
  }
  return slot;
}

namespace {

// A record that begins and ends at once: it never joins the operations in progress.
void record_ended(const char* call, uint32_t context, const char* comm, uint32_t comm_seq,
                  int64_t bytes, int32_t peer, State state) {
  if (g_book == nullptr) return;
  record(call, context, comm, comm_seq, bytes, peer, state, now_ns());
  g_last_begin_slot = -1;
}

}  // namespace

void started(const char* call, uint32_t context, const char* comm, uint32_t comm_seq, int64_t bytes,
             int32_t peer) {
  record_ended(call, context, comm, comm_seq, bytes, peer, State::kStarted);
}

void done(const char* call, uint32_t context, const char* comm, uint32_t comm_seq, int64_t bytes,
          int32_t peer) {
  record_ended(call, context, comm, comm_seq, bytes, peer, State::kDone);
}

void end(int slot, State state) {
  if (g_book == nullptr || slot < 0 || slot >= kDepth) return;
  Header& h = g_book->h;
  Op& op = g_book->ops[slot];
  open_write(op);
  op.state = state;
  // A nonblocking call returns right after it began: the coarse clock would read the same.
  op.ended_ns = state == State::kStarted && slot == g_last_begin_slot ? g_last_begin_ns : now_ns();
  close_write(op);
  for (int i = h.depth - 1; i >= 0; --i) {
    if (h.active[i] != slot) continue;
    for (int j = i; j + 1 < h.depth; ++j) h.active[j] = h.active[j + 1];
    __atomic_store_n(&h.depth, h.depth - 1, __ATOMIC_RELEASE);
    break;
  }
}

void step(int step, int steps) {
  if (g_book == nullptr || g_book->h.depth <= 0) return;
  const Header& h = g_book->h;
  Op& op = g_book->ops[h.active[h.depth - 1]];
  __atomic_store_n(&op.step, step, __ATOMIC_RELAXED);
  __atomic_store_n(&op.steps, steps, __ATOMIC_RELAXED);
}

void set_waiting_for(WaitingFor fn) { g_waiting_for = fn; }

void set_on_timeout(OnTimeout fn, double timeout_s) {
  g_on_timeout = fn;
  g_timeout_s = timeout_s;
}

void stalled() {
  if (g_book == nullptr) return;
  const int64_t now = now_ns();
  if (now < g_next_look_ns) return;
  g_next_look_ns = now + int64_t{kLookPeriodMs} * 1000000;
  Header& h = g_book->h;
  if (g_waiting_for != nullptr) {
    int32_t ranks[kWaitMax];
    int n = g_waiting_for(ranks, kWaitMax);
    std::memcpy(h.wait_for, ranks, sizeof(int32_t) * n);
    h.nwait = n;
    __atomic_store_n(&h.wait_seen_ns, now, __ATOMIC_RELEASE);
  }
  if (g_on_timeout == nullptr || g_timeout_s <= 0 || h.depth <= 0) return;
  const Op& op = g_book->ops[h.active[0]];
  if (op.index != g_discount_index) {
    g_discount_index = op.index;
    g_discount_ns = 0;
  } else if (now - g_last_look_ns > kAbsentNs) {
    g_discount_ns += now - g_last_look_ns;
  }
  g_last_look_ns = now;
  const double waited = (now - op.entered_ns - g_discount_ns) * 1e-9;
  if (waited > g_timeout_s) g_on_timeout(waited);
}

void discount_wait() {
  if (g_book == nullptr || g_book->h.depth <= 0) return;
  const Op& op = g_book->ops[g_book->h.active[0]];
  g_discount_index = op.index;
  g_discount_ns = now_ns() - op.entered_ns;
}

bool read_book(pid_t pid, Book* out, std::string* error) {
  if (g_book != nullptr && pid == getpid()) {
    std::memcpy(out, g_book, sizeof(Book));
    return true;
  }
  uintptr_t at = book_address(pid);
  if (at == 0) {
    *error = "process " + std::to_string(pid) + " has no torusmpi flight recorder";
    return false;
  }
  iovec local{out, sizeof(Book)};
  iovec remote{reinterpret_cast<void*>(at), sizeof(Book)};
  ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
  if (n != static_cast<ssize_t>(sizeof(Book))) {
    *error = "cannot read the flight recorder of process " + std::to_string(pid) + ": " +
             (n < 0 ? std::strerror(errno) : "short read");
    return false;
  }
  if (out->h.magic != kMagic || out->h.layout != kLayout) {
    *error = "process " + std::to_string(pid) + " has a flight recorder of another torusmpi build";
    return false;
  }
  return true;
}

std::vector<pid_t> find_books() {
  std::vector<pid_t> pids;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* d = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(d->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (book_address(static_cast<pid_t>(pid)) != 0) pids.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  std::sort(pids.begin(), pids.end());
  return pids;
}

char proc_state(pid_t pid) {
  std::string stat;
  if (!read_file("/proc/" + std::to_string(pid) + "/stat", &stat)) return '?';
  // "pid (comm) S ...": the command may hold spaces and parentheses, the state follows the last
  // ')'.
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= stat.size()) return '?';
  return stat[close_paren + 2];
}

bool traced(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("TracerPid:", 0) == 0) return std::atol(line.c_str() + 10) != 0;
  }
  return false;
}

std::string rank_ranges(const std::vector<int>& ranks) {
  std::string t;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!t.empty()) t += ",";
    t += std::to_string(ranks[i]);
    if (j > i) t += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return t;
}

std::string describe_node(const std::vector<Seen>& ranks, int64_t now_ns, int history,
                          const std::vector<int>& missing) {
  // Lines in the order of their first rank.
  std::map<std::string, std::pair<std::vector<int>, double>> lines;
  for (const Seen& s : ranks) {
    Place p = place_of(s, now_ns);
    auto& line = lines[p.where];
    line.first.push_back(s.book.h.rank);
    line.second = std::max(line.second, p.age_s);
  }
  std::vector<std::pair<std::vector<int>, std::string>> ordered;
  for (auto& [where, line] : lines) {
    std::sort(line.first.begin(), line.first.end());
    const bool one = line.first.size() == 1;
    std::string text =
        (one ? "rank " : "ranks ") + rank_ranges(line.first) + (one ? " is " : " are ") + where;
    text += (where.find("outside MPI") != std::string::npos ? ", for " : ", entered ") +
            seconds_text(line.second) +
            (where.find("outside MPI") != std::string::npos ? "" : " ago");
    ordered.emplace_back(line.first, text);
  }
  std::sort(ordered.begin(), ordered.end());
  std::string out;
  for (const auto& line : ordered) out += line.second + "\n";
  if (!missing.empty()) {
    out += (missing.size() == 1 ? "rank " : "ranks ") + rank_ranges(missing) +
           ": no flight recorder found (the process is gone, or cannot be read)\n";
  }
  if (history <= 0) return out;
  for (const Seen& s : ranks) {
    const Book& b = s.book;
    out += "rank " + std::to_string(b.h.rank) + " (pid " + std::to_string(b.h.pid) + " on " +
           b.h.host + ", state " + s.state + "), last operations:\n";
    const uint64_t last = b.h.next_index;
    const uint64_t first = last > static_cast<uint64_t>(history) ? last - history : 1;
    for (uint64_t i = first; i < last; ++i) {
      const Op& op = b.ops[i % kDepth];
      if (op.index != i || op.state == State::kFree) continue;
      char line[96];
      std::snprintf(line, sizeof line, "  %6" PRIu64 "  %-11s %8.3f s ago", op.index,
                    state_name(op.state), (now_ns - op.entered_ns) * 1e-9);
      out += line;
      out += "  " + op_text(op);
      if (op.bytes >= 0) out += ", " + std::to_string(op.bytes) + " B";
      if (op.repeats > 0) {
        out += ", repeated " + std::to_string(op.repeats) + " more times";
        if (op.stride == 2) out += " in turn with the record next to it";
        // Folded collectives are numbered `stride` apart, up to the record's number.
        const uint64_t span = op.repeats * (op.stride == 2 ? 2 : 1);
        if (op.comm_seq > span) {
          out += " (#" + std::to_string(op.comm_seq - span) + "-" + std::to_string(op.comm_seq) +
                 (op.stride == 2 ? ", every other" : "") + ")";
        }
      }
      if (op.gen & 1) out += " (being written)";
      out += "\n";
    }
  }
  return out;
}

}  // namespace torusmpi::flight
