// Windows: their creation (MPI_Win_create, MPI_Win_allocate, MPI_Win_allocate_shared,
// MPI_Win_create_dynamic), MPI_Win_free, and what describes them: group, name, info, the
// predefined attributes, MPI_Win_shared_query, MPI_Win_attach/detach. See win.h for the design.
#include "mpi/win.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "core/progress.h"
#include "device/device.h"
#include "mpi/attr.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/fortran.h"
#include "mpi/group.h"
#include "mpi/info.h"
#include "mpi/runtime.h"
#include "pml/shm/shm.h"
#include "topo/machine.h"

namespace torusmpi::mpi {
namespace {

// Freed windows' objects, for the next creation: a stale handle keeps reading "freed". Never
// destroyed (nor its objects), like the handle tables: a handle may be looked at during exit.
std::vector<Win*>& free_wins() {
  static auto* const wins = new std::vector<Win*>;
  return *wins;
}

Win* win_new() {
  Win* w;
  if (!free_wins().empty()) {
    w = free_wins().back();
    free_wins().pop_back();
    *w = Win{};
  } else {
    w = new Win{};
  }
  w->handle.magic = kMagicWin;
  w->handle.impl = w;
  // Open MPI's Fortran bindings pass this back to the attribute calls: the handle itself, as for
  // communicators.
  w->handle.w_keyhash = &w->handle;
  w->handle.w_f_to_c_index = kNoFortranIndex;
  // MPI: a window starts with MPI_ERRORS_ARE_FATAL.
  w->handle.error_handler = MPI_ERRORS_ARE_FATAL;
  w->handle.errhandler_type = ompi::kTypeWin;
  errhandler_retain(MPI_ERRORS_ARE_FATAL);
  return w;
}

// Gives back what a window holds and marks its handle freed.
void win_delete(Win* w) {
  if (w->mixed) net_close(w);
  rma::segment_close(&w->control);
  if (w->device_memory != nullptr) device::free(w->device_memory);
  w->device_memory = nullptr;
  delete w->attached;
  w->attached = nullptr;
  if (w->comm != MPI_COMM_NULL) PMPI_Comm_free(&w->comm);
  info_free(w->info);
  errhandler_release(w->handle.error_handler);
  fortran_forget(HandleKind::kWin, &w->handle);
  w->handle.magic = kMagicFreed;
  w->handle.impl = nullptr;
  w->targets.clear();
  w->members.clear();
  free_wins().push_back(w);
}

// Which members this process reaches through shared memory (by window rank): those of its node
// and its emulated instance (ranks of different instances talk only through the network, as they
// would on the hardware). The others are reached by messages (win_net.cc).
std::vector<bool> near_members(const std::vector<int>& members) {
  const Runtime& rt = runtime();
  const topo::Machine& m = topo::machine();
  const int mine = topo::place(m, rt.job.rank).instance;
  std::vector<bool> near(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    const int r = members[i];
    near[i] = r == rt.job.rank ||
              (std::binary_search(rt.job.local_peers.begin(), rt.job.local_peers.end(), r) &&
               topo::place(m, r).instance == mine);
  }
  return near;
}

// What each process tells the others when a window is made.
struct Card {
  int64_t size;
  int64_t base;
  int64_t attached;  // dynamic windows: the AttachTable's address
  int32_t disp_unit;
  int32_t pid;
  int32_t device;  // its memory is device memory
  int32_t unused;
};

constexpr size_t kPage = 4096;

// Reads a byte of each peer's part that is not mapped here through process_vm_readv (the
// kernel's ptrace rules must let this process in, or the window cannot work), or finds its HBM
// mapped.
bool probe_peers(Win* w, std::string* error) {
  char byte;
  for (int r = 0; r < w->size; ++r) {
    const WinTarget& t = w->targets[r];
    if (r == w->rank || t.size == 0 || t.remote || t.local != nullptr) continue;
    if (t.device) {
      // HBM is reached through the device layer's mapping of the peer's arena.
      if (device::peer_view(w->members[r], t.base, static_cast<size_t>(t.size)) != nullptr) {
        continue;
      }
      *error = "rank " + std::to_string(r) +
               "'s part of the window is device memory that this "
               "process does not map (its HBM could not be opened here: see the warning at "
               "MPI_Init)";
      return false;
    }
    std::vector<rma::Block> one{{t.base, 1}};
    if (rma::peer_read(t.pid, one, &byte, error) != Status::kOk) return false;
  }
  return true;
}

// The common part of the four creations; `size` and `disp_unit` are checked, *baseptr gets the
// memory of the allocating flavors.
int win_make(const char* fn, MPI_Comm comm, int flavor, MPI_Aint size, int disp_unit, MPI_Info info,
             void* base, void* baseptr, MPI_Win* win) {
  if (int err = require_active(fn)) return err;
  Comm* c = comm_impl(comm);
  if (c == nullptr) {
    return raise_error(nullptr, MPI_ERR_COMM, fn, "comm argument is %s",
                       comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a valid communicator");
  }
  if (c->is_inter()) {
    return raise_error(comm, MPI_ERR_COMM, fn,
                       "comm argument is an intercommunicator (windows need an intracommunicator)");
  }
  if (win == nullptr) return raise_error(comm, MPI_ERR_ARG, fn, "win argument is NULL");
  if (size < 0) {
    return raise_error(comm, MPI_ERR_SIZE, fn, "size argument is negative (%lld)",
                       static_cast<long long>(size));
  }
  if (disp_unit <= 0) {
    return raise_error(comm, MPI_ERR_DISP, fn, "disp_unit argument is %d (must be positive)",
                       disp_unit);
  }
  if (info != MPI_INFO_NULL && info_impl(info) == nullptr) {
    return raise_error(comm, MPI_ERR_INFO, fn, "info argument is not a valid info");
  }
  if (baseptr == nullptr && (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED))
    return raise_error(comm, MPI_ERR_ARG, fn, "baseptr argument is NULL");
  if (flavor == MPI_WIN_FLAVOR_CREATE && size > 0 && device::in_device_range(base) &&
      device::kind(base, static_cast<size_t>(size)) != device::Kind::kDevice) {
    return raise_error(comm, MPI_ERR_BASE, fn,
                       "base argument %p with size %lld is device memory but not within one live "
                       "allocation",
                       base, static_cast<long long>(size));
  }
  // torusmpi_memory_kind=device: MPI_Win_allocate's memory in the rank's HBM (as MPI_Alloc_mem).
  std::string memory_kind;
  const bool on_device = (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) &&
                         info_value(info, "torusmpi_memory_kind", &memory_kind) &&
                         memory_kind != "host";
  if (on_device && memory_kind != "device") {
    return raise_error(comm, MPI_ERR_INFO_VALUE, fn,
                       "info key torusmpi_memory_kind has value \"%s\"; it takes host or device",
                       memory_kind.c_str());
  }
  if (on_device && flavor == MPI_WIN_FLAVOR_SHARED) {
    return raise_error(comm, MPI_ERR_INFO_VALUE, fn,
                       "info key torusmpi_memory_kind is device: the processes load and store "
                       "MPI_Win_allocate_shared's memory themselves, which device memory does not "
                       "allow (MPI_Win_allocate takes it)");
  }
  std::vector<int> members = comm_members(*c);
  const std::vector<bool> near = near_members(members);
  const bool mixed = std::find(near.begin(), near.end(), false) != near.end();
  if (mixed && flavor == MPI_WIN_FLAVOR_SHARED) {
    const int far = static_cast<int>(std::find(near.begin(), near.end(), false) - near.begin());
    return raise_error(comm, MPI_ERR_RMA_SHARED, fn,
                       "comm argument has rank %d on another node or instance: its memory cannot "
                       "be shared with this process (MPI_Win_allocate works across nodes)",
                       far);
  }

  Win* w = win_new();
  w->members = members;
  w->rank = c->rank;
  w->size = c->size;
  w->flavor = flavor;
  // The window's own communicator: its fences and its creation's exchanges never meet the
  // application's messages. A split copies no attribute (a dup would run the copy callbacks).
  if (PMPI_Comm_split(comm, 0, c->rank, &w->comm) != MPI_SUCCESS) {
    win_delete(w);
    return raise_error(comm, MPI_ERR_INTERN, fn, "cannot make the window's communicator");
  }
  PMPI_Comm_set_errhandler(w->comm, MPI_ERRORS_RETURN);
  comm_impl(w->comm)->name = "window of " + c->label();
  // The processes that share the window's segments: all of them, or those of this node (win.h).
  MPI_Comm seg_comm = w->comm;
  if (mixed) {
    const int color = static_cast<int>(std::find(near.begin(), near.end(), true) - near.begin());
    if (PMPI_Comm_split(w->comm, color, c->rank, &seg_comm) != MPI_SUCCESS) {
      win_delete(w);
      return raise_error(comm, MPI_ERR_INTERN, fn, "cannot make the window's node communicator");
    }
  }
  const int seg_rank = comm_impl(seg_comm)->rank;
  const bool allocates = flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED;
  if (flavor == MPI_WIN_FLAVOR_CREATE || flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    rma::allow_peer_access();
  }

  if (flavor == MPI_WIN_FLAVOR_DYNAMIC) w->attached = new AttachTable;
  std::string error;
  // A part that cannot be allocated fails the creation on every process (the allreduce below).
  bool allocated = true;
  if (on_device) {
    allocated = device::alloc(static_cast<size_t>(size), &w->device_memory) == Status::kOk;
    if (!allocated) {
      error = "cannot allocate " + std::to_string(static_cast<long long>(size)) +
              " bytes of device memory on chip " + std::to_string(device::chip());
    }
    base = w->device_memory;
  }
  const bool mine_on_device = size > 0 && device::in_device_range(base);
  Card mine{static_cast<int64_t>(size),
            static_cast<int64_t>(reinterpret_cast<uintptr_t>(base)),
            static_cast<int64_t>(reinterpret_cast<uintptr_t>(w->attached)),
            disp_unit,
            static_cast<int32_t>(getpid()),
            mine_on_device ? 1 : 0,
            0};
  std::vector<Card> cards(static_cast<size_t>(w->size));
  int rc =
      PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, cards.data(), sizeof mine, MPI_BYTE, w->comm);
  // Where each process's memory goes in the segment: one after the other (MPI's default for
  // MPI_Win_allocate_shared), or each on pages of its own with alloc_shared_noncontig.
  std::string hint;
  const bool noncontig =
      info_value(info, "alloc_shared_noncontig", &hint) && (hint == "true" || hint == "1");
  std::vector<size_t> offsets(static_cast<size_t>(w->size));
  size_t data_bytes = 0;
  // MPI_Win_allocate's parts need not touch: each starts on a page of its own plus a cache line per
  // rank, so that copies between a page-aligned buffer and a part are not at the same page offset
  // (4 KiB aliasing: loads that seem to depend on the stores before them stall; a put or get of
  // 32 KiB took 15% longer).
  const bool staggered = flavor == MPI_WIN_FLAVOR_ALLOCATE;
  for (int r = 0; r < w->size && allocates; ++r) {
    if (!near[r] || cards[r].device) continue;  // its memory is on its node, or in its HBM
    size_t s = static_cast<size_t>(cards[r].size);
    if (staggered) {
      data_bytes =
          (data_bytes + kPage - 1) / kPage * kPage + 64 * (static_cast<size_t>(r) % 63 + 1);
    }
    offsets[r] = data_bytes;
    data_bytes += noncontig ? (s + kPage - 1) / kPage * kPage : s;
  }
  const size_t control_bytes = rma::control_bytes(w->size);

  // The first process makes the segment; the others map it; it loses its name (or its maker's
  // fd) once all have it: the allreduce below is that "all".
  rma::SegmentCard card{};
  if (rc == MPI_SUCCESS && seg_rank == 0 &&
      rma::segment_create(runtime().job.nspace, control_bytes + data_bytes, &w->control, &card,
                          &error) != Status::kOk) {
    card.bytes = 0;  // tells the others
  }
  if (rc == MPI_SUCCESS) rc = PMPI_Bcast(&card, sizeof card, MPI_BYTE, 0, seg_comm);
  int ok = rc == MPI_SUCCESS && card.bytes != 0 && allocated;
  if (ok && seg_rank != 0 && rma::segment_open(card, &w->control, &error) != Status::kOk) ok = 0;
  if (ok) {
    char* data = static_cast<char*>(w->control.base) + control_bytes;
    w->targets.resize(static_cast<size_t>(w->size));
    for (int r = 0; r < w->size; ++r) {
      WinTarget& t = w->targets[r];
      t.pid = cards[r].pid;
      t.size = static_cast<MPI_Aint>(cards[r].size);
      t.disp_unit = cards[r].disp_unit;
      t.attached = static_cast<uintptr_t>(cards[r].attached);
      t.remote = !near[r];
      t.device = cards[r].device != 0;
      if (t.remote) {
        t.base = static_cast<uintptr_t>(cards[r].base);  // MPI_Win_allocate's: below
      } else if (t.device || (on_device && r == w->rank)) {
        // HBM: reached here through the device layer only (its own, or the peer's mapped).
        t.base = static_cast<uintptr_t>(cards[r].base);
        t.local = r == w->rank ? static_cast<char*>(base) : nullptr;
      } else if (allocates) {
        t.local = data + offsets[r];
        t.base = reinterpret_cast<uintptr_t>(t.local);
      } else {
        t.base = static_cast<uintptr_t>(cards[r].base);
        t.local =
            r == w->rank && flavor == MPI_WIN_FLAVOR_CREATE ? static_cast<char*>(base) : nullptr;
      }
    }
    if ((flavor == MPI_WIN_FLAVOR_CREATE || flavor == MPI_WIN_FLAVOR_ALLOCATE) &&
        !probe_peers(w, &error)) {
      ok = 0;
    }
  }
  int all_ok = 0;
  if (rc == MPI_SUCCESS) rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, w->comm);
  if (seg_rank == 0) rma::segment_release_name(&w->control);
  if (mixed) PMPI_Comm_free(&seg_comm);
  if (mixed && rc == MPI_SUCCESS && all_ok) {
    // Where each process's part is in its own address space: requests from other nodes name
    // target memory by those addresses.
    int64_t mine_base = static_cast<int64_t>(w->targets[w->rank].base);
    std::vector<int64_t> bases(static_cast<size_t>(w->size));
    rc = PMPI_Allgather(&mine_base, 1, MPI_INT64_T, bases.data(), 1, MPI_INT64_T, w->comm);
    for (int r = 0; r < w->size && rc == MPI_SUCCESS; ++r) {
      if (w->targets[r].remote) w->targets[r].base = static_cast<uintptr_t>(bases[r]);
    }
  }
  if (rc != MPI_SUCCESS || !all_ok) {
    win_delete(w);
    if (error.empty()) error = "another process of the window could not map it (see its message)";
    return raise_error(comm, rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM, fn, "%s", error.c_str());
  }

