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

#include <cstddef>
#include <cstdint>

// Open MPI exports these two removed datatypes but declares them only when built with MPI-1
// compatibility.
extern "C" {
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_lb;
OMPI_DECLSPEC extern struct ompi_predefined_datatype_t ompi_mpi_ub;
// MPI::ERRORS_THROW_EXCEPTIONS of Open MPI's C++ bindings (libmpi_cxx imports it), and the
// function of MPI_ERRORS_ARE_FATAL for communicators, which libmpi_mpifh calls when a call comes
// before MPI_Init or after MPI_Finalize (comm and error_code NULL, then the function's name).
OMPI_DECLSPEC extern struct ompi_predefined_errhandler_t ompi_mpi_errors_throw_exceptions;
OMPI_DECLSPEC void ompi_mpi_errors_are_fatal_comm_handler(struct ompi_communicator_t** comm,
                                                          int* error_code, ...);
// Where MPI is in its life (torusmpi::mpi::ompi::State), and whether calls check their arguments:
// libmpi_mpifh reads both before MPI_TYPE_MATCH_SIZE (fortran.cc).
OMPI_DECLSPEC extern int32_t ompi_mpi_state;
OMPI_DECLSPEC extern bool ompi_mpi_param_check;
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
  kMagicView = 0x746d2e7669657731ull,   // a communicator's group as Open MPI's bindings read it
};

// Sizes of Open MPI 4.1's predefined objects (st_size in its libmpi.so.40).
constexpr int kSizeComm = 512;
constexpr int kSizeDatatype = 512;
constexpr int kSizeOp = 2048;
constexpr int kSizeErrhandler = 1024;
constexpr int kSizeFile = 1536;
constexpr int kSizeWin = 512;
constexpr int kSizeSmall = 256;  // group, info, request, message

// How torusmpi runs an error handler. kUser runs the function the handler holds, in the language
// it was made in; MPI::ERRORS_THROW_EXCEPTIONS is predefined but of that kind too (the C++
// bindings set its functions).
enum class ErrhandlerKind : int32_t { kNull, kFatal, kReturn, kUser };

// ompi_op_t::builtin of an op made by MPI_Op_create.
constexpr int32_t kUserOp = -2;

// ompi_datatype_t::builtin of a derived datatype (made by a constructor or MPI_Type_dup).
constexpr int32_t kDerivedType = -2;

// A handle that has no Fortran number yet (Open MPI's value too: MPI_UNDEFINED).
constexpr int32_t kNoFortranIndex = MPI_UNDEFINED;

// Constants of Open MPI 4.1's internal headers that its binding libraries (libmpi_cxx,
// libmpi_mpifh) compile in: they pass them to the functions of errors.cc, attr.cc and fortran.cc,
// or test them in the objects' fields below. tests/abi/layout checks each against the installed
// headers.
namespace ompi {
// ompi_communicator_t::c_flags (communicator.h)
constexpr uint32_t kCommInter = 0x1;
constexpr uint32_t kCommIntrinsic = 0x4;
constexpr uint32_t kCommCart = 0x100;
constexpr uint32_t kCommGraph = 0x200;
constexpr uint32_t kCommDistGraph = 0x400;
// ompi_errhandler_type_t and ompi_errhandler_lang_t (errhandler.h)
enum ErrhandlerType : int32_t { kTypePredefined, kTypeComm, kTypeWin, kTypeFile };
enum ErrhandlerLang : int32_t { kLangC, kLangCxx, kLangFortran };
// ompi_op_t::o_flags (op.h): what MPI_OP_CREATE from Fortran and MPI::Op::Init set
constexpr uint32_t kOpFortranFunc = 0x2;
constexpr uint32_t kOpCxxFunc = 0x4;
// ompi_attribute_type_t and the keyval flags (attribute.h)
enum AttrType : int32_t { kCommAttr = 1, kTypeAttr, kWinAttr };
constexpr int kKeyvalF77 = 0x2;
constexpr int kKeyvalF77Int = 0x4;
// ompi_mpi_state (runtime/mpiruntime.h)
enum State : int32_t {
  kStateNotInitialized,
  kStateInitStarted,
  kStateInitCompleted,
  kStateFinalizeStarted,
  kStateFinalizePastCommSelfDestruct,
  kStateFinalizeCompleted,
};
// The datatype kinds and language of ompi_datatype_match_size (ompi_datatype.h)
constexpr uint16_t kDataInt = 0x1000;
constexpr uint16_t kDataFloat = 0x2000;
constexpr uint16_t kDataComplex = 0x3000;
constexpr uint16_t kDataFortran = 0xC000;
}  // namespace ompi

