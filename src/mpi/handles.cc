// Handle conversions between C and Fortran (MPI_Comm_c2f, MPI_Comm_f2c, ... and the status ones).
// A Fortran handle is an index into a table per kind of handle: the predefined null handle is 0
// and every other handle gets the next index the first time it is converted. Fortran itself is
// not served, but C programs and bindings (mpi4py's py2f/f2py) convert handles to integers and
// back, and expect the round trip to hold.
#include <mutex>
#include <unordered_map>
#include <vector>

#include "mpi/ompi_abi.h"

namespace {

// One table per kind: the index of a handle, and the handle of an index.
class HandleTable {
 public:
  explicit HandleTable(void* null_handle) { handles_.push_back(null_handle); }

  MPI_Fint c2f(void* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (handle == handles_[0]) return 0;
    auto [it, added] = index_.emplace(handle, static_cast<MPI_Fint>(handles_.size()));
    if (added) handles_.push_back(handle);
    return it->second;
  }

  // An index never handed out gives the null handle, as MPI asks of an invalid Fortran handle.
  void* f2c(MPI_Fint index) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (index < 0 || static_cast<size_t>(index) >= handles_.size()) return handles_[0];
    return handles_[index];
  }

 private:
  std::mutex mutex_;
  std::vector<void*> handles_;
  std::unordered_map<void*, MPI_Fint> index_;
};

// Never destroyed: conversions may come from destructors of static objects after exit began.
HandleTable& comms = *new HandleTable(MPI_COMM_NULL);
HandleTable& types = *new HandleTable(MPI_DATATYPE_NULL);
HandleTable& groups = *new HandleTable(MPI_GROUP_NULL);
HandleTable& ops = *new HandleTable(MPI_OP_NULL);
HandleTable& infos = *new HandleTable(MPI_INFO_NULL);
HandleTable& errhandlers = *new HandleTable(MPI_ERRHANDLER_NULL);
HandleTable& requests = *new HandleTable(MPI_REQUEST_NULL);
HandleTable& wins = *new HandleTable(MPI_WIN_NULL);
HandleTable& files = *new HandleTable(MPI_FILE_NULL);
HandleTable& messages = *new HandleTable(MPI_MESSAGE_NULL);

}  // namespace

#define TORUSMPI_HANDLE_CONVERSIONS(Kind, CType, table)                                   \
  MPI_Fint PMPI_##Kind##_c2f(CType handle) { return table.c2f(handle); }                  \
  TORUSMPI_WEAK_ALIAS(MPI_##Kind##_c2f);                                                  \
  CType PMPI_##Kind##_f2c(MPI_Fint handle) { return static_cast<CType>(table.f2c(handle)); } \
  TORUSMPI_WEAK_ALIAS(MPI_##Kind##_f2c)

TORUSMPI_HANDLE_CONVERSIONS(Comm, MPI_Comm, comms);
TORUSMPI_HANDLE_CONVERSIONS(Type, MPI_Datatype, types);
TORUSMPI_HANDLE_CONVERSIONS(Group, MPI_Group, groups);
TORUSMPI_HANDLE_CONVERSIONS(Op, MPI_Op, ops);
TORUSMPI_HANDLE_CONVERSIONS(Info, MPI_Info, infos);
TORUSMPI_HANDLE_CONVERSIONS(Errhandler, MPI_Errhandler, errhandlers);
TORUSMPI_HANDLE_CONVERSIONS(Request, MPI_Request, requests);
TORUSMPI_HANDLE_CONVERSIONS(Win, MPI_Win, wins);
TORUSMPI_HANDLE_CONVERSIONS(File, MPI_File, files);
TORUSMPI_HANDLE_CONVERSIONS(Message, MPI_Message, messages);

#undef TORUSMPI_HANDLE_CONVERSIONS

// A Fortran status is MPI_STATUS_SIZE integers (6 in Open MPI 4.1's mpif.h) holding the C
// status's bytes: MPI_SOURCE, MPI_TAG, MPI_ERROR, then the private fields.
constexpr int kFortranStatusInts = 6;
static_assert(sizeof(MPI_Status) == kFortranStatusInts * sizeof(MPI_Fint),
              "a Fortran status holds a C status word for word");

int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  if (c_status == nullptr || f_status == nullptr) return MPI_ERR_ARG;
  __builtin_memcpy(f_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Status_c2f);

int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  if (c_status == nullptr || f_status == nullptr) return MPI_ERR_ARG;
  __builtin_memcpy(c_status, f_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Status_f2c);