  w->charge_links = pml::shm::link_accounting();
  w->held.assign(static_cast<size_t>(w->size), Held::kNone);
  w->in_flight.assign(static_cast<size_t>(w->size), 0);
  if (flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    w->attach_seen.assign(static_cast<size_t>(w->size), AttachTable{});
  }
  w->started.assign(static_cast<size_t>(w->size), 0);
  if (info != MPI_INFO_NULL) w->info = info_new(info_impl(info));
  const WinTarget& me = w->targets[w->rank];
  w->attr_base = allocates ? static_cast<void*>(me.local) : base;
  w->attr_size = size;
  w->attr_disp_unit = disp_unit;
  w->attr_flavor = flavor;
  w->attr_model = MPI_WIN_UNIFIED;
  if (allocates) *static_cast<void**>(baseptr) = me.local;
  if (mixed) {
    w->mixed = true;
    net_open(w);
  }
  *win = &w->handle;
  // The chip's engine runs from the first device allocation on (MPI_Alloc_mem does the same).
  if (on_device) start_device_engine();
  return MPI_SUCCESS;
}

}  // namespace

bool win_predefined_attr(MPI_Win win, int keyval, int* kind, void** value) {
  Win* w = win_impl(win);
  if (w == nullptr) return false;
  switch (keyval) {
    case MPI_WIN_BASE:
      *kind = 0;
      *value = w->attr_base;
      return true;
    case MPI_WIN_SIZE:
      *kind = 1;
      *value = &w->attr_size;
      return true;
    case MPI_WIN_DISP_UNIT:
      *kind = 2;
      *value = &w->attr_disp_unit;
      return true;
    case MPI_WIN_CREATE_FLAVOR:
      *kind = 2;
      *value = &w->attr_flavor;
      return true;
    case MPI_WIN_MODEL:
      *kind = 2;
      *value = &w->attr_model;
      return true;
  }
  return false;
}

}  // namespace torusmpi::mpi

