// MPI_Pack and friends: the engine packs a datatype's data into a user buffer at *position and
// back, in the native representation (what point-to-point sends) or in external32.
#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "core/progress.h"
#include "mpi/datatype.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/runtime.h"

using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
namespace dtype = torusmpi::dtype;
namespace mpi = torusmpi::mpi;

namespace {

int check_comm(const char* fn, MPI_Comm comm) {
  if (mpi::comm_impl(comm) == nullptr) {
    return raise_error(nullptr, MPI_ERR_COMM, fn, "comm argument is %s",
                       comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a communicator");
  }
  return MPI_SUCCESS;
}

int check_count(const char* fn, MPI_Comm comm, int count, const char* arg) {
  if (count < 0) return raise_error(comm, MPI_ERR_COUNT, fn, "%s argument is %d", arg, count);
  return MPI_SUCCESS;
}

// A packing buffer of `size` bytes, `bytes` of which are written or read at *position.
template <class Position>
int check_room(const char* fn, MPI_Comm comm, bool unpack, const void* buf, int64_t size,
               const Position* position, int64_t bytes) {
  if (position == nullptr) return raise_error(comm, MPI_ERR_ARG, fn, "position argument is NULL");
  const char* size_arg = unpack ? "insize" : "outsize";
  if (size < 0) {
    return raise_error(comm, MPI_ERR_ARG, fn, "%s argument is %lld", size_arg,
                       static_cast<long long>(size));
  }
  if (*position < 0 || *position > size) {
    return raise_error(comm, MPI_ERR_ARG, fn, "position argument is %lld, outside [0, %s = %lld]",
                       static_cast<long long>(*position), size_arg, static_cast<long long>(size));
  }
  if (bytes > size - static_cast<int64_t>(*position)) {
    return raise_error(comm, MPI_ERR_TRUNCATE, fn,
                       "%s %lld bytes at position %lld would pass the end of the buffer (%s %lld)",
                       unpack ? "unpacking" : "packing", static_cast<long long>(bytes),
                       static_cast<long long>(*position), size_arg, static_cast<long long>(size));
  }
  if (bytes > 0 && buf == nullptr) {
    return raise_error(comm, MPI_ERR_BUFFER, fn, "%s argument is NULL",
                       unpack ? "inbuf" : "outbuf");
  }
  return MPI_SUCCESS;
}

// Only MPI's portable representation exists.
int check_datarep(const char* fn, const char* datarep) {
  if (datarep == nullptr) return raise_error(nullptr, MPI_ERR_ARG, fn, "datarep argument is NULL");
  if (std::strcmp(datarep, "external32") != 0) {
    return raise_error(nullptr, MPI_ERR_ARG, fn,
                       "datarep argument is \"%s\": only \"external32\" is defined", datarep);
  }
  return MPI_SUCCESS;
}

// external32 conversion goes through native packed bytes, a bounded piece at a time.
constexpr int64_t kConvertBytes = int64_t{1} << 20;

int64_t elements_per_piece(const dtype::Type& t) {
  return std::max<int64_t>(1, kConvertBytes / std::max<int64_t>(t.size(), 1));
}

}  // namespace

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
              int* position, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Pack";
  if (int err = require_active(kFn)) return err;
  if (int err = check_comm(kFn, comm)) return err;
  if (int err = check_count(kFn, comm, incount, "incount")) return err;
  const dtype::Type* t = nullptr;
  if (int err = mpi::check_data_type(kFn, comm, datatype, "datatype", &t)) return err;
  int64_t bytes = incount * t->size();
  if (int err = check_room(kFn, comm, false, outbuf, outsize, position, bytes)) return err;
  mpi::pack_any(*t, inbuf, incount, static_cast<char*>(outbuf) + *position);
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Pack);

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Unpack";
  if (int err = require_active(kFn)) return err;
  if (int err = check_comm(kFn, comm)) return err;
  if (int err = check_count(kFn, comm, outcount, "outcount")) return err;
  const dtype::Type* t = nullptr;
  if (int err = mpi::check_data_type(kFn, comm, datatype, "datatype", &t)) return err;
  int64_t bytes = outcount * t->size();
  if (int err = check_room(kFn, comm, true, inbuf, insize, position, bytes)) return err;
  mpi::unpack_any(*t, static_cast<const char*>(inbuf) + *position, outcount, outbuf);
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Unpack);

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Pack_size";
  if (int err = require_active(kFn)) return err;
  if (int err = check_comm(kFn, comm)) return err;
  if (int err = check_count(kFn, comm, incount, "incount")) return err;
  if (const char* why = mpi::bad_datatype(datatype))
    return raise_error(comm, MPI_ERR_TYPE, kFn, "datatype argument is %s", why);
  if (size == nullptr) return raise_error(comm, MPI_ERR_ARG, kFn, "size argument is NULL");
  int64_t bytes = incount * mpi::engine_type(datatype)->size();
  if (bytes > INT_MAX) {
    return raise_error(comm, MPI_ERR_ARG, kFn,
                       "%d elements take %lld bytes, more than an int holds", incount,
                       static_cast<long long>(bytes));
  }
  *size = static_cast<int>(bytes);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Pack_size);

