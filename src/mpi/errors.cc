// Error classes, the raise path, and the MPI functions on errors and error handlers.
#include "mpi/errors.h"

#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "boot/boot.h"
#include "config.h"
#include "core/log.h"
#include "core/progress.h"
#include "mpi/attr.h"
#include "mpi/file.h"
#include "mpi/fortran.h"
#include "mpi/group.h"
#include "mpi/runtime.h"
#include "mpi/win.h"

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

// Error classes and codes added by the application (MPI_Add_error_class, MPI_Add_error_code):
// one sequence from MPI_ERR_LASTCODE + 1 up, as in Open MPI; a class is its own class.
struct UserCode {
  int cls;
  std::string text;  // MPI_Add_error_string's; MPI_Error_string gives "" until it is set
};
std::vector<UserCode> g_user_codes;

UserCode* user_code(int code) {
  if (code <= MPI_ERR_LASTCODE) return nullptr;
  size_t i = static_cast<size_t>(code) - (MPI_ERR_LASTCODE + 1);
  return i < g_user_codes.size() ? &g_user_codes[i] : nullptr;
}

// A predefined class, or one the application added.
bool is_error_class(int code) {
  if (const UserCode* u = user_code(code)) return u->cls == code;
  return find_class(code) != nullptr || (code >= 0 && code <= MPI_ERR_LASTCODE);
}

// The last error this thread raised, so MPI_Error_string can say what actually went wrong.
thread_local int t_last_class = MPI_SUCCESS;
thread_local char t_last_detail[MPI_MAX_ERROR_STRING];
// Set by DeferErrors: raised errors skip the handlers.
thread_local bool t_defer = false;

void remember(int cls, const char* fn, const char* fmt, va_list ap) {
  t_last_class = cls;
  int n = std::snprintf(t_last_detail, sizeof(t_last_detail), "%s: ", fn);
  if (n > 0 && static_cast<size_t>(n) < sizeof(t_last_detail)) {
    std::vsnprintf(t_last_detail + n, sizeof(t_last_detail) - n, fmt, ap);
  }
}

void remember_text(int cls, const char* fn, const char* text) {
  t_last_class = cls;
  std::snprintf(t_last_detail, sizeof(t_last_detail), "%s: %s", fn, text);
}

[[noreturn]] void fatal(int cls, const char* handler_note) {
  const ClassEntry* e = find_class(cls);
  std::string what;
  if (e != nullptr) {
    what = std::string(e->name) + ": " + e->text;
  } else if (const UserCode* u = user_code(cls)) {
    what = "error code " + std::to_string(cls) + " added by the application, of class " +
           std::to_string(u->cls) + (u->text.empty() ? "" : ": " + u->text);
  } else {
    what = "MPI error: unknown";
  }
  std::string msg = std::string(t_last_detail) + " (" + what + "); " + handler_note;
  boot::abort_job(cls == MPI_SUCCESS ? 1 : cls, msg);
}

const char* handler_noun(ompi::ErrhandlerType type) {
  switch (type) {
    case ompi::kTypeComm:
      return "communicators";
    case ompi::kTypeWin:
      return "windows";
    case ompi::kTypeFile:
      return "files";
    case ompi::kTypePredefined:
      break;
  }
  return "every kind of object";
}

HandleKind handle_kind(ompi::ErrhandlerType type) {
  return type == ompi::kTypeWin    ? HandleKind::kWin
         : type == ompi::kTypeFile ? HandleKind::kFile
                                   : HandleKind::kComm;
}

// A handler the application made: counted, and freed with its last reference. Predefined ones
// (MPI::ERRORS_THROW_EXCEPTIONS among them, though it runs functions) live as long as the process.
bool counted(MPI_Errhandler h) {
  return h->kind == ErrhandlerKind::kUser && h != &ompi_mpi_errors_throw_exceptions.obj;
}