using torusmpi::mpi::raise_error;
using torusmpi::mpi::raise_error_win;
using torusmpi::mpi::Win;
namespace mpi = torusmpi::mpi;

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win* win) {
  torusmpi::progress::Lock lock;
  return mpi::win_make("MPI_Win_create", comm, MPI_WIN_FLAVOR_CREATE, size, disp_unit, info, base,
                       nullptr, win);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_create);

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                      MPI_Win* win) {
  torusmpi::progress::Lock lock;
  return mpi::win_make("MPI_Win_allocate", comm, MPI_WIN_FLAVOR_ALLOCATE, size, disp_unit, info,
                       nullptr, baseptr, win);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_allocate);

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void* baseptr, MPI_Win* win) {
  torusmpi::progress::Lock lock;
  return mpi::win_make("MPI_Win_allocate_shared", comm, MPI_WIN_FLAVOR_SHARED, size, disp_unit,
                       info, nullptr, baseptr, win);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_allocate_shared);

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  torusmpi::progress::Lock lock;
  // MPI: size 0, disp_unit 1, base MPI_BOTTOM; target displacements are addresses.
  return mpi::win_make("MPI_Win_create_dynamic", comm, MPI_WIN_FLAVOR_DYNAMIC, 0, 1, info,
                       MPI_BOTTOM, nullptr, win);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_create_dynamic);

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_attach";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
    return raise_error_win(win, MPI_ERR_RMA_FLAVOR, kFn,
                           "win argument was not made by MPI_Win_create_dynamic");
  }
  if (size < 0) return raise_error_win(win, MPI_ERR_SIZE, kFn, "size argument is negative");
  if (base == nullptr && size > 0)
    return raise_error_win(win, MPI_ERR_ARG, kFn, "base argument is NULL");
  mpi::AttachTable* t = w->attached;
  if (t->count == mpi::AttachTable::kMax) {
    return raise_error_win(win, MPI_ERR_RMA_ATTACH, kFn,
                           "this process has attached %d regions to the window already (the most "
                           "torusmpi keeps)",
                           mpi::AttachTable::kMax);
  }
  // Other processes reach the memory by its address (process_vm_readv/writev) and read this
  // table to check it: MPI has the application synchronize between attach and access.
  t->regions[t->count] = {reinterpret_cast<uint64_t>(base), static_cast<uint64_t>(size)};
  __atomic_store_n(&t->count, t->count + 1, __ATOMIC_RELEASE);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_attach);

