// Error classes, the raise path, and the MPI functions on errors and error handlers.
#include "mpi/errors.h"

#include <cstdarg>
#include <cstdio>
#include <string>

#include "boot/boot.h"
#include "config.h"
#include "core/log.h"
#include "mpi/runtime.h"

namespace torusmpi::mpi {
namespace {

struct ClassEntry {
  int cls;
  const char* name;
  const char* text;
};

// The error classes of Open MPI 4.1's mpi.h with the MPI standard's descriptions.
#define TORUSMPI_CLASS(c, text) \
  { c, #c, text }
constexpr ClassEntry kClasses[] = {
    TORUSMPI_CLASS(MPI_SUCCESS, "no error"),
    TORUSMPI_CLASS(MPI_ERR_BUFFER, "invalid buffer pointer"),
    TORUSMPI_CLASS(MPI_ERR_COUNT, "invalid count argument"),
    TORUSMPI_CLASS(MPI_ERR_TYPE, "invalid datatype"),
    TORUSMPI_CLASS(MPI_ERR_TAG, "invalid tag"),
    TORUSMPI_CLASS(MPI_ERR_COMM, "invalid communicator"),
    TORUSMPI_CLASS(MPI_ERR_RANK, "invalid rank"),
    TORUSMPI_CLASS(MPI_ERR_REQUEST, "invalid request"),
    TORUSMPI_CLASS(MPI_ERR_ROOT, "invalid root"),
    TORUSMPI_CLASS(MPI_ERR_GROUP, "invalid group"),
    TORUSMPI_CLASS(MPI_ERR_OP, "invalid reduce operation"),
    TORUSMPI_CLASS(MPI_ERR_TOPOLOGY, "invalid topology"),
    TORUSMPI_CLASS(MPI_ERR_DIMS, "invalid dimension argument"),
    TORUSMPI_CLASS(MPI_ERR_ARG, "invalid argument of some other kind"),
    TORUSMPI_CLASS(MPI_ERR_UNKNOWN, "unknown error"),
    TORUSMPI_CLASS(MPI_ERR_TRUNCATE, "message truncated"),
    TORUSMPI_CLASS(MPI_ERR_OTHER, "known error not in this list"),
    TORUSMPI_CLASS(MPI_ERR_INTERN, "internal error"),
    TORUSMPI_CLASS(MPI_ERR_IN_STATUS, "error code is in status"),
    TORUSMPI_CLASS(MPI_ERR_PENDING, "pending request"),
    TORUSMPI_CLASS(MPI_ERR_ACCESS, "permission denied"),
    TORUSMPI_CLASS(MPI_ERR_AMODE, "error related to the amode passed to MPI_File_open"),
    TORUSMPI_CLASS(MPI_ERR_ASSERT, "invalid assert argument"),
    TORUSMPI_CLASS(MPI_ERR_BAD_FILE, "invalid file name"),
    TORUSMPI_CLASS(MPI_ERR_BASE, "invalid base argument"),
    TORUSMPI_CLASS(MPI_ERR_CONVERSION, "error in a user-supplied data conversion function"),
    TORUSMPI_CLASS(MPI_ERR_DISP, "invalid displacement argument"),
    TORUSMPI_CLASS(MPI_ERR_DUP_DATAREP, "data representation identifier already registered"),
    TORUSMPI_CLASS(MPI_ERR_FILE_EXISTS, "file exists"),
    TORUSMPI_CLASS(MPI_ERR_FILE_IN_USE, "file operation could not be completed: file in use"),
    TORUSMPI_CLASS(MPI_ERR_FILE, "invalid file handle"),
    TORUSMPI_CLASS(MPI_ERR_INFO_KEY, "info key longer than MPI_MAX_INFO_KEY"),
    TORUSMPI_CLASS(MPI_ERR_INFO_NOKEY, "info key not defined"),
    TORUSMPI_CLASS(MPI_ERR_INFO_VALUE, "info value longer than MPI_MAX_INFO_VAL"),
    TORUSMPI_CLASS(MPI_ERR_INFO, "invalid info argument"),
    TORUSMPI_CLASS(MPI_ERR_IO, "other I/O error"),
    TORUSMPI_CLASS(MPI_ERR_KEYVAL, "invalid keyval"),
    TORUSMPI_CLASS(MPI_ERR_LOCKTYPE, "invalid locktype argument"),
    TORUSMPI_CLASS(MPI_ERR_NAME, "invalid service name"),
    TORUSMPI_CLASS(MPI_ERR_NO_MEM, "memory exhausted"),
    TORUSMPI_CLASS(MPI_ERR_NOT_SAME, "collective argument not identical on all processes"),
    TORUSMPI_CLASS(MPI_ERR_NO_SPACE, "not enough space"),
    TORUSMPI_CLASS(MPI_ERR_NO_SUCH_FILE, "file does not exist"),
    TORUSMPI_CLASS(MPI_ERR_PORT, "invalid port name"),
    TORUSMPI_CLASS(MPI_ERR_QUOTA, "quota exceeded"),
    TORUSMPI_CLASS(MPI_ERR_READ_ONLY, "read-only file or file system"),
    TORUSMPI_CLASS(MPI_ERR_RMA_CONFLICT, "conflicting accesses to window"),
    TORUSMPI_CLASS(MPI_ERR_RMA_SYNC, "wrong synchronization of RMA calls"),
    TORUSMPI_CLASS(MPI_ERR_SERVICE, "invalid service name"),
    TORUSMPI_CLASS(MPI_ERR_SIZE, "invalid size argument"),
    TORUSMPI_CLASS(MPI_ERR_SPAWN, "error in spawning processes"),
    TORUSMPI_CLASS(MPI_ERR_UNSUPPORTED_DATAREP, "unsupported data representation"),
    TORUSMPI_CLASS(MPI_ERR_UNSUPPORTED_OPERATION, "unsupported operation"),
    TORUSMPI_CLASS(MPI_ERR_WIN, "invalid window"),
    TORUSMPI_CLASS(MPI_T_ERR_MEMORY, "out of memory (tools interface)"),
    TORUSMPI_CLASS(MPI_T_ERR_NOT_INITIALIZED, "tools interface not initialized"),
    TORUSMPI_CLASS(MPI_T_ERR_CANNOT_INIT, "tools interface cannot be initialized"),
    TORUSMPI_CLASS(MPI_T_ERR_INVALID_INDEX, "invalid tools variable or category index"),
    TORUSMPI_CLASS(MPI_T_ERR_INVALID_ITEM, "invalid item index of an enumeration"),
    TORUSMPI_CLASS(MPI_T_ERR_INVALID_HANDLE, "invalid tools handle"),
    TORUSMPI_CLASS(MPI_T_ERR_OUT_OF_HANDLES, "no more tools handles"),
    TORUSMPI_CLASS(MPI_T_ERR_OUT_OF_SESSIONS, "no more tools sessions"),
    TORUSMPI_CLASS(MPI_T_ERR_INVALID_SESSION, "invalid tools session"),
    TORUSMPI_CLASS(MPI_T_ERR_CVAR_SET_NOT_NOW, "control variable cannot be set now"),
    TORUSMPI_CLASS(MPI_T_ERR_CVAR_SET_NEVER, "control variable can never be set"),
    TORUSMPI_CLASS(MPI_T_ERR_PVAR_NO_STARTSTOP,
                   "performance variable cannot be started or stopped"),
    TORUSMPI_CLASS(MPI_T_ERR_PVAR_NO_WRITE, "performance variable cannot be written or reset"),
    TORUSMPI_CLASS(MPI_T_ERR_PVAR_NO_ATOMIC,
                   "performance variable cannot be read and reset atomically"),
    TORUSMPI_CLASS(MPI_ERR_RMA_RANGE, "target memory is outside the window"),
    TORUSMPI_CLASS(MPI_ERR_RMA_ATTACH, "memory cannot be attached to the window"),
    TORUSMPI_CLASS(MPI_ERR_RMA_FLAVOR, "operation not allowed on this window flavor"),
    TORUSMPI_CLASS(MPI_ERR_RMA_SHARED, "memory cannot be shared"),
    TORUSMPI_CLASS(MPI_T_ERR_INVALID, "invalid use of the tools interface"),
    TORUSMPI_CLASS(MPI_T_ERR_INVALID_NAME, "invalid tools variable or category name"),
};
#undef TORUSMPI_CLASS

const ClassEntry* find_class(int cls) {
  for (const ClassEntry& e : kClasses) {
    if (e.cls == cls) return &e;
  }
  return nullptr;
}

// The last error this thread raised, so MPI_Error_string can say what actually went wrong.
thread_local int t_last_class = MPI_SUCCESS;
thread_local char t_last_detail[MPI_MAX_ERROR_STRING];

void remember(int cls, const char* fn, const char* fmt, va_list ap) {
  t_last_class = cls;
  int n = std::snprintf(t_last_detail, sizeof(t_last_detail), "%s: ", fn);
  if (n > 0 && static_cast<size_t>(n) < sizeof(t_last_detail)) {
    std::vsnprintf(t_last_detail + n, sizeof(t_last_detail) - n, fmt, ap);
  }
}

[[noreturn]] void fatal(int cls, const char* handler_note) {
  const ClassEntry* e = find_class(cls);
  std::string msg = std::string(t_last_detail) + " (" + (e ? e->name : "MPI error") + ": " +
                    (e ? e->text : "unknown") + "); " + handler_note;
  boot::abort_job(cls == MPI_SUCCESS ? 1 : cls, msg);
}

}  // namespace

const char* error_class_name(int cls) {
  const ClassEntry* e = find_class(cls);
  return e ? e->name : nullptr;
}

const char* error_class_text(int cls) {
  const ClassEntry* e = find_class(cls);
  return e ? e->text : nullptr;
}

int raise_error(MPI_Comm comm, int cls, const char* fn, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  remember(cls, fn, fmt, ap);
  va_end(ap);
  Runtime& rt = runtime();
  Comm* impl = comm_impl(comm);
  if (impl == nullptr) {
    comm = MPI_COMM_WORLD;
    impl = comm_impl(comm);
  }
  if (impl == nullptr || rt.phase != Phase::kActive) {
    fatal(cls, "MPI is not active, so no error handler can take this: aborting");
  }
  MPI_Errhandler h = impl->errhandler;
  switch (h->kind) {
    case ErrhandlerKind::kReturn:
      TORUSMPI_DEBUG(kMpi, "%s (returned to the caller)", t_last_detail);
      return cls;
    case ErrhandlerKind::kUserComm: {
      int code = cls;
      h->fn(&comm, &code, fn);
      return cls;
    }
    case ErrhandlerKind::kFatal:
    case ErrhandlerKind::kNull:
      break;
  }
  fatal(cls, "MPI_ERRORS_ARE_FATAL: aborting the job");
}

int raise_error_file(int cls, const char* fn, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  remember(cls, fn, fmt, ap);
  va_end(ap);
  TORUSMPI_DEBUG(kMpi, "%s (returned to the caller: files default to MPI_ERRORS_RETURN)",
                 t_last_detail);
  return cls;
}

int require_active(const char* fn) {
  Phase phase = runtime().phase;
  if (phase == Phase::kActive) return MPI_SUCCESS;
  std::snprintf(t_last_detail, sizeof(t_last_detail), "%s: called %s", fn,
                phase == Phase::kBeforeInit ? "before MPI_Init" : "after MPI_Finalize");
  fatal(MPI_ERR_OTHER, "this is erroneous in MPI: aborting");
}

int error_class_of(Status s) {
  switch (s) {
    case Status::kOk:
      return MPI_SUCCESS;
    case Status::kErrArg:
      return MPI_ERR_ARG;
    case Status::kErrNoMem:
      return MPI_ERR_NO_MEM;
    case Status::kErrUnsupported:
      return MPI_ERR_UNSUPPORTED_OPERATION;
    case Status::kErrTruncate:
      return MPI_ERR_TRUNCATE;
    case Status::kErrInternal:
      return MPI_ERR_INTERN;
    case Status::kErrBoot:
    case Status::kErrPeerGone:
    case Status::kErrTimeout:
      return MPI_ERR_OTHER;
  }
  return MPI_ERR_UNKNOWN;
}

int unimplemented(const char* fn, MPI_Comm comm) {
  if (int err = require_active(fn)) return err;
  return raise_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                     "not implemented by torusmpi " PACKAGE_VERSION " yet");
}

int unimplemented_file(const char* fn) {
  return raise_error_file(MPI_ERR_UNSUPPORTED_OPERATION, fn,
                          "MPI-IO is not implemented by torusmpi " PACKAGE_VERSION);
}

}  // namespace torusmpi::mpi

