// Datatypes: the predefined ones as engine types, the constructors of derived datatypes, their
// queries (size, bounds, name, envelope and contents), commit, dup and free.
#include "mpi/datatype.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/progress.h"
#include "mpi/attr.h"
#include "mpi/builtins.h"
#include "mpi/errors.h"
#include "mpi/fortran.h"
#include "mpi/runtime.h"

namespace torusmpi::mpi {
namespace {

using dtype::Encoding;

constexpr int kBuiltinCount = static_cast<int>(BuiltinType::kCount);

// How each predefined datatype with a single value is stored (alignment: the C and Fortran types'
// on x86-64, the figures Open MPI pads struct extents with) and written in external32 (MPI 3.1,
// 13.5.2: long and unsigned long take 4 bytes, wchar_t 2, long double is IEEE binary128). Sizes
// come from datatypes.def. MPI_REAL16 and MPI_COMPLEX32 are gfortran's binary128, not x87.
struct BasicRow {
  BuiltinType type;
  uint32_t align;
  Encoding encoding;
  uint8_t parts;
  uint32_t external_size;
};

#define TORUSMPI_ROW(t, align, enc, parts, ext) \
  { BuiltinType::k_##t, align, Encoding::k##enc, parts, ext }
constexpr BasicRow kBasicRows[] = {
    TORUSMPI_ROW(aint, 8, Signed, 1, 8),
    TORUSMPI_ROW(byte, 1, Raw, 1, 1),
    TORUSMPI_ROW(c_bool, 1, Raw, 1, 1),
    TORUSMPI_ROW(c_double_complex, 8, Float, 2, 16),
    TORUSMPI_ROW(c_float_complex, 4, Float, 2, 8),
    TORUSMPI_ROW(c_long_double_complex, 16, X87, 2, 32),
    TORUSMPI_ROW(char, 1, Raw, 1, 1),
    TORUSMPI_ROW(character, 1, Raw, 1, 1),
    TORUSMPI_ROW(complex16, 8, Float, 2, 16),
    TORUSMPI_ROW(complex32, 16, Float, 2, 32),
    TORUSMPI_ROW(complex8, 4, Float, 2, 8),
    TORUSMPI_ROW(count, 8, Signed, 1, 8),
    TORUSMPI_ROW(cplex, 4, Float, 2, 8),
    TORUSMPI_ROW(cxx_bool, 1, Raw, 1, 1),
    TORUSMPI_ROW(cxx_cplex, 4, Float, 2, 8),
    TORUSMPI_ROW(cxx_dblcplex, 8, Float, 2, 16),
    TORUSMPI_ROW(cxx_ldblcplex, 16, X87, 2, 32),
    TORUSMPI_ROW(dblcplex, 8, Float, 2, 16),
    TORUSMPI_ROW(dblprec, 8, Float, 1, 8),
    TORUSMPI_ROW(double, 8, Float, 1, 8),
    TORUSMPI_ROW(float, 4, Float, 1, 4),
    TORUSMPI_ROW(int, 4, Signed, 1, 4),
    TORUSMPI_ROW(int16_t, 2, Signed, 1, 2),
    TORUSMPI_ROW(int32_t, 4, Signed, 1, 4),
    TORUSMPI_ROW(int64_t, 8, Signed, 1, 8),
    TORUSMPI_ROW(int8_t, 1, Signed, 1, 1),
    TORUSMPI_ROW(integer, 4, Signed, 1, 4),
    TORUSMPI_ROW(integer1, 1, Signed, 1, 1),
    TORUSMPI_ROW(integer16, 16, Signed, 1, 0),  // size 0 in this Open MPI
    TORUSMPI_ROW(integer2, 2, Signed, 1, 2),
    TORUSMPI_ROW(integer4, 4, Signed, 1, 4),
    TORUSMPI_ROW(integer8, 8, Signed, 1, 8),
    TORUSMPI_ROW(ldblcplex, 16, X87, 2, 32),
    TORUSMPI_ROW(logical, 4, Unsigned, 1, 4),
    TORUSMPI_ROW(logical1, 1, Unsigned, 1, 1),
    TORUSMPI_ROW(logical2, 2, Unsigned, 1, 2),
    TORUSMPI_ROW(logical4, 4, Unsigned, 1, 4),
    TORUSMPI_ROW(logical8, 8, Unsigned, 1, 8),
    TORUSMPI_ROW(long, 8, Signed, 1, 4),
    TORUSMPI_ROW(long_double, 16, X87, 1, 16),
    TORUSMPI_ROW(long_long_int, 8, Signed, 1, 8),
    TORUSMPI_ROW(offset, 8, Signed, 1, 8),
    TORUSMPI_ROW(packed, 1, Raw, 1, 1),
    TORUSMPI_ROW(real, 4, Float, 1, 4),
    TORUSMPI_ROW(real16, 16, Float, 1, 16),
    TORUSMPI_ROW(real2, 2, Float, 1, 0),  // size 0 in this Open MPI
    TORUSMPI_ROW(real4, 4, Float, 1, 4),
    TORUSMPI_ROW(real8, 8, Float, 1, 8),
    TORUSMPI_ROW(short, 2, Signed, 1, 2),
    TORUSMPI_ROW(signed_char, 1, Signed, 1, 1),
    TORUSMPI_ROW(uint16_t, 2, Unsigned, 1, 2),
    TORUSMPI_ROW(uint32_t, 4, Unsigned, 1, 4),
    TORUSMPI_ROW(uint64_t, 8, Unsigned, 1, 8),
    TORUSMPI_ROW(uint8_t, 1, Unsigned, 1, 1),
    TORUSMPI_ROW(unsigned, 4, Unsigned, 1, 4),
    TORUSMPI_ROW(unsigned_char, 1, Unsigned, 1, 1),
    TORUSMPI_ROW(unsigned_long, 8, Unsigned, 1, 4),
    TORUSMPI_ROW(unsigned_long_long, 8, Unsigned, 1, 8),
    TORUSMPI_ROW(unsigned_short, 2, Unsigned, 1, 2),
    TORUSMPI_ROW(wchar, 4, Unsigned, 1, 2),
    // torusmpi's own (datatypes.def's last rows): external32 has no 16-bit floats; the IEEE
    // formats' rule (big-endian, the bits as they are) serves both.
    TORUSMPI_ROW(bfloat16, 2, Float, 1, 2),
    TORUSMPI_ROW(c_float16, 2, Float, 1, 2),
};
#undef TORUSMPI_ROW

// The pair types (MPI_MINLOC/MAXLOC's value and index): two members, like the C struct.
struct PairRow {
  BuiltinType type, first, second;
  int64_t second_offset;
};
#define TORUSMPI_PAIR(t, a, b, off) \
  { BuiltinType::k_##t, BuiltinType::k_##a, BuiltinType::k_##b, off }
constexpr PairRow kPairRows[] = {
    TORUSMPI_PAIR(2cplex, cplex, cplex, 8),       TORUSMPI_PAIR(2dblcplex, dblcplex, dblcplex, 16),
    TORUSMPI_PAIR(2dblprec, dblprec, dblprec, 8), TORUSMPI_PAIR(2int, int, int, 4),
    TORUSMPI_PAIR(2integer, integer, integer, 4), TORUSMPI_PAIR(2real, real, real, 4),
    TORUSMPI_PAIR(double_int, double, int, 8),    TORUSMPI_PAIR(float_int, float, int, 4),
    TORUSMPI_PAIR(long_int, long, int, 8),        TORUSMPI_PAIR(longdbl_int, long_double, int, 16),
    TORUSMPI_PAIR(short_int, short, int, 4),
};
#undef TORUSMPI_PAIR

int index_of(BuiltinType t) { return static_cast<int>(t); }

struct Builtins {
  dtype::Basic basics[kBuiltinCount];
  dtype::TypeRef types[kBuiltinCount];
  std::string names[kBuiltinCount];  // MPI_Type_set_name may rename a predefined datatype
};

// Built on first use and never destroyed: datatypes may be used from atexit handlers.
Builtins& builtins() {
  static Builtins* const b = [] {
    auto* b = new Builtins;
    for (const BasicRow& r : kBasicRows) {
      int i = index_of(r.type);
      b->basics[i] = dtype::Basic{i,       static_cast<uint32_t>(builtin_type(i).size),
                                  r.align, r.encoding,
                                  r.parts, r.external_size};
      b->types[i] = dtype::basic(b->basics[i]);
    }
    for (const PairRow& r : kPairRows) {
      int i = index_of(r.type);
      b->types[i] = dtype::named(
          dtype::structure({1, 1}, {0, r.second_offset},
                           {b->types[index_of(r.first)], b->types[index_of(r.second)]}),
          i);
    }
    b->types[index_of(BuiltinType::k_lb)] = dtype::lb_marker();
    b->types[index_of(BuiltinType::k_ub)] = dtype::ub_marker();
    for (int i = 0; i < kBuiltinCount; ++i) {
      b->names[i] = builtin_type(i).name;
      if (b->types[i] == nullptr) {
        std::fprintf(stderr, "torusmpi: internal error: no layout for predefined datatype %s\n",
                     builtin_type(i).name);
        std::abort();
      }
    }
    return b;
  }();
  return *b;
}

// Freed datatypes are kept for reuse and never returned to the heap, so a stale handle reads as
// freed instead of as garbage.
std::mutex g_pool_mutex;
std::vector<Datatype*>& g_pool = *new std::vector<Datatype*>;

Datatype* new_datatype() {
  Datatype* d = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    if (!g_pool.empty()) {
      d = g_pool.back();
      g_pool.pop_back();
    }
  }
  if (d == nullptr) d = new Datatype;
  d->handle.magic = kMagicDatatype;
  d->handle.builtin = kDerivedType;
  d->handle.reserved = 0;
  d->handle.impl = d;
  d->handle.d_keyhash = &d->handle;
  d->refs.store(1);
  d->committed = false;
  return d;
}

void delete_datatype(Datatype* d) {
  std::vector<MPI_Datatype> children = std::move(d->types);
  d->handle.magic = kMagicFreed;
  d->handle.impl = nullptr;
  fortran_forget(HandleKind::kDatatype, &d->handle);
  d->type.reset();
  d->ints.clear();
  d->aints.clear();
  d->types.clear();
  d->name.clear();
  d->combiner = MPI_COMBINER_NAMED;
  d->predefined = false;
  {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    g_pool.push_back(d);
  }
  for (MPI_Datatype c : children) release_type(c);
}

}  // namespace

const dtype::TypeRef& builtin_engine_type(int builtin) { return builtins().types[builtin]; }

const char* bad_datatype(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  if (type == nullptr) return "not a datatype (a NULL pointer)";
  if (type->magic == kMagicFreed) return "a freed datatype";
  if (type->magic != kMagicDatatype) return "not a datatype";
  if (type->builtin == kDerivedType) return type->impl != nullptr ? nullptr : "not a datatype";
  if (type->builtin < 0 || type->builtin >= kBuiltinCount) return "not a datatype";
  return nullptr;
}

const dtype::Type* engine_type(MPI_Datatype type) {
  if (bad_datatype(type) != nullptr) return nullptr;
  if (type->builtin == kDerivedType) return type->impl->type.get();
  return builtins().types[type->builtin].get();
}

dtype::TypeRef engine_type_ref(MPI_Datatype type) {
  if (bad_datatype(type) != nullptr) return nullptr;
  if (type->builtin == kDerivedType) return type->impl->type;
  return builtins().types[type->builtin];
}

namespace {

// MPI_DISTRIBUTE_* as the engine's distribution; false for another value.
bool distribution_of(int distrib, dtype::Distribution* out) {
  switch (distrib) {
    case MPI_DISTRIBUTE_BLOCK:
      *out = dtype::Distribution::kBlock;
      return true;
    case MPI_DISTRIBUTE_CYCLIC:
      *out = dtype::Distribution::kCyclic;
      return true;
    case MPI_DISTRIBUTE_NONE:
      *out = dtype::Distribution::kNone;
      return true;
    default:
      return false;
  }
}

dtype::Order order_of(int order) {
  return order == MPI_ORDER_C ? dtype::Order::kC : dtype::Order::kFortran;
}

// ints[from, from + n) as 64-bit values.
std::vector<int64_t> widened(const std::vector<int>& ints, size_t from, size_t n) {
  return std::vector<int64_t>(ints.begin() + static_cast<ptrdiff_t>(from),
                              ints.begin() + static_cast<ptrdiff_t>(from + n));
}

// The same, each times `unit` (displacements counted in old types); false when one overflows.
bool scaled(const std::vector<int>& ints, size_t from, size_t n, int64_t unit,
            std::vector<int64_t>* out) {
  *out = widened(ints, from, n);
  for (int64_t& v : *out) {
    if (__builtin_mul_overflow(v, unit, &v)) return false;
  }
  return true;
}

}  // namespace

dtype::TypeRef external32_layout(MPI_Datatype type) {
  const dtype::TypeRef& native = engine_type_ref(type);
  const Datatype* d = derived_type(type);
  if (d == nullptr || d->types.empty()) {
    // A predefined type (or an f90 one, which is a predefined one's layout): its external bytes,
    // packed. Markers and elements whose bytes do not change keep their own type (and alignment).
    if (native->size() == native->external_size() && native->extent() == native->size())
      return native;
    return dtype::contiguous(native->external_size(), engine_type_ref(MPI_BYTE));
  }
  std::vector<dtype::TypeRef> olds;
  for (MPI_Datatype t : d->types) {
    olds.push_back(external32_layout(t));
    if (olds.back() == nullptr) return nullptr;
  }
  const dtype::TypeRef& old = olds[0];
  const std::vector<int>& ints = d->ints;
  const std::vector<MPI_Aint>& aints = d->aints;
  const int64_t unit = old->extent();
  const size_t count = ints.empty() ? 0 : static_cast<size_t>(ints[0]);
  const std::vector<int64_t> byte_displs(aints.begin(), aints.end());
  std::vector<int64_t> displs;
  switch (d->combiner) {
    case MPI_COMBINER_DUP:
      return old;
    case MPI_COMBINER_CONTIGUOUS:
      return dtype::contiguous(ints[0], old);
    case MPI_COMBINER_VECTOR:
      if (!scaled(ints, 2, 1, unit, &displs)) return nullptr;
      return dtype::hvector(ints[0], ints[1], displs[0], old);
    case MPI_COMBINER_HVECTOR:
      return dtype::hvector(ints[0], ints[1], aints[0], old);
    case MPI_COMBINER_INDEXED:
      if (!scaled(ints, 1 + count, count, unit, &displs)) return nullptr;
      return dtype::hindexed(widened(ints, 1, count), displs, old);
    case MPI_COMBINER_HINDEXED:
      return dtype::hindexed(widened(ints, 1, count), byte_displs, old);
    case MPI_COMBINER_INDEXED_BLOCK:
      if (!scaled(ints, 2, count, unit, &displs)) return nullptr;
      return dtype::hindexed_block(ints[1], displs, old);
    case MPI_COMBINER_HINDEXED_BLOCK:
      return dtype::hindexed_block(ints[1], byte_displs, old);
    case MPI_COMBINER_STRUCT:
      return dtype::structure(widened(ints, 1, count), byte_displs, olds);
    case MPI_COMBINER_RESIZED:
      return dtype::resized(old, aints[0], aints[1]);
    case MPI_COMBINER_SUBARRAY:
      // ndims, sizes, subsizes, starts, order
      return dtype::subarray(widened(ints, 1, count), widened(ints, 1 + count, count),
                             widened(ints, 1 + 2 * count, count), order_of(ints[1 + 3 * count]),
                             old);
    case MPI_COMBINER_DARRAY: {
      // size, rank, ndims, gsizes, distribs, dargs, psizes, order
      const size_t n = static_cast<size_t>(ints[2]);
      std::vector<dtype::Distribution> distribs(n);
      for (size_t i = 0; i < n; ++i) distribution_of(ints[3 + n + i], &distribs[i]);
      std::vector<int64_t> dargs = widened(ints, 3 + 2 * n, n);
      for (int64_t& darg : dargs) {
        if (darg == MPI_DISTRIBUTE_DFLT_DARG) darg = dtype::kDefaultDarg;
      }
      return dtype::darray(ints[1], widened(ints, 3, n), distribs, dargs,
                           widened(ints, 3 + 3 * n, n), order_of(ints[3 + 4 * n]), old);
    }
    default:
      return nullptr;
  }
}

int check_data_type(const char* fn, MPI_Comm comm, MPI_Datatype type, const char* arg,
                    const dtype::Type** out) {
  if (const char* why = bad_datatype(type))
    return raise_error(comm, MPI_ERR_TYPE, fn, "%s argument is %s", arg, why);
  Datatype* d = derived_type(type);
  if (d != nullptr && !d->committed) {
    return raise_error(comm, MPI_ERR_TYPE, fn,
                       "%s argument is not committed: call MPI_Type_commit first", arg);
  }
  *out = engine_type(type);
  return MPI_SUCCESS;
}

void predefined_datatypes_init() {
  for (int i = 0; i < kBuiltinCount; ++i) {
    MPI_Datatype t = builtin_datatype(i);
    t->d_keyhash = t;
  }
}

void retain_type(MPI_Datatype type) {
  if (Datatype* d = derived_type(type)) d->refs.fetch_add(1, std::memory_order_relaxed);
}

void release_type(MPI_Datatype type) {
  Datatype* d = derived_type(type);
  if (d != nullptr && d->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete_datatype(d);
}

}  // namespace torusmpi::mpi

using torusmpi::mpi::Datatype;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
namespace dtype = torusmpi::dtype;
namespace mpi = torusmpi::mpi;

namespace {

// ---------------------------------------------------------------------------------------------
// Argument checks. Each returns MPI_SUCCESS or raises (on MPI_COMM_WORLD's handler: datatypes
// belong to no communicator) and returns the class.

int check_type_arg(const char* fn, MPI_Datatype type, const char* arg, dtype::TypeRef* out) {
  if (const char* why = mpi::bad_datatype(type))
    return raise_error(nullptr, MPI_ERR_TYPE, fn, "%s argument is %s", arg, why);
  *out = mpi::engine_type_ref(type);
  return MPI_SUCCESS;
}

int check_count(const char* fn, int count) {
  if (count < 0) return raise_error(nullptr, MPI_ERR_COUNT, fn, "count argument is %d", count);
  return MPI_SUCCESS;
}

int check_nonnegative(const char* fn, int value, const char* arg) {
  if (value < 0) return raise_error(nullptr, MPI_ERR_ARG, fn, "%s argument is %d", arg, value);
  return MPI_SUCCESS;
}

int check_pointer(const char* fn, const void* p, const char* arg) {
  if (p == nullptr) return raise_error(nullptr, MPI_ERR_ARG, fn, "%s argument is NULL", arg);
  return MPI_SUCCESS;
}

// An input array of `count` entries.
int check_array(const char* fn, const void* a, int count, const char* arg) {
  return count > 0 ? check_pointer(fn, a, arg) : MPI_SUCCESS;
}

int check_blocklengths(const char* fn, const int* blocklengths, int count, const char* arg,
                       std::vector<int64_t>* out) {
  if (int err = check_array(fn, blocklengths, count, arg)) return err;
  out->resize(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (blocklengths[i] < 0) {
      return raise_error(nullptr, MPI_ERR_ARG, fn, "%s[%d] is %d: must not be negative", arg, i,
                         blocklengths[i]);
    }
    (*out)[static_cast<size_t>(i)] = blocklengths[i];
  }
  return MPI_SUCCESS;
}

// Displacements in units of the old type's extent, to bytes.
int scale(const char* fn, const char* arg, int64_t value, int64_t extent, int64_t* out) {
  if (__builtin_mul_overflow(value, extent, out)) {
    return raise_error(nullptr, MPI_ERR_ARG, fn,
                       "%s %lld times the old type's extent %lld overflows MPI_Aint", arg,
                       static_cast<long long>(value), static_cast<long long>(extent));
  }
  return MPI_SUCCESS;
}

// The new derived datatype for engine type t, with its constructor's arguments for
// MPI_Type_get_contents.
int make(const char* fn, dtype::TypeRef t, int combiner, std::vector<int> ints,
         std::vector<MPI_Aint> aints, std::vector<MPI_Datatype> types, MPI_Datatype* newtype) {
  if (t == nullptr) {
    return raise_error(nullptr, MPI_ERR_ARG, fn,
                       "the new datatype's size, extent or element count overflows 63 bits");
  }
  Datatype* d = mpi::new_datatype();
  d->combiner = combiner;
  d->ints = std::move(ints);
  d->aints = std::move(aints);
  for (MPI_Datatype x : types) mpi::retain_type(x);
  d->types = std::move(types);
  d->type = std::move(t);
  *newtype = &d->handle;
  return MPI_SUCCESS;
}

// The checks every constructor starts with: MPI active, a valid old type, somewhere to put the
// new one.
int start(const char* fn, MPI_Datatype oldtype, MPI_Datatype* newtype, dtype::TypeRef* old) {
  if (int err = require_active(fn)) return err;
  if (int err = check_pointer(fn, newtype, "newtype")) return err;
  return check_type_arg(fn, oldtype, "oldtype", old);
}

int hvector(const char* fn, int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
            MPI_Datatype* newtype) {
  dtype::TypeRef old;
  if (int err = start(fn, oldtype, newtype, &old)) return err;
  if (int err = check_count(fn, count)) return err;
  if (int err = check_nonnegative(fn, blocklength, "blocklength")) return err;
  return make(fn, dtype::hvector(count, blocklength, stride, old), MPI_COMBINER_HVECTOR,
              {count, blocklength}, {stride}, {oldtype}, newtype);
}

int hindexed(const char* fn, int count, const int* blocklengths, const MPI_Aint* displacements,
             MPI_Datatype oldtype, MPI_Datatype* newtype) {
  dtype::TypeRef old;
  if (int err = start(fn, oldtype, newtype, &old)) return err;
  if (int err = check_count(fn, count)) return err;
  std::vector<int64_t> lens;
  if (int err = check_blocklengths(fn, blocklengths, count, "array_of_blocklengths", &lens))
    return err;
  if (int err = check_array(fn, displacements, count, "array_of_displacements")) return err;
  std::vector<int64_t> displs(displacements, displacements + count);
  std::vector<int> ints{count};
  ints.insert(ints.end(), blocklengths, blocklengths + count);
  return make(fn, dtype::hindexed(lens, displs, old), MPI_COMBINER_HINDEXED, std::move(ints),
              std::vector<MPI_Aint>(displacements, displacements + count), {oldtype}, newtype);
}

int structure(const char* fn, int count, const int* blocklengths, const MPI_Aint* displacements,
              const MPI_Datatype* types, MPI_Datatype* newtype) {
  if (int err = require_active(fn)) return err;
  if (int err = check_pointer(fn, newtype, "newtype")) return err;
  if (int err = check_count(fn, count)) return err;
  std::vector<int64_t> lens;
  if (int err = check_blocklengths(fn, blocklengths, count, "array_of_blocklengths", &lens))
    return err;
  if (int err = check_array(fn, displacements, count, "array_of_displacements")) return err;
  if (int err = check_array(fn, types, count, "array_of_types")) return err;
  std::vector<dtype::TypeRef> members(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (const char* why = mpi::bad_datatype(types[i]))
      return raise_error(nullptr, MPI_ERR_TYPE, fn, "array_of_types[%d] is %s", i, why);
    members[static_cast<size_t>(i)] = mpi::engine_type_ref(types[i]);
  }
  std::vector<int> ints{count};
  ints.insert(ints.end(), blocklengths, blocklengths + count);
  return make(
      fn,
      dtype::structure(lens, std::vector<int64_t>(displacements, displacements + count), members),
      MPI_COMBINER_STRUCT, std::move(ints),
      std::vector<MPI_Aint>(displacements, displacements + count),
      std::vector<MPI_Datatype>(types, types + count), newtype);
}

// ---------------------------------------------------------------------------------------------
// Queries.

struct OutArg {
  const char* name;
  const void* ptr;
};

// The checks every query shares (MPI active, a datatype, no NULL output), then answer(type).
template <class Answer>
int query(const char* fn, MPI_Datatype type, std::initializer_list<OutArg> outs, Answer answer) {
  if (int err = require_active(fn)) return err;
  dtype::TypeRef t;
  if (int err = check_type_arg(fn, type, "datatype", &t)) return err;
  for (const OutArg& out : outs) {
    if (int err = check_pointer(fn, out.ptr, out.name)) return err;
  }
  answer(*t);
  return MPI_SUCCESS;
}

// MPI_Type_size and MPI_Type_size_x differ only in the width of the answer: a size an int cannot
// hold is MPI_UNDEFINED.
template <class T>
int size_of(const char* fn, MPI_Datatype type, T* size) {
  return query(fn, type, {{"size", size}}, [&](const dtype::Type& t) {
    *size = t.size() <= std::numeric_limits<T>::max() ? static_cast<T>(t.size()) : MPI_UNDEFINED;
  });
}

template <class T>
int extent_of(const char* fn, MPI_Datatype type, T* lb, T* extent) {
  return query(fn, type, {{"lb", lb}, {"extent", extent}}, [&](const dtype::Type& t) {
    *lb = t.lb();
    *extent = t.extent();
  });
}

template <class T>
int true_extent_of(const char* fn, MPI_Datatype type, T* true_lb, T* true_extent) {
  return query(fn, type, {{"true_lb", true_lb}, {"true_extent", true_extent}},
               [&](const dtype::Type& t) {
                 *true_lb = t.true_lb();
                 *true_extent = t.true_extent();
               });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Constructors.

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_contiguous";
  dtype::TypeRef old;
  if (int err = start(kFn, oldtype, newtype, &old)) return err;
  if (int err = check_count(kFn, count)) return err;
  return make(kFn, dtype::contiguous(count, old), MPI_COMBINER_CONTIGUOUS, {count}, {}, {oldtype},
              newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_contiguous);

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_vector";
  dtype::TypeRef old;
  if (int err = start(kFn, oldtype, newtype, &old)) return err;
  if (int err = check_count(kFn, count)) return err;
  if (int err = check_nonnegative(kFn, blocklength, "blocklength")) return err;
  int64_t bytes;
  if (int err = scale(kFn, "stride", stride, old->extent(), &bytes)) return err;
  return make(kFn, dtype::hvector(count, blocklength, bytes, old), MPI_COMBINER_VECTOR,
              {count, blocklength, stride}, {}, {oldtype}, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_vector);

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  return hvector("MPI_Type_create_hvector", count, blocklength, stride, oldtype, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_hvector);

// MPI-1's name, removed in MPI-3; Open MPI 4.1 still exports it.
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  return hvector("MPI_Type_hvector", count, blocklength, stride, oldtype, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_hvector);

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_indexed";
  dtype::TypeRef old;
  if (int err = start(kFn, oldtype, newtype, &old)) return err;
  if (int err = check_count(kFn, count)) return err;
  std::vector<int64_t> lens;
  if (int err =
          check_blocklengths(kFn, array_of_blocklengths, count, "array_of_blocklengths", &lens)) {
    return err;
  }
  if (int err = check_array(kFn, array_of_displacements, count, "array_of_displacements"))
    return err;
  std::vector<int64_t> displs(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (int err = scale(kFn, "displacement", array_of_displacements[i], old->extent(),
                        &displs[static_cast<size_t>(i)])) {
      return err;
    }
  }
  std::vector<int> ints{count};
  ints.insert(ints.end(), array_of_blocklengths, array_of_blocklengths + count);
  ints.insert(ints.end(), array_of_displacements, array_of_displacements + count);
  return make(kFn, dtype::hindexed(lens, displs, old), MPI_COMBINER_INDEXED, std::move(ints), {},
              {oldtype}, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_indexed);

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  return hindexed("MPI_Type_create_hindexed", count, array_of_blocklengths, array_of_displacements,
                  oldtype, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_hindexed);

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  return hindexed("MPI_Type_hindexed", count, array_of_blocklengths, array_of_displacements,
                  oldtype, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_hindexed);

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_create_indexed_block";
  dtype::TypeRef old;
  if (int err = start(kFn, oldtype, newtype, &old)) return err;
  if (int err = check_count(kFn, count)) return err;
  if (int err = check_nonnegative(kFn, blocklength, "blocklength")) return err;
  if (int err = check_array(kFn, array_of_displacements, count, "array_of_displacements"))
    return err;
  std::vector<int64_t> displs(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    if (int err = scale(kFn, "displacement", array_of_displacements[i], old->extent(),
                        &displs[static_cast<size_t>(i)])) {
      return err;
    }
  }
  std::vector<int> ints{count, blocklength};
  ints.insert(ints.end(), array_of_displacements, array_of_displacements + count);
  return make(kFn, dtype::hindexed_block(blocklength, displs, old), MPI_COMBINER_INDEXED_BLOCK,
              std::move(ints), {}, {oldtype}, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_indexed_block);

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_create_hindexed_block";
  dtype::TypeRef old;
  if (int err = start(kFn, oldtype, newtype, &old)) return err;
  if (int err = check_count(kFn, count)) return err;
  if (int err = check_nonnegative(kFn, blocklength, "blocklength")) return err;
  if (int err = check_array(kFn, array_of_displacements, count, "array_of_displacements"))
    return err;
  std::vector<int64_t> displs(array_of_displacements, array_of_displacements + count);
  return make(kFn, dtype::hindexed_block(blocklength, displs, old), MPI_COMBINER_HINDEXED_BLOCK,
              {count, blocklength},
              std::vector<MPI_Aint>(array_of_displacements, array_of_displacements + count),
              {oldtype}, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_hindexed_block);

int PMPI_Type_create_struct(int count, const int array_of_block_lengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  return structure("MPI_Type_create_struct", count, array_of_block_lengths, array_of_displacements,
                   array_of_types, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_struct);

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  return structure("MPI_Type_struct", count, array_of_blocklengths, array_of_displacements,
                   array_of_types, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_struct);

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_create_resized";
  dtype::TypeRef old;
  if (int err = start(kFn, oldtype, newtype, &old)) return err;
  return make(kFn, dtype::resized(old, lb, extent), MPI_COMBINER_RESIZED, {}, {lb, extent},
              {oldtype}, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_resized);

int PMPI_Type_create_subarray(int ndims, const int size_array[], const int subsize_array[],
                              const int start_array[], int order, MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_create_subarray";
  dtype::TypeRef old;
  if (int err = start(kFn, oldtype, newtype, &old)) return err;
  if (ndims <= 0) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "ndims argument is %d: must be positive", ndims);
  }
  if (int err = check_pointer(kFn, size_array, "array_of_sizes")) return err;
  if (int err = check_pointer(kFn, subsize_array, "array_of_subsizes")) return err;
  if (int err = check_pointer(kFn, start_array, "array_of_starts")) return err;
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn,
                       "order argument is %d: not MPI_ORDER_C or MPI_ORDER_FORTRAN", order);
  }
  std::vector<int64_t> sizes, subsizes, starts;
  for (int i = 0; i < ndims; ++i) {
    int size = size_array[i], sub = subsize_array[i], from = start_array[i];
    if (size <= 0) {
      return raise_error(nullptr, MPI_ERR_ARG, kFn, "array_of_sizes[%d] is %d: must be positive", i,
                         size);
    }
    if (sub <= 0 || sub > size) {
      return raise_error(nullptr, MPI_ERR_ARG, kFn,
                         "array_of_subsizes[%d] is %d: must be in [1, array_of_sizes[%d] = %d]", i,
                         sub, i, size);
    }
    if (from < 0 || from > size - sub) {
      return raise_error(nullptr, MPI_ERR_ARG, kFn,
                         "array_of_starts[%d] is %d: the subarray's %d elements from there pass "
                         "the end of array_of_sizes[%d] = %d",
                         i, from, sub, i, size);
    }
    sizes.push_back(size);
    subsizes.push_back(sub);
    starts.push_back(from);
  }
  std::vector<int> ints{ndims};
  ints.insert(ints.end(), size_array, size_array + ndims);
  ints.insert(ints.end(), subsize_array, subsize_array + ndims);
  ints.insert(ints.end(), start_array, start_array + ndims);
  ints.push_back(order);
  return make(kFn, dtype::subarray(sizes, subsizes, starts, mpi::order_of(order), old),
              MPI_COMBINER_SUBARRAY, std::move(ints), {}, {oldtype}, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_subarray);

int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsize_array[],
                            const int distrib_array[], const int darg_array[],
                            const int psize_array[], int order, MPI_Datatype oldtype,
                            MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_create_darray";
  dtype::TypeRef old;
  if (int err = start(kFn, oldtype, newtype, &old)) return err;
  if (ndims <= 0) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "ndims argument is %d: must be positive", ndims);
  }
  if (int err = check_pointer(kFn, gsize_array, "array_of_gsizes")) return err;
  if (int err = check_pointer(kFn, distrib_array, "array_of_distribs")) return err;
  if (int err = check_pointer(kFn, darg_array, "array_of_dargs")) return err;
  if (int err = check_pointer(kFn, psize_array, "array_of_psizes")) return err;
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn,
                       "order argument is %d: not MPI_ORDER_C or MPI_ORDER_FORTRAN", order);
  }
  std::vector<int64_t> gsizes, dargs, psizes;
  std::vector<dtype::Distribution> distribs;
  for (int i = 0; i < ndims; ++i) {
    dtype::Distribution distrib;
    if (!mpi::distribution_of(distrib_array[i], &distrib)) {
      return raise_error(nullptr, MPI_ERR_ARG, kFn,
                         "array_of_distribs[%d] is %d: not MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE",
                         i, distrib_array[i]);
    }
    distribs.push_back(distrib);
    gsizes.push_back(gsize_array[i]);
    dargs.push_back(darg_array[i] == MPI_DISTRIBUTE_DFLT_DARG ? dtype::kDefaultDarg
                                                              : darg_array[i]);
    psizes.push_back(psize_array[i]);
  }
  std::string why = dtype::darray_error(size, rank, gsizes, distribs, dargs, psizes);
  if (!why.empty()) return raise_error(nullptr, MPI_ERR_ARG, kFn, "%s", why.c_str());
  std::vector<int> ints{size, rank, ndims};
  ints.insert(ints.end(), gsize_array, gsize_array + ndims);
  ints.insert(ints.end(), distrib_array, distrib_array + ndims);
  ints.insert(ints.end(), darg_array, darg_array + ndims);
  ints.insert(ints.end(), psize_array, psize_array + ndims);
  ints.push_back(order);
  return make(kFn, dtype::darray(rank, gsizes, distribs, dargs, psizes, mpi::order_of(order), old),
              MPI_COMBINER_DARRAY, std::move(ints), {}, {oldtype}, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_darray);

