// The map from MPI's predefined datatypes and ops to the reduction kernels (coll/ops), with the
// pairs MPI allows (MPI 3.1, section 5.9.2), and MPI_Reduce_local.
#include "mpi/reduction.h"

#include <climits>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "core/progress.h"
#include "mpi/datatype.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/fortran.h"
#include "mpi/p2p.h"

namespace torusmpi::mpi {
namespace {

using coll::Elem;

// Which element layout a predefined datatype has: by class and size.
bool elem_of(const BuiltinTypeInfo& t, MPI_Datatype type, Elem* out) {
  const Elem kSigned[] = {Elem::kI8,    Elem::kI16,   Elem::kCount, Elem::kI32,
                          Elem::kCount, Elem::kCount, Elem::kCount, Elem::kI64};
  const Elem kUnsigned[] = {Elem::kU8,    Elem::kU16,   Elem::kCount, Elem::kU32,
                            Elem::kCount, Elem::kCount, Elem::kCount, Elem::kU64};
  *out = Elem::kCount;
  switch (t.cls) {
    case TypeClass::kSignedInt:
    case TypeClass::kLogical:  // Fortran LOGICAL: an integer, 0 false
      if (t.size >= 1 && t.size <= 8) *out = kSigned[t.size - 1];
      break;
    case TypeClass::kUnsignedInt:
    case TypeClass::kByte:
      if (t.size >= 1 && t.size <= 8) *out = kUnsigned[t.size - 1];
      break;
    case TypeClass::kFloat:
      *out = t.size == 4    ? Elem::kF32
             : t.size == 8  ? Elem::kF64
             : t.size == 16 ? Elem::kLongDouble
                            : Elem::kCount;
      // The 16-bit floats, torusmpi's own (MPI_REAL2 has size 0 in this Open MPI).
      if (type->builtin == static_cast<int32_t>(BuiltinType::k_bfloat16)) *out = Elem::kBfloat16;
      if (type->builtin == static_cast<int32_t>(BuiltinType::k_c_float16)) *out = Elem::kFloat16;
      break;
    case TypeClass::kComplex:
      *out = t.size == 8    ? Elem::kComplexF32
             : t.size == 16 ? Elem::kComplexF64
             : t.size == 32 ? Elem::kComplexLongDouble
                            : Elem::kCount;
      break;
    case TypeClass::kBool:
      *out = Elem::kBool;
      break;
    case TypeClass::kPair:
      if (type == MPI_FLOAT_INT) *out = Elem::kFloatInt;
      if (type == MPI_DOUBLE_INT) *out = Elem::kDoubleInt;
      if (type == MPI_LONG_INT) *out = Elem::kLongInt;
      if (type == MPI_2INT || type == MPI_2INTEGER) *out = Elem::kIntInt;
      if (type == MPI_SHORT_INT) *out = Elem::kShortInt;
      if (type == MPI_LONG_DOUBLE_INT) *out = Elem::kLongDoubleInt;
      if (type == MPI_2REAL) *out = Elem::kFloatFloat;
      if (type == MPI_2DOUBLE_PRECISION) *out = Elem::kDoubleDouble;
      break;
    case TypeClass::kPacked:
    case TypeClass::kMarker:
      break;
  }
  return *out != Elem::kCount;
}

// MPI's groups of operators and the datatype classes each allows.
bool op_allows(coll::ReduceOp op, TypeClass cls) {
  bool integer = cls == TypeClass::kSignedInt || cls == TypeClass::kUnsignedInt;
  switch (op) {
    case coll::ReduceOp::kMax:
    case coll::ReduceOp::kMin:
      return integer || cls == TypeClass::kFloat;
    case coll::ReduceOp::kSum:
    case coll::ReduceOp::kProd:
      return integer || cls == TypeClass::kFloat || cls == TypeClass::kComplex;
    case coll::ReduceOp::kLand:
    case coll::ReduceOp::kLor:
    case coll::ReduceOp::kLxor:
      return integer || cls == TypeClass::kLogical || cls == TypeClass::kBool;
    case coll::ReduceOp::kBand:
    case coll::ReduceOp::kBor:
    case coll::ReduceOp::kBxor:
      return integer || cls == TypeClass::kByte;
    case coll::ReduceOp::kMaxloc:
    case coll::ReduceOp::kMinloc:
      return cls == TypeClass::kPair;
    case coll::ReduceOp::kCount:
      break;
  }
  return false;
}

// The kernel operator of a predefined op (ops.def order is Open MPI's, not the kernels');
// kCount for MPI_REPLACE and MPI_NO_OP.
coll::ReduceOp coll_op(BuiltinOp op) {
  switch (op) {
    case BuiltinOp::k_max:
      return coll::ReduceOp::kMax;
    case BuiltinOp::k_min:
      return coll::ReduceOp::kMin;
    case BuiltinOp::k_sum:
      return coll::ReduceOp::kSum;
    case BuiltinOp::k_prod:
      return coll::ReduceOp::kProd;
    case BuiltinOp::k_land:
      return coll::ReduceOp::kLand;
    case BuiltinOp::k_band:
      return coll::ReduceOp::kBand;
    case BuiltinOp::k_lor:
      return coll::ReduceOp::kLor;
    case BuiltinOp::k_bor:
      return coll::ReduceOp::kBor;
    case BuiltinOp::k_lxor:
      return coll::ReduceOp::kLxor;
    case BuiltinOp::k_bxor:
      return coll::ReduceOp::kBxor;
    case BuiltinOp::k_maxloc:
      return coll::ReduceOp::kMaxloc;
    case BuiltinOp::k_minloc:
      return coll::ReduceOp::kMinloc;
    default:
      return coll::ReduceOp::kCount;
  }
}

}  // namespace

// Kernels already resolved, by [op][datatype]: a repeated reduction looks its kernel up here
// instead of mapping the pair again.
coll::ReduceFn g_kernels[static_cast<int>(BuiltinOp::kCount)]
                        [static_cast<int>(BuiltinType::kCount)];
// And the element each works on.
coll::Elem g_elems[static_cast<int>(BuiltinOp::kCount)][static_cast<int>(BuiltinType::kCount)];

// The languages an op's function may be written in (coll::Reduction::user_lang).
enum OpLang : uint8_t { kOpC, kOpFortran, kOpCxx };

// Calls the application's function of r on len elements, as its language wants it: C with
// MPI_User_function's arguments; Fortran with the count and the datatype's Fortran number by
// reference; C++ through libmpi_cxx's intercept (MPI_Op_create's function, as MPI::Op::Init made
// it), which also takes the C++ function (ompi_op_set_cxx_callback).
void run_user_fn(const coll::Reduction& r, void* in, void* inout, int len, MPI_Datatype type) {
  switch (r.user_lang) {
    case kOpFortran: {
      using FortranFn = void(void*, void*, MPI_Fint*, MPI_Fint*);
      MPI_Fint flen = len;
      MPI_Fint ftype = fortran_number(HandleKind::kDatatype, type);
      reinterpret_cast<FortranFn*>(r.user_fn)(in, inout, &flen, &ftype);
      return;
    }
    case kOpCxx: {
      using Intercept = void(void*, void*, int*, MPI_Datatype*, void*);
      reinterpret_cast<Intercept*>(r.user_fn)(in, inout, &len, &type, r.user_extra);
      return;
    }
    default:
      reinterpret_cast<MPI_User_function*>(r.user_fn)(in, inout, &len, &type);
  }
}

// An application's reduction: MPI's function takes an int count, so a longer vector goes in
// pieces (elements are independent).
void call_user_op(const coll::Reduction& r, void* inout, const void* in, size_t count) {
  auto type = static_cast<MPI_Datatype>(r.user_type);
  MPI_Aint lb = 0, extent = 1;
  PMPI_Type_get_extent(type, &lb, &extent);
  auto* out = static_cast<char*>(inout);
  auto* src = static_cast<char*>(const_cast<void*>(in));
  while (count > 0) {
    int len = count > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(count);
    run_user_fn(r, src, out, len, type);
    src += static_cast<size_t>(len) * extent;
    out += static_cast<size_t>(len) * extent;
    count -= static_cast<size_t>(len);
  }
}

// An application's reduction on packed elements of a derived datatype: both operands are
// unpacked into the datatype's layout (scratch of this thread, reused), the function runs there,
// and the result is packed back.
void call_user_op_packed(const coll::Reduction& r, void* inout, const void* in, size_t count) {
  thread_local std::vector<char> in_layout, out_layout;
  auto type = static_cast<MPI_Datatype>(r.user_type);
  const dtype::Type* t = engine_type(type);
  auto* packed_out = static_cast<char*>(inout);
  auto* packed_in = static_cast<const char*>(in);
  // At most this many elements at a time: the scratch stays small for long vectors.
  const size_t kPiece = 4096;
  while (count > 0) {
    int len = static_cast<int>(count < kPiece ? count : kPiece);
    // The bytes n elements touch: from the first's true lower bound to the last's true upper.
    size_t span = static_cast<size_t>((len - 1) * t->extent() + t->true_extent());
    if (in_layout.size() < span) {
      in_layout.resize(span);
      out_layout.resize(span);
    }
    char* in_origin = in_layout.data() - t->true_lb();
    char* out_origin = out_layout.data() - t->true_lb();
    t->unpack(packed_in, len, in_origin);
    t->unpack(packed_out, len, out_origin);
    run_user_fn(r, in_origin, out_origin, len, type);
    t->pack(out_origin, len, packed_out);
    const size_t bytes = static_cast<size_t>(len) * static_cast<size_t>(t->size());
    packed_in += bytes;
    packed_out += bytes;
    count -= static_cast<size_t>(len);
  }
}

// A predefined op on packed pair-type elements (MPI_DOUBLE_INT in a derived datatype): the packed
// stream holds each pair as value then int, with no padding, while the kernels take the C
// struct's layout, whose int sits at the value's size rounded up to an int's alignment. Each
// piece is spread into that layout (scratch on the stack), reduced, and packed back.
// r.user_extra is the pair type's kernel and r.user_type its BuiltinTypeInfo (no user function:
// collectives keep no datatype alive for this).
void call_packed_pairs(const coll::Reduction& r, void* inout, const void* in, size_t count) {
  const auto kernel = reinterpret_cast<coll::ReduceFn>(r.user_extra);
  const auto& b = *static_cast<const BuiltinTypeInfo*>(r.user_type);
  const size_t packed = static_cast<size_t>(b.size);
  const size_t padded = static_cast<size_t>(b.extent);
  const size_t value = packed - sizeof(int);
  const size_t index_at = (value + alignof(int) - 1) / alignof(int) * alignof(int);
  constexpr size_t kPiece = 128;
  alignas(16) unsigned char a[kPiece * 32], c[kPiece * 32];  // 32: MPI_LONG_DOUBLE_INT's extent
  auto* out = static_cast<unsigned char*>(inout);
  auto* src = static_cast<const unsigned char*>(in);
  while (count > 0) {
    const size_t n = count < kPiece ? count : kPiece;
    std::memset(a, 0, n * padded);
    std::memset(c, 0, n * padded);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(a + i * padded, out + i * packed, value);
      std::memcpy(a + i * padded + index_at, out + i * packed + value, sizeof(int));
      std::memcpy(c + i * padded, src + i * packed, value);
      std::memcpy(c + i * padded + index_at, src + i * packed + value, sizeof(int));
    }
    kernel(a, c, n);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(out + i * packed, a + i * padded, value);
      std::memcpy(out + i * packed + value, a + i * padded + index_at, sizeof(int));
    }
    out += n * packed;
    src += n * packed;
    count -= n;
  }
}