using torusmpi::mpi::comm_impl;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;

int PMPI_Error_class(int errorcode, int* errorclass) {
  constexpr const char* kFn = "MPI_Error_class";
  if (errorclass == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "errorclass argument is NULL");
  if (torusmpi::mpi::find_class(errorcode) == nullptr &&
      !(errorcode >= 0 && errorcode <= MPI_ERR_LASTCODE)) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "errorcode %d is not an MPI error code",
                       errorcode);
  }
  // Every code torusmpi returns is its own class; user-added codes come later.
  *errorclass = errorcode;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Error_class);

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  constexpr const char* kFn = "MPI_Error_string";
  if (string == nullptr || resultlen == nullptr) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "%s argument is NULL",
                       string == nullptr ? "string" : "resultlen");
  }
  std::string text;
  if (const char* name = torusmpi::mpi::error_class_name(errorcode)) {
    text = std::string(name) + ": " + torusmpi::mpi::error_class_text(errorcode);
  } else if (errorcode > 0 && errorcode <= MPI_ERR_LASTCODE) {
    text = "MPI error code " + std::to_string(errorcode) + " (reserved, unused by torusmpi)";
  } else {
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "errorcode %d is not an MPI error code",
                       errorcode);
  }
  if (errorcode != MPI_SUCCESS && errorcode == torusmpi::mpi::t_last_class) {
    text += std::string(" (last on this thread: ") + torusmpi::mpi::t_last_detail + ")";
  }
  *resultlen = torusmpi::mpi::copy_out(text, string, MPI_MAX_ERROR_STRING);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Error_string);

