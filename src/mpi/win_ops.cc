// One-sided operations: MPI_Put, MPI_Get, MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op,
// MPI_Compare_and_swap and their request forms. Each completes before it returns (win.h), but
// for puts and accumulates to other nodes, which their epoch's end awaits: the target's memory is
// mapped here (MPI_Win_allocate(_shared), or this process's own) and is read and written in
// place, or it is another process's private memory, read and written with one
// process_vm_readv/writev over the target datatype's blocks, or it is on another node and a
// request carries the blocks and the data there (win_net.cc). Device memory in the target, this
// process's or a node peer's, is moved and combined where it lies by the device layer (win.h).
//
// Data moves as the datatype engine's packed stream: the origin's bytes packed (or used in place
// when contiguous), the target's blocks in type-map order. Accumulates hold the target's update
// lock (in the control segment) while they read, combine and write, so concurrent accumulates to
// one location lose nothing; the combining is the reduction kernels' (resolve_packed_reduction),
// target = origin op target, as MPI_Reduce_local orders it.
#include <cstring>
#include <string>
#include <vector>

#include "core/progress.h"
#include "mpi/builtins.h"
#include "mpi/datatype.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/p2p.h"
#include "mpi/reduction.h"
#include "mpi/win.h"
#include "pml/shm/shm.h"

namespace torusmpi::mpi {
namespace {

// An origin-side buffer argument, checked: its engine type and bytes.
struct Side {
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  const dtype::Type* t = nullptr;
  size_t bytes = 0;
};

int check_side(const char* fn, MPI_Win win, const char* what, const void* buf, int count,
               MPI_Datatype type, Side* out) {
  if (count < 0) {
    return raise_error_win(win, MPI_ERR_COUNT, fn, "%s_count argument is negative (%d)", what,
                           count);
  }
  if (const char* bad = bad_datatype(type)) {
    return raise_error_win(win, MPI_ERR_TYPE, fn, "%s_datatype argument is %s", what, bad);
  }
  const Datatype* d = derived_type(type);
  if (d != nullptr && !d->committed) {
    return raise_error_win(win, MPI_ERR_TYPE, fn, "%s_datatype argument is not committed", what);
  }
  out->buf = buf;
  out->count = count;
  out->type = type;
  // The handle is a datatype (checked above): no second check through engine_type.
  out->t = d != nullptr ? d->type.get() : builtin_engine_type(type->builtin).get();
  out->bytes = static_cast<size_t>(count) * static_cast<size_t>(out->t->size());
  // The target side has no buffer argument (what is "target").
  if (buf == nullptr && out->bytes > 0 && what[0] != 't') {
    return raise_error_win(win, MPI_ERR_BUFFER, fn, "%s_addr argument is NULL", what);
  }
  return MPI_SUCCESS;
}

// Whether the side's elements are one block of s.bytes bytes at its address, known without the
// datatype engine: a predefined type whose size is its extent (every one but the padded pairs
// such as MPI_SHORT_INT, and the markers). The per-call path of put and get on basic types: the
// engine's contiguous() and pack build a repeated layout each time.
bool dense_predefined(const Side& s) {
  return s.type->builtin != kDerivedType && s.t->size() == s.t->extent();
}

// Bytes this process moves to (a put, an accumulate) or from (a get) a node peer's window memory
// on another chip cross emulated links, counted as the transport counts messages' (pml/shm/shm.h).
inline void charge(const Win& w, int target, size_t bytes, bool to_target) {
  if (__builtin_expect(w.charge_links, 0) && target != w.rank && !w.targets[target].remote) {
    pml::shm::charge_links(w.members[target], bytes, to_target);
  }
}

// A checked target access: where, and how it is reached.
struct Access {
  WinTarget* t = nullptr;
  uintptr_t address = 0;  // in the target process
  Side side;
};

int target_of(MPI_Win win, const Access& a) {
  return static_cast<int>(a.t - win_impl(win)->targets.data());
}

bool in_access_epoch(const Win& w, int rank) {
  if (w.fence_open || w.lock_all || w.held[rank] != Held::kNone) return true;
  if (!w.access_open) return false;
  for (int r : w.access) {
    if (r == rank) return true;
  }
  return false;
}

// A dynamic window's access [disp + true lb, ... + true ub) lies in one region the target
// attached, or MPI_ERR_RMA_RANGE.
int check_attached(const char* fn, MPI_Win win, Win& w, int rank, MPI_Aint disp, int count,
                   const dtype::Type& t) {
  if (count == 0) return MPI_SUCCESS;
  const int64_t lo = static_cast<int64_t>(disp) + t.true_lb();
  const int64_t hi = static_cast<int64_t>(disp) + (count - 1) * t.extent() + t.true_ub();
  const auto listed = [lo, hi](const AttachTable& table) {
    const uint64_t n = table.count < AttachTable::kMax ? table.count : AttachTable::kMax;
    for (uint64_t i = 0; i < n; ++i) {
      const auto& r = table.regions[i];
      if (lo >= static_cast<int64_t>(r.base) && hi <= static_cast<int64_t>(r.base + r.size)) {
        return true;
      }
    }
    return false;
  };
  if (rank == w.rank) {
    AttachTable table;
    table.count = __atomic_load_n(&w.attached->count, __ATOMIC_ACQUIRE);
    std::memcpy(table.regions, w.attached->regions, sizeof table.regions);
    if (listed(table)) return MPI_SUCCESS;
  } else {
    // The table read last, then (not listed there) the target's table as it is now: one
    // process_vm_readv the less on every access but the first to a region.
    AttachTable& seen = w.attach_seen[rank];
    if (listed(seen)) return MPI_SUCCESS;
    const WinTarget& target = w.targets[rank];
    std::string error;
    std::vector<rma::Block> whole{{target.attached, sizeof(AttachTable)}};
    if (rma::peer_read(target.pid, whole, &seen, &error) != Status::kOk) {
      seen.count = 0;  // whatever part of it came is not to be trusted
      return raise_error_win(win, MPI_ERR_RMA_RANGE, fn, "%s", error.c_str());
    }
    if (listed(seen)) return MPI_SUCCESS;
  }
  return raise_error_win(win, MPI_ERR_RMA_RANGE, fn,
                         "target_disp %#llx with target_count %d reaches addresses [%#llx, %#llx) "
                         "of rank %d, which are not in memory it attached to the window",
                         static_cast<unsigned long long>(disp), count,
                         static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi),
                         rank);
}

// Checks the target arguments; *skip for MPI_PROC_NULL (nothing to do).
int check_target(const char* fn, MPI_Win win, Win* w, int rank, MPI_Aint disp, int count,
                 MPI_Datatype type, Access* a, bool* skip) {
  *skip = false;
  if (int err = check_side(fn, win, "target", nullptr, count, type, &a->side)) return err;
  if (rank == MPI_PROC_NULL) {
    *skip = true;
    return MPI_SUCCESS;
  }
  if (rank < 0 || rank >= w->size) {
    return raise_error_win(win, MPI_ERR_RANK, fn,
                           "target_rank argument is %d, not a rank of the window's group (size %d)",
                           rank, w->size);
  }
  if (!in_access_epoch(*w, rank)) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, fn,
                           "no access epoch to rank %d is open (MPI_Win_fence, MPI_Win_lock, "
                           "MPI_Win_lock_all or MPI_Win_start first)",
                           rank);
  }
  a->t = &w->targets[rank];
  const dtype::Type& t = *a->side.t;
  if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    // The displacement is an address in the target (MPI_Get_address), inside memory the target
    // attached: its table says (read from that process, or here for this one).
    a->address = static_cast<uintptr_t>(disp);
    // A target on another node checks its own table (win_net.cc): MPI_ERR_RMA_RANGE all the same.
    if (a->t->remote) return MPI_SUCCESS;
    return check_attached(fn, win, *w, rank, disp, count, t);
  }
  const int64_t off = static_cast<int64_t>(disp) * a->t->disp_unit;
  if (count > 0) {
    const int64_t lo = off + t.true_lb();
    const int64_t hi = off + (count - 1) * t.extent() + t.true_ub();
    if (disp < 0 || lo < 0 || hi > static_cast<int64_t>(a->t->size)) {
      return raise_error_win(win, MPI_ERR_RMA_RANGE, fn,
                             "target_disp %lld with target_count %d reaches bytes [%lld, %lld) of "
                             "rank %d's part of the window, which has %lld bytes",
                             static_cast<long long>(disp), count, static_cast<long long>(lo),
                             static_cast<long long>(hi), rank, static_cast<long long>(a->t->size));
    }
  }
  a->address = a->t->base + static_cast<uintptr_t>(off);
  return MPI_SUCCESS;
}

