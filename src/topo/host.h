// What the real host offers (cores, hardware threads, NUMA nodes), read with hwloc, and the binding
// of ranks to its cores (TORUSMPI_BIND). The emulated instance models sit on top of this; the
// progress engine uses it to know when ranks outnumber cores and waits must give their core away.
#ifndef TORUSMPI_TOPO_HOST_H_
#define TORUSMPI_TOPO_HOST_H_

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
// left the process free to run on every core of the node and every local rank can have a core of
// its own; "core" always; "none" never. `rank` is this process's job rank, `local_peers` the job
// ranks on this node in ascending order; ranks are grouped by their chip of topo::machine(). A
// binding that fails only prints a debug line (TORUSMPI_DEBUG=boot): it never stops a job.
void bind_process(const std::string& policy, int rank, const std::vector<int>& local_peers);

}  // namespace torusmpi::topo

#endif  // TORUSMPI_TOPO_HOST_H_
