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

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace torusmpi::device {

enum class Kind : uint8_t {
  kHost,     // ordinary memory of this process
  kDevice,   // allocated device memory of this job (this rank's chip)
  kInvalid,  // neither: unmapped, freed device memory, the arena's unallocated space, ...
};

// Maps this rank's arena (after the shared-memory transport is up: ranks of a node share one
// memfd). A host-model job (TORUSMPI_INSTANCE=host) still has device memory: one chip per node.
Status init(std::string* error);
void finalize();

// True when p falls in the device address range at all (a compare or two: the fast path of
// every copy below). False before init.
bool in_device_range(const void* p);

// What [p, p+bytes) is. Host memory is checked against the process's mappings (cached; re-read
// when an address is not in the cache), so a wild pointer is kInvalid, not a crash later.
// bytes == 0 asks about p alone. *chip (when not null) is the device memory's chip, or -1.
Kind kind(const void* p, size_t bytes, int* chip = nullptr);

// Allocation on this rank's chip, 64-byte aligned. kErrNoMem when the arena is full.
Status alloc(size_t bytes, void** out);
// kErrArg when p is not the start of a live allocation.
Status free(void* p);
// The rank's chip (within its instance).
int chip();

// The DMA engine: dst <- src, any kinds on either side (a plain memcpy when both are host).
void copy(void* dst, const void* src, size_t bytes);
void fill(void* dst, int byte, size_t bytes);

// The reduction kernels: dst <- src op dst over `count` elements, either side on the device.
// `apply` is the host kernel (coll/ops); it is run on this layer's view of the device bytes.
using Kernel = void (*)(void* ctx, void* dst, const void* src, size_t count);
void reduce(Kernel apply, void* ctx, void* dst, const void* src, size_t count);

// Bytes moved and reduced by this rank's engine so far (statistics, tests).
struct Counters {
  uint64_t h2d = 0, d2h = 0, d2d = 0, reduced = 0;
};
const Counters& counters();

}  // namespace torusmpi::device

#endif  // TORUSMPI_DEVICE_DEVICE_H_