void collect_block(void* ctx, char* address, size_t bytes) {
  static_cast<std::vector<rma::Block>*>(ctx)->push_back(
      {reinterpret_cast<uintptr_t>(address), bytes});
}

std::vector<rma::Block> blocks_of(const Access& a) {
  std::vector<rma::Block> blocks;
  a.side.t->for_each_block(reinterpret_cast<void*>(a.address), a.side.count, 0,
                           static_cast<int64_t>(a.side.bytes), collect_block, &blocks);
  return blocks;
}

// Whether the access's target bytes are device memory (win.h): this process's own HBM, or a node
// peer's, which this process maps. (A dynamic window's regions may be either kind: the address
// decides.) A target on another node sorts its own (win_net.cc).
bool on_device(const Win& w, const Access& a) {
  if (a.t->remote || a.side.bytes == 0) return false;
  const dtype::Type& t = *a.side.t;
  const uintptr_t lo = a.address + static_cast<uintptr_t>(t.true_lb());
  if (a.t == &w.targets[w.rank]) return device::in_device_range(reinterpret_cast<void*>(lo));
  if (!a.t->device && w.flavor != MPI_WIN_FLAVOR_DYNAMIC) return false;
  const size_t span =
      static_cast<size_t>((a.side.count - 1) * t.extent() + t.true_ub() - t.true_lb());
  return device::peer_view(w.members[a.t - w.targets.data()], lo, span) != nullptr;
}

