// Errors of the MPI layer: argument checks raise an MPI error class with a message naming the
// call and the argument, through the communicator's error handler.
//
//   torusmpi[r3] error: MPI_Comm_rank: MPI_ERR_ARG: rank argument is NULL
//
// With MPI_ERRORS_ARE_FATAL the job ends with the error class as exit status; with
// MPI_ERRORS_RETURN the class is returned and the message is kept for MPI_Error_string.
#ifndef TORUSMPI_MPI_ERRORS_H_
#define TORUSMPI_MPI_ERRORS_H_

#include "core/status.h"
#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

// Raises `cls` from MPI function `fn` (e.g. "MPI_Send") on communicator `comm`'s error handler;
// a comm that is not usable (or nullptr) means MPI_COMM_WORLD's. Returns what the MPI function
// returns when the handler returns: cls.
int raise_error(MPI_Comm comm, int cls, const char* fn, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

// Raises `cls` where the errors-return behaviour of files applies (MPI_FILE_NULL's default
// handler is MPI_ERRORS_RETURN): records the message and returns cls.
int raise_error_file(int cls, const char* fn, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
// Raises `cls` on an open file's error handler (MPI_ERRORS_RETURN unless set otherwise).
int raise_error_fh(MPI_File fh, int cls, const char* fn, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

// For an entry point that cannot run in this phase (before MPI_Init, after MPI_Finalize): says so
// and ends the process, since no error handler exists then. Returns MPI_SUCCESS when MPI is active.
int require_active(const char* fn);

// While a DeferErrors lives on this thread, raised errors reach no error handler: the call returns
// the class and the message stays for last_error_text(). The stream engine runs enqueued work so
// and reports what failed at the stream's synchronize, on the application's thread.
class DeferErrors {
 public:
  DeferErrors();
  ~DeferErrors();
  DeferErrors(const DeferErrors&) = delete;
  DeferErrors& operator=(const DeferErrors&) = delete;

 private:
  bool was_;
};
// The message of the last error raised on this thread ("MPI_Send: ...").
const char* last_error_text();
// The error class an internal status becomes.
int error_class_of(Status s);

// MPI_ERR_X name and text of an error class; nullptr for a code that is not a class.
const char* error_class_name(int cls);
const char* error_class_text(int cls);

// Runs error handler h for error `code` raised by fn on object (an MPI_Comm, MPI_Win or MPI_File,
// by type), in the language the handler was made in (C, C++ through libmpi_cxx's dispatch
// function, or Fortran with the object's Fortran number). Returns what the call returns: the code,
// as a Fortran handler may have changed it. MPI_ERRORS_ARE_FATAL ends the job.
int invoke_errhandler(MPI_Errhandler h, ompi::ErrhandlerType type, void* object, int code,
                      const char* fn);

// References to error handlers: the application's handlers go when the last one does (MPI_
// Errhandler_free and the objects they are attached to); predefined ones are never freed.
void errhandler_retain(MPI_Errhandler h);
void errhandler_release(MPI_Errhandler h);

// The bodies of functions this build does not implement yet (generated in unimplemented.cc).
int unimplemented(const char* fn, MPI_Comm comm);  // raised on comm (or world)
int unimplemented_file(const char* fn);            // file semantics: returned

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_ERRORS_H_