// A handler made by MPI_*_create_errhandler or by Open MPI's bindings (ompi_errhandler_create),
// for objects of `type`, with fn in the language `lang`. As Open MPI does, fn also goes to the
// Fortran slot: which one runs depends on the language.
MPI_Errhandler make_errhandler(ompi::ErrhandlerType type, void (*fn)(), ompi::ErrhandlerLang lang) {
  auto* h = new ompi_errhandler_t{kMagicErrhandler, ErrhandlerKind::kUser, 1};
  h->eh_mpi_object_type = type;
  h->eh_lang = lang;
  switch (type) {
    case ompi::kTypeComm:
      h->eh_comm_fn = reinterpret_cast<MPI_Comm_errhandler_function*>(fn);
      break;
    case ompi::kTypeWin:
      h->eh_win_fn = reinterpret_cast<MPI_Win_errhandler_function*>(fn);
      break;
    case ompi::kTypeFile:
      h->eh_file_fn = reinterpret_cast<ompi_file_errhandler_fn*>(fn);
      break;
    case ompi::kTypePredefined:
      break;
  }
  h->eh_fort_fn = reinterpret_cast<ompi_errhandler_fortran_fn*>(fn);
  return h;
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

DeferErrors::DeferErrors() : was_(t_defer) { t_defer = true; }
DeferErrors::~DeferErrors() { t_defer = was_; }
const char* last_error_text() { return t_last_detail; }

int invoke_errhandler(MPI_Errhandler h, ompi::ErrhandlerType type, void* object, int code,
                      const char* fn) {
  if (t_defer) return code;
  switch (h->kind) {
    case ErrhandlerKind::kReturn:
      TORUSMPI_DEBUG(kMpi, "%s (returned to the caller)", t_last_detail);
      return code;
    case ErrhandlerKind::kUser:
      break;
    case ErrhandlerKind::kFatal:
    case ErrhandlerKind::kNull:
      fatal(code, "MPI_ERRORS_ARE_FATAL: aborting the job");
  }
  // Each object in a variable of its own type: the handler gets its address and may change it.
  MPI_Comm comm = static_cast<MPI_Comm>(object);
  MPI_Win win = static_cast<MPI_Win>(object);
  MPI_File file = static_cast<MPI_File>(object);
  switch (h->eh_lang) {
    case ompi::kLangFortran: {
      // SUBROUTINE HANDLER(OBJECT, ERRCODE): the object's Fortran number; the code comes back.
      MPI_Fint handle = fortran_number(handle_kind(type), object);
      MPI_Fint fcode = code;
      h->eh_fort_fn(&handle, &fcode);
      return fcode;
    }
    case ompi::kLangCxx:
      // libmpi_cxx's dispatch function makes the C++ object and calls the C++ function.
      switch (type) {
        case ompi::kTypeWin:
          h->eh_cxx_dispatch_fn(&win, &code, fn, reinterpret_cast<void*>(h->eh_win_fn));
          break;
        case ompi::kTypeFile:
          h->eh_cxx_dispatch_fn(&file, &code, fn, reinterpret_cast<void*>(h->eh_file_fn));
          break;
        default:
          h->eh_cxx_dispatch_fn(&comm, &code, fn, reinterpret_cast<void*>(h->eh_comm_fn));
      }
      return code;
    default:
      switch (type) {
        case ompi::kTypeWin:
          h->eh_win_fn(&win, &code, fn, nullptr);
          break;
        case ompi::kTypeFile:
          h->eh_file_fn(&file, &code, fn, nullptr);
          break;
        default:
          h->eh_comm_fn(&comm, &code, fn, nullptr);
      }
      return code;
  }
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
  return invoke_errhandler(impl->errhandler, ompi::kTypeComm, comm, cls, fn);
}

int raise_error_win(MPI_Win win, int cls, const char* fn, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  remember(cls, fn, fmt, ap);
  va_end(ap);
  if (win_impl(win) == nullptr) {
    // No window to take it (a creation that failed): MPI_COMM_WORLD's handler does.
    Comm* world = comm_impl(MPI_COMM_WORLD);
    if (world == nullptr || runtime().phase != Phase::kActive) {
      fatal(cls, "MPI is not active, so no error handler can take this: aborting");
    }
    return invoke_errhandler(world->errhandler, ompi::kTypeComm, MPI_COMM_WORLD, cls, fn);
  }
  return invoke_errhandler(win->error_handler, ompi::kTypeWin, win, cls, fn);
}

int check_win(const char* fn, MPI_Win win, Win** out) {
  if (int err = require_active(fn)) return err;
  *out = win_impl(win);
  if (*out != nullptr) return MPI_SUCCESS;
  return raise_error(nullptr, MPI_ERR_WIN, fn, "win argument is %s",
                     win == MPI_WIN_NULL                           ? "MPI_WIN_NULL"
                     : win != nullptr && win->magic == kMagicFreed ? "a freed window"
                                                                   : "not a window");
}

int raise_error_file(int cls, const char* fn, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  remember(cls, fn, fmt, ap);
  va_end(ap);
  // MPI_FILE_NULL's handler: MPI_ERRORS_RETURN unless the application set another.
  return invoke_errhandler(MPI_FILE_NULL->error_handler, ompi::kTypeFile, MPI_FILE_NULL, cls, fn);
}

int raise_error_fh(MPI_File fh, int cls, const char* fn, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  remember(cls, fn, fmt, ap);
  va_end(ap);
  return invoke_errhandler(fh->error_handler, ompi::kTypeFile, fh, cls, fn);
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
                          "not implemented by torusmpi " PACKAGE_VERSION
                          " yet (MPI-IO's collective and shared file pointer calls)");
}