// The duplicate shares the layout, and has the original's committed state and, through their
// keyvals' copy callbacks, its attributes.
int PMPI_Type_dup(MPI_Datatype type, MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_dup";
  dtype::TypeRef old;
  if (int err = require_active(kFn)) return err;
  if (int err = check_pointer(kFn, newtype, "newtype")) return err;
  if (int err = check_type_arg(kFn, type, "datatype", &old)) return err;
  MPI_Datatype dup = MPI_DATATYPE_NULL;
  if (int err = make(kFn, old, MPI_COMBINER_DUP, {}, {}, {type}, &dup)) return err;
  Datatype* original = mpi::derived_type(type);
  dup->impl->committed = original == nullptr || original->committed;
  // A failed copy has already deleted what it copied.
  int err = mpi::attr_copy_all(mpi::AttrKind::kType, type, dup);
  if (err != MPI_SUCCESS) {
    mpi::release_type(dup);
    return raise_error(nullptr, err, kFn, "an attribute's copy callback returned %d", err);
  }
  *newtype = dup;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_dup);

int PMPI_Type_commit(MPI_Datatype* type) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_commit";
  if (int err = require_active(kFn)) return err;
  if (int err = check_pointer(kFn, type, "datatype")) return err;
  dtype::TypeRef t;
  if (int err = check_type_arg(kFn, *type, "datatype", &t)) return err;
  // Layouts are complete from construction on: committing only allows communication.
  if (Datatype* d = mpi::derived_type(*type)) d->committed = true;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_commit);

