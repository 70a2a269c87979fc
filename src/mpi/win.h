// Windows of one-sided communication (MPI_Win): the object behind a window handle, and what the
// files of windows share (win.cc: creation, freeing, attributes, info, names, error handlers;
// win_sync.cc: epochs; win_ops.cc: put, get and the accumulates; win_net.cc: across nodes).
//
// Between processes that share a node (and an emulated instance), every operation completes in the
// call that starts it, by direct load/store or a single copy:
// - MPI_Win_allocate and MPI_Win_allocate_shared put every process's memory in one shared segment
//   (pml/shm/rma.h), mapped by all: a put is a copy into the mapping.
// - MPI_Win_create leaves the memory where the application has it; other processes reach it with
//   process_vm_readv/writev.
// Each window also has a control segment: per process a lock word (passive target), an update
// lock (accumulates are atomic per element with respect to each other) and counters for
// post/start/complete/wait. So passive target needs nothing from the target process.
//
// Device memory (MPI_Win_create on it, MPI_Win_allocate with the info key
// torusmpi_memory_kind=device, or attached to a dynamic window) is only ever touched by the device
// layer: a process's own HBM by its DMA copies and reduction kernels, a node peer's HBM (every
// process maps the HBM of the others of its node and instance) by the same engines writing,
// reading and reducing there, one copy each way. Device bytes pass through host memory only for a
// fetch into a derived result type, a derived origin type, and fetching requests and small gets
// to other nodes (win_net.cc: a put or an accumulate sends device data from the device). The lock
// words and counters stay in the host segment.
//
// A window whose group spans nodes or emulated instances (win_net.cc) keeps all of this among
// the processes of each node: they share a control segment (and, for MPI_Win_allocate, a data
// segment) of their own, laid out for the whole group but used only by them. A process of another
// node is reached by messages on the window communicator's point-to-point context, which nothing
// else uses: each request (put, get, an accumulate, a lock, an unlock, post, complete) is served
// by the target's progress engine, which applies it to the same memory, lock words and update
// lock that the target's node peers use directly, and answers. The origin waits for the answer
// of a fetching accumulate, a lock, an unlock, a large contiguous put or get, an MPI_Rget or a get
// into scratch in the call; other puts, gets and accumulates stay in flight until whatever closes
// the epoch (flush, unlock, fence, complete, free) waits for their answers, which come in order.
// The target's progress thread runs while such a window lives: passive target needs no MPI call of
// the target.
#ifndef TORUSMPI_MPI_WIN_H_
#define TORUSMPI_MPI_WIN_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/flight.h"
#include "mpi/ompi_abi.h"
#include "pml/shm/rma.h"

namespace torusmpi::mpi {

namespace rma = pml::shm::rma;

// Where a process's part of the window is.
struct WinTarget {
  pid_t pid = 0;
  uintptr_t base = 0;     // its address in that process
  char* local = nullptr;  // the same memory mapped here (shared segment, or this process's own)
  MPI_Aint size = 0;
  int disp_unit = 1;
  uintptr_t attached = 0;  // dynamic windows: its AttachTable, in that process
  bool remote = false;     // on another node or instance: reached by messages (win_net.cc)
  bool device = false;     // device memory (HBM): moved and combined by the device layer only
};

// The memory a process attached to a dynamic window (MPI_Win_attach), where other processes read
// it (process_vm_readv) to check that an access falls inside attached memory.
struct AttachTable {
  static constexpr int kMax = 64;
  struct Region {
    uint64_t base;
    uint64_t size;
  };
  uint64_t count = 0;
  Region regions[kMax] = {};
};

// A passive target epoch this process holds on one target.
enum class Held : uint8_t { kNone, kShared, kExclusive, kSharedNoCheck, kExclusiveNoCheck };

struct Win {
  ompi_win_t handle;              // MPI_Win is &handle; handle.impl == this
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the creating communicator: fences, frees
  std::vector<int> members;       // job ranks, in window rank order
  int rank = 0;
  int size = 0;
  int flavor = MPI_WIN_FLAVOR_CREATE;
  std::vector<WinTarget> targets;
  rma::Segment control;             // lock words and counters (rma.h)
  AttachTable* attached = nullptr;  // dynamic windows: this process's attached memory
  rma::Segment data;                // MPI_Win_allocate(_shared): every process's memory
  void* device_memory = nullptr;    // MPI_Win_allocate on the device: this process's part
  flight::Name name;                // its records in the flight recorder show it
  MPI_Info info = MPI_INFO_NULL;    // the hints given (a copy)
  // The predefined attributes' values (MPI hands out pointers to them).
  void* attr_base = nullptr;
  MPI_Aint attr_size = 0;
  int attr_disp_unit = 1;
  int attr_flavor = MPI_WIN_FLAVOR_CREATE;
  int attr_model = MPI_WIN_UNIFIED;
  // Epochs of this process as an origin and as a target.
  bool fence_open = false;  // between fences (not closed by MPI_MODE_NOSUCCEED)
  bool lock_all = false;
  bool lock_all_nocheck = false;
  std::vector<Held> held;  // per target
  int held_count = 0;
  std::vector<int> access;  // MPI_Win_start's group (window ranks); empty outside
  bool access_open = false;
  std::vector<int> exposure;  // MPI_Win_post's group
  bool exposure_open = false;
  std::vector<uint32_t> started;  // posts consumed from each target (MPI_Win_start)
  uint32_t completes_expected = 0;
  bool mixed = false;         // some targets are remote (win_net.cc serves the window)
  bool charge_links = false;  // node peers' bytes are counted on the emulated links (win_ops.cc)
  uint32_t next_reply = 0;    // the tag of the next request's answer (win_net.cc)
  // Puts and accumulates to other nodes not answered yet (win_net.cc's net_post), per target and
  // in all, and the first error an answer brought (raised by the next flush, unlock, fence...).
  // Dynamic windows: the attach tables last read from other processes (empty until read; an
  // access inside a region they list needs no new read: MPI has a process attach before others
  // access, and access no memory after it is detached).
  std::vector<AttachTable> attach_seen;
  std::vector<int> in_flight;
  int in_flight_total = 0;
  int net_error = 0;
  std::string net_error_text;

