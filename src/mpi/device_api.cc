// torusmpi.h's device calls: allocate and free device memory on the rank's chip, copy and set
// bytes through the device's DMA engine, ask what a pointer is. Also the MPI layer's device
// helpers (device_stage.h): the buffer check and packing of derived datatypes on device memory.
//
// The torusmpi_* calls speak MPI error classes, like the MPI calls beside them, and raise them on
// MPI_COMM_WORLD's error handler (the communicator MPI uses for calls that have none), so
// MPI_ERRORS_RETURN makes them return.
// Before MPI_Init and after MPI_Finalize there is no device memory and no handler: those calls
// return MPI_ERR_OTHER and do nothing.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "device/device.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/runtime.h"

// The generated header declares the calls without a visibility: libmpi.so.40 is built with
// hidden visibility, and these are part of what it exports (exports.map: torusmpi_*).
#pragma GCC visibility push(default)
#include "core/params.h"
#include "core/progress.h"
#include "include/torusmpi.h"
#pragma GCC visibility pop

namespace {

namespace device = torusmpi::device;
using torusmpi::mpi::raise_error;

bool active() { return torusmpi::mpi::runtime().phase == torusmpi::mpi::Phase::kActive; }

// MPI_ERR_BUFFER for a range that is neither kind; MPI_SUCCESS with its kind otherwise.
int check_range(const char* fn, const char* arg, const void* p, size_t bytes, device::Kind* kind) {
  *kind = device::kind(p, bytes);
  if (*kind != device::Kind::kInvalid) return MPI_SUCCESS;
  return raise_error(nullptr, MPI_ERR_BUFFER, fn,
                     "%s argument %p (%zu B) is neither host memory nor device memory of this job",
                     arg, p, bytes);
}

int copy_checked(const char* fn, void* dst, const void* src, size_t bytes, int want_dst,
                 int want_src) {
  if (!active()) return MPI_ERR_OTHER;
  if (bytes == 0) return MPI_SUCCESS;
  device::Kind kd, ks;
  if (int err = check_range(fn, "dst", dst, bytes, &kd)) return err;
  if (int err = check_range(fn, "src", src, bytes, &ks)) return err;
  // want_*: -1 any, else the device::Kind the call's name promises.
  if (want_dst >= 0 && static_cast<int>(kd) != want_dst) {
    return raise_error(nullptr, MPI_ERR_ARG, fn, "dst argument %p is %s memory, not %s", dst,
                       kd == device::Kind::kDevice ? "device" : "host",
                       kd == device::Kind::kDevice ? "host" : "device");
  }
  if (want_src >= 0 && static_cast<int>(ks) != want_src) {
    return raise_error(nullptr, MPI_ERR_ARG, fn, "src argument %p is %s memory, not %s", src,
                       ks == device::Kind::kDevice ? "device" : "host",
                       ks == device::Kind::kDevice ? "host" : "device");
  }
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  // Host ranges may overlap (memmove semantics on both sides is what a user expects of one
  // call); the engine's device copies already cope with overlap inside the arena.
  if (kd == device::Kind::kHost && ks == device::Kind::kHost) {
    std::memmove(d, s, bytes);
  } else {
    device::copy(d, s, bytes);
  }
  return MPI_SUCCESS;
}

constexpr int kHost = static_cast<int>(device::Kind::kHost);
constexpr int kDevice = static_cast<int>(device::Kind::kDevice);

}  // namespace

