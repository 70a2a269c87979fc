// The host as hwloc sees it, and the binding of ranks to its cores. The topology is loaded once
// (it costs milliseconds) and kept for the process; bind_process() may only ever print a debug line
// on failure: a job that cannot bind still runs.
#include "topo/host.h"

#include <hwloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/log.h"
#include "topo/machine.h"

namespace torusmpi::topo {
namespace {

// hwloc's plugins of Debian's libhwloc15: they find I/O devices (libpciaccess, OpenCL, GL displays
// through libX11) and read XML through libxml2, none of which placement reads.
constexpr const char* kUnusedPlugins = "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_xml_libxml";

// The host's topology, loaded at the first call and kept (queries on a loaded topology are
// thread-safe), or nullptr when hwloc cannot read the host. Loading the plugins (dlopen of libX11
// and the rest) was 40% of MPI_Init's time in an 8-rank job on 2 cores here, so they are left
// out: hwloc reads its block list from the environment when its first topology is made. A user's
// own block list or plugin path wins. MPI_Init makes it before PMIx starts its thread, so no other
// thread of the library reads the environment meanwhile.
hwloc_topology_t host_topology() {
  static hwloc_topology_t topo = [] {
    const bool block = std::getenv("HWLOC_PLUGINS_BLACKLIST") == nullptr &&
                       std::getenv("HWLOC_PLUGINS_PATH") == nullptr;
    if (block) setenv("HWLOC_PLUGINS_BLACKLIST", kUnusedPlugins, 0);
    hwloc_topology_t t = nullptr;
    const bool made = hwloc_topology_init(&t) == 0;
    if (block) unsetenv("HWLOC_PLUGINS_BLACKLIST");
    if (!made) return static_cast<hwloc_topology_t>(nullptr);
    if (hwloc_topology_load(t) == 0) return t;
    hwloc_topology_destroy(t);
    return static_cast<hwloc_topology_t>(nullptr);
  }();
  return topo;
}

HostInfo read_host() {
  HostInfo info;
  hwloc_topology_t topo = host_topology();
  if (topo == nullptr) return info;
  // The topology holds what the node lets this job use (a container's cpuset limits it); the
  // process's binding (by the launcher, taskset) restricts it further for cores and pus.
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
  return info;
}

// Most free cores first (ties: lowest node), so that consecutive chips land on different nodes.
int roomiest(const std::vector<std::vector<int>>& free_by_node) {
  int best = -1;
  for (size_t n = 0; n < free_by_node.size(); ++n) {
    if (free_by_node[n].empty()) continue;
    if (best < 0 || free_by_node[n].size() > free_by_node[best].size()) best = static_cast<int>(n);
  }
  return best;
}

// The NUMA node (logical index) whose cpuset holds the core's, 0 when hwloc shows none.
int numa_of(hwloc_topology_t topo, hwloc_obj_t core) {
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i);
    if (node != nullptr && node->cpuset != nullptr &&
        hwloc_bitmap_isincluded(core->cpuset, node->cpuset)) {
      return static_cast<int>(node->logical_index);
    }
  }
  return 0;
}

}  // namespace

std::vector<int> assign_cores(const std::vector<int>& numa_of_core, const std::vector<int>& group) {
  const int ncores = static_cast<int>(numa_of_core.size());
  const int nranks = static_cast<int>(group.size());
  std::vector<int> core(nranks, -1);
  if (ncores == 0) return core;
  if (nranks > ncores) {
    for (int r = 0; r < nranks; ++r) core[r] = r % ncores;
    return core;
  }
  int nodes = 0;
  for (int n : numa_of_core) nodes = std::max(nodes, n + 1);
  std::vector<std::vector<int>> free_by_node(nodes);
  for (int c = 0; c < ncores; ++c) free_by_node[std::max(numa_of_core[c], 0)].push_back(c);
  // Free cores are taken from the front, in hwloc's logical order.
  for (auto& v : free_by_node) std::reverse(v.begin(), v.end());
  std::vector<bool> done(nranks, false);
  for (int first = 0; first < nranks; ++first) {
    if (done[first]) continue;
    std::vector<int> members;
    for (int r = first; r < nranks; ++r) {
      if (!done[r] && group[r] == group[first]) members.push_back(r);
    }
    int node = roomiest(free_by_node);
    for (int r : members) {
      // A chip bigger than the roomiest node's free cores spills onto the next roomiest.
      if (free_by_node[node].empty()) node = roomiest(free_by_node);
      core[r] = free_by_node[node].back();
      free_by_node[node].pop_back();
      done[r] = true;
    }
  }
  return core;
}

