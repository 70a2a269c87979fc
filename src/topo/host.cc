#include "topo/host.h"

#include <hwloc.h>

#include <mutex>

namespace torusmpi::topo {
namespace {

HostInfo read_host() {
  HostInfo info;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return info;
  // Only what this process may use: a binding by the launcher, taskset or a container limits
  // it. hwloc accepts the restriction only for the system it runs on, so say it is.
  if (hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
                                         HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING) != 0) {
    hwloc_topology_destroy(topo);
    return info;
  }
  if (hwloc_topology_load(topo) == 0) {
    int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    info.pus = pus > 0 ? pus : 1;
    info.cores = cores > 0 ? cores : info.pus;
    info.numa_nodes = numa > 0 ? numa : 1;
    hwloc_obj_t root = hwloc_get_root_obj(topo);
    if (const char* model = hwloc_obj_get_info_by_name(root, "CPUModel")) info.cpu_model = model;
    if (info.cpu_model.empty()) {
      hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
      if (pkg != nullptr) {
        if (const char* model = hwloc_obj_get_info_by_name(pkg, "CPUModel")) info.cpu_model = model;
      }
    }
  }
  hwloc_topology_destroy(topo);
  return info;
}

}  // namespace

const HostInfo& host_info() {
  static std::once_flag once;
  static HostInfo info;
  std::call_once(once, [] { info = read_host(); });
  return info;
}

}  // namespace torusmpi::topo