int PMPI_Type_free(MPI_Datatype* type) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_free";
  if (int err = require_active(kFn)) return err;
  if (int err = check_pointer(kFn, type, "datatype")) return err;
  dtype::TypeRef t;
  if (int err = check_type_arg(kFn, *type, "datatype", &t)) return err;
  if (mpi::derived_type(*type) == nullptr || mpi::derived_type(*type)->predefined) {
    return raise_error(
        nullptr, MPI_ERR_TYPE, kFn,
        "datatype argument is a predefined datatype, which cannot be freed%s",
        mpi::derived_type(*type) != nullptr ? " (an MPI_Type_create_f90_* type)" : "");
  }
  int err = mpi::attr_delete_all(mpi::AttrKind::kType, *type);
  if (err != MPI_SUCCESS) {
    return raise_error(nullptr, err, kFn,
                       "an attribute's delete callback returned %d: the datatype is not freed",
                       err);
  }
  // Types built on it and operations in flight keep it until they are done.
  mpi::release_type(*type);
  *type = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_free);

// ---------------------------------------------------------------------------------------------
// Queries.

int PMPI_Type_get_envelope(MPI_Datatype type, int* num_integers, int* num_addresses,
                           int* num_datatypes, int* combiner) {
  torusmpi::progress::Lock lock;
  return query("MPI_Type_get_envelope", type,
               {{"num_integers", num_integers},
                {"num_addresses", num_addresses},
                {"num_datatypes", num_datatypes},
                {"combiner", combiner}},
               [&](const dtype::Type&) {
                 const Datatype* d = mpi::derived_type(type);
                 *num_integers = d != nullptr ? static_cast<int>(d->ints.size()) : 0;
                 *num_addresses = d != nullptr ? static_cast<int>(d->aints.size()) : 0;
                 *num_datatypes = d != nullptr ? static_cast<int>(d->types.size()) : 0;
                 *combiner = d != nullptr ? d->combiner : MPI_COMBINER_NAMED;
               });
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_envelope);