// MPI_ERRORS_ARE_FATAL as functions of windows and files (errors.cc), which MPI::ERRORS_THROW_
// EXCEPTIONS runs until libmpi_cxx gives it its own.
void errors_are_fatal_file_handler(MPI_File* file, int* code, ...);
void errors_are_fatal_win_handler(MPI_Win* win, int* code, ...);

}  // namespace torusmpi::mpi

// The handle objects. Open MPI's binding libraries read and write some fields of Open MPI's own
// objects inline (libmpi_mpifh: a communicator's size through c_local_group for MPI_ALLTOALLW,
// c_keyhash for the attribute calls, grp_f_to_c_index of a new group, req_f_to_c_index after a
// wait, o_flags of a Fortran op; both: error_handler and errhandler_type of MPI_COMM_WORLD and
// MPI_FILE_NULL; libmpi_cxx: eh_*_fn and eh_cxx_dispatch_fn of an error handler). Those fields sit
// at Open MPI 4.1's offsets (Debian 12's x86-64 build, read from its headers; tests/abi/layout
// compares every one with the installed headers). The first 16 bytes are Open MPI's object header
// (class pointer and reference count), which no binding reads: torusmpi keeps its magic word and
// implementation pointer there. The gaps between fields are Open MPI's other members, unused here.

struct ompi_group_t {
  uint64_t magic;
  void* impl;
  int32_t grp_proc_count = 0;                                 // @16: the number of members
  int32_t grp_my_rank = MPI_UNDEFINED;                        // @20
  int32_t grp_f_to_c_index = torusmpi::mpi::kNoFortranIndex;  // @24
};

struct ompi_communicator_t {
  uint64_t magic;
  torusmpi::mpi::Comm* impl;  // nullptr for MPI_COMM_NULL, and for world/self before MPI_Init
  char reserved0_[232 - 16] = {};
  uint32_t c_flags = 0;  // @232: ompi::kCommInter, kCommCart, ...
  char reserved1_[248 - 236] = {};
  ompi_group_t* c_local_group = nullptr;   // @248: a view with the communicator's size
  ompi_group_t* c_remote_group = nullptr;  // @256: the remote group's view (intercommunicators)
  char reserved2_[272 - 264] = {};
  // @272: passed back to ompi_attr_get_*: torusmpi keeps attributes by handle, so it is the
  // handle itself.
  void* c_keyhash = nullptr;
  char reserved3_[296 - 280] = {};
  int32_t c_f_to_c_index = torusmpi::mpi::kNoFortranIndex;  // @296
  char reserved4_[312 - 300] = {};
  ompi_errhandler_t* error_handler = nullptr;  // @312: the communicator's error handler
  int32_t errhandler_type = torusmpi::mpi::ompi::kTypeComm;  // @320
  char reserved5_[352 - 324] = {};
};

struct ompi_datatype_t {
  uint64_t magic;
  int32_t builtin;  // index in datatypes.def, -1 for MPI_DATATYPE_NULL, kDerivedType
  int32_t reserved;
  torusmpi::mpi::Datatype* impl;  // derived datatypes (datatype.h); nullptr for predefined ones
  char reserved0_[204 - 24] = {};
  int32_t d_f_to_c_index = torusmpi::mpi::kNoFortranIndex;  // @204
  void* d_keyhash = nullptr;                                // @208: as c_keyhash
};