int PMPI_Win_detach(MPI_Win win, const void* base) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_detach";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
    return raise_error_win(win, MPI_ERR_RMA_FLAVOR, kFn,
                           "win argument was not made by MPI_Win_create_dynamic");
  }
  mpi::AttachTable* t = w->attached;
  for (uint64_t i = 0; i < t->count; ++i) {
    if (t->regions[i].base == reinterpret_cast<uint64_t>(base)) {
      t->regions[i] = t->regions[t->count - 1];
      __atomic_store_n(&t->count, t->count - 1, __ATOMIC_RELEASE);
      return MPI_SUCCESS;
    }
  }
  return raise_error_win(win, MPI_ERR_ARG, kFn,
                         "base argument %p is not memory this process attached to the window",
                         base);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_detach);

int PMPI_Win_free(MPI_Win* win) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_free";
  if (int err = mpi::require_active(kFn)) return err;
  if (win == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "win argument is NULL");
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, *win, &w)) return err;
  if (w->held_count > 0 || w->lock_all || w->access_open || w->exposure_open) {
    return raise_error_win(*win, MPI_ERR_RMA_SYNC, kFn, "an epoch is still open on the window (%s)",
                           w->exposure_open ? "MPI_Win_post without MPI_Win_wait"
                           : w->access_open ? "MPI_Win_start without MPI_Win_complete"
                                            : "a lock is held");
  }
  // Puts and accumulates to other nodes are answered before the last barrier.
  std::string error;
  int net_rc = w->mixed ? mpi::net_flush(w, -1, &error) : MPI_SUCCESS;
  // MPI: attributes go first, through their delete callbacks.
  int rc = mpi::attr_delete_all(mpi::AttrKind::kWin, *win);
  // Nobody reaches the memory once every process is here: the segment can go.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  PMPI_Barrier(w->comm);
  mpi::win_delete(w);
  *win = MPI_WIN_NULL;
  if (net_rc != MPI_SUCCESS) return raise_error(nullptr, net_rc, kFn, "%s", error.c_str());
  return rc;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_free);

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_get_group";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (group == nullptr) return raise_error_win(win, MPI_ERR_ARG, kFn, "group argument is NULL");
  *group = mpi::group_new(w->members);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_get_group);

