// Environment queries and memory: clocks, versions, processor name, MPI_Alloc_mem.
#include <time.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

#include "config.h"
#include "core/params.h"
#include "core/progress.h"
#include "device/device.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/info.h"
#include "mpi/runtime.h"
#include "pml/net.h"

using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;

namespace {

// Blocks handed out by MPI_Alloc_mem, so MPI_Free_mem can refuse a pointer it did not give.
std::mutex g_mem_mutex;
std::unordered_set<void*> g_mem_blocks;
constexpr size_t kAllocAlignment = 64;  // a cache line: what vectorized copies and reductions like

}  // namespace

namespace torusmpi::mpi {

// "torusmpi 0.1.0 (Open MPI 4.1 ABI; data transports: shm,self,ofi,ucx)": the transports this
// build moves data with.
std::string library_version() {
  return "torusmpi " PACKAGE_VERSION " (Open MPI " + std::to_string(OMPI_MAJOR_VERSION) + "." +
         std::to_string(OMPI_MINOR_VERSION) +
         " ABI; data transports: " + pml::net::transport_names() + ")";
}

}  // namespace torusmpi::mpi

double PMPI_Wtime(void) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
TORUSMPI_WEAK_ALIAS(MPI_Wtime);

double PMPI_Wtick(void) {
  timespec res;
  if (clock_getres(CLOCK_MONOTONIC, &res) != 0) return 1e-9;
  return static_cast<double>(res.tv_sec) + static_cast<double>(res.tv_nsec) * 1e-9;
}
TORUSMPI_WEAK_ALIAS(MPI_Wtick);

int PMPI_Get_version(int* version, int* subversion) {
  if (version == nullptr || subversion == nullptr) {
    return raise_error(nullptr, MPI_ERR_ARG, "MPI_Get_version", "%s argument is NULL",
                       version == nullptr ? "version" : "subversion");
  }
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Get_version);

int PMPI_Get_library_version(char* version, int* resultlen) {
  torusmpi::progress::Lock lock;
  if (version == nullptr || resultlen == nullptr) {
    return raise_error(nullptr, MPI_ERR_ARG, "MPI_Get_library_version", "%s argument is NULL",
                       version == nullptr ? "version" : "resultlen");
  }
  *resultlen = torusmpi::mpi::copy_out(torusmpi::mpi::library_version(), version,
                                       MPI_MAX_LIBRARY_VERSION_STRING);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Get_library_version);

int PMPI_Get_processor_name(char* name, int* resultlen) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Get_processor_name";
  if (int err = require_active(kFn)) return err;
  if (name == nullptr || resultlen == nullptr) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "%s argument is NULL",
                       name == nullptr ? "name" : "resultlen");
  }
  *resultlen =
      torusmpi::mpi::copy_out(torusmpi::mpi::runtime().job.hostname, name, MPI_MAX_PROCESSOR_NAME);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Get_processor_name);

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Alloc_mem";
  if (int err = require_active(kFn)) return err;
  if (size < 0)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "size argument is negative (%ld)",
                       static_cast<long>(size));
  if (baseptr == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "baseptr argument is NULL");
  if (info != MPI_INFO_NULL && torusmpi::mpi::info_impl(info) == nullptr) {
    return raise_error(nullptr, MPI_ERR_INFO, kFn, "info argument is not a valid info object");
  }
  void* block = nullptr;
  // torusmpi_memory_kind=device: the rank's chip's HBM (torusmpi.h); host: what follows.
  std::string memory_kind;
  if (torusmpi::mpi::info_value(info, "torusmpi_memory_kind", &memory_kind) &&
      memory_kind != "host") {
    if (memory_kind != "device") {
      return raise_error(nullptr, MPI_ERR_INFO_VALUE, kFn,
                         "info key torusmpi_memory_kind has value \"%s\"; it takes host or device",
                         memory_kind.c_str());
    }
    if (torusmpi::device::alloc(static_cast<size_t>(size), &block) != torusmpi::Status::kOk) {
      return raise_error(nullptr, MPI_ERR_NO_MEM, kFn,
                         "cannot allocate %ld bytes of device memory on chip %d",
                         static_cast<long>(size), torusmpi::device::chip());
    }
    std::memcpy(baseptr, &block, sizeof(block));  // baseptr is really a void**
    torusmpi::mpi::start_device_engine();
    return MPI_SUCCESS;
  }
  size_t bytes = size > 0 ? static_cast<size_t>(size) : 1;  // a distinct pointer even for 0
  if (posix_memalign(&block, kAllocAlignment, bytes) != 0) {
    return raise_error(nullptr, MPI_ERR_NO_MEM, kFn, "cannot allocate %ld bytes",
                       static_cast<long>(size));
  }
  {
    std::lock_guard<std::mutex> lock(g_mem_mutex);
    g_mem_blocks.insert(block);
  }
  std::memcpy(baseptr, &block, sizeof(block));  // baseptr is really a void**
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Alloc_mem);

int PMPI_Free_mem(void* base) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Free_mem";
  if (int err = require_active(kFn)) return err;
  if (base == nullptr) return MPI_SUCCESS;
  if (torusmpi::device::in_device_range(base)) {
    if (torusmpi::device::free(base) != torusmpi::Status::kOk) {
      return raise_error(nullptr, MPI_ERR_BASE, kFn,
                         "base argument %p is device memory that is not a live allocation "
                         "(freed already, or not the start of one)",
                         base);
    }
    return MPI_SUCCESS;
  }
  {
    std::lock_guard<std::mutex> lock(g_mem_mutex);
    if (g_mem_blocks.erase(base) == 0) {
      return raise_error(nullptr, MPI_ERR_BASE, kFn,
                         "base argument %p was not returned by MPI_Alloc_mem", base);
    }
  }
  std::free(base);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Free_mem);

int PMPI_Get_address(const void* location, MPI_Aint* address) {
  torusmpi::progress::Lock lock;
  if (address == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, "MPI_Get_address", "address argument is NULL");
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Get_address);

// Profiling control is for tools layered on PMPI; torusmpi itself has nothing to switch.
int PMPI_Pcontrol(const int level, ...) {
  torusmpi::progress::Lock lock;
  (void)level;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Pcontrol);

// Open MPI's extension: torusmpi does not take CUDA device pointers (its device buffers are the
// emulated accelerator's), so the honest answer is no.
int MPIX_Query_cuda_support(void) { return 0; }