void errors_are_fatal_file_handler(MPI_File*, int* code, ...) {
  fatal(*code, "MPI_ERRORS_ARE_FATAL: aborting the job");
}

void errors_are_fatal_win_handler(MPI_Win*, int* code, ...) {
  fatal(*code, "MPI_ERRORS_ARE_FATAL: aborting the job");
}

void errhandler_retain(MPI_Errhandler h) {
  if (counted(h)) ++h->refcount;
}

void errhandler_release(MPI_Errhandler h) {
  if (h == nullptr || !counted(h) || --h->refcount > 0) return;
  h->magic = kMagicFreed;
  fortran_forget(HandleKind::kErrhandler, h);
  delete h;
}

}  // namespace torusmpi::mpi

using torusmpi::mpi::comm_impl;
using torusmpi::mpi::ErrhandlerKind;
using torusmpi::mpi::raise_error;
namespace ompi = torusmpi::mpi::ompi;
using torusmpi::mpi::raise_error_file;
using torusmpi::mpi::require_active;

// --- Error classes, codes and strings.

int PMPI_Error_class(int errorcode, int* errorclass) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Error_class";
  if (errorclass == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "errorclass argument is NULL");
  if (const torusmpi::mpi::UserCode* u = torusmpi::mpi::user_code(errorcode)) {
    *errorclass = u->cls;
    return MPI_SUCCESS;
  }
  if (!torusmpi::mpi::is_error_class(errorcode)) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "errorcode %d is not an MPI error code",
                       errorcode);
  }
  // Every predefined code torusmpi returns is its own class.
  *errorclass = errorcode;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Error_class);

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Error_string";
  if (string == nullptr || resultlen == nullptr) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "%s argument is NULL",
                       string == nullptr ? "string" : "resultlen");
  }
  std::string text;
  if (const torusmpi::mpi::UserCode* u = torusmpi::mpi::user_code(errorcode)) {
    // Exactly the application's string: it may compare it.
    *resultlen = torusmpi::mpi::copy_out(u->text, string, MPI_MAX_ERROR_STRING);
    return MPI_SUCCESS;
  }
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

namespace torusmpi::mpi {
namespace {

// Hands out the next user code, of class cls (kNewClass: a class of its own).
constexpr int kNewClass = -1;
int add_code(const char* fn, int cls, int* code) {
  size_t used = g_user_codes.size();
  if (used >= static_cast<size_t>(INT_MAX - MPI_ERR_LASTCODE)) {
    return raise_error(nullptr, MPI_ERR_OTHER, fn, "no error code left: %zu were added", used);
  }
  int next = MPI_ERR_LASTCODE + 1 + static_cast<int>(used);
  g_user_codes.push_back({cls == kNewClass ? next : cls, std::string()});
  attr_set_last_used_code(next);
  *code = next;
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace torusmpi::mpi

int PMPI_Add_error_class(int* errorclass) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Add_error_class";
  if (int err = require_active(kFn)) return err;
  if (errorclass == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "errorclass argument is NULL");
  return torusmpi::mpi::add_code(kFn, torusmpi::mpi::kNewClass, errorclass);
}
TORUSMPI_WEAK_ALIAS(MPI_Add_error_class);

int PMPI_Add_error_code(int errorclass, int* errorcode) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Add_error_code";
  if (int err = require_active(kFn)) return err;
  if (errorcode == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "errorcode argument is NULL");
  if (!torusmpi::mpi::is_error_class(errorclass)) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "errorclass %d is not an error class%s",
                       errorclass,
                       torusmpi::mpi::user_code(errorclass) != nullptr
                           ? " (it is a code added by MPI_Add_error_code)"
                           : "");
  }
  return torusmpi::mpi::add_code(kFn, errorclass, errorcode);
}
TORUSMPI_WEAK_ALIAS(MPI_Add_error_code);