namespace torusmpi::mpi {

int check_memory_kind(const char* fn, MPI_Comm comm, const char* what, const char* arg,
                      const void* p, size_t bytes) {
  if (__builtin_expect(device::kind(p, bytes) != device::Kind::kInvalid, 1)) return MPI_SUCCESS;
  if (device::in_device_range(p)) {
    return raise_error(comm, MPI_ERR_BUFFER, fn,
                       "%s%s argument %p (%zu B) is neither host memory nor device memory of this "
                       "job: device memory that is not allocated (freed, or past an allocation's "
                       "end)",
                       what, arg, p, bytes);
  }
  return raise_error(
      comm, MPI_ERR_BUFFER, fn,
      "%s%s argument %p (%zu B) is neither host memory nor device memory of this job", what, arg, p,
      bytes);
}

void type_span(const dtype::Type& t, const void* user, int64_t count, const char** lo,
               size_t* bytes) {
  const char* base = static_cast<const char*>(user);
  if (count <= 0 || t.size() == 0) {
    *lo = base + t.true_lb();
    *bytes = 0;
    return;
  }
  // A negative extent puts later elements below the first.
  const int64_t step = (count - 1) * t.extent();
  const int64_t first = t.true_lb() + std::min<int64_t>(0, step);
  const int64_t last = t.true_ub() + std::max<int64_t>(0, step);
  *lo = base + first;
  *bytes = static_cast<size_t>(last - first);
}

namespace {
struct PackJob {
  const dtype::Type* t;
  int64_t count, from, to;
};
void run_pack(void* ctx, void* packed, const void* user) {
  const auto* j = static_cast<const PackJob*>(ctx);
  j->t->pack(user, j->count, packed);
}
void run_unpack(void* ctx, void* user, const void* packed) {
  const auto* j = static_cast<const PackJob*>(ctx);
  j->t->unpack_range(packed, j->count, j->from, j->to, user);
}
}  // namespace

void pack_device(const dtype::Type& t, const void* user, int64_t count, void* packed) {
  const char* lo;
  size_t span;
  type_span(t, user, count, &lo, &span);
  const size_t bytes = static_cast<size_t>(count * t.size());
  PackJob job{&t, count, 0, 0};
  device::transfer(run_pack, &job, packed, bytes > 0 && device::in_device_range(packed), user,
                   span > 0 && device::in_device_range(lo), bytes);
}

void unpack_device(const dtype::Type& t, const void* packed, int64_t count, int64_t from,
                   int64_t to, void* user) {
  if (to <= from) return;
  const char* lo;
  size_t span;
  type_span(t, user, count, &lo, &span);
  // The stream's bytes [from, to) sit at packed[0] for unpack_range; the gaps between elements
  // are not written.
  PackJob job{&t, count, from, to};
  device::transfer(run_unpack, &job, user, span > 0 && device::in_device_range(lo), packed,
                   device::in_device_range(packed), static_cast<size_t>(to - from));
}

StageMem& StageMem::operator=(StageMem&& o) noexcept {
  if (this != &o) {
    reset();
    p_ = o.p_;
    device_ = o.device_;
    o.p_ = nullptr;
  }
  return *this;
}

char* StageMem::make(size_t bytes, bool on_device) {
  reset();
  void* p = nullptr;
  if (on_device && device::alloc(bytes > 0 ? bytes : 1, &p) == Status::kOk) {
    device_ = true;
  } else {
    p = new char[bytes > 0 ? bytes : 1];
    device_ = false;
  }
  p_ = static_cast<char*>(p);
  return p_;
}

void StageMem::reset() {
  if (p_ == nullptr) return;
  if (device_) {
    device::free(p_);
  } else {
    delete[] p_;
  }
  p_ = nullptr;
}

void start_device_engine() {
  if (params::device_engine() && !progress::async()) progress::start_async();
}

namespace {
void apply_reduction(void* ctx, void* inout, const void* in, size_t count) {
  static_cast<const coll::Reduction*>(ctx)->apply(inout, in, count);
}
}  // namespace

void reduce_device(const coll::Reduction& r, void* inout, const void* in, size_t count,
                   size_t elem) {
  device::reduce(apply_reduction, const_cast<coll::Reduction*>(&r), inout, in, count, elem);
}

bool reduce_at_peer(const coll::Reduction& r, int rank, uint64_t addr, const void* in, size_t count,
                    size_t elem) {
  return device::reduce_at_peer(apply_reduction, const_cast<coll::Reduction*>(&r), rank, addr, in,
                                count, elem);
}

}  // namespace torusmpi::mpi