struct ompi_op_t {
  uint64_t magic;
  int32_t builtin;  // index of a predefined op, -1 for MPI_OP_NULL, kUserOp for MPI_Op_create's
  int32_t commute;  // user ops: 1 when the function commutes
  MPI_User_function* fn;  // user ops; for a C++ op, libmpi_cxx's intercept
  void* cxx_fn;           // C++ ops: the MPI::User_function the intercept calls
  char reserved0_[84 - 32] = {};
  uint32_t o_flags = 0;                                     // @84: ompi::kOpFortranFunc, kOpCxxFunc
  int32_t o_f_to_c_index = torusmpi::mpi::kNoFortranIndex;  // @88
};

// The error handler functions by object type, each called as Open MPI calls it: C with
// (object*, int*, message, NULL), Fortran with (MPI_Fint*, MPI_Fint*), C++ through the dispatch
// function libmpi_cxx installs, with (object*, int*, message, the C++ function).
using ompi_file_errhandler_fn = void(MPI_File*, int*, ...);
using ompi_errhandler_fortran_fn = void(MPI_Fint*, MPI_Fint*, ...);
using ompi_errhandler_cxx_dispatch_fn = void(void*, int*, const char*, void*);

struct ompi_errhandler_t {
  uint64_t magic;
  torusmpi::mpi::ErrhandlerKind kind;
  int32_t refcount;  // user handlers: attached communicators + the user's handle
  char reserved0_[80 - 16] = {};
  int32_t eh_mpi_object_type = torusmpi::mpi::ompi::kTypePredefined;  // @80
  int32_t eh_lang = torusmpi::mpi::ompi::kLangC;                      // @84
  MPI_Comm_errhandler_function* eh_comm_fn = nullptr;                 // @88
  ompi_file_errhandler_fn* eh_file_fn = nullptr;                      // @96
  MPI_Win_errhandler_function* eh_win_fn = nullptr;                   // @104
  ompi_errhandler_fortran_fn* eh_fort_fn = nullptr;                   // @112
  ompi_errhandler_cxx_dispatch_fn* eh_cxx_dispatch_fn = nullptr;      // @120
  int32_t eh_f_to_c_index = torusmpi::mpi::kNoFortranIndex;           // @128
};

struct ompi_info_t {
  uint64_t magic;
  void* impl;
  char reserved0_[72 - 16] = {};
  int32_t i_f_to_c_index = torusmpi::mpi::kNoFortranIndex;  // @72
};

struct ompi_request_t {
  uint64_t magic;
  void* impl;
  // Not zeroed: requests are made on the path of every nonblocking call, and nothing reads these.
  char reserved0_[104 - 16];
  int32_t req_f_to_c_index = torusmpi::mpi::kNoFortranIndex;  // @104
};

struct ompi_message_t {
  uint64_t magic;
  void* impl;
  char reserved0_[56 - 16] = {};
  int32_t m_f_to_c_index = torusmpi::mpi::kNoFortranIndex;  // @56
};

struct ompi_win_t {
  uint64_t magic;
  void* impl;
  char reserved0_[240 - 16] = {};
  void* w_keyhash = nullptr;                                // @240
  int32_t w_f_to_c_index = torusmpi::mpi::kNoFortranIndex;  // @248
  ompi_errhandler_t* error_handler = nullptr;               // @256
  int32_t errhandler_type = torusmpi::mpi::ompi::kTypeWin;  // @264
};

struct ompi_file_t {
  uint64_t magic;
  void* impl;
  char reserved0_[120 - 16] = {};
  int32_t f_f_to_c_index = torusmpi::mpi::kNoFortranIndex;   // @120
  ompi_errhandler_t* error_handler = nullptr;                // @128
  int32_t errhandler_type = torusmpi::mpi::ompi::kTypeFile;  // @136
};

// Open MPI's intrusive list (opal/class/opal_list.h), which both bindings append to inline
// (ompi_registered_datareps, fortran.cc): object headers, the sentinel item, the length.
struct opal_list_item_t {
  void* obj_class;
  int32_t obj_reference_count;
  opal_list_item_t* opal_list_next;  // @16
  opal_list_item_t* opal_list_prev;  // @24
  int32_t item_free;
};
struct opal_list_t {
  void* obj_class;
  int32_t obj_reference_count;
  opal_list_item_t opal_list_sentinel;  // @16
  size_t opal_list_length;              // @56
};
static_assert(sizeof(opal_list_t) == 64, "opal_list_t keeps Open MPI's size");