int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_set_name";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (win_name == nullptr)
    return raise_error_win(win, MPI_ERR_ARG, kFn, "win_name argument is NULL");
  // MPI truncates names to MPI_MAX_OBJECT_NAME - 1 characters.
  w->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_set_name);

int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_get_name";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (win_name == nullptr || resultlen == nullptr) {
    return raise_error_win(win, MPI_ERR_ARG, kFn, "%s argument is NULL",
                           win_name == nullptr ? "win_name" : "resultlen");
  }
  *resultlen = mpi::copy_out(w->name.str(), win_name, MPI_MAX_OBJECT_NAME);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_get_name);

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_set_info";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  mpi::Info* in = mpi::info_impl(info);
  if (info != MPI_INFO_NULL && in == nullptr)
    return raise_error_win(win, MPI_ERR_INFO, kFn, "info argument is not a valid info");
  if (in == nullptr) return MPI_SUCCESS;
  // The hints are kept as given (no_locks, accumulate_ordering, accumulate_ops, same_size,
  // same_disp_unit...): every one is correct to ignore here, where operations complete at once.
  if (w->info == MPI_INFO_NULL) w->info = mpi::info_new(nullptr);
  mpi::Info* kept = mpi::info_impl(w->info);
  for (int i = 0; i < in->size(); ++i) kept->set(in->key(i), *in->find(in->key(i)));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_set_info);