int not_mapped(const char* fn, MPI_Win win, const rma::Block& b, int peer) {
  return raise_error_win(win, MPI_ERR_RMA_RANGE, fn,
                         "[%#llx, %#llx) is not device memory of job rank %d mapped here",
                         static_cast<unsigned long long>(b.address),
                         static_cast<unsigned long long>(b.address + b.bytes), peer);
}

// The access's target blocks in device memory, each with its place in the packed stream:
// each(block, place, own, peer) handles one in this process's own HBM (own) or in job rank peer's,
// false when that is not mapped here.
template <class Each>
int for_device_blocks(const char* fn, MPI_Win win, const Access& a, const void* stream, Each each) {
  const Win& w = *win_impl(win);
  const bool own = a.t == &w.targets[w.rank];
  const int peer = w.members[target_of(win, a)];
  char* p = static_cast<char*>(const_cast<void*>(stream));
  for (const rma::Block& b : blocks_of(a)) {
    if (!each(b, p, own, peer)) return not_mapped(fn, win, b, peer);
    p += b.bytes;
  }
  return MPI_SUCCESS;
}

// The packed stream `packed` (either kind of memory) to (write) or from the target's device
// blocks, one DMA copy per block.
int device_move(const char* fn, MPI_Win win, const Access& a, void* packed, bool write) {
  return for_device_blocks(fn, win, a, packed,
                           [write](const rma::Block& b, char* p, bool own, int peer) {
                             void* at = reinterpret_cast<void*>(b.address);
                             if (own) {
                               write ? device::copy(at, p, b.bytes) : device::copy(p, at, b.bytes);
                               return true;
                             }
                             return write ? device::copy_to_peer(peer, b.address, p, b.bytes)
                                          : device::copy_from_peer(peer, p, b.address, b.bytes);
                           });
}

// A request to a target on another node (win_net.cc) about the access's blocks; raises what it
// answers. Puts and accumulates (nothing to bring back) and gets into the caller's own buffer are
// left in flight, answered by the next flush, unlock, fence or complete; not on dynamic windows,
// whose target checks the range (the call that made the mistake must return it).
int remote_call(const char* fn, MPI_Win win, const Access& a, NetCall call) {
  Win* w = win_impl(win);
  const std::vector<rma::Block> blocks = blocks_of(a);
  call.blocks = &blocks;
  std::string error;
  const int target = target_of(win, a);
  // One large block, or a put from device memory (put() leaves it there): the transport moves it
  // between the buffer and the window in one copy. An accumulate from device memory sends its
  // data from there too, as a message of its own.
  const bool device_data = device::in_device_range(call.data);
  bool direct = (blocks.size() == 1 && a.side.bytes >= kDirectBytes &&
                 (call.kind == NetKind::kPut || call.kind == NetKind::kGet)) ||
                (device_data && call.kind == NetKind::kPut);
  if (direct) {
    call.kind = call.kind == NetKind::kPut ? NetKind::kPutDirect : NetKind::kGetDirect;
  } else if (device_data && call.kind == NetKind::kAccumulate) {
    direct = true;
    call.kind = NetKind::kAccumulateDirect;
  }
  // Device data that does not go as a message of its own travels in the request: staged.
  std::vector<char> staged;
  if (!direct && call.bytes > 0 && device::in_device_range(call.data)) {
    staged.resize(call.bytes);
    device::stage(staged.data(), call.data, call.bytes);
    call.data = staged.data();
  }
  const bool post = w->flavor != MPI_WIN_FLAVOR_DYNAMIC &&
                    ((call.result_bytes == 0 &&
                      (call.kind == NetKind::kPut || call.kind == NetKind::kAccumulate)) ||
                     (call.kind == NetKind::kGet && call.deferrable));
  const int rc = direct ? net_direct(w, target, call, &error)
                 : post ? net_post(w, target, call, &error)
                        : net_call(w, target, call, nullptr, &error);
  if (rc != MPI_SUCCESS) return raise_error_win(win, rc, fn, "%s", error.c_str());
  return MPI_SUCCESS;
}

// The target's data as a packed stream, into `packed` (a.side.bytes). `final`: packed is the
// caller's own buffer, which a get from another node may fill by the epoch's end.
int target_read(const char* fn, MPI_Win win, const Access& a, void* packed, bool final = false) {
  if (a.side.bytes == 0) return MPI_SUCCESS;
  const Win& w = *win_impl(win);
  charge(w, target_of(win, a), a.side.bytes, false);
  if (on_device(w, a)) return device_move(fn, win, a, packed, false);
  if (a.t->remote) {
    NetCall call;
    call.kind = NetKind::kGet;
    call.result = packed;
    call.result_bytes = a.side.bytes;
    call.deferrable = final;
    return remote_call(fn, win, a, call);
  }
  if (a.t->local != nullptr) {
    const char* at = a.t->local + (a.address - a.t->base);
    if (dense_predefined(a.side)) {
      std::memcpy(packed, at, a.side.bytes);
      return MPI_SUCCESS;
    }
    a.side.t->pack(at, a.side.count, packed);
    return MPI_SUCCESS;
  }
  std::string error;
  if (rma::peer_read(a.t->pid, blocks_of(a), packed, &error) != Status::kOk) {
    return raise_error_win(win, MPI_ERR_RMA_RANGE, fn, "%s", error.c_str());
  }
  return MPI_SUCCESS;
}