int PMPI_Add_error_string(int errorcode, const char* string) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Add_error_string";
  if (int err = require_active(kFn)) return err;
  torusmpi::mpi::UserCode* u = torusmpi::mpi::user_code(errorcode);
  if (u == nullptr) {
    return raise_error(
        nullptr, MPI_ERR_ARG, kFn,
        "errorcode %d was not added by MPI_Add_error_class or MPI_Add_error_code%s", errorcode,
        errorcode >= 0 && errorcode <= MPI_ERR_LASTCODE ? " (predefined codes keep their strings)"
                                                        : "");
  }
  if (string == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "string argument is NULL");
  size_t len = strnlen(string, MPI_MAX_ERROR_STRING);
  if (len >= MPI_MAX_ERROR_STRING) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn,
                       "string argument is longer than MPI_MAX_ERROR_STRING - 1 (%d) characters",
                       MPI_MAX_ERROR_STRING - 1);
  }
  u->text.assign(string, len);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Add_error_string);

// --- Error handlers.

namespace torusmpi::mpi {
namespace {

// A valid error handler handle, or nullptr.
MPI_Errhandler errhandler_impl(MPI_Errhandler h) {
  return h != nullptr && h->magic == kMagicErrhandler ? h : nullptr;
}

// Why errhandler cannot be attached to an object of target's type; empty when it can (a
// predefined handler other than MPI_ERRHANDLER_NULL, or one made for that type).
std::string unattachable(MPI_Errhandler errhandler, ompi::ErrhandlerType target) {
  MPI_Errhandler h = errhandler_impl(errhandler);
  if (h == nullptr || h->kind == ErrhandlerKind::kNull) {
    return std::string("errhandler argument is ") + (errhandler == MPI_ERRHANDLER_NULL
                                                         ? "MPI_ERRHANDLER_NULL"
                                                         : "not a valid error handler");
  }
  auto made_for = static_cast<ompi::ErrhandlerType>(h->eh_mpi_object_type);
  if (made_for == ompi::kTypePredefined || made_for == target) return std::string();
  return std::string("errhandler argument was made for ") + handler_noun(made_for) + ", not for " +
         handler_noun(target);
}

int create_errhandler(const char* fn, ompi::ErrhandlerType target, void (*function)(),
                      MPI_Errhandler* errhandler) {
  if (int err = require_active(fn)) return err;
  if (function == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, fn, "function argument is NULL");
  if (errhandler == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, fn, "errhandler argument is NULL");
  *errhandler = make_errhandler(target, function, ompi::kLangC);
  return MPI_SUCCESS;
}

int comm_set_errhandler(const char* fn, MPI_Comm comm, MPI_Errhandler errhandler) {
  if (int err = require_active(fn)) return err;
  Comm* c = comm_impl(comm);
  if (c == nullptr) {
    return raise_error(nullptr, MPI_ERR_COMM, fn, "comm argument is %s",
                       comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a valid communicator");
  }
  std::string why = unattachable(errhandler, ompi::kTypeComm);
  if (!why.empty()) return raise_error(comm, MPI_ERR_ARG, fn, "%s", why.c_str());
  errhandler_retain(errhandler);
  errhandler_release(c->errhandler);
  c->errhandler = errhandler;
  comm_sync_handle(c);  // Open MPI's bindings read the handler from the handle
  return MPI_SUCCESS;
}

int comm_get_errhandler(const char* fn, MPI_Comm comm, MPI_Errhandler* errhandler) {
  if (int err = require_active(fn)) return err;
  Comm* c = comm_impl(comm);
  if (c == nullptr) {
    return raise_error(nullptr, MPI_ERR_COMM, fn, "comm argument is %s",
                       comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a valid communicator");
  }
  if (errhandler == nullptr)
    return raise_error(comm, MPI_ERR_ARG, fn, "errhandler argument is NULL");
  // The caller gets a new reference, released by MPI_Errhandler_free.
  errhandler_retain(c->errhandler);
  *errhandler = c->errhandler;
  return MPI_SUCCESS;
}

// Files: an open file, or MPI_FILE_NULL for the default of files to come.
int no_file(const char* fn, MPI_File file) {
  return raise_error_file(MPI_ERR_FILE, fn, "file argument is %s",
                          file == MPI_FILE_NULL ? "MPI_FILE_NULL" : "not an open file");
}
bool file_or_default(MPI_File file) { return file == MPI_FILE_NULL || file_impl(file) != nullptr; }

}  // namespace
}  // namespace torusmpi::mpi

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::comm_set_errhandler("MPI_Comm_set_errhandler", comm, errhandler);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_set_errhandler);

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::comm_get_errhandler("MPI_Comm_get_errhandler", comm, errhandler);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_get_errhandler);

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function,
                                MPI_Errhandler* errhandler) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::create_errhandler("MPI_Comm_create_errhandler", ompi::kTypeComm,
                                          reinterpret_cast<void (*)()>(function), errhandler);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_create_errhandler);

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Errhandler_free";
  if (int err = require_active(kFn)) return err;
  if (errhandler == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "errhandler argument is NULL");
  MPI_Errhandler h = torusmpi::mpi::errhandler_impl(*errhandler);
  if (h == nullptr || h->kind == ErrhandlerKind::kNull) {
    return raise_error(
        nullptr, MPI_ERR_ARG, kFn, "*errhandler is %s",
        *errhandler == MPI_ERRHANDLER_NULL ? "MPI_ERRHANDLER_NULL" : "not a valid error handler");
  }
  torusmpi::mpi::errhandler_release(h);
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Errhandler_free);

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  torusmpi::progress::Lock lock;
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

