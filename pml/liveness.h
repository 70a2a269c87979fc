// Watching the processes of peers on this host, for every transport (shm, ofi, ucx). A peer that
// dies often leaves nothing behind that wakes a waiting rank (a shared ring stays quiet, a
// connection not made yet never fails), so a rank that waits looks, now and then, whether each
// peer's process is still there, and ends the job, naming the dead one, when it is not:
//   shm: rank 5 (pid 1234) on node1 ended without calling MPI_Finalize while rank 2 was waiting
//   for messages: ending the job
// Only peers on this host can be watched (by pid); those elsewhere fail the transport's
// connections instead.
#ifndef TORUSMPI_PML_LIVENESS_H_
#define TORUSMPI_PML_LIVENESS_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "boot/boot.h"

namespace torusmpi::pml {

// How often a waiting rank looks at its peers: often enough that a dead peer ends the job within
// seconds, rarely enough that the kill(pid, 0) per peer costs nothing.
constexpr double kLivenessPeriodS = 1.0;

class Liveness {
 public:
  // `transport` starts every message ("shm", "ofi", "ucx").
  Liveness(const char* transport, const boot::JobInfo& job);

  // Watches job rank `rank`, whose process is `pid` on this host; pid <= 0 (a peer on another
  // host) is not watched.
  void watch(int rank, pid_t pid);

  // Ends the job when a watched peer's process is gone. `expected(rank)` false passes over a peer
  // that may have left normally (shm: one that has finalized); unset, every peer is expected, which
  // holds for the network transports: they wait, and so check, only before MPI_Finalize's closing
  // fence. `doing` completes "while rank N was ...".
  void check(const char* doing, const std::function<bool(int)>& expected = {});

  // check(), at most once every kLivenessPeriodS: for loops that wait.
  void check_due(const char* doing, const std::function<bool(int)>& expected = {});

 private:
  struct Peer {
    int rank;
    pid_t pid;
  };

  const char* transport_;
  int rank_;
  std::string hostname_;
  std::vector<Peer> peers_;
  double last_check_;
};

}  // namespace torusmpi::pml

#endif  // TORUSMPI_PML_LIVENESS_H_