int target_write(const char* fn, MPI_Win win, const Access& a, const void* packed) {
  if (a.side.bytes == 0) return MPI_SUCCESS;
  const Win& w = *win_impl(win);
  charge(w, target_of(win, a), a.side.bytes, true);
  if (on_device(w, a)) {
    return device_move(fn, win, a, const_cast<void*>(packed), true);
  }
  if (a.t->remote) {
    NetCall call;
    call.kind = NetKind::kPut;
    call.data = packed;
    call.bytes = a.side.bytes;
    return remote_call(fn, win, a, call);
  }
  if (a.t->local != nullptr) {
    char* at = a.t->local + (a.address - a.t->base);
    if (dense_predefined(a.side)) {
      std::memcpy(at, packed, a.side.bytes);
      return MPI_SUCCESS;
    }
    a.side.t->unpack(packed, a.side.count, at);
    return MPI_SUCCESS;
  }
  std::string error;
  if (rma::peer_write(a.t->pid, blocks_of(a), packed, &error) != Status::kOk) {
    return raise_error_win(win, MPI_ERR_RMA_RANGE, fn, "%s", error.c_str());
  }
  return MPI_SUCCESS;
}

// The origin's bytes as a packed stream: in place when contiguous (device memory only when it
// goes to device memory, `to_device`), else packed into scratch.
const void* origin_packed(const Side& s, std::vector<char>* scratch, bool to_device = false) {
  int64_t off = 0;
  if (device::in_device_range(s.buf) && !to_device) {
    // Device bytes are staged below.
  } else if (dense_predefined(s)) {
    return s.buf;
  } else if (s.t->contiguous(s.count, &off)) {
    return static_cast<const char*>(s.buf) + off;
  }
  scratch->resize(s.bytes);
  pack_any(*s.t, s.buf, s.count, scratch->data());
  return scratch->data();
}

int sizes_differ(const char* fn, MPI_Win win, const char* what, const Side& s, const Access& a) {
  return raise_error_win(win, MPI_ERR_TYPE, fn,
                         "%s data (%zu bytes) and target data (%zu bytes) differ in size", what,
                         s.bytes, a.side.bytes);
}

// The update lock of a target: accumulates to it are atomic with respect to each other.
class UpdateLock {
 public:
  explicit UpdateLock(Win* w, const Access& a) : word_(&w->block(a.t - w->targets.data())->update) {
    rma::lock_exclusive(word_);
  }
  ~UpdateLock() { rma::unlock_exclusive(word_); }
  UpdateLock(const UpdateLock&) = delete;
  UpdateLock& operator=(const UpdateLock&) = delete;

 private:
  std::atomic<uint32_t>* word_;
};

int op_index(MPI_Op op) { return op != nullptr && op->magic == kMagicOp ? op->builtin : -1; }

// Checks an accumulate's op and resolves its reduction on the target datatype (*r unset for
// MPI_REPLACE and MPI_NO_OP). Accumulates take predefined ops only, on one basic type.
int resolve_acc(const char* fn, MPI_Win win, MPI_Op op, const Side& origin, const Access& a,
                coll::Reduction* r, bool* replace, bool* no_op) {
  const int k = op_index(op);
  if (k < 0) {
    return raise_error_win(win, MPI_ERR_OP, fn, "op argument is %s",
                           op == MPI_OP_NULL ? "MPI_OP_NULL"
                           : op != nullptr && op->magic == kMagicOp
                               ? "a user-defined op (one-sided "
                                 "accumulates take predefined "
                                 "ops only)"
                               : "not an op");
  }
  *replace = k == static_cast<int>(BuiltinOp::k_replace);
  *no_op = k == static_cast<int>(BuiltinOp::k_no_op);
  const dtype::Type& t = *a.side.t;
  if (t.uniform_id() < 0 && a.side.bytes > 0) {
    return raise_error_win(win, MPI_ERR_TYPE, fn,
                           "target_datatype argument's basic elements are not all one predefined "
                           "type");
  }
  if (origin.t != nullptr && origin.bytes > 0 && origin.t->uniform_id() != t.uniform_id()) {
    return raise_error_win(win, MPI_ERR_TYPE, fn,
                           "origin_datatype and target_datatype are built on different basic "
                           "types");
  }
  if (*replace || *no_op || a.side.bytes == 0) return MPI_SUCCESS;
  // The reduction's checks raise on a communicator: keep the message and raise it on the window.
  bool commutative = true;
  size_t elem = 0, per = 0;
  int rc;
  {
    DeferErrors defer;
    rc = resolve_packed_reduction(fn, MPI_COMM_SELF, op, a.side.type, t, r, &commutative, &elem,
                                  &per);
  }
  if (rc != MPI_SUCCESS) {
    const char* text = last_error_text();
    const size_t skip = std::strlen(fn) + 2;  // "fn: "
    return raise_error_win(win, rc, fn, "%s", std::strlen(text) > skip ? text + skip : text);
  }
  return MPI_SUCCESS;
}

