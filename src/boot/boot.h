// Bootstrap: who am I, who else is in the job, and a key-value exchange (modex) to publish
// endpoints. Served by the launcher's PMIx server (Open MPI's mpirun), or by this process alone
// for a singleton (a program started without a launcher).
#ifndef TORUSMPI_BOOT_BOOT_H_
#define TORUSMPI_BOOT_BOOT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace torusmpi::boot {

struct JobInfo {
  bool singleton = true;
  std::string nspace;  // the job's PMIx namespace ("singleton.<pid>" alone)
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // rank among this job's processes on this node
  int local_size = 1;
  int node_rank = 0;
  int num_nodes = 1;
  int appnum = 0;
  int universe_size = 1;         // slots the launcher allocated (at least size)
  std::vector<int> local_peers;  // job ranks on this node, ascending, this rank included
  std::string hostname;
};

// Starts the bootstrap. The singleton rule: no launcher variable set (PMIX_*, OMPI_COMM_WORLD_*,
// PMI_*) and no PMIx server means a one-rank job; a launcher variable set but no server reachable
// is an error, described in *error, never a silent singleton.
Status init(JobInfo* job, std::string* error);
bool initialized();
const JobInfo& job();

// Where the launcher put every rank: node_of[r] is rank r's node, nodes numbered 0, 1, ... in the
// order of their lowest rank, from PMIx's host name of each rank (PMIX_HOSTNAME). False, with
// nothing filled, for a singleton or when the launcher does not name every rank's host.
bool rank_nodes(std::vector<int>* node_of);

// Waits for every rank, then ends the bootstrap.
Status finalize();

// The modex: put() values, exchange() them (collective over the job; gives up after
// TORUSMPI_BOOT_TIMEOUT seconds), then get() any rank's.
Status put(const std::string& key, const void* data, size_t len);
Status exchange();
Status get(int rank, const std::string& key, std::vector<uint8_t>* value);

// A barrier over the whole job, through the launcher: waits as long as it takes, or at most
// timeout_s seconds when it is above 0 (then kErrTimeout).
Status fence(int timeout_s = 0);

// What every rank publishes about itself at start-up: its process id (the shared-memory transport
// reads peers' memory by pid) and the torusmpi version it runs (ranks running different builds
// cannot talk). `version` must be equal on every rank.
struct PeerCard {
  int pid = 0;
  std::string version;
  std::vector<uint64_t> cpus;  // the CPUs it may run on (its affinity), a bit each
};

// Publishes this rank's card and collects those of the ranks on this node (job().local_peers
// order). Fails, with *error naming the rank, when a local peer runs another version.
Status exchange_cards(const std::string& version, std::vector<PeerCard>* local, std::string* error);

// Whether ranks of this node outnumber the CPUs they may run on: some rank's CPUs are shared by
// more ranks than they count (every rank unbound on fewer cores than ranks, two ranks bound to
// one core, a cpuset or taskset narrower than the ranks). The same answer on every local rank.
bool crowded(const std::vector<PeerCard>& local);

// Ends every rank of the job with exit status `code`; prints msg first. Never returns.
[[noreturn]] void abort_job(int code, const std::string& msg);

// Exit statuses of a job torusmpi ends by itself, besides MPI_Abort's code and MPI error classes.
constexpr int kExitHang = 110;          // TORUSMPI_TIMEOUT ran out (ETIMEDOUT)
constexpr int kExitLauncherLost = 112;  // the rank's launcher went away (EHOSTDOWN)

// The launcher's events, received on PMIx's own thread, so they arrive whatever the rank is doing:
// - its PMIx server is gone (mpirun or its node's daemon ended): the rank says so and exits with
//   kExitLauncherLost at once, leaving nothing behind (its segments are memfds or already
//   unlinked). A rank stopped then cannot run that; the kernel kills it instead when the
//   launcher that started it dies (PR_SET_PDEATHSIG, set when the parent is Open MPI's launcher).
// - another rank of the job ended abnormally, as the launcher tells it: the job ends, naming it.
// Registered by init(), removed by finalize() once past the closing barrier.
//
// PMIx_Notify_event is not used to reach other nodes: under Open MPI 4.1's mpirun a client's
// notification leaves the launcher unable to carry out a PMIx_Abort afterwards.

// --- Dynamic processes (MPI_Comm_spawn, MPI_Publish_name), through the launcher's PMIx server.
// Each call may wait for the launcher (and other processes): the caller lets the library's lock
// go around it (progress::Unlocked). Without a launcher (a singleton) each is kErrUnsupported,
// with *error saying so.

// A 64-bit name of a job, the same in every process that knows its namespace: a network
// transport tells the senders of other jobs (spawned, connected) from its own job's by it.
// Inline: the pml's wire code uses it and builds without PMIx (tests/fuzz). FNV-1a: stable across
// processes and builds, unlike std::hash.
inline uint64_t job_id(const std::string& nspace) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : nspace) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// One command of a spawn: what MPI_Comm_spawn_multiple takes for it, its info keys read.
struct SpawnApp {
  std::string command;
  std::vector<std::string> args;  // after the command (argv[1] ...)
  int procs = 1;
  std::vector<std::string> env;  // "NAME=value": set for its processes, after what they inherit
  std::string wdir;              // working directory; empty: the parent's
  std::string host;              // comma-separated hosts to start on (PMIX_HOST); empty: any
};

// Starts a new job of `apps` (one namespace, ranks in the order of apps); *nspace is its name.
// The spawned processes get this process's environment for torusmpi and the loader
// (LD_PRELOAD, LD_LIBRARY_PATH, PATH, TORUSMPI_*, FI_*, UCX_*, OMPI_MCA_*), then each app's env.
// A job that cannot start is an error naming PMIx's status.
Status spawn(const std::vector<SpawnApp>& apps, std::string* nspace, std::string* error);
// Whether a process of job `nspace`, which this process spawned, has ended, as the launcher's
// process table says: a parent waiting for children that will never connect (a program that is
// not an MPI program, or one that died first) stops waiting. Asks the launcher: call it seldom.
bool spawned_job_ended(const std::string& nspace);

// The launcher's name service (mpirun's data server): names published by one process are found
// by the processes of every job of the same launcher.
Status publish_name(const std::string& service, const std::string& port, std::string* error);
Status lookup_name(const std::string& service, std::string* port, std::string* error);
Status unpublish_name(const std::string& service, std::string* error);

// Launcher variables found in the environment ("PMIX_RANK, OMPI_COMM_WORLD_SIZE"), empty if none.
std::string launcher_variables();

}  // namespace torusmpi::boot

#endif  // TORUSMPI_BOOT_BOOT_H_