void bind_process(const std::string& policy, int rank, const std::vector<int>& local_peers) {
  if (policy == "none") {
    TORUSMPI_DEBUG(kBoot, "not bound to a core: TORUSMPI_BIND=none");
    return;
  }
  if (policy != "auto" && policy != "core") {
    if (!local_peers.empty() && local_peers.front() == rank) {
      log::warn("TORUSMPI_BIND=%s is not auto, core or none: ranks are not bound", policy.c_str());
    }
    return;
  }
  auto me = std::find(local_peers.begin(), local_peers.end(), rank);
  if (me == local_peers.end()) {
    TORUSMPI_DEBUG(kBoot, "not bound to a core: rank %d is not among its node's ranks", rank);
    return;
  }
  const int index = static_cast<int>(me - local_peers.begin());
  hwloc_topology_t topo = host_topology();
  if (topo == nullptr) {
    TORUSMPI_DEBUG(kBoot, "not bound to a core: hwloc could not read the host");
    return;
  }
  // Cores, or hardware threads where hwloc shows no cores (some virtual machines).
  hwloc_obj_type_t unit =
      hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  const int ncores = hwloc_get_nbobjs_by_type(topo, unit);
  const int nlocal = static_cast<int>(local_peers.size());
  std::string why;
  if (policy == "auto") {
    hwloc_cpuset_t allowed = hwloc_bitmap_alloc();
    bool free_to_move = allowed != nullptr &&
                        hwloc_get_cpubind(topo, allowed, HWLOC_CPUBIND_PROCESS) == 0 &&
                        hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(topo), allowed);
    hwloc_bitmap_free(allowed);
    // A launcher's binding (or taskset) is the user's choice: keep it. Open MPI's mpirun exports
    // the policy its user gave (--bind-to): one other than none binds, even to every CPU of the
    // host (a socket of a one-socket host), which the cpuset alone cannot tell from no binding.
    const char* asked = std::getenv("OMPI_MCA_hwloc_base_binding_policy");
    if (asked != nullptr && *asked != '\0' && std::strncmp(asked, "none", 4) != 0) {
      why = std::string("the launcher bound it (--bind-to ") + asked + ")";
    } else if (!free_to_move) {
      why = "the launcher (or taskset) bound it already";
    }
    // Ranks that outnumber the cores are bound too, round robin. Their waits yield and so never
    // leave the run queue, and the scheduler, finding every one of them runnable and cache-hot,
    // kept three of 4 ranks on one of 2 cores for whole runs: osu_alltoall 16 B at 4 ranks took
    // 3.5 us in one run of two, bound 2.4 (medians of 16: 3.45 against 2.40; 8 ranks, allgather
    // 1 KiB 19.7 against 15.3 us).
  }
  if (!why.empty()) {
    TORUSMPI_DEBUG(kBoot, "not bound to a core (TORUSMPI_BIND=auto): %s", why.c_str());
    return;
  }
  std::vector<int> numa(ncores);
  for (int c = 0; c < ncores; ++c) numa[c] = numa_of(topo, hwloc_get_obj_by_type(topo, unit, c));
  const Machine& m = machine();
  std::vector<int> group(nlocal);
  for (int r = 0; r < nlocal; ++r) {
    Place p = place(m, local_peers[r]);
    group[r] = p.instance * m.chips() + p.chip;
  }
  int c = assign_cores(numa, group)[index];
  hwloc_obj_t obj = hwloc_get_obj_by_type(topo, unit, c);
  if (obj == nullptr || hwloc_set_cpubind(topo, obj->cpuset, HWLOC_CPUBIND_PROCESS) != 0) {
    TORUSMPI_DEBUG(kBoot, "not bound to a core: binding to %s L#%d failed",
                   unit == HWLOC_OBJ_CORE ? "core" : "PU", c);
  } else {
    TORUSMPI_DEBUG(kBoot, "bound to %s L#%d (NUMA node %d), emulated chip %d, TORUSMPI_BIND=%s",
                   unit == HWLOC_OBJ_CORE ? "core" : "PU", c, numa[c], group[index],
                   policy.c_str());
  }
}

