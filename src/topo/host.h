// What the real host offers (cores, hardware threads, NUMA nodes), read with hwloc. The emulated
// instance models sit on top of this; the progress engine uses it to know when ranks outnumber
// cores and waits must give their core away.
#ifndef TORUSMPI_TOPO_HOST_H_
#define TORUSMPI_TOPO_HOST_H_

#include <string>

namespace torusmpi::topo {

struct HostInfo {
  int cores = 1;  // physical cores this process may run on
  int pus = 1;    // hardware threads this process may run on
  int node_pus = 1;  // hardware threads of the node this job may use, whatever the binding
  int numa_nodes = 1;
  std::string cpu_model;  // "" when hwloc does not know it
};

// Read once (hwloc topology load costs milliseconds), then cached.
const HostInfo& host_info();

}  // namespace torusmpi::topo

#endif  // TORUSMPI_TOPO_HOST_H_