int resolve_packed_reduction(const char* fn, MPI_Comm comm, MPI_Op op, MPI_Datatype type,
                             const dtype::Type& t, coll::Reduction* out, bool* commutative,
                             size_t* elem, size_t* per) {
  if (op != nullptr && op->magic == kMagicOp && op->builtin == kUserOp) {
    if (int err = resolve_reduction(fn, comm, op, type, out, commutative)) return err;
    out->call = call_user_op_packed;
    *elem = static_cast<size_t>(t.size());
    *per = 1;
    return MPI_SUCCESS;
  }
  if (t.uniform_id() < 0) {
    if (op == nullptr || op->magic != kMagicOp || op->builtin < 0) {
      return resolve_reduction(fn, comm, op, type, out, commutative);  // names the bad op
    }
    return raise_error(comm, MPI_ERR_OP, fn,
                       "%s is not defined on this derived datatype: its basic elements are not "
                       "all one predefined type",
                       builtin_op_name(op->builtin));
  }
  const BuiltinTypeInfo& b = builtin_type(t.uniform_id());
  if (int err = resolve_reduction(fn, comm, op, builtin_datatype(t.uniform_id()), out, commutative))
    return err;
  if (b.size != b.extent) {
    // A pair type with padding (every other one is dense): its kernel needs the padded layout,
    // which the packed stream lacks. Pairs whose second member is not an int are all dense.
    out->user_extra = reinterpret_cast<void*>(out->kernel);
    out->user_type = const_cast<BuiltinTypeInfo*>(&b);
    out->kernel = nullptr;
    out->call = call_packed_pairs;
  }
  *elem = static_cast<size_t>(b.size);
  *per = static_cast<size_t>(t.uniform_count());
  return MPI_SUCCESS;
}

