// Handle conversions between C and Fortran (MPI_Comm_c2f, MPI_Comm_f2c, ... and the status ones).
//
// One table per kind of handle, as Open MPI keeps: slot i holds the handle whose Fortran number is
// i. The predefined handles sit at Open MPI's numbers (their objects carry them, objects.cc), and
// torusmpi's own datatypes at theirs (1000 and up); any other handle takes the lowest free slot
// above Open MPI's when first converted (groups when made) and frees it when its object goes, so
// numbers stay small and are reused, as on Open MPI. The number is also kept in the object, at
// the field Open MPI's bindings read (ompi_abi.h).
#include <mutex>
#include <vector>

#include "core/progress.h"
#include "mpi/builtins.h"
#include "mpi/fortran.h"

namespace torusmpi::mpi {
namespace {

// The object's magic word and where it keeps its number, for each kind.
struct KindInfo {
  uint64_t magic;
  int32_t* (*index)(void* handle);
};

template <typename T, int32_t T::*Field>
int32_t* field_of(void* handle) {
  return &(static_cast<T*>(handle)->*Field);
}

constexpr KindInfo kKinds[] = {
    {kMagicComm, field_of<ompi_communicator_t, &ompi_communicator_t::c_f_to_c_index>},
    {kMagicDatatype, field_of<ompi_datatype_t, &ompi_datatype_t::d_f_to_c_index>},
    {kMagicGroup, field_of<ompi_group_t, &ompi_group_t::grp_f_to_c_index>},
    {kMagicOp, field_of<ompi_op_t, &ompi_op_t::o_f_to_c_index>},
    {kMagicInfo, field_of<ompi_info_t, &ompi_info_t::i_f_to_c_index>},
    {kMagicErrhandler, field_of<ompi_errhandler_t, &ompi_errhandler_t::eh_f_to_c_index>},
    {kMagicRequest, field_of<ompi_request_t, &ompi_request_t::req_f_to_c_index>},
    {kMagicWin, field_of<ompi_win_t, &ompi_win_t::w_f_to_c_index>},
    {kMagicFile, field_of<ompi_file_t, &ompi_file_t::f_f_to_c_index>},
    {kMagicMessage, field_of<ompi_message_t, &ompi_message_t::m_f_to_c_index>},
};
static_assert(sizeof(kKinds) / sizeof(kKinds[0]) == static_cast<size_t>(HandleKind::kCount),
              "one row per kind of handle");

// Every handle's magic word is its first field, whatever its kind.
uint64_t magic_of(const void* handle) { return *static_cast<const uint64_t*>(handle); }

class Table {
 public:
  // The predefined handles of a kind, each at the number its object carries. Open MPI's are
  // numbered from 0 without a gap; torusmpi's own datatypes sit far above them (datatypes.def),
  // so the others still start right after Open MPI's, as on Open MPI, and skip those two.
  Table(const std::vector<void*>& predefined, HandleKind kind) {
    const KindInfo& k = kKinds[static_cast<int>(kind)];
    for (void* h : predefined) place(h, *k.index(h));
    while (lowest_free_ < slots_.size() && slots_[lowest_free_] != nullptr) ++lowest_free_;
  }

  // Adds handle at the lowest free slot; returns its number.
  int32_t add(void* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (lowest_free_ < slots_.size() && slots_[lowest_free_] != nullptr) ++lowest_free_;
    const int32_t n = static_cast<int32_t>(lowest_free_);
    place(handle, n);
    ++lowest_free_;
    return n;
  }

  void remove(int32_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (n < 0 || static_cast<size_t>(n) >= slots_.size()) return;
    slots_[n] = nullptr;
    if (static_cast<size_t>(n) < lowest_free_) lowest_free_ = n;
  }

  // The handle with number n, nullptr when no handle has it.
  void* find(MPI_Fint n) {
    std::lock_guard<std::mutex> lock(mutex_);
    return n >= 0 && static_cast<size_t>(n) < slots_.size() ? slots_[n] : nullptr;
  }

 private:
  void place(void* handle, int32_t n) {
    if (slots_.size() <= static_cast<size_t>(n)) slots_.resize(n + 1, nullptr);
    slots_[n] = handle;
  }