// Derived datatypes among the answers are the constructor's own, each with a new reference that
// the caller frees with MPI_Type_free.
int PMPI_Type_get_contents(MPI_Datatype mtype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_get_contents";
  if (int err = require_active(kFn)) return err;
  dtype::TypeRef t;
  if (int err = check_type_arg(kFn, mtype, "datatype", &t)) return err;
  const Datatype* d = mpi::derived_type(mtype);
  if (d == nullptr) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn,
                       "datatype argument is predefined (MPI_COMBINER_NAMED): it has no contents");
  }
  const struct {
    const char* max_name;
    int max;
    size_t need;
    const char* array_name;
    const void* array;
  } outs[] = {
      {"max_integers", max_integers, d->ints.size(), "array_of_integers", array_of_integers},
      {"max_addresses", max_addresses, d->aints.size(), "array_of_addresses", array_of_addresses},
      {"max_datatypes", max_datatypes, d->types.size(), "array_of_datatypes", array_of_datatypes},
  };
  for (const auto& o : outs) {
    if (o.max < static_cast<int64_t>(o.need)) {
      return raise_error(nullptr, MPI_ERR_ARG, kFn,
                         "%s argument is %d: the datatype has %zu (see MPI_Type_get_envelope)",
                         o.max_name, o.max, o.need);
    }
    if (o.need > 0) {
      if (int err = check_pointer(kFn, o.array, o.array_name)) return err;
    }
  }
  std::copy(d->ints.begin(), d->ints.end(), array_of_integers);
  std::copy(d->aints.begin(), d->aints.end(), array_of_addresses);
  for (size_t i = 0; i < d->types.size(); ++i) {
    mpi::retain_type(d->types[i]);
    array_of_datatypes[i] = d->types[i];
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_contents);