int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype,
                       void* outbuf, MPI_Aint outsize, MPI_Aint* position) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Pack_external";
  if (int err = require_active(kFn)) return err;
  if (int err = check_datarep(kFn, datarep)) return err;
  if (int err = check_count(kFn, nullptr, incount, "incount")) return err;
  const dtype::Type* t = nullptr;
  if (int err = mpi::check_data_type(kFn, nullptr, datatype, "datatype", &t)) return err;
  int64_t bytes = incount * t->external_size();
  if (int err = check_room(kFn, nullptr, false, outbuf, outsize, position, bytes)) return err;
  const int64_t piece = elements_per_piece(*t);
  std::vector<unsigned char> native(
      static_cast<size_t>(std::min<int64_t>(piece, incount) * t->size()));
  const char* in = static_cast<const char*>(inbuf);
  char* out = static_cast<char*>(outbuf) + *position;
  for (int64_t done = 0; done < incount; done += piece) {
    int64_t n = std::min<int64_t>(piece, incount - done);
    mpi::pack_any(*t, in + done * t->extent(), n, native.data());
    if (__builtin_expect(torusmpi::device::in_device_range(out), 0)) {
      std::vector<char> external(static_cast<size_t>(n * t->external_size()));
      t->to_external(native.data(), n, external.data());
      torusmpi::device::copy(out, external.data(), external.size());
    } else {
      t->to_external(native.data(), n, out);
    }
    out += n * t->external_size();
  }
  *position += bytes;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Pack_external);

int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                         MPI_Aint* position, void* outbuf, int outcount, MPI_Datatype datatype) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Unpack_external";
  if (int err = require_active(kFn)) return err;
  if (int err = check_datarep(kFn, datarep)) return err;
  if (int err = check_count(kFn, nullptr, outcount, "outcount")) return err;
  const dtype::Type* t = nullptr;
  if (int err = mpi::check_data_type(kFn, nullptr, datatype, "datatype", &t)) return err;
  int64_t bytes = outcount * t->external_size();
  if (int err = check_room(kFn, nullptr, true, inbuf, insize, position, bytes)) return err;
  const int64_t piece = elements_per_piece(*t);
  std::vector<unsigned char> native(
      static_cast<size_t>(std::min<int64_t>(piece, outcount) * t->size()));
  const char* in = static_cast<const char*>(inbuf) + *position;
  char* out = static_cast<char*>(outbuf);
  for (int64_t done = 0; done < outcount; done += piece) {
    int64_t n = std::min<int64_t>(piece, outcount - done);
    if (__builtin_expect(torusmpi::device::in_device_range(in), 0)) {
      std::vector<char> external(static_cast<size_t>(n * t->external_size()));
      torusmpi::device::stage(external.data(), in, external.size());
      t->from_external(external.data(), n, native.data());
    } else {
      t->from_external(in, n, native.data());
    }
    mpi::unpack_any(*t, native.data(), n, out + done * t->extent());
    in += n * t->external_size();
  }
  *position += bytes;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Unpack_external);

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint* size) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Pack_external_size";
  if (int err = require_active(kFn)) return err;
  if (int err = check_datarep(kFn, datarep)) return err;
  if (int err = check_count(kFn, nullptr, incount, "incount")) return err;
  if (const char* why = mpi::bad_datatype(datatype))
    return raise_error(nullptr, MPI_ERR_TYPE, kFn, "datatype argument is %s", why);
  if (size == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "size argument is NULL");
  *size = incount * mpi::engine_type(datatype)->external_size();
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Pack_external_size);
