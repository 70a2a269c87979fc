// Collective entry points served so far: MPI_Barrier, MPI_Bcast, MPI_Reduce, MPI_Allreduce (over
// coll/basic), and MPI_Reduce_local; and the map from MPI's predefined datatypes and ops to the
// reduction kernels, with the pairs MPI allows (MPI 3.1, section 5.9.2).
#include "coll/basic/basic.h"
#include "coll/ops/ops.h"
#include "mpi/errors.h"
#include "mpi/p2p.h"

namespace torusmpi::mpi {
namespace {

using coll::Elem;

// Which element layout a predefined datatype has: by class and size.
bool elem_of(const BuiltinTypeInfo& t, MPI_Datatype type, Elem* out) {
  const Elem kSigned[] = {Elem::kI8, Elem::kI16, Elem::kCount, Elem::kI32,
                          Elem::kCount, Elem::kCount, Elem::kCount, Elem::kI64};
  const Elem kUnsigned[] = {Elem::kU8, Elem::kU16, Elem::kCount, Elem::kU32,
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
      *out = t.size == 4 ? Elem::kF32 : t.size == 8 ? Elem::kF64 : t.size == 16 ? Elem::kLongDouble
                                                                                 : Elem::kCount;
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
bool op_allows(coll::Op op, TypeClass cls) {
  bool integer = cls == TypeClass::kSignedInt || cls == TypeClass::kUnsignedInt;
  switch (op) {
    case coll::Op::kMax:
    case coll::Op::kMin:
      return integer || cls == TypeClass::kFloat;
    case coll::Op::kSum:
    case coll::Op::kProd:
      return integer || cls == TypeClass::kFloat || cls == TypeClass::kComplex;
    case coll::Op::kLand:
    case coll::Op::kLor:
    case coll::Op::kLxor:
      return integer || cls == TypeClass::kLogical || cls == TypeClass::kBool;
    case coll::Op::kBand:
    case coll::Op::kBor:
    case coll::Op::kBxor:
      return integer || cls == TypeClass::kByte;
    case coll::Op::kMaxloc:
    case coll::Op::kMinloc:
      return cls == TypeClass::kPair;
    case coll::Op::kCount:
      break;
  }
  return false;
}

// The kernel operator of a predefined op (ops.def order is Open MPI's, not the kernels');
// kCount for MPI_REPLACE and MPI_NO_OP.
coll::Op coll_op(BuiltinOp op) {
  switch (op) {
    case BuiltinOp::k_max: return coll::Op::kMax;
    case BuiltinOp::k_min: return coll::Op::kMin;
    case BuiltinOp::k_sum: return coll::Op::kSum;
    case BuiltinOp::k_prod: return coll::Op::kProd;
    case BuiltinOp::k_land: return coll::Op::kLand;
    case BuiltinOp::k_band: return coll::Op::kBand;
    case BuiltinOp::k_lor: return coll::Op::kLor;
    case BuiltinOp::k_bor: return coll::Op::kBor;
    case BuiltinOp::k_lxor: return coll::Op::kLxor;
    case BuiltinOp::k_bxor: return coll::Op::kBxor;
    case BuiltinOp::k_maxloc: return coll::Op::kMaxloc;
    case BuiltinOp::k_minloc: return coll::Op::kMinloc;
    default: return coll::Op::kCount;
  }
}

// The kernel for (op, type), or raises MPI_ERR_OP / MPI_ERR_TYPE. MPI_REPLACE and MPI_NO_OP are
// for one-sided accumulates only.
int resolve_reduction(const char* fn, MPI_Comm comm, MPI_Op op, MPI_Datatype type,
                      coll::ReduceFn* fn_out) {
  if (op == nullptr || op->magic != kMagicOp || op->builtin < 0) {
    return raise_error(comm, MPI_ERR_OP, fn, "op argument is %s",
                       op == MPI_OP_NULL ? "MPI_OP_NULL"
                                         : "not a predefined op (user ops are not implemented yet)");
  }
  coll::Op o = coll_op(static_cast<BuiltinOp>(op->builtin));
  if (o == coll::Op::kCount) {
    return raise_error(comm, MPI_ERR_OP, fn, "%s is only for one-sided accumulate operations",
                       builtin_op_name(op->builtin));
  }
  const BuiltinTypeInfo* info = datatype_info(type);
  Elem elem;
  if (info == nullptr || !elem_of(*info, type, &elem) || !op_allows(o, info->cls) ||
      (*fn_out = coll::reduce_fn(o, elem)) == nullptr) {
    return raise_error(comm, MPI_ERR_OP, fn, "%s is not defined on datatype %s",
                       builtin_op_name(op->builtin), info != nullptr ? info->name : "(invalid)");
  }
  return MPI_SUCCESS;
}

int coll_error(const char* fn, MPI_Comm comm, Status s) {
  if (s == Status::kOk) return MPI_SUCCESS;
  return raise_error(comm, error_class_of(s), fn, "failed: %s", status_string(s));
}

// The checks of a reduction: comm, count, datatype, op, buffers (MPI_IN_PLACE where allowed).
int check_reduction(const char* fn, const void* sendbuf, void* recvbuf, int count,
                    MPI_Datatype type, MPI_Op op, MPI_Comm comm, Comm** c, Buffer* b,
                    coll::ReduceFn* kernel) {
  if (int err = require_active(fn)) return err;
  if (int err = check_comm(fn, comm, c)) return err;
  if (int err = check_buffer(fn, comm, recvbuf, count, type, b)) return err;
  if (sendbuf == nullptr && count > 0)
    return raise_error(comm, MPI_ERR_BUFFER, fn, "sendbuf argument is NULL with count %d", count);
  return resolve_reduction(fn, comm, op, type, kernel);
}

}  // namespace
}  // namespace torusmpi::mpi

using torusmpi::mpi::Buffer;
using torusmpi::mpi::Comm;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
namespace mpi = torusmpi::mpi;
namespace basic = torusmpi::coll::basic;

int PMPI_Barrier(MPI_Comm comm) {
  constexpr const char* kFn = "MPI_Barrier";
  if (int err = require_active(kFn)) return err;
  Comm* c;
  if (int err = mpi::check_comm(kFn, comm, &c)) return err;
  return mpi::coll_error(kFn, comm, basic::barrier(*c));
}
TORUSMPI_WEAK_ALIAS(MPI_Barrier);

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  constexpr const char* kFn = "MPI_Bcast";
  if (int err = require_active(kFn)) return err;
  Comm* c;
  Buffer b;
  if (int err = mpi::check_comm(kFn, comm, &c)) return err;
  if (int err = mpi::check_buffer(kFn, comm, buffer, count, datatype, &b)) return err;
  if (int err = mpi::check_root(kFn, comm, *c, root)) return err;
  return mpi::coll_error(kFn, comm, basic::bcast(*c, b.buf, b.bytes, root));
}
TORUSMPI_WEAK_ALIAS(MPI_Bcast);

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm) {
  constexpr const char* kFn = "MPI_Reduce";
  if (int err = require_active(kFn)) return err;
  Comm* c;
  if (int err = mpi::check_comm(kFn, comm, &c)) return err;
  if (int err = mpi::check_root(kFn, comm, *c, root)) return err;
  // recvbuf matters at the root only; MPI_IN_PLACE only there.
  bool at_root = c->rank == root;
  if (!at_root && sendbuf == MPI_IN_PLACE) {
    return raise_error(comm, MPI_ERR_BUFFER, kFn, "sendbuf is MPI_IN_PLACE on rank %d, not the "
                       "root (%d)", c->rank, root);
  }
  const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  Buffer b;
  torusmpi::coll::ReduceFn kernel;
  if (int err = mpi::check_reduction(kFn, in, at_root ? recvbuf : const_cast<void*>(in), count,
                                     datatype, op, comm, &c, &b, &kernel))
    return err;
  return mpi::coll_error(kFn, comm,
                         basic::reduce(*c, in, recvbuf, count, b.type_extent, kernel, root));
}
TORUSMPI_WEAK_ALIAS(MPI_Reduce);

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm) {
  constexpr const char* kFn = "MPI_Allreduce";
  const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  Comm* c;
  Buffer b;
  torusmpi::coll::ReduceFn kernel;
  if (int err = mpi::check_reduction(kFn, in, recvbuf, count, datatype, op, comm, &c, &b, &kernel))
    return err;
  return mpi::coll_error(kFn, comm,
                         basic::allreduce(*c, in, recvbuf, count, b.type_extent, kernel));
}
TORUSMPI_WEAK_ALIAS(MPI_Allreduce);

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op) {
  constexpr const char* kFn = "MPI_Reduce_local";
  Comm* c;
  Buffer b;
  torusmpi::coll::ReduceFn kernel;
  if (int err = mpi::check_reduction(kFn, inbuf, inoutbuf, count, datatype, op, MPI_COMM_SELF, &c,
                                     &b, &kernel))
    return err;
  if (count > 0) kernel(inoutbuf, inbuf, static_cast<size_t>(count));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Reduce_local);