// Combines the origin's packed stream `in` into the target's device blocks where they lie, by the
// device's reduction kernels (a block holds whole elements: the target type has one basic type).
int device_combine(const char* fn, MPI_Win win, const Access& a, const coll::Reduction& r,
                   const void* in) {
  const size_t elems =
      static_cast<size_t>(a.side.count) * static_cast<size_t>(a.side.t->uniform_count());
  const size_t elem = a.side.bytes / elems;
  charge(*win_impl(win), target_of(win, a), a.side.bytes, true);
  return for_device_blocks(
      fn, win, a, in, [&r, elem](const rma::Block& b, const char* p, bool own, int peer) {
        if (own) {
          reduce_any(r, reinterpret_cast<void*>(b.address), p, b.bytes / elem, elem);
          return true;
        }
        return reduce_at_peer(r, peer, b.address, p, b.bytes / elem, elem);
      });
}

// Combines origin into the target's packed bytes (`target`, a.side.bytes of them).
void combine(const coll::Reduction& r, const Access& a, void* target, const void* origin) {
  const dtype::Type& t = *a.side.t;
  const size_t elems = static_cast<size_t>(a.side.count) * static_cast<size_t>(t.uniform_count());
  r.apply(target, origin, elems);
}

// The request forms (MPI_Rput, ...): the operation completes in the call, so their handle is the
// shared complete request that sends done in their call get too.
template <class Op>
int with_request(const char* fn, MPI_Win win, MPI_Request* request, Op op) {
  if (request == nullptr) return raise_error_win(win, MPI_ERR_ARG, fn, "request argument is NULL");
  if (int err = op()) return err;
  *request = &Request::sent()->handle;
  return MPI_SUCCESS;
}

// The arguments of a put or a get: the window, the origin side and the target access, whose sizes
// must agree. *skip: nothing moves (the target is MPI_PROC_NULL).
int check_transfer(const char* fn, const void* origin_addr, int origin_count,
                   MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                   int target_count, MPI_Datatype target_datatype, MPI_Win win, Side* o, Access* a,
                   bool* skip) {
  Win* w = nullptr;
  if (int err = check_win(fn, win, &w)) return err;
  if (int err = check_side(fn, win, "origin", origin_addr, origin_count, origin_datatype, o))
    return err;
  if (int err = check_target(fn, win, w, target_rank, target_disp, target_count, target_datatype, a,
                             skip))
    return err;
  if (!*skip && o->bytes != a->side.bytes) return sizes_differ(fn, win, "origin", *o, *a);
  return MPI_SUCCESS;
}

// MPI_Put and MPI_Get of basic elements between host memory and a window mapped here (the
// common case: halo exchanges, the benchmarks): where the target's bytes are, or nullptr when
// anything differs from that case. Every condition the full checks would raise on is tested here,
// so a call this declines goes the full way and gets its error message there.
char* mapped_basic(const char* fn, MPI_Win win, const void* buf, int count, MPI_Datatype type,
                   int rank, MPI_Aint disp, int target_count, MPI_Datatype target_type,
                   size_t* bytes) {
  if (type != target_type || count != target_count || count <= 0 || buf == nullptr) return nullptr;
  if (type == nullptr || type->magic != kMagicDatatype || type->builtin < 0 ||
      type->builtin >= static_cast<int>(BuiltinType::kCount)) {
    return nullptr;
  }
  if (require_active(fn) != MPI_SUCCESS) return nullptr;
  Win* w = win_impl(win);
  if (w == nullptr || w->flavor == MPI_WIN_FLAVOR_DYNAMIC || rank < 0 || rank >= w->size) {
    return nullptr;
  }
  // Passive target and fence epochs; general active target takes the full way.
  if (!w->fence_open && !w->lock_all && w->held[rank] == Held::kNone) return nullptr;
  const WinTarget& t = w->targets[rank];
  const dtype::Type& e = *builtin_engine_type(type->builtin);
  if (t.local == nullptr || e.size() == 0 || e.size() != e.extent() || disp < 0 ||
      device::in_device_range(t.local)) {
    return nullptr;
  }
  const uint64_t n = static_cast<uint64_t>(count) * static_cast<uint64_t>(e.size());
  const uint64_t off = static_cast<uint64_t>(disp) * static_cast<uint64_t>(t.disp_unit);
  if (t.disp_unit <= 0 || off / static_cast<uint64_t>(t.disp_unit) != static_cast<uint64_t>(disp) ||
      off > static_cast<uint64_t>(t.size) || n > static_cast<uint64_t>(t.size) - off ||
      device::in_device_range(buf)) {
    return nullptr;
  }
  *bytes = n;
  return t.local + off;
}