int resolve_reduction(const char* fn, MPI_Comm comm, MPI_Op op, MPI_Datatype type,
                      coll::Reduction* out, bool* commutative) {
  *commutative = true;  // every predefined op is
  *out = coll::Reduction{};
  if (op != nullptr && op->magic == kMagicOp && op->builtin >= 0 && type != nullptr &&
      type->magic == kMagicDatatype && type->builtin >= 0) {
    if ((out->kernel = g_kernels[op->builtin][type->builtin]) != nullptr) {
      out->op = coll_op(static_cast<BuiltinOp>(op->builtin));
      out->elem = g_elems[op->builtin][type->builtin];
      return MPI_SUCCESS;
    }
  }
  if (op != nullptr && op->magic == kMagicOp && op->builtin == kUserOp) {
    // Any datatype: the application's function knows what to do with it.
    out->call = call_user_op;
    out->user_fn = reinterpret_cast<void*>(op->fn);
    out->user_type = type;
    out->user_extra = op->cxx_fn;
    out->user_lang = (op->o_flags & ompi::kOpFortranFunc) != 0 ? kOpFortran
                     : (op->o_flags & ompi::kOpCxxFunc) != 0   ? kOpCxx
                                                               : kOpC;
    *commutative = op->commute != 0;
    return MPI_SUCCESS;
  }
  if (op == nullptr || op->magic != kMagicOp || op->builtin < 0) {
    return raise_error(comm, MPI_ERR_OP, fn, "op argument is %s",
                       op == MPI_OP_NULL ? "MPI_OP_NULL" : "not an op");
  }
  coll::ReduceOp o = coll_op(static_cast<BuiltinOp>(op->builtin));
  if (o == coll::ReduceOp::kCount) {
    return raise_error(comm, MPI_ERR_OP, fn, "%s is only for one-sided accumulate operations",
                       builtin_op_name(op->builtin));
  }
  const BuiltinTypeInfo* info = datatype_info(type);
  Elem elem;
  if (info == nullptr || !elem_of(*info, type, &elem) || !op_allows(o, info->cls) ||
      (out->kernel = coll::reduce_fn(o, elem)) == nullptr) {
    return raise_error(comm, MPI_ERR_OP, fn, "%s is not defined on datatype %s",
                       builtin_op_name(op->builtin), info != nullptr ? info->name : "(invalid)");
  }
  g_kernels[op->builtin][type->builtin] = out->kernel;
  g_elems[op->builtin][type->builtin] = elem;
  out->op = o;
  out->elem = elem;
  return MPI_SUCCESS;
}

