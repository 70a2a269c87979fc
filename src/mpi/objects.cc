// The predefined objects of Open MPI 4.1's ABI (the 102 objects its mpi.h names, MPI_F_STATUS(ES)_
// IGNORE, and MPI::ERRORS_THROW_EXCEPTIONS's object, which libmpi_cxx imports), with their exact
// sizes; see ompi_abi.h for why they hold so little. And torusmpi's own predefined datatypes
// (torusmpi.h's MPIX_BFLOAT16 and MPIX_C_FLOAT16), objects of the same kind and size.
//
// Each is initialized by the compiler (constexpr), never by code: an executable that copies an
// object into itself (R_X86_64_COPY) takes the library's bytes when it is loaded, before any
// initializer of the library could run. Each carries its Fortran number, Open MPI's (torusmpi's
// own: datatypes.def's).
#include "mpi/builtins.h"

// torusmpi.h declares the objects of torusmpi's own predefined datatypes (datatypes.def's extra
// rows); the library is built with hidden visibility and exports them (exports.map: torusmpi_*).
#pragma GCC visibility push(default)
#include "include/torusmpi.h"
#pragma GCC visibility pop

using torusmpi::mpi::BuiltinOp;
using torusmpi::mpi::BuiltinType;
using torusmpi::mpi::ErrhandlerKind;
namespace ompi = torusmpi::mpi::ompi;

namespace {

constexpr ompi_predefined_communicator_t predefined_comm(int32_t fortran) {
  ompi_predefined_communicator_t o{};
  o.obj.magic = torusmpi::mpi::kMagicComm;
  o.obj.impl = nullptr;  // world and self: their Comm, at MPI_Init
  o.obj.c_flags = ompi::kCommIntrinsic;
  o.obj.c_f_to_c_index = fortran;
  return o;
}

constexpr ompi_predefined_datatype_t predefined_datatype(int32_t builtin, int32_t fortran) {
  ompi_predefined_datatype_t o{};
  o.obj.magic = torusmpi::mpi::kMagicDatatype;
  o.obj.builtin = builtin;
  o.obj.reserved = 0;
  o.obj.impl = nullptr;
  o.obj.d_f_to_c_index = fortran;
  return o;
}

constexpr ompi_predefined_op_t predefined_op(int32_t builtin, int32_t fortran) {
  ompi_predefined_op_t o{};
  o.obj.magic = torusmpi::mpi::kMagicOp;
  o.obj.builtin = builtin;
  o.obj.commute = builtin >= 0;
  o.obj.fn = nullptr;
  o.obj.cxx_fn = nullptr;
  o.obj.o_f_to_c_index = fortran;
  return o;
}

constexpr ompi_predefined_errhandler_t predefined_errhandler(ErrhandlerKind kind, int32_t fortran) {
  ompi_predefined_errhandler_t o{};
  o.obj.magic = torusmpi::mpi::kMagicErrhandler;
  o.obj.kind = kind;
  o.obj.refcount = 1;  // never freed, so the count means nothing
  o.obj.eh_f_to_c_index = fortran;
  return o;
}

// group, info, request and message: the first 16 bytes and the Fortran number.
template <typename Predefined, typename Base>
constexpr Predefined predefined_small(uint64_t magic, int32_t Base::*index, int32_t fortran) {
  Predefined o{};
  o.obj.magic = magic;
  o.obj.impl = nullptr;
  o.obj.*index = fortran;
  return o;
}

}  // namespace

// Fortran numbers: Open MPI 4.1.4's (MPI_<Class>_c2f on Open MPI; tests/integration/bindings.sh
// compares every one with a live Open MPI run).

// Communicators: world and self get their implementation at MPI_Init.
ompi_predefined_communicator_t ompi_mpi_comm_world = predefined_comm(0);
ompi_predefined_communicator_t ompi_mpi_comm_self = predefined_comm(1);
ompi_predefined_communicator_t ompi_mpi_comm_null = predefined_comm(2);