int put(const char* fn, const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
        int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
        MPI_Win win) {
  size_t bytes = 0;
  if (char* at = mapped_basic(fn, win, origin_addr, origin_count, origin_datatype, target_rank,
                              target_disp, target_count, target_datatype, &bytes)) {
    std::memcpy(at, origin_addr, bytes);
    charge(*win_impl(win), target_rank, bytes, true);
    return MPI_SUCCESS;
  }
  Side o;
  Access a;
  bool skip;
  if (int err = check_transfer(fn, origin_addr, origin_count, origin_datatype, target_rank,
                               target_disp, target_count, target_datatype, win, &o, &a, &skip))
    return err;
  if (skip) return MPI_SUCCESS;
  // Basic host data goes as it is, without touching the thread's scratch (a dynamic TLS access);
  // device data too when it goes to device memory (one DMA copy) or to a process of another node
  // (the transport sends it from the device: remote_call).
  const bool to_device =
      device::in_device_range(o.buf) && (on_device(*win_impl(win), a) || a.t->remote);
  if (dense_predefined(o) && (!device::in_device_range(o.buf) || to_device))
    return target_write(fn, win, a, o.buf);
  thread_local std::vector<char> scratch;
  return target_write(fn, win, a, origin_packed(o, &scratch, to_device));
}

// `defer`: a get from another node may complete by the epoch's end (MPI_Get; MPI_Rget's request,
// complete at once, must find the bytes there).
int get(const char* fn, void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
        int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
        MPI_Win win, bool defer) {
  size_t bytes = 0;
  if (char* at = mapped_basic(fn, win, origin_addr, origin_count, origin_datatype, target_rank,
                              target_disp, target_count, target_datatype, &bytes)) {
    std::memcpy(origin_addr, at, bytes);
    charge(*win_impl(win), target_rank, bytes, false);
    return MPI_SUCCESS;
  }
  Side o;
  Access a;
  bool skip;
  if (int err = check_transfer(fn, origin_addr, origin_count, origin_datatype, target_rank,
                               target_disp, target_count, target_datatype, win, &o, &a, &skip))
    return err;
  if (skip) return MPI_SUCCESS;
  int64_t off = 0;
  // Device memory on both sides: one DMA copy, as host memory on both; from another node, the
  // answer goes into device memory as into host memory (win_net.cc).
  if (!device::in_device_range(origin_addr) || on_device(*win_impl(win), a) || a.t->remote) {
    if (dense_predefined(o)) return target_read(fn, win, a, origin_addr, defer);
    if (o.t->contiguous(o.count, &off)) {
      return target_read(fn, win, a, static_cast<char*>(origin_addr) + off, defer);
    }
  }
  thread_local std::vector<char> scratch;
  scratch.resize(o.bytes);
  if (int err = target_read(fn, win, a, scratch.data())) return err;
  unpack_any(*o.t, scratch.data(), o.count, origin_addr);
  return MPI_SUCCESS;
}

// MPI_Accumulate and MPI_Get_accumulate of basic elements with a reducing predefined op on a
// window mapped here (mapped_basic's case, the result buffer alike): combined in place under the
// target's update lock. Whether it was done; a call it declines goes the full way (and its errors
// are raised there).
bool accumulate_mapped_basic(const char* fn, const void* origin_addr, int origin_count,
                             MPI_Datatype origin_datatype, void* result_addr, int result_count,
                             MPI_Datatype result_datatype, bool fetch, int target_rank,
                             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
                             MPI_Op op, MPI_Win win) {
  const int k = op_index(op);
  if (k < 0 || k == static_cast<int>(BuiltinOp::k_replace) ||
      k == static_cast<int>(BuiltinOp::k_no_op)) {
    return false;
  }
  if (fetch && (result_datatype != origin_datatype || result_count != origin_count ||
                result_addr == nullptr || device::in_device_range(result_addr))) {
    return false;
  }
  size_t bytes = 0;
  char* at = mapped_basic(fn, win, origin_addr, origin_count, origin_datatype, target_rank,
                          target_disp, target_count, target_datatype, &bytes);
  if (at == nullptr) return false;
  const dtype::Type& t = *builtin_engine_type(target_datatype->builtin);
  coll::Reduction r;
  bool commutative = true;
  size_t elem = 0, per = 0;
  int rc;
  {
    DeferErrors defer;  // an op the type does not take: the full way raises it on the window
    rc = resolve_packed_reduction(fn, MPI_COMM_SELF, op, target_datatype, t, &r, &commutative,
                                  &elem, &per);
  }
  if (rc != MPI_SUCCESS) return false;
  Win* w = win_impl(win);
  std::atomic<uint32_t>* update = &w->block(target_rank)->update;
  rma::lock_exclusive(update);
  if (fetch) std::memcpy(result_addr, at, bytes);
  r.apply(at, origin_addr,
          static_cast<size_t>(target_count) * static_cast<size_t>(t.uniform_count()));
  rma::unlock_exclusive(update);
  charge(*w, target_rank, bytes, true);
  if (fetch) charge(*w, target_rank, bytes, false);
  return true;
}