// Windows: a window's handler is in its handle (error_handler), where Open MPI's bindings read it.

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* function, MPI_Errhandler* errhandler) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::create_errhandler("MPI_Win_create_errhandler", ompi::kTypeWin,
                                          reinterpret_cast<void (*)()>(function), errhandler);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_create_errhandler);

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_set_errhandler";
  torusmpi::mpi::Win* w = nullptr;
  if (int err = torusmpi::mpi::check_win(kFn, win, &w)) return err;
  std::string why = torusmpi::mpi::unattachable(errhandler, ompi::kTypeWin);
  if (!why.empty()) return torusmpi::mpi::raise_error_win(win, MPI_ERR_ARG, kFn, "%s", why.c_str());
  torusmpi::mpi::errhandler_retain(errhandler);
  torusmpi::mpi::errhandler_release(win->error_handler);
  win->error_handler = errhandler;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_set_errhandler);

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_get_errhandler";
  torusmpi::mpi::Win* w = nullptr;
  if (int err = torusmpi::mpi::check_win(kFn, win, &w)) return err;
  if (errhandler == nullptr) {
    return torusmpi::mpi::raise_error_win(win, MPI_ERR_ARG, kFn, "errhandler argument is NULL");
  }
  // The caller gets a new reference, released by MPI_Errhandler_free.
  torusmpi::mpi::errhandler_retain(win->error_handler);
  *errhandler = win->error_handler;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_get_errhandler);

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_call_errhandler";
  torusmpi::mpi::Win* w = nullptr;
  if (int err = torusmpi::mpi::check_win(kFn, win, &w)) return err;
  torusmpi::mpi::raise_error_win(win, errorcode, kFn,
                                 "called by the application with error code %d", errorcode);
  // MPI: returns MPI_SUCCESS when the handler returns.
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_call_errhandler);

// Files: MPI_FILE_NULL's handler is the one files get when they open, and the one errors of
// calls without a file (MPI_File_open, MPI_File_delete) go to.

int PMPI_File_create_errhandler(MPI_File_errhandler_function* function,
                                MPI_Errhandler* errhandler) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::create_errhandler("MPI_File_create_errhandler", ompi::kTypeFile,
                                          reinterpret_cast<void (*)()>(function), errhandler);
}
TORUSMPI_WEAK_ALIAS(MPI_File_create_errhandler);

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_set_errhandler";
  if (int err = require_active(kFn)) return err;
  if (!torusmpi::mpi::file_or_default(file)) return torusmpi::mpi::no_file(kFn, file);
  std::string why = torusmpi::mpi::unattachable(errhandler, ompi::kTypeFile);
  if (!why.empty()) return raise_error_file(MPI_ERR_ARG, kFn, "%s", why.c_str());
  torusmpi::mpi::errhandler_retain(errhandler);
  torusmpi::mpi::errhandler_release(file->error_handler);
  file->error_handler = errhandler;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_set_errhandler);

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_get_errhandler";
  if (int err = require_active(kFn)) return err;
  if (!torusmpi::mpi::file_or_default(file)) return torusmpi::mpi::no_file(kFn, file);
  if (errhandler == nullptr)
    return raise_error_file(MPI_ERR_ARG, kFn, "errhandler argument is NULL");
  MPI_Errhandler h = file->error_handler;
  torusmpi::mpi::errhandler_retain(h);
  *errhandler = h;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_get_errhandler);

