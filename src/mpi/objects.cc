// The predefined objects of Open MPI 4.1's ABI (the 102 objects its mpi.h names plus
// MPI_F_STATUS(ES)_IGNORE), with their exact sizes; see ompi_abi.h for why they hold so little.
#include "mpi/builtins.h"

using torusmpi::mpi::BuiltinOp;
using torusmpi::mpi::BuiltinType;
using torusmpi::mpi::ErrhandlerKind;

#define TORUSMPI_INDEX(e) static_cast<int32_t>(e)

// Communicators: world and self get their implementation at MPI_Init.
ompi_predefined_communicator_t ompi_mpi_comm_world = {{torusmpi::mpi::kMagicComm, nullptr}, {}};
ompi_predefined_communicator_t ompi_mpi_comm_self = {{torusmpi::mpi::kMagicComm, nullptr}, {}};
ompi_predefined_communicator_t ompi_mpi_comm_null = {{torusmpi::mpi::kMagicComm, nullptr}, {}};

// Datatypes, one per row of datatypes.def.
#define TORUSMPI_DATATYPE(obj, name, size, extent, true_extent, cls) \
  ompi_predefined_datatype_t ompi_mpi_##obj = {                      \
      {torusmpi::mpi::kMagicDatatype, TORUSMPI_INDEX(BuiltinType::k_##obj), 0, nullptr}, {}};
#include "mpi/datatypes.def"
#undef TORUSMPI_DATATYPE
ompi_predefined_datatype_t ompi_mpi_datatype_null = {
    {torusmpi::mpi::kMagicDatatype, -1, 0, nullptr}, {}};

// Ops, one per row of ops.def.
#define TORUSMPI_OP(obj, name)               \
  ompi_predefined_op_t ompi_mpi_op_##obj = { \
      {torusmpi::mpi::kMagicOp, TORUSMPI_INDEX(BuiltinOp::k_##obj), 1, nullptr}, {}};
#include "mpi/ops.def"
#undef TORUSMPI_OP
ompi_predefined_op_t ompi_mpi_op_null = {{torusmpi::mpi::kMagicOp, -1, 0, nullptr}, {}};

// Error handlers. The predefined ones are never freed, so their count stays meaningless.
ompi_predefined_errhandler_t ompi_mpi_errors_are_fatal = {
    {torusmpi::mpi::kMagicErrhandler, ErrhandlerKind::kFatal, 1, nullptr}, {}};
ompi_predefined_errhandler_t ompi_mpi_errors_return = {
    {torusmpi::mpi::kMagicErrhandler, ErrhandlerKind::kReturn, 1, nullptr}, {}};
ompi_predefined_errhandler_t ompi_mpi_errhandler_null = {
    {torusmpi::mpi::kMagicErrhandler, ErrhandlerKind::kNull, 1, nullptr}, {}};

ompi_predefined_group_t ompi_mpi_group_null = {{torusmpi::mpi::kMagicGroup, nullptr}, {}};
ompi_predefined_group_t ompi_mpi_group_empty = {{torusmpi::mpi::kMagicGroup, nullptr}, {}};
ompi_predefined_info_t ompi_mpi_info_null = {{torusmpi::mpi::kMagicInfo, nullptr}, {}};
ompi_predefined_info_t ompi_mpi_info_env = {{torusmpi::mpi::kMagicInfo, nullptr}, {}};
ompi_predefined_request_t ompi_request_null = {{torusmpi::mpi::kMagicRequest, nullptr}, {}};
ompi_predefined_message_t ompi_message_null = {{torusmpi::mpi::kMagicMessage, nullptr}, {}};
ompi_predefined_message_t ompi_message_no_proc = {{torusmpi::mpi::kMagicMessage, nullptr}, {}};
ompi_predefined_win_t ompi_mpi_win_null = {{torusmpi::mpi::kMagicWin, nullptr}, {}};
ompi_predefined_file_t ompi_mpi_file_null = {{torusmpi::mpi::kMagicFile, nullptr}, {}};

// Fortran status sentinels, for C code that converts statuses; Fortran itself is not served.
MPI_Fint* MPI_F_STATUS_IGNORE = nullptr;
MPI_Fint* MPI_F_STATUSES_IGNORE = nullptr;

namespace torusmpi::mpi {
namespace {

constexpr BuiltinTypeInfo kTypes[] = {
#define TORUSMPI_DATATYPE(obj, name, size, extent, true_extent, cls) \
  {name, size, extent, true_extent, TypeClass::k##cls},
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
#define TORUSMPI_DATATYPE(obj, name, size, extent, true_extent, cls) &ompi_mpi_##obj,
#include "mpi/datatypes.def"
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