int PMPI_Type_size(MPI_Datatype type, int* size) {
  torusmpi::progress::Lock lock;
  return size_of("MPI_Type_size", type, size);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_size);

int PMPI_Type_size_x(MPI_Datatype type, MPI_Count* size) {
  torusmpi::progress::Lock lock;
  return size_of("MPI_Type_size_x", type, size);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_size_x);

int PMPI_Type_get_extent(MPI_Datatype type, MPI_Aint* lb, MPI_Aint* extent) {
  torusmpi::progress::Lock lock;
  return extent_of("MPI_Type_get_extent", type, lb, extent);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_extent);

int PMPI_Type_get_extent_x(MPI_Datatype type, MPI_Count* lb, MPI_Count* extent) {
  torusmpi::progress::Lock lock;
  return extent_of("MPI_Type_get_extent_x", type, lb, extent);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_extent_x);

int PMPI_Type_get_true_extent(MPI_Datatype type, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  torusmpi::progress::Lock lock;
  return true_extent_of("MPI_Type_get_true_extent", type, true_lb, true_extent);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_true_extent);

int PMPI_Type_get_true_extent_x(MPI_Datatype type, MPI_Count* true_lb, MPI_Count* true_extent) {
  torusmpi::progress::Lock lock;
  return true_extent_of("MPI_Type_get_true_extent_x", type, true_lb, true_extent);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_true_extent_x);