// Datatypes, one per row of datatypes.def: Open MPI's as ompi_mpi_<object>, torusmpi's own as
// torusmpi_mpix_<object>.
#define TORUSMPI_DATATYPE(obj, name, size, extent, true_extent, cls, fortran) \
  ompi_predefined_datatype_t ompi_mpi_##obj =                                 \
      predefined_datatype(static_cast<int32_t>(BuiltinType::k_##obj), fortran);
#define TORUSMPI_EXTRA_DATATYPE(obj, name, size, extent, true_extent, cls, fortran) \
  ompi_predefined_datatype_t torusmpi_mpix_##obj =                                  \
      predefined_datatype(static_cast<int32_t>(BuiltinType::k_##obj), fortran);
#include "mpi/datatypes.def"
#undef TORUSMPI_EXTRA_DATATYPE
#undef TORUSMPI_DATATYPE
ompi_predefined_datatype_t ompi_mpi_datatype_null = predefined_datatype(-1, 0);

// Ops, one per row of ops.def, numbered from 1 in that order.
#define TORUSMPI_OP(obj, name)                            \
  ompi_predefined_op_t ompi_mpi_op_##obj = predefined_op( \
      static_cast<int32_t>(BuiltinOp::k_##obj), static_cast<int32_t>(BuiltinOp::k_##obj) + 1);
#include "mpi/ops.def"
#undef TORUSMPI_OP
ompi_predefined_op_t ompi_mpi_op_null = predefined_op(-1, 0);

// Error handlers.
ompi_predefined_errhandler_t ompi_mpi_errhandler_null =
    predefined_errhandler(ErrhandlerKind::kNull, 0);
ompi_predefined_errhandler_t ompi_mpi_errors_are_fatal =
    predefined_errhandler(ErrhandlerKind::kFatal, 1);
ompi_predefined_errhandler_t ompi_mpi_errors_return =
    predefined_errhandler(ErrhandlerKind::kReturn, 2);

// MPI::ERRORS_THROW_EXCEPTIONS. Until libmpi_cxx's MPI::Init sets its functions to ones that
// throw (or, in Debian's build without C++ exceptions, print a line and set MPI::mpi_errno), it
// behaves as MPI_ERRORS_ARE_FATAL, as on Open MPI: its functions are the fatal handlers.
namespace {
constexpr ompi_predefined_errhandler_t throw_exceptions() {
  ompi_predefined_errhandler_t o = predefined_errhandler(ErrhandlerKind::kUser, 3);
  o.obj.eh_comm_fn = ompi_mpi_errors_are_fatal_comm_handler;
  o.obj.eh_file_fn = torusmpi::mpi::errors_are_fatal_file_handler;
  o.obj.eh_win_fn = torusmpi::mpi::errors_are_fatal_win_handler;
  return o;
}
}  // namespace
ompi_predefined_errhandler_t ompi_mpi_errors_throw_exceptions = throw_exceptions();

ompi_predefined_group_t ompi_mpi_group_null = predefined_small<ompi_predefined_group_t>(
    torusmpi::mpi::kMagicGroup, &ompi_group_t::grp_f_to_c_index, 0);
ompi_predefined_group_t ompi_mpi_group_empty = predefined_small<ompi_predefined_group_t>(
    torusmpi::mpi::kMagicGroup, &ompi_group_t::grp_f_to_c_index, 1);
ompi_predefined_info_t ompi_mpi_info_null = predefined_small<ompi_predefined_info_t>(
    torusmpi::mpi::kMagicInfo, &ompi_info_t::i_f_to_c_index, 0);
ompi_predefined_info_t ompi_mpi_info_env = predefined_small<ompi_predefined_info_t>(
    torusmpi::mpi::kMagicInfo, &ompi_info_t::i_f_to_c_index, 1);
ompi_predefined_request_t ompi_request_null = predefined_small<ompi_predefined_request_t>(
    torusmpi::mpi::kMagicRequest, &ompi_request_t::req_f_to_c_index, 0);
ompi_predefined_message_t ompi_message_null = predefined_small<ompi_predefined_message_t>(
    torusmpi::mpi::kMagicMessage, &ompi_message_t::m_f_to_c_index, 0);
ompi_predefined_message_t ompi_message_no_proc = predefined_small<ompi_predefined_message_t>(
    torusmpi::mpi::kMagicMessage, &ompi_message_t::m_f_to_c_index, 1);

namespace {

constexpr ompi_predefined_win_t predefined_win() {
  ompi_predefined_win_t o{};
  o.obj.magic = torusmpi::mpi::kMagicWin;
  o.obj.impl = nullptr;
  o.obj.w_f_to_c_index = 0;
  // MPI: windows start with MPI_ERRORS_ARE_FATAL.
  o.obj.error_handler = &ompi_mpi_errors_are_fatal.obj;
  return o;
}

constexpr ompi_predefined_file_t predefined_file() {
  ompi_predefined_file_t o{};
  o.obj.magic = torusmpi::mpi::kMagicFile;
  o.obj.impl = nullptr;
  o.obj.f_f_to_c_index = 0;
  // MPI: files start with MPI_ERRORS_RETURN; MPI_File_set_errhandler on MPI_FILE_NULL changes
  // the default of files to come (errors.cc keeps this field up to date).
  o.obj.error_handler = &ompi_mpi_errors_return.obj;
  return o;
}

}  // namespace

ompi_predefined_win_t ompi_mpi_win_null = predefined_win();
ompi_predefined_file_t ompi_mpi_file_null = predefined_file();

// Fortran status sentinels, for C code that converts statuses: no Fortran status can be at 0.
MPI_Fint* MPI_F_STATUS_IGNORE = nullptr;
MPI_Fint* MPI_F_STATUSES_IGNORE = nullptr;

namespace torusmpi::mpi {
namespace {

constexpr BuiltinTypeInfo kTypes[] = {
#define TORUSMPI_DATATYPE(obj, name, size, extent, true_extent, cls, fortran) \
  {name, size, extent, true_extent, TypeClass::k##cls, fortran},
#include "mpi/datatypes.def"
#undef TORUSMPI_DATATYPE
};

constexpr const char* kOpNames[] = {
#define TORUSMPI_OP(obj, name) name,
#include "mpi/ops.def"
#undef TORUSMPI_OP
};

}  // namespace

const BuiltinTypeInfo& builtin_type(int index) { return kTypes[index]; }

const char* builtin_op_name(int index) { return kOpNames[index]; }

MPI_Datatype builtin_datatype(int index) {
  static ompi_predefined_datatype_t* const kObjects[] = {
#define TORUSMPI_DATATYPE(obj, name, size, extent, true_extent, cls, fortran) &ompi_mpi_##obj,
#define TORUSMPI_EXTRA_DATATYPE(obj, name, size, extent, true_extent, cls, fortran) \
  &torusmpi_mpix_##obj,
#include "mpi/datatypes.def"
#undef TORUSMPI_EXTRA_DATATYPE
#undef TORUSMPI_DATATYPE
  };
  return reinterpret_cast<MPI_Datatype>(kObjects[index]);
}

const BuiltinTypeInfo* datatype_info(MPI_Datatype type) {
  if (type == nullptr || type->magic != kMagicDatatype) return nullptr;
  if (type->builtin < 0 || type->builtin >= static_cast<int32_t>(BuiltinType::kCount)) {
    return nullptr;
  }
  return &kTypes[type->builtin];
}

}  // namespace torusmpi::mpi