extern "C" {

int torusmpi_device_malloc(void** ptr, size_t bytes) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "torusmpi_device_malloc";
  if (!active()) return MPI_ERR_OTHER;
  if (ptr == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "ptr argument is NULL");
  torusmpi::Status s = device::alloc(bytes, ptr);
  if (s == torusmpi::Status::kOk) {
    torusmpi::mpi::start_device_engine();
    return MPI_SUCCESS;
  }
  return raise_error(nullptr, MPI_ERR_NO_MEM, kFn,
                     "cannot allocate %zu B of device memory on chip %d (TORUSMPI_DEVICE_MEMORY "
                     "is this rank's share of the chip's HBM)",
                     bytes, device::chip());
}

int torusmpi_device_free(void* ptr) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "torusmpi_device_free";
  if (!active()) return MPI_ERR_OTHER;
  if (ptr == nullptr) return MPI_SUCCESS;
  if (device::free(ptr) == torusmpi::Status::kOk) return MPI_SUCCESS;
  return raise_error(nullptr, MPI_ERR_ARG, kFn,
                     "ptr argument %p is not live device memory of this rank (%s)", ptr,
                     device::in_device_range(ptr) ? "freed, or not the start of an allocation"
                                                  : "not in the device range at all");
}

int torusmpi_memcpy(void* dst, const void* src, size_t bytes) {
  torusmpi::progress::Lock lock;
  return copy_checked("torusmpi_memcpy", dst, src, bytes, -1, -1);
}

int torusmpi_memcpy_htod(void* dst_device, const void* src_host, size_t bytes) {
  torusmpi::progress::Lock lock;
  return copy_checked("torusmpi_memcpy_htod", dst_device, src_host, bytes, kDevice, kHost);
}

int torusmpi_memcpy_dtoh(void* dst_host, const void* src_device, size_t bytes) {
  torusmpi::progress::Lock lock;
  return copy_checked("torusmpi_memcpy_dtoh", dst_host, src_device, bytes, kHost, kDevice);
}

int torusmpi_memset(void* dst, int value, size_t bytes) {
  torusmpi::progress::Lock lock;
  if (!active()) return MPI_ERR_OTHER;
  if (bytes == 0) return MPI_SUCCESS;
  device::Kind k;
  if (int err = check_range("torusmpi_memset", "dst", dst, bytes, &k)) return err;
  device::fill(dst, value, bytes);
  return MPI_SUCCESS;
}

int torusmpi_pointer_kind(const void* ptr, int* kind, int* chip) {
  torusmpi::progress::Lock lock;
  if (!active()) return MPI_ERR_OTHER;
  if (kind == nullptr) {
    return raise_error(nullptr, MPI_ERR_ARG, "torusmpi_pointer_kind", "kind argument is NULL");
  }
  int c = -1;
  switch (device::kind(ptr, 0, &c)) {
    case device::Kind::kHost:
      *kind = TORUSMPI_MEMORY_HOST;
      break;
    case device::Kind::kDevice:
      *kind = TORUSMPI_MEMORY_DEVICE;
      break;
    case device::Kind::kInvalid:
      *kind = TORUSMPI_MEMORY_INVALID;
      break;
  }
  if (chip != nullptr) *chip = c;
  return MPI_SUCCESS;
}

int torusmpi_device_chip(int* chip) {
  torusmpi::progress::Lock lock;
  if (!active()) return MPI_ERR_OTHER;
  if (chip == nullptr) {
    return raise_error(nullptr, MPI_ERR_ARG, "torusmpi_device_chip", "chip argument is NULL");
  }
  *chip = device::chip();
  return MPI_SUCCESS;
}

}  // extern "C"