// MPI_Accumulate (result.t == nullptr) and MPI_Get_accumulate.
int accumulate(const char* fn, const void* origin_addr, int origin_count,
               MPI_Datatype origin_datatype, void* result_addr, int result_count,
               MPI_Datatype result_datatype, bool fetch, int target_rank, MPI_Aint target_disp,
               int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  if (accumulate_mapped_basic(fn, origin_addr, origin_count, origin_datatype, result_addr,
                              result_count, result_datatype, fetch, target_rank, target_disp,
                              target_count, target_datatype, op, win)) {
    return MPI_SUCCESS;
  }
  Win* w = nullptr;
  if (int err = check_win(fn, win, &w)) return err;
  const bool no_op_given = op_index(op) == static_cast<int>(BuiltinOp::k_no_op);
  Side o, res;
  // MPI_NO_OP ignores the origin buffer (MPI_Get_accumulate).
  if (!(fetch && no_op_given)) {
    if (int err = check_side(fn, win, "origin", origin_addr, origin_count, origin_datatype, &o))
      return err;
  }
  if (fetch) {
    if (int err = check_side(fn, win, "result", result_addr, result_count, result_datatype, &res))
      return err;
  }
  Access a;
  bool skip;
  if (int err = check_target(fn, win, w, target_rank, target_disp, target_count, target_datatype,
                             &a, &skip))
    return err;
  coll::Reduction r;
  bool replace = false, no_op = false;
  if (int err = resolve_acc(fn, win, op, o, a, &r, &replace, &no_op)) return err;
  if (skip) return MPI_SUCCESS;
  if (o.t != nullptr && o.bytes != a.side.bytes) return sizes_differ(fn, win, "origin", o, a);
  if (fetch && res.bytes != a.side.bytes) return sizes_differ(fn, win, "result", res, a);
  if (a.side.bytes == 0) return MPI_SUCCESS;
  thread_local std::vector<char> origin_scratch, target_scratch;
  const bool device_target = on_device(*w, a);
  // Device data stays where it is for a device target, and for an accumulate to another node
  // (sent from the device: remote_call).
  const void* in = o.t != nullptr
                       ? origin_packed(o, &origin_scratch, device_target || (a.t->remote && !fetch))
                       : nullptr;
  if (a.t->remote) {
    // Combined at the target, under its update lock (win_net.cc).
    NetCall call;
    call.kind = fetch ? NetKind::kGetAccumulate : NetKind::kAccumulate;
    call.op = op_index(op);
    call.basic = a.side.t->uniform_id();
    if (!no_op) {
      call.data = in;
      call.bytes = a.side.bytes;
    }
    if (fetch) {
      target_scratch.resize(a.side.bytes);
      call.result = target_scratch.data();
      call.result_bytes = a.side.bytes;
    }
    if (int err = remote_call(fn, win, a, call)) return err;
    if (fetch) unpack_any(*res.t, target_scratch.data(), res.count, result_addr);
    return MPI_SUCCESS;
  }
  if (device_target) {
    // Combined where it lies by the device's engines (win.h), the fetch read first.
    UpdateLock update(w, a);
    if (fetch && dense_predefined(res)) {
      if (int err = target_read(fn, win, a, result_addr)) return err;
    } else if (fetch) {
      target_scratch.resize(a.side.bytes);
      if (int err = target_read(fn, win, a, target_scratch.data())) return err;
      unpack_any(*res.t, target_scratch.data(), res.count, result_addr);
    }
    if (no_op) return MPI_SUCCESS;
    if (replace) return target_write(fn, win, a, in);
    return device_combine(fn, win, a, r, in);
  }
  if (a.t->local != nullptr && dense_predefined(a.side) && !replace && !no_op) {
    // Mapped target memory holding basic elements in order: combined where it lies, without the
    // round trip through the scratch (two copies of the data fewer).
    char* at = a.t->local + (a.address - a.t->base);
    UpdateLock update(w, a);
    if (fetch) unpack_any(*res.t, at, res.count, result_addr);
    combine(r, a, at, in);
    charge(*w, target_of(win, a), a.side.bytes, true);
    if (fetch) charge(*w, target_of(win, a), a.side.bytes, false);
    return MPI_SUCCESS;
  }
  target_scratch.resize(a.side.bytes);
  UpdateLock update(w, a);
  if (fetch || !replace) {
    if (int err = target_read(fn, win, a, target_scratch.data())) return err;
  }
  if (fetch) unpack_any(*res.t, target_scratch.data(), res.count, result_addr);
  if (no_op) return MPI_SUCCESS;
  if (replace) return target_write(fn, win, a, in);
  combine(r, a, target_scratch.data(), in);
  return target_write(fn, win, a, target_scratch.data());
}

int predefined_only(const char* fn, MPI_Win win, MPI_Datatype type) {
  if (const char* bad = bad_datatype(type)) {
    return raise_error_win(win, MPI_ERR_TYPE, fn, "datatype argument is %s", bad);
  }
  if (derived_type(type) != nullptr) {
    return raise_error_win(win, MPI_ERR_TYPE, fn,
                           "datatype argument is a derived datatype (this call takes a "
                           "predefined one)");
  }
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace torusmpi::mpi

namespace mpi = torusmpi::mpi;

int PMPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win) {
  torusmpi::progress::Lock lock;
  return mpi::put("MPI_Put", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win);
}
TORUSMPI_WEAK_ALIAS(MPI_Put);

int PMPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Rput";
  return mpi::with_request(kFn, win, request, [&] {
    return mpi::put(kFn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win);
  });
}
TORUSMPI_WEAK_ALIAS(MPI_Rput);