int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_get_info";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (info_used == nullptr)
    return raise_error_win(win, MPI_ERR_ARG, kFn, "info_used argument is NULL");
  *info_used = mpi::info_new(mpi::info_impl(w->info));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_get_info);

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_shared_query";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (w->flavor != MPI_WIN_FLAVOR_SHARED && w->flavor != MPI_WIN_FLAVOR_ALLOCATE) {
    return raise_error_win(
        win, MPI_ERR_RMA_FLAVOR, kFn, "win argument's memory is not shared (made by %s)",
        w->flavor == MPI_WIN_FLAVOR_CREATE ? "MPI_Win_create" : "MPI_Win_create_dynamic");
  }
  if (size == nullptr || disp_unit == nullptr || baseptr == nullptr) {
    return raise_error_win(win, MPI_ERR_ARG, kFn, "%s argument is NULL",
                           size == nullptr        ? "size"
                           : disp_unit == nullptr ? "disp_unit"
                                                  : "baseptr");
  }
  if (rank == MPI_PROC_NULL) {
    // MPI: the memory of the lowest rank that has some.
    rank = 0;
    while (rank < w->size - 1 && w->targets[rank].size == 0) ++rank;
  } else if (rank < 0 || rank >= w->size) {
    return raise_error_win(win, MPI_ERR_RANK, kFn,
                           "rank argument is %d, not a rank of the window's group (size %d)", rank,
                           w->size);
  }
  const mpi::WinTarget& t = w->targets[rank];
  if (t.device) {
    return raise_error_win(win, MPI_ERR_RMA_FLAVOR, kFn,
                           "rank %d's part of the window is device memory, which this process "
                           "cannot load or store (MPI_Put and MPI_Get reach it)",
                           rank);
  }
  *size = t.size;
  *disp_unit = t.disp_unit;
  *static_cast<void**>(baseptr) = t.local;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_shared_query);
