// Device buffers in the MPI layer: the buffer-argument check every call makes, and the datatype
// packing, unpacking and local reductions that must not touch device bytes themselves.
//
// The datatype engine (src/dtype) and the host reduction kernels read and write memory directly;
// device bytes may only be moved by src/device. So a derived datatype on device memory is packed
// and unpacked by the DMA engine's descriptor transfers (device::transfer: the datatype engine
// run on the device layer's view of the bytes), and a staged message or collective side of device
// data is staged in device memory (StageMem), so that no device byte passes through host memory.
// Every helper starts with the device range compares, so host buffers pay two compares and
// nothing else.
#ifndef TORUSMPI_MPI_DEVICE_STAGE_H_
#define TORUSMPI_MPI_DEVICE_STAGE_H_

#include <cstddef>
#include <cstdint>

#include "coll/ops/ops.h"
#include "device/device.h"
#include "dtype/dtype.h"
#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

// The memory a staged (packed) message or collective side is packed into: device memory when the
// user's data is (host memory when HBM is full, its device bytes then counted as staged).
class StageMem {
 public:
  StageMem() = default;
  StageMem(StageMem&& o) noexcept : p_(o.p_), device_(o.device_) { o.p_ = nullptr; }
  StageMem& operator=(StageMem&& o) noexcept;
  StageMem(const StageMem&) = delete;
  StageMem& operator=(const StageMem&) = delete;
  ~StageMem() { reset(); }
  // Frees what it held and makes `bytes` (not zeroed).
  char* make(size_t bytes, bool on_device);
  char* get() const { return p_; }
  void reset();

 private:
  char* p_ = nullptr;
  bool device_ = false;
};

// MPI_ERR_BUFFER on comm's handler, naming fn and the argument (`what` prefixes "buf": "send",
// "recv", "" or a whole argument name with `whole`), when [p, p + bytes) is neither host memory
// nor live device memory of this job (bytes == 0: p alone). MPI_SUCCESS otherwise.
int check_memory_kind(const char* fn, MPI_Comm comm, const char* what, const char* arg,
                      const void* p, size_t bytes);
inline int check_memory(const char* fn, MPI_Comm comm, const char* what, const char* arg,
                        const void* p, size_t bytes) {
  if (__builtin_expect(device::known_host(p, bytes), 1)) return MPI_SUCCESS;
  return check_memory_kind(fn, comm, what, arg, p, bytes);
}

// The first byte of count elements of t at user, and how many bytes they span (0 for none).
void type_span(const dtype::Type& t, const void* user, int64_t count, const char** lo,
               size_t* bytes);

// t->pack / t->unpack / t->unpack_range that work whichever side is device memory.
void pack_device(const dtype::Type& t, const void* user, int64_t count, void* packed);
void unpack_device(const dtype::Type& t, const void* packed, int64_t count, int64_t from,
                   int64_t to, void* user);

inline bool span_on_device(const dtype::Type& t, const void* user) {
  return device::in_device_range(static_cast<const char*>(user) + t.true_lb());
}

inline void pack_any(const dtype::Type& t, const void* user, int64_t count, void* packed) {
  if (__builtin_expect(span_on_device(t, user) || device::in_device_range(packed), 0)) {
    pack_device(t, user, count, packed);
  } else {
    t.pack(user, count, packed);
  }
}

inline void unpack_any(const dtype::Type& t, const void* packed, int64_t count, void* user) {
  if (__builtin_expect(span_on_device(t, user) || device::in_device_range(packed), 0)) {
    unpack_device(t, packed, count, 0, count * t.size(), user);
  } else {
    t.unpack(packed, count, user);
  }
}

// Only the stream bytes [from, to) (a truncated or partial receive).
inline void unpack_range_any(const dtype::Type& t, const void* packed, int64_t count, int64_t from,
                             int64_t to, void* user) {
  if (__builtin_expect(span_on_device(t, user) || device::in_device_range(packed), 0)) {
    unpack_device(t, packed, count, from, to, user);
  } else {
    t.unpack_range(packed, count, from, to, user);
  }
}

// The chip's collective engine, as Neuron's CC cores: from this rank's first device allocation
// on, a thread progresses its nonblocking operations (the progress thread of
// TORUSMPI_ASYNC_PROGRESS), so a device collective completes while the application computes and
// never calls MPI. Called at the end of an allocating call, after its last use of library state:
// from then on every call takes the library's lock. TORUSMPI_DEVICE_ENGINE=0 leaves it off.
void start_device_engine();

// MPI_Finalize, before the engine stops: waits for every stream's entries (stream.cc) and frees
// the streams.
void streams_finalize();

// r.apply(inout, in, count) through the device's reduction kernels when a side is device memory.
void reduce_device(const coll::Reduction& r, void* inout, const void* in, size_t count,
                   size_t elem);
inline void reduce_any(const coll::Reduction& r, void* inout, const void* in, size_t count,
                       size_t elem) {
  if (__builtin_expect(device::in_device_range(inout) || device::in_device_range(in), 0)) {
    reduce_device(r, inout, in, count, elem);
  } else {
    r.apply(inout, in, count);
  }
}

// r.apply on `count` elements at `addr` of job rank `rank`'s device memory (a node peer's HBM,
// mapped here) with `in`: false when that memory is not mapped here (device::reduce_at_peer).
bool reduce_at_peer(const coll::Reduction& r, int rank, uint64_t addr, const void* in, size_t count,
                    size_t elem);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_DEVICE_STAGE_H_
