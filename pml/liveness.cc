#include "pml/liveness.h"

#include <errno.h>
#include <signal.h>

#include "core/progress.h"

namespace torusmpi::pml {

Liveness::Liveness(const char* transport, const boot::JobInfo& job)
    : transport_(transport),
      rank_(job.rank),
      hostname_(job.hostname),
      last_check_(progress::now_seconds()) {}

void Liveness::watch(int rank, pid_t pid) {
  if (pid > 0) peers_.push_back(Peer{rank, pid});
}

void Liveness::check(const char* doing, const std::function<bool(int)>& expected) {
  for (const Peer& p : peers_) {
    if (expected && !expected(p.rank)) continue;
    // ESRCH only: EPERM means the process exists (a pid reused by someone else's is not told
    // apart, nor can it be without a handle on the process).
    if (kill(p.pid, 0) == 0 || errno != ESRCH) continue;
    boot::abort_job(1, std::string(transport_) + ": rank " + std::to_string(p.rank) + " (pid " +
                           std::to_string(p.pid) + ") on " + hostname_ +
                           " ended without calling MPI_Finalize while rank " +
                           std::to_string(rank_) + " was " + doing + ": ending the job");
  }
}

void Liveness::check_due(const char* doing, const std::function<bool(int)>& expected) {
  const double now = progress::now_seconds();
  if (now - last_check_ < kLivenessPeriodS) return;
  last_check_ = now;
  check(doing, expected);
}

}  // namespace torusmpi::pml