  rma::ControlBlock* block(int r) { return rma::control_blocks(control.base) + r; }
  std::atomic<uint32_t>* posts(int target, int origin) {
    return rma::post_counts(control.base, size) + static_cast<size_t>(target) * size + origin;
  }
};

// The window behind a handle; nullptr for MPI_WIN_NULL, a freed window or another kind of handle.
inline Win* win_impl(MPI_Win win) {
  return win != nullptr && win->magic == kMagicWin ? static_cast<Win*>(win->impl) : nullptr;
}

// Raises `cls` from fn on the window's error handler (errors.cc).
int raise_error_win(MPI_Win win, int cls, const char* fn, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

// The messages of windows across nodes (win_net.cc). What a request asks of its target:
enum class NetKind : uint32_t {
  kPut = 1,
  kGet,
  kAccumulate,      // op, basic: the combining (MPI_REPLACE, MPI_NO_OP too), under the update lock
  kGetAccumulate,   // the same, answering the bytes as they were
  kCompareAndSwap,  // data: the origin's element, then the compared one
  kTryLockShared,   // answers whether the lock word was taken (never waits at the target)
  kTryLockExclusive,
  kUnlockShared,
  kUnlockExclusive,
  kPost,      // the sender exposed its memory to this process (no answer)
  kComplete,  // the sender completed its access epoch to this process (no answer)
  // Large contiguous transfers (one block, at least kDirectBytes): the data is a message of its
  // own (win_net.cc's tags), received into (sent from) the window's memory where it lies, so the
  // transport's rendezvous (an RMA read) moves it in one copy.
  kPutDirect,  // answered once the data has landed
  kGetDirect,  // answered (an Answer), then the data follows
  // An accumulate of data in device memory: the data is a message of its own (sent from the
  // device), combined once it has landed, then answered.
  kAccumulateDirect,
};
constexpr size_t kDirectBytes = 16384;

// One request to window rank `target` and its answer: the target's memory as blocks (addresses
// in that process, in type-map order), `data` (the packed stream, bytes), `result` (result_bytes,
// the answer's bytes). The op is a BuiltinOp index, basic the builtin datatype of the elements.
// Returns MPI_SUCCESS or an error class, with *error set (a range the target refused, a transport
// failure); *granted for the try-locks.
struct NetCall {
  NetKind kind = NetKind::kPut;
  const std::vector<rma::Block>* blocks = nullptr;
  const void* data = nullptr;
  size_t bytes = 0;
  void* result = nullptr;
  size_t result_bytes = 0;
  int op = -1;
  int basic = -1;
  // A get into the caller's own buffer (not scratch to unpack from): it may stay in flight until
  // the epoch ends, as puts do (net_post), its bytes copied in when the answer comes.
  bool deferrable = false;
};
int net_call(Win* w, int target, const NetCall& call, bool* granted, std::string* error);
// kPutDirect (call.data, call.bytes) and kGetDirect (into call.result, call.result_bytes) of the
// one block in call.blocks, or kAccumulateDirect (call.data) into call.blocks; waits for the
// answer.
int net_direct(Win* w, int target, const NetCall& call, std::string* error);
// The same for a put, an accumulate or a deferrable get, without waiting for the answer: the data
// is copied (a get's result is copied in when its answer comes), the request stays in flight (FIFO
// to its target, which serves in arrival order, so a later request from this process sees its
// effect) until net_flush waits for it. An error in the answer is kept for net_flush.
int net_post(Win* w, int target, const NetCall& call, std::string* error);
// Waits until nothing posted to `target` (every target: -1) is in flight; the kept error if any.
int net_flush(Win* w, int target, std::string* error);
// Sends kPost or kComplete (nothing is answered).
int net_signal(Win* w, int target, NetKind kind, std::string* error);
// The window's service starts (its progress thread too) and stops: after the window's segments
// are mapped, and after its last barrier, before its communicator goes.
void net_open(Win* w);
void net_close(Win* w);

// Resolves the win argument of fn, or raises MPI_ERR_WIN (on MPI_COMM_WORLD: there is no window).
int check_win(const char* fn, MPI_Win win, Win** out);

// The predefined attributes of windows (attr.cc asks): *kind 0 for a pointer value (MPI_WIN_BASE),
// 1 for an MPI_Aint, 2 for an int; false for a keyval that is not a window's.
bool win_predefined_attr(MPI_Win win, int keyval, int* kind, void** value);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_WIN_H_