// MPI-1's bound queries, removed in MPI-3; Open MPI 4.1 still exports them.
int PMPI_Type_extent(MPI_Datatype type, MPI_Aint* extent) {
  torusmpi::progress::Lock lock;
  return query("MPI_Type_extent", type, {{"extent", extent}},
               [&](const dtype::Type& t) { *extent = t.extent(); });
}
TORUSMPI_WEAK_ALIAS(MPI_Type_extent);

int PMPI_Type_lb(MPI_Datatype type, MPI_Aint* lb) {
  torusmpi::progress::Lock lock;
  return query("MPI_Type_lb", type, {{"lb", lb}}, [&](const dtype::Type& t) { *lb = t.lb(); });
}
TORUSMPI_WEAK_ALIAS(MPI_Type_lb);

int PMPI_Type_ub(MPI_Datatype mtype, MPI_Aint* ub) {
  torusmpi::progress::Lock lock;
  return query("MPI_Type_ub", mtype, {{"ub", ub}}, [&](const dtype::Type& t) { *ub = t.ub(); });
}
TORUSMPI_WEAK_ALIAS(MPI_Type_ub);

int PMPI_Address(void* location, MPI_Aint* address) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Address";
  if (int err = check_pointer(kFn, address, "address")) return err;
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Address);

