// The emulated accelerator's memory. Each chip's HBM is an arena in shared memory (one memfd per
// node, a share per rank); device pointers are addresses in it. Every byte of a device buffer is
// copied by the DMA engine here (device to host, host to device, device to device) or reduced by
// the device's reduction kernels here: no other layer dereferences a device pointer. With
// TORUSMPI_DEVICE_GUARD=1 the addresses handed out are mapped PROT_NONE and this layer works
// through a second mapping of the same pages, so a stray host dereference faults.
//
// Layering: below pml and coll; knows nothing of MPI. The reduction kernels come from the caller
// as a function (coll/ops has the kernels for every op and type).
#ifndef TORUSMPI_DEVICE_DEVICE_H_
#define TORUSMPI_DEVICE_DEVICE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/copy.h"
#include "core/status.h"

namespace torusmpi::device {

enum class Kind : uint8_t {
  kHost,     // ordinary memory of this process
  kDevice,   // allocated device memory of this job (this rank's chip)
  kInvalid,  // neither: unmapped, freed device memory, the arena's unallocated space, ...
};

// Maps job rank `rank`'s share of its chip's arena (TORUSMPI_DEVICE_MEMORY bytes, a memfd of its
// own: nothing is left behind in /dev/shm, whatever way the job ends). The chip comes from the
// job's machine (topo::load has run). A host-model job (TORUSMPI_INSTANCE=host) still has device
// memory: one chip per instance.
Status init(int rank, std::string* error);
void finalize();

// The rank's device range, [range_base, range_base + range_bytes): all of it is reserved at init,
// so the test is one subtraction and one compare (unsigned wrap-around makes p < base fail too).
extern uintptr_t range_base;
extern size_t range_bytes;

// True when p falls in the device address range at all (the fast path of every copy below).
// False before init.
inline bool in_device_range(const void* p) {
  return reinterpret_cast<uintptr_t>(p) - range_base < range_bytes;
}

// What [p, p+bytes) is. Host memory is checked against the process's mappings (cached; re-read
// when an address is not in the cache), so a wild pointer is kInvalid, not a crash later.
// bytes == 0 asks about p alone. *chip (when not null) is the device memory's chip, or -1.
Kind kind(const void* p, size_t bytes, int* chip = nullptr);

namespace detail {
// The readable host range this thread's last host check of kind() fell in, and the snapshot of
// the mappings it came from (maps_epoch's value then; 0: none).
struct HostHit {
  uint64_t epoch;
  uintptr_t lo, hi;
};
extern __attribute__((tls_model("initial-exec"))) thread_local HostHit t_host_hit;
extern std::atomic<uint64_t> maps_epoch;
}  // namespace detail

// True when kind(p, bytes) is kHost by the range it found last on this thread: the buffers of a
// loop of calls, checked without a call (every argument check of the small-message path asks).
// False says nothing: ask kind().
inline bool known_host(const void* p, size_t bytes) {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  const uintptr_t hi = lo + (bytes == 0 ? 1 : bytes);
  const detail::HostHit& hit = detail::t_host_hit;
  // A cached range may hold the device range (the mappings merge adjacent ones): kind() decides.
  return hit.epoch != 0 && lo >= hit.lo && hi <= hit.hi && hi > lo &&
         (hi <= range_base || lo >= range_base + range_bytes) &&
         hit.epoch == detail::maps_epoch.load(std::memory_order_acquire);
}

// Allocation on this rank's chip, 64-byte aligned. kErrNoMem when the arena is full.
Status alloc(size_t bytes, void** out);
// kErrArg when p is not the start of a live allocation.
Status free(void* p);
// The rank's chip (within its instance).
int chip();

// The DMA engine: dst <- src, any kinds on either side. Inline so that host to host stays a plain
// memcpy behind two compares; the device cases are out of line.
void copy_device(void* dst, const void* src, size_t bytes);
inline void copy(void* dst, const void* src, size_t bytes) {
  if (__builtin_expect(!in_device_range(dst) && !in_device_range(src), 1)) {
    copy_bytes(dst, src, bytes);
    return;
  }
  copy_device(dst, src, bytes);
}
void fill(void* dst, int byte, size_t bytes);

// copy() into memory the library uses for its own work (a bounce, a pipeline chunk, packing
// space, scratch): when that is host memory and src is device memory, the bytes count as staged
// (Counters::staged), device bytes that passed through host memory.
// Inline: host collectives stage their copies into scratch through it.
void stage_device(void* host_dst, const void* src, size_t bytes);
inline void stage(void* host_dst, const void* src, size_t bytes) {
  if (__builtin_expect(in_device_range(src) && !in_device_range(host_dst), 0)) {
    stage_device(host_dst, src, bytes);
  } else {
    copy(host_dst, src, bytes);
  }
}

// The address at which the DMA engines (a peer chip reading, the NIC) reach p: this layer's view
// of device memory, p itself for host memory. Transports register and read into it; nothing else
// dereferences it.
void* dma_view(const void* p);

// Peer device memory: the ranks of a node map each other's HBM (their memfds, opened through
// /proc/<pid>/fd, which the kernel allows only to the same user; the cards travel only within the
// job), so a device transfer between them is one DMA copy, HBM to HBM.
struct ArenaCard {
  int32_t pid;
  int32_t fd;
  uint64_t base;   // where the owner's users see it (its range_base)
  uint64_t bytes;  // its range_bytes
};
ArenaCard arena_card();
// Maps job rank `rank`'s arena (a rank of this node and job) for copy_from_peer.
Status map_peer(int rank, const ArenaCard& card, std::string* error);
// True when rank's arena is mapped here.
bool peer_mapped(int rank);
// dst (host or this rank's device memory) <- [addr, addr + bytes) of rank's device memory, one
// DMA copy. False when rank's arena is not mapped here or the range is not inside it.
bool copy_from_peer(int rank, void* dst, uint64_t addr, size_t bytes);
// [addr, addr + bytes) of rank's device memory <- src (host or this rank's device memory), one DMA
// copy (a put into a node peer's device window). False as copy_from_peer is.
bool copy_to_peer(int rank, uint64_t addr, const void* src, size_t bytes);
// The word at `addr` (8-byte aligned) of rank's device memory <- value, a release store: what this
// rank read from there before is read. False as copy_from_peer is; rank may be this rank. (A
// doorbell-free handshake: the pml's device eager slots are given back through it.)
bool store_to_peer(int rank, uint64_t addr, uint64_t value);
// Where this process reaches [addr, addr + bytes) of rank's device memory, for a queue the two
// ranks share there (the shm transport's device queues: its writer and reader only touch it);
// nullptr when rank's arena is not mapped here or the range is not inside it.
uint8_t* peer_view(int rank, uint64_t addr, size_t bytes);
// Starts bringing that word's cache line here to be written (a hint; nothing if it is not mapped).
void prefetch_at_peer(int rank, uint64_t addr);
// An acquire load of that word; false as store_to_peer is.
bool load_from_peer(int rank, uint64_t addr, uint64_t* value);
// Compare and swap on that word: desired goes in if it holds expected. *seen is what it held
// (expected when the swap was made). False, and no swap, as store_to_peer is.
bool exchange_at_peer(int rank, uint64_t addr, uint64_t expected, uint64_t desired, uint64_t* seen);
// The word at p (8-byte aligned, this rank's device memory): an acquire load, a release store, a
// compare and swap that says whether it swapped.
uint64_t load_word(const void* p);
void store_word(void* p, uint64_t value);
bool exchange_word(void* p, uint64_t expected, uint64_t desired);

// The reduction kernels: dst <- src op dst over `count` elements of `elem` bytes, either side on
// the device. `apply` is the host kernel (coll/ops); it is run on this layer's view of the device
// bytes.
using Kernel = void (*)(void* ctx, void* dst, const void* src, size_t count);
void reduce(Kernel apply, void* ctx, void* dst, const void* src, size_t count, size_t elem);
// The same with dst at `addr` of rank's device memory (an accumulate into a node peer's device
// window): the kernel runs on this layer's view of the peer's HBM. False, and nothing reduced, as
// copy_from_peer is.
bool reduce_at_peer(Kernel apply, void* ctx, int rank, uint64_t addr, const void* src, size_t count,
                    size_t elem);

// The DMA engine's descriptor transfers (a datatype's layout packed or unpacked where the data is):
// run(ctx, dst, src) with each side given as this layer's view when it is device memory
// (dst_device, src_device); `bytes` are counted as moved, and as staged when device bytes land
// in host memory.
using Transfer = void (*)(void* ctx, void* dst, const void* src);
void transfer(Transfer run, void* ctx, void* dst, bool dst_device, const void* src, bool src_device,
              size_t bytes);

// Bytes moved and reduced by this rank's engine so far (statistics, tests).
struct Counters {
  uint64_t h2d = 0, d2h = 0, d2d = 0, reduced = 0;
  uint64_t peer = 0;    // read from or written to other ranks' HBM (copy_from_peer, copy_to_peer)
  uint64_t staged = 0;  // device bytes copied into the library's host memory (stage)
};
const Counters& counters();

}  // namespace torusmpi::device

#endif  // TORUSMPI_DEVICE_DEVICE_H_