namespace {
// The user ops persistent requests keep: how many requests, and whether MPI_Op_free came.
struct KeptOp {
  int requests = 0;
  bool freed = false;
};
std::unordered_map<MPI_Op, KeptOp> g_kept_ops;

void delete_op(MPI_Op op) {
  op->magic = kMagicFreed;  // a stale handle is reported, not misread
  delete op;
}
}  // namespace

bool is_user_op(MPI_Op op) {
  return op != nullptr && op->magic == kMagicOp && op->builtin == kUserOp;
}

void retain_op(MPI_Op op) {
  if (is_user_op(op)) ++g_kept_ops[op].requests;
}

void release_op(MPI_Op op) {
  auto it = g_kept_ops.find(op);
  if (it == g_kept_ops.end() || --it->second.requests > 0) return;
  const bool freed = it->second.freed;
  g_kept_ops.erase(it);
  if (freed) delete_op(op);
}

}  // namespace torusmpi::mpi

using torusmpi::mpi::Buffer;
using torusmpi::mpi::require_active;
namespace mpi = torusmpi::mpi;

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Reduce_local";
  if (int err = require_active(kFn)) return err;
  Buffer b;
  if (int err = mpi::check_message(kFn, MPI_COMM_SELF, inoutbuf, count, datatype, "", &b))
    return err;
  if (inbuf == nullptr && count > 0) {
    return mpi::raise_error(MPI_COMM_SELF, MPI_ERR_BUFFER, kFn,
                            "inbuf argument is NULL with count %d", count);
  }
  Buffer in_b;  // only checked: host memory or live device memory of this job
  if (int err = mpi::check_message(kFn, MPI_COMM_SELF, inbuf, count, datatype, "in", &in_b))
    return err;
  torusmpi::coll::Reduction r;
  bool commutative;
  const torusmpi::dtype::Type* t =
      mpi::derived_type(datatype) != nullptr ? mpi::engine_type(datatype) : nullptr;
  const bool user_op = op != nullptr && op->magic == mpi::kMagicOp && op->builtin == mpi::kUserOp;
  if (t == nullptr || user_op) {
    // A predefined datatype, or the application's function, which takes the datatype's layout.
    if (int err = mpi::resolve_reduction(kFn, MPI_COMM_SELF, op, datatype, &r, &commutative))
      return err;
    if (count > 0 &&
        (torusmpi::device::in_device_range(inoutbuf) || torusmpi::device::in_device_range(inbuf))) {
      // The device's kernels translate the two origins; a user function's layout follows them.
      MPI_Aint lb = 0, extent = 1;
      PMPI_Type_get_extent(datatype, &lb, &extent);
      mpi::reduce_device(r, inoutbuf, inbuf, static_cast<size_t>(count),
                         static_cast<size_t>(extent));
    } else if (count > 0) {
      r.apply(inoutbuf, inbuf, static_cast<size_t>(count));
    }
    return MPI_SUCCESS;
  }
  // A predefined op on a derived datatype: on the packed streams, then back into place.
  size_t elem = 0, per = 0;
  if (int err = mpi::resolve_packed_reduction(kFn, MPI_COMM_SELF, op, datatype, *t, &r,
                                              &commutative, &elem, &per))
    return err;
  if (count == 0) return MPI_SUCCESS;
  const size_t bytes = static_cast<size_t>(count) * static_cast<size_t>(t->size());
  std::vector<char> in(bytes), inout(bytes);
  mpi::pack_any(*t, inbuf, count, in.data());
  mpi::pack_any(*t, inoutbuf, count, inout.data());
  r.apply(inout.data(), in.data(), static_cast<size_t>(count) * per);
  mpi::unpack_any(*t, inout.data(), count, inoutbuf);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Reduce_local);