  std::mutex mutex_;
  std::vector<void*> slots_;
  size_t lowest_free_ = 0;
};

std::vector<void*> predefined_datatypes() {
  std::vector<void*> all{MPI_DATATYPE_NULL};
  for (int i = 0; i < static_cast<int>(BuiltinType::kCount); ++i) {
    if (builtin_type(i).fortran >= 0) all.push_back(builtin_datatype(i));
  }
  return all;
}

// Made on first use and never destroyed: handles are converted and freed from destructors of
// static objects too. The predefined handles are the executable's copies when it has them: the
// library's references bind to those.
Table& table(HandleKind kind) {
  using K = HandleKind;
  static Table* const* const tables = [] {
    auto** t = new Table*[static_cast<int>(K::kCount)];
    auto make = [t](K k, const std::vector<void*>& predefined) {
      t[static_cast<int>(k)] = new Table(predefined, k);
    };
    make(K::kComm, {MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL});
    make(K::kDatatype, predefined_datatypes());
    make(K::kGroup, {MPI_GROUP_NULL, MPI_GROUP_EMPTY});
    make(K::kOp, {MPI_OP_NULL, MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
                  MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP});
    make(K::kInfo, {MPI_INFO_NULL, MPI_INFO_ENV});
    make(K::kErrhandler, {MPI_ERRHANDLER_NULL, MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN,
                          &ompi_mpi_errors_throw_exceptions});
    make(K::kRequest, {MPI_REQUEST_NULL});
    make(K::kWin, {MPI_WIN_NULL});
    make(K::kFile, {MPI_FILE_NULL});
    make(K::kMessage, {MPI_MESSAGE_NULL, MPI_MESSAGE_NO_PROC});
    return t;
  }();
  return *tables[static_cast<int>(kind)];
}

// The null handle of each kind: what MPI_<Class>_f2c gives for a number no handle has.
void* null_handle(HandleKind kind) {
  static void* const kNull[] = {MPI_COMM_NULL, MPI_DATATYPE_NULL,   MPI_GROUP_NULL,   MPI_OP_NULL,
                                MPI_INFO_NULL, MPI_ERRHANDLER_NULL, MPI_REQUEST_NULL, MPI_WIN_NULL,
                                MPI_FILE_NULL, MPI_MESSAGE_NULL};
  return kNull[static_cast<int>(kind)];
}

}  // namespace

MPI_Fint fortran_number(HandleKind kind, void* handle) {
  const KindInfo& k = kKinds[static_cast<int>(kind)];
  if (handle == nullptr || magic_of(handle) != k.magic) return -1;
  int32_t* index = k.index(handle);
  // Only the thread that owns a handle converts it (MPI_THREAD_MULTIPLE is not provided), so the
  // field needs no lock of its own.
  if (*index == kNoFortranIndex) *index = table(kind).add(handle);
  return *index;
}

void fortran_forget(HandleKind kind, void* handle) {
  int32_t* index = kKinds[static_cast<int>(kind)].index(handle);
  if (*index == kNoFortranIndex) return;
  table(kind).remove(*index);
  *index = kNoFortranIndex;
}

}  // namespace torusmpi::mpi

namespace {

void* handle_of(torusmpi::mpi::HandleKind kind, MPI_Fint n) {
  void* h = torusmpi::mpi::table(kind).find(n);
  // An invalid number gives the null handle, which every call then reports by name.
  return h != nullptr ? h : torusmpi::mpi::null_handle(kind);
}

}  // namespace

#define TORUSMPI_HANDLE_CONVERSIONS(Kind, CType, kind)                             \
  MPI_Fint PMPI_##Kind##_c2f(CType handle) {                                       \
    torusmpi::progress::Lock lock;                                                 \
    return torusmpi::mpi::fortran_number(torusmpi::mpi::HandleKind::kind, handle); \
  }                                                                                \
  TORUSMPI_WEAK_ALIAS(MPI_##Kind##_c2f);                                           \
  CType PMPI_##Kind##_f2c(MPI_Fint handle) {                                       \
    torusmpi::progress::Lock lock;                                                 \
    return static_cast<CType>(handle_of(torusmpi::mpi::HandleKind::kind, handle)); \
  }                                                                                \
  TORUSMPI_WEAK_ALIAS(MPI_##Kind##_f2c)

TORUSMPI_HANDLE_CONVERSIONS(Comm, MPI_Comm, kComm);
TORUSMPI_HANDLE_CONVERSIONS(Type, MPI_Datatype, kDatatype);
TORUSMPI_HANDLE_CONVERSIONS(Group, MPI_Group, kGroup);
TORUSMPI_HANDLE_CONVERSIONS(Op, MPI_Op, kOp);
TORUSMPI_HANDLE_CONVERSIONS(Info, MPI_Info, kInfo);
TORUSMPI_HANDLE_CONVERSIONS(Errhandler, MPI_Errhandler, kErrhandler);
TORUSMPI_HANDLE_CONVERSIONS(Request, MPI_Request, kRequest);
TORUSMPI_HANDLE_CONVERSIONS(Win, MPI_Win, kWin);
TORUSMPI_HANDLE_CONVERSIONS(File, MPI_File, kFile);
TORUSMPI_HANDLE_CONVERSIONS(Message, MPI_Message, kMessage);

#undef TORUSMPI_HANDLE_CONVERSIONS

// A Fortran status is MPI_STATUS_SIZE integers (6 in Open MPI 4.1's mpif.h) holding the C
// status's bytes: MPI_SOURCE, MPI_TAG, MPI_ERROR, then the private fields.
constexpr int kFortranStatusInts = 6;
static_assert(sizeof(MPI_Status) == kFortranStatusInts * sizeof(MPI_Fint),
              "a Fortran status holds a C status word for word");

int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  torusmpi::progress::Lock lock;
  if (c_status == nullptr || f_status == nullptr) return MPI_ERR_ARG;
  __builtin_memcpy(f_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Status_c2f);

int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  torusmpi::progress::Lock lock;
  if (c_status == nullptr || f_status == nullptr) return MPI_ERR_ARG;
  __builtin_memcpy(c_status, f_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Status_f2c);