// Each field a binding reads, at Open MPI's offset.
#define TORUSMPI_AT(type, field, offset) \
  static_assert(offsetof(type, field) == (offset), #type "::" #field " is at Open MPI's offset")
TORUSMPI_AT(ompi_group_t, grp_proc_count, 16);
TORUSMPI_AT(ompi_group_t, grp_my_rank, 20);
TORUSMPI_AT(ompi_group_t, grp_f_to_c_index, 24);
TORUSMPI_AT(ompi_communicator_t, c_flags, 232);
TORUSMPI_AT(ompi_communicator_t, c_local_group, 248);
TORUSMPI_AT(ompi_communicator_t, c_remote_group, 256);
TORUSMPI_AT(ompi_communicator_t, c_keyhash, 272);
TORUSMPI_AT(ompi_communicator_t, c_f_to_c_index, 296);
TORUSMPI_AT(ompi_communicator_t, error_handler, 312);
TORUSMPI_AT(ompi_communicator_t, errhandler_type, 320);
TORUSMPI_AT(ompi_datatype_t, d_f_to_c_index, 204);
TORUSMPI_AT(ompi_datatype_t, d_keyhash, 208);
TORUSMPI_AT(ompi_op_t, o_flags, 84);
TORUSMPI_AT(ompi_op_t, o_f_to_c_index, 88);
TORUSMPI_AT(ompi_errhandler_t, eh_mpi_object_type, 80);
TORUSMPI_AT(ompi_errhandler_t, eh_lang, 84);
TORUSMPI_AT(ompi_errhandler_t, eh_comm_fn, 88);
TORUSMPI_AT(ompi_errhandler_t, eh_file_fn, 96);
TORUSMPI_AT(ompi_errhandler_t, eh_win_fn, 104);
TORUSMPI_AT(ompi_errhandler_t, eh_fort_fn, 112);
TORUSMPI_AT(ompi_errhandler_t, eh_cxx_dispatch_fn, 120);
TORUSMPI_AT(ompi_errhandler_t, eh_f_to_c_index, 128);
TORUSMPI_AT(ompi_info_t, i_f_to_c_index, 72);
TORUSMPI_AT(ompi_request_t, req_f_to_c_index, 104);
TORUSMPI_AT(ompi_message_t, m_f_to_c_index, 56);
TORUSMPI_AT(ompi_win_t, w_keyhash, 240);
TORUSMPI_AT(ompi_win_t, w_f_to_c_index, 248);
TORUSMPI_AT(ompi_win_t, error_handler, 256);
TORUSMPI_AT(ompi_win_t, errhandler_type, 264);
TORUSMPI_AT(ompi_file_t, f_f_to_c_index, 120);
TORUSMPI_AT(ompi_file_t, error_handler, 128);
TORUSMPI_AT(ompi_file_t, errhandler_type, 136);
TORUSMPI_AT(opal_list_item_t, opal_list_next, 16);
TORUSMPI_AT(opal_list_item_t, opal_list_prev, 24);
TORUSMPI_AT(opal_list_t, opal_list_sentinel, 16);
TORUSMPI_AT(opal_list_t, opal_list_length, 56);
#undef TORUSMPI_AT

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

// Exports a function that is not in mpi.h (Open MPI's internals its binding libraries call): C
// linkage and default visibility, as mpi.h's OMPI_DECLSPEC gives the MPI functions.
#define TORUSMPI_EXPORT extern "C" __attribute__((visibility("default")))
// The same for data, inside an extern "C" block (or on a declaration before the definition).
#define TORUSMPI_EXPORT_DATA __attribute__((visibility("default")))

// Defines the profiling twin: MPI_<name> becomes a weak alias of the strong PMPI_<name> defined in
// the same file, so tools can interpose MPI_<name> and still reach torusmpi through PMPI_<name>.
#define TORUSMPI_WEAK_ALIAS(name) \
  extern "C" __typeof__(P##name) name __attribute__((weak, alias("P" #name)))

#endif  // TORUSMPI_MPI_OMPI_ABI_H_