namespace {

// A valid error handler handle, or nullptr.
MPI_Errhandler errhandler_impl(MPI_Errhandler h) {
  return h != nullptr && h->magic == torusmpi::mpi::kMagicErrhandler ? h : nullptr;
}

void errhandler_release(MPI_Errhandler h) {
  if (h->kind == torusmpi::mpi::ErrhandlerKind::kUserComm && --h->refcount == 0) {
    h->magic = torusmpi::mpi::kMagicFreed;
    delete h;
  }
}

}  // namespace

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  constexpr const char* kFn = "MPI_Comm_set_errhandler";
  if (int err = require_active(kFn)) return err;
  torusmpi::mpi::Comm* c = comm_impl(comm);
  if (c == nullptr)
    return raise_error(nullptr, MPI_ERR_COMM, kFn, "comm argument is not a valid communicator");
  MPI_Errhandler h = errhandler_impl(errhandler);
  if (h == nullptr || h->kind == torusmpi::mpi::ErrhandlerKind::kNull) {
    return raise_error(comm, MPI_ERR_ARG, kFn, "errhandler argument is not a valid error handler");
  }
  ++h->refcount;
  errhandler_release(c->errhandler);
  c->errhandler = h;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_set_errhandler);

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  constexpr const char* kFn = "MPI_Comm_get_errhandler";
  if (int err = require_active(kFn)) return err;
  torusmpi::mpi::Comm* c = comm_impl(comm);
  if (c == nullptr)
    return raise_error(nullptr, MPI_ERR_COMM, kFn, "comm argument is not a valid communicator");
  if (errhandler == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "errhandler argument is NULL");
  // The caller gets a new reference, released by MPI_Errhandler_free.
  ++c->errhandler->refcount;
  *errhandler = c->errhandler;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_get_errhandler);

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function,
                                MPI_Errhandler* errhandler) {
  constexpr const char* kFn = "MPI_Comm_create_errhandler";
  if (int err = require_active(kFn)) return err;
  if (function == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "function argument is NULL");
  if (errhandler == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "errhandler argument is NULL");
  *errhandler = new ompi_errhandler_t{torusmpi::mpi::kMagicErrhandler,
                                      torusmpi::mpi::ErrhandlerKind::kUserComm, 1, function};
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_create_errhandler);

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  constexpr const char* kFn = "MPI_Errhandler_free";
  if (int err = require_active(kFn)) return err;
  if (errhandler == nullptr || errhandler_impl(*errhandler) == nullptr ||
      (*errhandler)->kind == torusmpi::mpi::ErrhandlerKind::kNull) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn,
                       "errhandler argument is not a valid error handler");
  }
  errhandler_release(*errhandler);
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Errhandler_free);

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  constexpr const char* kFn = "MPI_Comm_call_errhandler";
  if (int err = require_active(kFn)) return err;
  if (comm_impl(comm) == nullptr) {
    return raise_error(nullptr, MPI_ERR_COMM, kFn, "comm argument is not a valid communicator");
  }
  raise_error(comm, errorcode, kFn, "called by the application with error code %d", errorcode);
  // MPI: returns MPI_SUCCESS when the handler returns.
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_call_errhandler);
