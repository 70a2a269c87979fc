#include "topo/host.h"

#include <hwloc.h>

#include <mutex>

namespace torusmpi::topo {
namespace {

HostInfo read_host() {
  HostInfo info;
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return info;
  // The topology holds what the node lets this job use (a container's cpuset limits it); the
  // process's binding (by the launcher, taskset) restricts it further for cores and pus.
  if (hwloc_topology_load(topo) == 0) {
    int node_pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    info.node_pus = node_pus > 0 ? node_pus : 1;
    info.numa_nodes = numa > 0 ? numa : 1;
    hwloc_cpuset_t bound = hwloc_bitmap_alloc();
    if (bound != nullptr && hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS) == 0) {
      hwloc_bitmap_and(bound, bound, hwloc_topology_get_topology_cpuset(topo));
    } else if (bound != nullptr) {
      hwloc_bitmap_copy(bound, hwloc_topology_get_topology_cpuset(topo));
    }
    int pus = bound != nullptr ? hwloc_get_nbobjs_inside_cpuset_by_type(topo, bound, HWLOC_OBJ_PU)
                               : node_pus;
    int cores =
        bound != nullptr ? hwloc_get_nbobjs_inside_cpuset_by_type(topo, bound, HWLOC_OBJ_CORE) : 0;
    hwloc_bitmap_free(bound);
    info.pus = pus > 0 ? pus : 1;
    info.cores = cores > 0 ? cores : info.pus;
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