int PMPI_Type_get_name(MPI_Datatype type, char* type_name, int* resultlen) {
  torusmpi::progress::Lock lock;
  return query("MPI_Type_get_name", type, {{"type_name", type_name}, {"resultlen", resultlen}},
               [&](const dtype::Type&) {
                 const Datatype* d = mpi::derived_type(type);
                 const std::string& name =
                     d != nullptr ? d->name : mpi::builtins().names[type->builtin];
                 *resultlen = mpi::copy_out(name, type_name, MPI_MAX_OBJECT_NAME);
               });
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_name);

// Predefined datatypes may be renamed too (MPI 3.1, 6.8).
int PMPI_Type_set_name(MPI_Datatype type, const char* type_name) {
  torusmpi::progress::Lock lock;
  return query("MPI_Type_set_name", type, {{"type_name", type_name}}, [&](const dtype::Type&) {
    Datatype* d = mpi::derived_type(type);
    std::string& name = d != nullptr ? d->name : mpi::builtins().names[type->builtin];
    name.assign(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  });
}
TORUSMPI_WEAK_ALIAS(MPI_Type_set_name);

namespace torusmpi::mpi {

// The Fortran type of a class and size, as Open MPI 4.1 answers (MPI_INTEGER for 4 bytes,
// MPI_REAL8 rather than MPI_DOUBLE_PRECISION for 8).
MPI_Datatype fortran_type_of_size(int typeclass, int size) {
  struct Match {
    int typeclass, size;
    MPI_Datatype type;
  };
  const Match kMatches[] = {
      {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},   {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
      {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER},    {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
      {MPI_TYPECLASS_REAL, 4, MPI_REAL},          {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
      {MPI_TYPECLASS_REAL, 16, MPI_REAL16},       {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX},
      {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
  };
  for (const Match& m : kMatches) {
    if (m.typeclass == typeclass && m.size == size) return m.type;
  }
  return MPI_DATATYPE_NULL;
}

}  // namespace torusmpi::mpi

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* type) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_match_size";
  if (int err = require_active(kFn)) return err;
  if (int err = check_pointer(kFn, type, "datatype")) return err;
  if (typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_REAL &&
      typeclass != MPI_TYPECLASS_COMPLEX) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn,
                       "typeclass argument is %d: not MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX",
                       typeclass);
  }
  MPI_Datatype match = mpi::fortran_type_of_size(typeclass, size);
  if (match == MPI_DATATYPE_NULL) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn,
                       "no predefined datatype of typeclass %d has %d bytes", typeclass, size);
  }
  *type = match;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_match_size);