int PMPI_File_call_errhandler(MPI_File fh, int errorcode) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_call_errhandler";
  if (int err = require_active(kFn)) return err;
  // An open file only: MPI_FILE_NULL's handler is not called this way (MPI_ERR_FILE).
  if (torusmpi::mpi::file_impl(fh) == nullptr) return torusmpi::mpi::no_file(kFn, fh);
  torusmpi::mpi::raise_error_fh(fh, errorcode, kFn, "called by the application with error code %d",
                                errorcode);
  // MPI: returns MPI_SUCCESS when the handler returns.
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_call_errhandler);

// --- The MPI-1 forms, removed from MPI-3 but still exported by Open MPI 4.1.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

int PMPI_Errhandler_create(MPI_Handler_function* function, MPI_Errhandler* errhandler) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::create_errhandler("MPI_Errhandler_create", ompi::kTypeComm,
                                          reinterpret_cast<void (*)()>(function), errhandler);
}
TORUSMPI_WEAK_ALIAS(MPI_Errhandler_create);

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::comm_set_errhandler("MPI_Errhandler_set", comm, errhandler);
}
TORUSMPI_WEAK_ALIAS(MPI_Errhandler_set);

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::comm_get_errhandler("MPI_Errhandler_get", comm, errhandler);
}
TORUSMPI_WEAK_ALIAS(MPI_Errhandler_get);

#pragma GCC diagnostic pop

// --- What Open MPI's binding libraries call: libmpi_cxx makes and runs its C++ handlers with
// these, and libmpi_mpifh its Fortran ones (the signatures of Open MPI 4.1's errhandler.h, the
// enums as ints).

TORUSMPI_EXPORT ompi_errhandler_t* ompi_errhandler_create(int object_type, void (*func)(),
                                                          int lang) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::make_errhandler(static_cast<ompi::ErrhandlerType>(object_type), func,
                                        static_cast<ompi::ErrhandlerLang>(lang));
}

// Runs errhandler on mpi_object (a communicator, window or file by object_type) for err_code;
// message names the call. Returns what the call returns.
TORUSMPI_EXPORT int ompi_errhandler_invoke(ompi_errhandler_t* errhandler, void* mpi_object,
                                           int object_type, int err_code, const char* message) {
  torusmpi::progress::Lock lock;
  const char* fn = message != nullptr ? message : "an MPI call";
  torusmpi::mpi::remember_text(err_code, fn, "error raised by Open MPI's language bindings");
  if (errhandler == nullptr || errhandler->magic != torusmpi::mpi::kMagicErrhandler) {
    torusmpi::mpi::fatal(err_code, "the object has no valid error handler: aborting");
  }
  return torusmpi::mpi::invoke_errhandler(
      errhandler, static_cast<ompi::ErrhandlerType>(object_type), mpi_object, err_code, fn);
}

// MPI_ERRORS_ARE_FATAL's function for communicators. Open MPI's bindings also call it with comm
// and error_code NULL and the name of a call made before MPI_Init or after MPI_Finalize.
void ompi_mpi_errors_are_fatal_comm_handler(ompi_communicator_t** comm, int* error_code, ...) {
  torusmpi::progress::Lock lock;
  (void)comm;
  if (error_code == nullptr) {
    va_list ap;
    va_start(ap, error_code);
    const char* fn = va_arg(ap, const char*);
    va_end(ap);
    torusmpi::mpi::require_active(fn != nullptr ? fn : "an MPI call");
    torusmpi::mpi::fatal(MPI_ERR_OTHER, "MPI_ERRORS_ARE_FATAL: aborting the job");
  }
  torusmpi::mpi::fatal(*error_code, "MPI_ERRORS_ARE_FATAL: aborting the job");
}