namespace {

hwloc_obj_type_t hwloc_type(Locality level) {
  switch (level) {
    case Locality::kHwthread:
      return HWLOC_OBJ_PU;
    case Locality::kCore:
      return HWLOC_OBJ_CORE;
    case Locality::kL1Cache:
      return HWLOC_OBJ_L1CACHE;
    case Locality::kL2Cache:
      return HWLOC_OBJ_L2CACHE;
    case Locality::kL3Cache:
      return HWLOC_OBJ_L3CACHE;
    case Locality::kSocket:
      return HWLOC_OBJ_PACKAGE;
    case Locality::kNuma:
      break;
  }
  return HWLOC_OBJ_NUMANODE;
}

// The key of a cpuset: equal cpusets give equal keys; distinct objects of one topology (which
// share no PU at one level, or differ in size across levels) practically never collide.
LocalityKey key_of(hwloc_const_cpuset_t set) {
  LocalityKey k;
  k.first = hwloc_bitmap_first(set);
  k.last = hwloc_bitmap_last(set);
  k.weight = hwloc_bitmap_weight(set);
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the PU indices
  for (int pu = hwloc_bitmap_first(set); pu >= 0; pu = hwloc_bitmap_next(set, pu)) {
    h = (h ^ static_cast<uint64_t>(pu)) * 1099511628211ull;
  }
  k.hash = h;
  return k;
}

}  // namespace

bool locality_key(Locality level, bool launcher_bound, LocalityKey* key) {
  hwloc_topology_t topo = host_topology();
  if (topo == nullptr) return false;
  bool found = false;
  hwloc_cpuset_t bound = hwloc_bitmap_alloc();
  if (bound != nullptr && hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS) == 0) {
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topo);
    hwloc_bitmap_and(bound, bound, all);
    // Unbound (the whole node, or nothing hwloc knows): Open MPI 4.1 gives such a rank no
    // locality below its node, so every finer split leaves it alone; we match that. Bound to the
    // whole node by the launcher (a socket of a one-socket host) is bound, as Open MPI has it.
    if (hwloc_bitmap_iszero(bound)) hwloc_bitmap_copy(bound, all);
    const bool unbound = !launcher_bound && hwloc_bitmap_isincluded(all, bound);
    const hwloc_obj_type_t type = hwloc_type(level);
    hwloc_obj_t hit = nullptr;
    int hits = 0;
    const int n = unbound ? 0 : hwloc_get_nbobjs_by_type(topo, type);
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, i);
      if (obj != nullptr && obj->cpuset != nullptr && hwloc_bitmap_intersects(obj->cpuset, bound)) {
        hit = obj;
        ++hits;
      }
    }
    if (hits == 1) {
      *key = key_of(hit->cpuset);
      found = true;
    } else if (hits > 1) {
      // Bound to more than one: what covers the binding (the root at worst) is its locality.
      hwloc_obj_t cover = hwloc_get_obj_covering_cpuset(topo, bound);
      *key = key_of(cover != nullptr ? cover->cpuset : all);
      found = true;
    }
  }
  hwloc_bitmap_free(bound);
  return found;
}

const HostInfo& host_info() {
  static std::once_flag once;
  static HostInfo info;
  std::call_once(once, [] { info = read_host(); });
  return info;
}

}  // namespace torusmpi::topo