// --- MPI_Type_create_f90_integer, _real and _complex: the datatype of the Fortran kind
// SELECTED_INT_KIND(r) or SELECTED_REAL_KIND(p, r) of gfortran (for a complex, its pair). MPI
// makes these predefined: the same (p, r) gives the same handle again, its combiner and contents
// say how it was asked for, and it cannot be freed. MPI_UNDEFINED, or a negative value, asks for
// nothing (Fortran takes it as 0).

namespace {

// The smallest kind with at least p decimal digits and a decimal exponent range of r, by bytes:
// gfortran's real(4), real(8), real(10) (x87, stored in 16 bytes like C's long double) and
// real(16) (binary128). 0 when there is none.
int real_kind_bytes(int p, int r) {
  struct Kind {
    int digits, range, bytes;
  };
  constexpr Kind kKinds[] = {{6, 37, 4}, {15, 307, 8}, {18, 4931, 10}, {33, 4931, 16}};
  for (const Kind& k : kKinds) {
    if (p <= k.digits && r <= k.range) return k.bytes;
  }
  return 0;
}

int f90_type(const char* fn, int combiner, std::vector<int> ints, MPI_Datatype base,
             MPI_Datatype* newtype) {
  static std::map<std::pair<int, std::vector<int>>, MPI_Datatype> cache;
  if (int err = check_pointer(fn, newtype, "newtype")) return err;
  auto key = std::make_pair(combiner, ints);
  auto it = cache.find(key);
  if (it != cache.end()) {
    *newtype = it->second;
    return MPI_SUCCESS;
  }
  MPI_Datatype t = MPI_DATATYPE_NULL;
  if (int err = make(fn, mpi::engine_type_ref(base), combiner, std::move(ints), {}, {}, &t))
    return err;
  t->impl->committed = true;
  t->impl->predefined = true;
  t->impl->name = std::string("COMBINER ") + mpi::builtin_type(base->builtin).name;
  cache.emplace(std::move(key), t);
  *newtype = t;
  return MPI_SUCCESS;
}

int undefined_as_zero(int x) { return x == MPI_UNDEFINED || x < 0 ? 0 : x; }

int f90_floating(const char* fn, bool complex, int p, int r, MPI_Datatype* newtype) {
  if (int err = require_active(fn)) return err;
  if (p == MPI_UNDEFINED && r == MPI_UNDEFINED) {
    return raise_error(nullptr, MPI_ERR_ARG, fn, "p and r arguments are both MPI_UNDEFINED");
  }
  MPI_Datatype base = MPI_DATATYPE_NULL;
  switch (real_kind_bytes(undefined_as_zero(p), undefined_as_zero(r))) {
    case 4:
      base = complex ? MPI_COMPLEX8 : MPI_REAL4;
      break;
    case 8:
      base = complex ? MPI_COMPLEX16 : MPI_REAL8;
      break;
    case 10:
      base = complex ? MPI_C_LONG_DOUBLE_COMPLEX : MPI_LONG_DOUBLE;
      break;
    case 16:
      base = complex ? MPI_COMPLEX32 : MPI_REAL16;
      break;
    default:
      return raise_error(nullptr, MPI_ERR_ARG, fn,
                         "no %s kind has precision %d and range %d (at most 33 digits, range "
                         "4931)",
                         complex ? "COMPLEX" : "REAL", p, r);
  }
  return f90_type(fn, complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, {p, r}, base,
                  newtype);
}

}  // namespace

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  return f90_floating("MPI_Type_create_f90_real", false, p, r, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_f90_real);

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  return f90_floating("MPI_Type_create_f90_complex", true, p, r, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_f90_complex);

int PMPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_create_f90_integer";
  if (int err = require_active(kFn)) return err;
  const int range = undefined_as_zero(r);
  MPI_Datatype base = range <= 2    ? MPI_INTEGER1
                      : range <= 4  ? MPI_INTEGER2
                      : range <= 9  ? MPI_INTEGER4
                      : range <= 18 ? MPI_INTEGER8
                                    : MPI_DATATYPE_NULL;
  if (base == MPI_DATATYPE_NULL) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn,
                       "no INTEGER kind has range %d (at most 18: INTEGER(8))", r);
  }
  return f90_type(kFn, MPI_COMBINER_F90_INTEGER, {r}, base, newtype);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_f90_integer);