// User ops. MPI_Op_create's function combines invec into inoutvec (inoutvec = invec op inoutvec);
// a non-commutative one is applied in rank order by every reducing collective.
int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Op_create";
  if (int err = require_active(kFn)) return err;
  if (user_fn == nullptr)
    return mpi::raise_error(nullptr, MPI_ERR_ARG, kFn, "user_fn argument is NULL");
  if (op == nullptr) return mpi::raise_error(nullptr, MPI_ERR_ARG, kFn, "op argument is NULL");
  *op = new ompi_op_t{mpi::kMagicOp, mpi::kUserOp, commute != 0, user_fn, nullptr};
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Op_create);

int PMPI_Op_free(MPI_Op* op) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Op_free";
  if (int err = require_active(kFn)) return err;
  if (op == nullptr || *op == nullptr || (*op)->magic != mpi::kMagicOp || (*op)->builtin == -1)
    return mpi::raise_error(nullptr, MPI_ERR_OP, kFn, "op argument is not an op");
  if ((*op)->builtin != mpi::kUserOp) {
    return mpi::raise_error(nullptr, MPI_ERR_OP, kFn, "%s is predefined and cannot be freed",
                            mpi::builtin_op_name((*op)->builtin));
  }
  mpi::fortran_forget(mpi::HandleKind::kOp, *op);
  // A persistent collective that names it keeps it until its request goes (release_op).
  auto kept = mpi::g_kept_ops.find(*op);
  if (kept != mpi::g_kept_ops.end()) {
    kept->second.freed = true;
  } else {
    mpi::delete_op(*op);
  }
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Op_free);

int PMPI_Op_commutative(MPI_Op op, int* commute) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Op_commutative";
  if (int err = require_active(kFn)) return err;
  if (op == nullptr || op->magic != mpi::kMagicOp || op->builtin == -1)
    return mpi::raise_error(nullptr, MPI_ERR_OP, kFn, "op argument is not an op");
  if (commute == nullptr)
    return mpi::raise_error(nullptr, MPI_ERR_ARG, kFn, "commute argument is NULL");
  *commute = op->builtin == mpi::kUserOp ? op->commute : 1;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Op_commutative);

// Open MPI's C++ bindings make an MPI::Op with MPI_Op_create(their intercept) and then hand the
// user's C++ function over here; the intercept gets it at each call (run_user_fn).
TORUSMPI_EXPORT void ompi_op_set_cxx_callback(MPI_Op op, MPI_User_function* fn) {
  torusmpi::progress::Lock lock;
  if (op == nullptr || op->magic != mpi::kMagicOp || op->builtin != mpi::kUserOp) return;
  op->o_flags |= mpi::ompi::kOpCxxFunc;
  op->cxx_fn = reinterpret_cast<void*>(fn);
}
