// Open MPI 4.1's ABI, as the library that implements it sees it.
//
// Every source in src/mpi includes this instead of <mpi.h>. It includes the installed Open MPI
// mpi.h (a build-time input: handles are addresses of predefined objects, constants are Open MPI's)
// with the removed MPI-1 functions declared, since Open MPI's libmpi.so.40 still exports them, and
// completes the handle types that mpi.h leaves incomplete.
//
// The predefined objects (ompi_mpi_comm_world and the rest) are copied into executables built with
// gcc (R_X86_64_COPY) and every reference, ours included, binds to that copy. So their sizes are
// exactly Open MPI's (static_asserts below), they keep default visibility, and they hold only a
// magic word and a pointer or index written at compile time or at MPI_Init; torusmpi's state lives
// outside them.
#ifndef TORUSMPI_MPI_OMPI_ABI_H_
#define TORUSMPI_MPI_OMPI_ABI_H_

#define OMPI_SKIP_MPICXX 1
#define OMPI_OMIT_MPI1_COMPAT_DECLS 0
#define OMPI_REMOVED_USE_STATIC_ASSERT 0
#define __mpi_interface_removed__(func, newfunc)
#include <mpi.h>
// mpi-ext.h needs mpi.h first.
#include <mpi-ext.h>

#include <cstdint>

// Open MPI exports these two removed datatypes but declares them only when built with MPI-1
// compatibility.
extern "C" {
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_lb;
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_ub;
}

namespace torusmpi::mpi {

class Comm;
struct Datatype;

// A handle's first word says what it is, so a datatype passed as a communicator, or a freed or
// never-initialized handle, is reported instead of misread.
enum Magic : uint64_t {
  kMagicComm = 0x746d2e636f6d6d31ull,        // "tm.comm1"
  kMagicDatatype = 0x746d2e7479706531ull,    // "tm.type1"
  kMagicOp = 0x746d2e6f702e2e31ull,          // "tm.op..1"
  kMagicErrhandler = 0x746d2e6572726831ull,  // "tm.errh1"
  kMagicGroup = 0x746d2e67727031ull,
  kMagicInfo = 0x746d2e696e666f31ull,
  kMagicRequest = 0x746d2e7265713131ull,
  kMagicMessage = 0x746d2e6d73673131ull,
  kMagicWin = 0x746d2e77696e3131ull,
  kMagicFile = 0x746d2e66696c6531ull,
  kMagicFreed = 0x746d2e6672656564ull,  // written into a handle's object when it is freed
};

// Sizes of Open MPI 4.1's predefined objects (st_size in its libmpi.so.40).
constexpr int kSizeComm = 512;
constexpr int kSizeDatatype = 512;
constexpr int kSizeOp = 2048;
constexpr int kSizeErrhandler = 1024;
constexpr int kSizeFile = 1536;
constexpr int kSizeWin = 512;
constexpr int kSizeSmall = 256;  // group, info, request, message

enum class ErrhandlerKind : int32_t { kNull, kFatal, kReturn, kUserComm };

// ompi_op_t::builtin of an op made by MPI_Op_create.
constexpr int32_t kUserOp = -2;

// ompi_datatype_t::builtin of a derived datatype (made by a constructor or MPI_Type_dup).
constexpr int32_t kDerivedType = -2;

}  // namespace torusmpi::mpi

struct ompi_communicator_t {
  uint64_t magic;
  torusmpi::mpi::Comm* impl;  // nullptr for MPI_COMM_NULL, and for world/self before MPI_Init
};

struct ompi_datatype_t {
  uint64_t magic;
  int32_t builtin;  // index in datatypes.def, -1 for MPI_DATATYPE_NULL, kDerivedType
  int32_t reserved;
  torusmpi::mpi::Datatype* impl;  // derived datatypes (datatype.h); nullptr for predefined ones
};

struct ompi_op_t {
  uint64_t magic;
  int32_t builtin;  // index of a predefined op, -1 for MPI_OP_NULL, kUserOp for MPI_Op_create's
  int32_t commute;  // user ops: 1 when the function commutes
  MPI_User_function* fn;  // user ops
};

struct ompi_errhandler_t {
  uint64_t magic;
  torusmpi::mpi::ErrhandlerKind kind;
  int32_t refcount;  // user handlers: attached communicators + the user's handle
  MPI_Comm_errhandler_function* fn;
};

// Objects the skeleton only has as null or predefined handles; their implementations come later.
struct ompi_group_t {
  uint64_t magic;
  void* impl;
};
struct ompi_info_t {
  uint64_t magic;
  void* impl;
};
struct ompi_request_t {
  uint64_t magic;
  void* impl;
};
struct ompi_message_t {
  uint64_t magic;
  void* impl;
};
struct ompi_win_t {
  uint64_t magic;
  void* impl;
};
struct ompi_file_t {
  uint64_t magic;
  void* impl;
};

#define TORUSMPI_PREDEFINED(type, base, size) \
  struct type {                               \
    base obj;                                 \
    char pad[(size) - sizeof(base)];          \
  };                                          \
  static_assert(sizeof(type) == (size), #type " must keep Open MPI's size")

TORUSMPI_PREDEFINED(ompi_predefined_communicator_t, ompi_communicator_t, torusmpi::mpi::kSizeComm);
TORUSMPI_PREDEFINED(ompi_predefined_datatype_t, ompi_datatype_t, torusmpi::mpi::kSizeDatatype);
TORUSMPI_PREDEFINED(ompi_predefined_op_t, ompi_op_t, torusmpi::mpi::kSizeOp);
TORUSMPI_PREDEFINED(ompi_predefined_errhandler_t, ompi_errhandler_t,
                    torusmpi::mpi::kSizeErrhandler);
TORUSMPI_PREDEFINED(ompi_predefined_group_t, ompi_group_t, torusmpi::mpi::kSizeSmall);
TORUSMPI_PREDEFINED(ompi_predefined_info_t, ompi_info_t, torusmpi::mpi::kSizeSmall);
TORUSMPI_PREDEFINED(ompi_predefined_request_t, ompi_request_t, torusmpi::mpi::kSizeSmall);
TORUSMPI_PREDEFINED(ompi_predefined_message_t, ompi_message_t, torusmpi::mpi::kSizeSmall);
TORUSMPI_PREDEFINED(ompi_predefined_win_t, ompi_win_t, torusmpi::mpi::kSizeWin);
TORUSMPI_PREDEFINED(ompi_predefined_file_t, ompi_file_t, torusmpi::mpi::kSizeFile);

#undef TORUSMPI_PREDEFINED

static_assert(sizeof(MPI_Status) == 24, "Open MPI 4.1's MPI_Status is 24 bytes");

// Defines the profiling twin: MPI_<name> becomes a weak alias of the strong PMPI_<name> defined in
// the same file, so tools can interpose MPI_<name> and still reach torusmpi through PMPI_<name>.
#define TORUSMPI_WEAK_ALIAS(name) \
  extern "C" __typeof__(P##name) name __attribute__((weak, alias("P" #name)))

#endif  // TORUSMPI_MPI_OMPI_ABI_H_
