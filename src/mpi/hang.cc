#include "mpi/hang.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "boot/boot.h"
#include "core/flight.h"
#include "core/log.h"
#include "core/params.h"
#include "pml/pml.h"

namespace torusmpi::mpi {
namespace {

// The node's ranks, in job.local_peers order, and their processes.
std::vector<int> g_ranks;
std::vector<pid_t> g_pids;
int g_me = -1;  // index of this rank in g_ranks
std::string g_host;
bool g_debugger_noted = false;

// Operations shown per rank after the summary lines, on nodes of at most kHistoryRanks ranks.
constexpr int kHistory = 4;
constexpr size_t kHistoryRanks = 8;
// A rank that leaves the report to a lower one takes it over if the job has not ended by then.
constexpr double kHandOverS = 5;
// With other nodes in the job, a reporting rank waits this long before it ends the job: their
// reports, due at about the same time, come out before the launcher's teardown (which first
// wakes stopped ranks with SIGCONT) changes what they see.
constexpr unsigned kOtherNodesGraceUs = 1000000;

std::string node_report() {
  std::vector<flight::Seen> seen;
  std::vector<int> missing;
  for (size_t i = 0; i < g_pids.size(); ++i) {
    flight::Seen s;
    std::string error;
    if (flight::read_book(g_pids[i], &s.book, &error)) {
      s.state = flight::proc_state(g_pids[i]);
      seen.push_back(s);
    } else {
      missing.push_back(g_ranks[i]);
    }
  }
  // Each rank's last operations too, while that stays readable.
  const int history = g_pids.size() <= kHistoryRanks ? kHistory : 0;
  return flight::describe_node(seen, flight::now_ns(), history, missing);
}

// One log line per line of text, each with the rank's prefix.
void print_lines(const std::string& text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    log::error("  %s", text.substr(at, nl - at).c_str());
    at = nl + 1;
  }
}

// Whether a debugger holds a rank of this node: then nothing times out unless asked.
bool debugger_attached() {
  for (pid_t pid : g_pids) {
    if (flight::traced(pid)) return true;
  }
  return false;
}

// Whether a lower rank of this node has waited past the timeout too and will report, or is gone
// (the job is being ended: the launcher kills ranks one after the other).
bool lower_rank_reports(double timeout_s) {
  const int64_t now = flight::now_ns();
  for (int i = 0; i < g_me; ++i) {
    const char state = flight::proc_state(g_pids[i]);
    if (state == '?' || state == 'Z' || state == 'X') return true;
    flight::Book b;
    std::string error;
    if (state == 'T' || state == 't') continue;
    if (!flight::read_book(g_pids[i], &b, &error) || b.h.depth <= 0) continue;
    const double waited = (now - b.ops[b.h.active[0] % flight::kDepth].entered_ns) * 1e-9;
    if (waited > timeout_s) return true;
  }
  return false;
}

void on_timeout(double waited_s) {
  const double timeout = static_cast<double>(params::timeout_s());
  if (!params::timeout_debugger() && debugger_attached()) {
    if (!g_debugger_noted) {
      log::warn(
          "waited %.0f s, past TORUSMPI_TIMEOUT=%.0f s, but a debugger is attached to a "
          "rank of this node: not timing out (TORUSMPI_TIMEOUT_DEBUGGER=1 does)",
          waited_s, timeout);
    }
    g_debugger_noted = true;
    flight::discount_wait();
    return;
  }
  // A lower rank of the node makes the report: wait for the job to end, and take over should it
  // not.
  if (waited_s < timeout + kHandOverS && lower_rank_reports(timeout)) return;
  const flight::Book* me = flight::self();
  const flight::Op& op = me->ops[me->h.active[0] % flight::kDepth];
  char why[160];
  std::snprintf(why, sizeof why, "has waited %.0f s in %s (TORUSMPI_TIMEOUT=%.0f)", waited_s,
                op.call, timeout);
  hang_abort(why);
}

}  // namespace

void hang_init(const Runtime& rt) {
  g_ranks = rt.job.local_peers;
  g_pids.clear();
  for (size_t i = 0; i < rt.local_peers.size(); ++i) {
    g_pids.push_back(rt.local_peers[i].pid);
    if (g_ranks[i] == rt.job.rank) g_me = static_cast<int>(i);
  }
  g_host = rt.job.hostname;
  flight::open(rt.job.rank, rt.job.size, rt.job.nspace, rt.job.hostname);
  flight::set_waiting_for(pml::waiting_for);
  if (params::timeout_s() > 0) {
    flight::set_on_timeout(on_timeout, static_cast<double>(params::timeout_s()));
  }
}

void hang_finalize() { flight::close(); }

void hang_abort(const std::string& why) {
  log::error("rank %d %s: the job looks hung. The ranks of node %s (MPI_COMM_WORLD ranks):",
             boot::job().rank, why.c_str(), g_host.c_str());
  print_lines(node_report());
  if (boot::job().local_size < boot::job().size) usleep(kOtherNodesGraceUs);
  boot::abort_job(boot::kExitHang,
                  "ending the hung job (exit status " + std::to_string(boot::kExitHang) + ")");
}

}  // namespace torusmpi::mpi
