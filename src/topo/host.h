// What the real host offers (cores, hardware threads, NUMA nodes), read with hwloc, and the binding
// of ranks to its cores (TORUSMPI_BIND). The emulated instance models sit on top of this; the
// progress engine uses it to know when ranks outnumber cores and waits must give their core away.
#ifndef TORUSMPI_TOPO_HOST_H_
#define TORUSMPI_TOPO_HOST_H_

#include <cstdint>
#include <string>
#include <vector>

namespace torusmpi::topo {

struct HostInfo {
  int cores = 1;     // physical cores this process may run on
  int pus = 1;       // hardware threads this process may run on
  int node_pus = 1;  // hardware threads of the node this job may use, whatever the binding
  int numa_nodes = 1;
  std::string cpu_model;  // "" when hwloc does not know it
};

// Read once (hwloc topology load costs milliseconds), then cached.
const HostInfo& host_info();

// Which core (an index into the host's cores in hwloc's logical order) each local rank gets.
// numa_of_core[i] is the NUMA node of core i; group[r] is the emulated chip of local rank r (ranks
// of one chip are kept on one NUMA node where they fit, and chips are spread over the NUMA nodes,
// so that each chip's ranks share a memory controller and chips do not all crowd the first
// node). More ranks than cores: round robin. Pure, so that tests can check it without binding.
std::vector<int> assign_cores(const std::vector<int>& numa_of_core, const std::vector<int>& group);

// Binds this process to one core as TORUSMPI_BIND (`policy`) says: "auto" only when the launcher
// left the process free to run on every core of the node (ranks that outnumber the cores share
// them round robin); "core" always; "none" never. `rank` is this process's job rank, `local_peers`
// the job ranks on this node in ascending order; ranks are grouped by their chip of
// topo::machine(). A binding that fails only prints a debug line (TORUSMPI_DEBUG=boot): it never
// stops a job.
void bind_process(const std::string& policy, int rank, const std::vector<int>& local_peers);

// The levels of the node that MPI_Comm_split_type's OMPI_COMM_TYPE_ localities name, finest first.
enum class Locality { kHwthread, kCore, kL1Cache, kL2Cache, kL3Cache, kSocket, kNuma };

// Which object of `level` holds this process's binding, as a key that is equal for two processes
// of one node exactly when they share it: the object's cpuset (first and last PU, PU count and a
// hash of the set). Returns false when the process is not bound (its cpuset is the whole node's,
// and `launcher_bound` does not say the launcher bound it there) or the host has no such level:
// it then shares the level with no other process, as in Open MPI 4.1, which knows no locality of
// an unbound process finer than its node. A binding that spans several objects of the level (a
// rank bound to a socket, asked for its core) is held by the smallest object covering it, so
// ranks bound alike share the level, as Open MPI says too.
struct LocalityKey {
  int64_t first = -1;
  int64_t last = -1;
  int64_t weight = 0;
  uint64_t hash = 0;
};
bool locality_key(Locality level, bool launcher_bound, LocalityKey* key);

}  // namespace torusmpi::topo

#endif  // TORUSMPI_TOPO_HOST_H_