int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  torusmpi::progress::Lock lock;
  return mpi::get("MPI_Get", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win, true);
}
TORUSMPI_WEAK_ALIAS(MPI_Get);

int PMPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Rget";
  return mpi::with_request(kFn, win, request, [&] {
    return mpi::get(kFn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win, false);
  });
}
TORUSMPI_WEAK_ALIAS(MPI_Rget);

int PMPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  torusmpi::progress::Lock lock;
  return mpi::accumulate("MPI_Accumulate", origin_addr, origin_count, origin_datatype, nullptr, 0,
                         MPI_DATATYPE_NULL, false, target_rank, target_disp, target_count,
                         target_datatype, op, win);
}
TORUSMPI_WEAK_ALIAS(MPI_Accumulate);

int PMPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Raccumulate";
  return mpi::with_request(kFn, win, request, [&] {
    return mpi::accumulate(kFn, origin_addr, origin_count, origin_datatype, nullptr, 0,
                           MPI_DATATYPE_NULL, false, target_rank, target_disp, target_count,
                           target_datatype, op, win);
  });
}
TORUSMPI_WEAK_ALIAS(MPI_Raccumulate);

int PMPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void* result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  torusmpi::progress::Lock lock;
  return mpi::accumulate("MPI_Get_accumulate", origin_addr, origin_count, origin_datatype,
                         result_addr, result_count, result_datatype, true, target_rank, target_disp,
                         target_count, target_datatype, op, win);
}
TORUSMPI_WEAK_ALIAS(MPI_Get_accumulate);

int PMPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void* result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Rget_accumulate";
  return mpi::with_request(kFn, win, request, [&] {
    return mpi::accumulate(kFn, origin_addr, origin_count, origin_datatype, result_addr,
                           result_count, result_datatype, true, target_rank, target_disp,
                           target_count, target_datatype, op, win);
  });
}
TORUSMPI_WEAK_ALIAS(MPI_Rget_accumulate);

int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Fetch_and_op";
  if (mpi::win_impl(win) == nullptr) {
    mpi::Win* w = nullptr;
    return mpi::check_win(kFn, win, &w);
  }
  if (int err = mpi::predefined_only(kFn, win, datatype)) return err;
  return mpi::accumulate(kFn, origin_addr, 1, datatype, result_addr, 1, datatype, true, target_rank,
                         target_disp, 1, datatype, op, win);
}
TORUSMPI_WEAK_ALIAS(MPI_Fetch_and_op);

int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Win win) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Compare_and_swap";
  mpi::Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (int err = mpi::predefined_only(kFn, win, datatype)) return err;
  const mpi::BuiltinTypeInfo* info = mpi::datatype_info(datatype);
  using mpi::TypeClass;
  if (info == nullptr ||
      !(info->cls == TypeClass::kSignedInt || info->cls == TypeClass::kUnsignedInt ||
        info->cls == TypeClass::kLogical || info->cls == TypeClass::kByte ||
        info->cls == TypeClass::kBool)) {
    return mpi::raise_error_win(win, MPI_ERR_TYPE, kFn,
                                "datatype argument is %s: compare and swap takes an integer, "
                                "logical or byte type",
                                info != nullptr ? info->name : "not predefined");
  }
  mpi::Side o, cmp, res;
  if (int err = mpi::check_side(kFn, win, "origin", origin_addr, 1, datatype, &o)) return err;
  if (int err = mpi::check_side(kFn, win, "compare", compare_addr, 1, datatype, &cmp)) return err;
  if (int err = mpi::check_side(kFn, win, "result", result_addr, 1, datatype, &res)) return err;
  mpi::Access a;
  bool skip;
  if (int err = mpi::check_target(kFn, win, w, target_rank, target_disp, 1, datatype, &a, &skip))
    return err;
  if (skip) return MPI_SUCCESS;
  // The origin, compared and result elements (any of them may be device memory) pass through
  // here: one element each.
  alignas(16) unsigned char both[64], old[32];
  torusmpi::device::copy(both, origin_addr, o.bytes);
  torusmpi::device::copy(both + o.bytes, compare_addr, o.bytes);
  if (a.t->remote) {
    // Compared and swapped at the target, under its update lock (win_net.cc).
    mpi::NetCall call;
    call.kind = mpi::NetKind::kCompareAndSwap;
    call.data = both;
    call.bytes = 2 * o.bytes;
    call.result = old;
    call.result_bytes = o.bytes;
    if (int err = mpi::remote_call(kFn, win, a, call)) return err;
    torusmpi::device::copy(result_addr, old, o.bytes);
    return MPI_SUCCESS;
  }
  mpi::UpdateLock update(w, a);
  if (int err = mpi::target_read(kFn, win, a, old)) return err;
  torusmpi::device::copy(result_addr, old, o.bytes);
  if (std::memcmp(old, both + o.bytes, o.bytes) != 0) return MPI_SUCCESS;
  return mpi::target_write(kFn, win, a, both);
}
TORUSMPI_WEAK_ALIAS(MPI_Compare_and_swap);
