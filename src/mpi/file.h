// MPI-IO in the MPI layer: the object behind an MPI_File handle, and the API every file call
// uses (file.cc: open, close, delete, sizes, info, atomicity, errors; file_data.cc: views,
// pointers, independent reads and writes and their nonblocking forms, data representations).
//
// For the collective half (collective reads and writes, split collectives, shared file pointers;
// each in its own file: file_coll.cc, shared_fp.cc, ...), the API to build on:
//
//   File* f;  check_file(fn, fh, &f)            the file behind a handle, or MPI_ERR_FILE raised
//   raise_error_on(f, cls, fn, fmt, ...)        an error on the file's handler (MPI_ERRORS_RETURN
//                                               by default); os_error(f, fn, op, err) for errno
//   check_access(f, fn, buf, count, type, write, &t)   the checks of a data access call (amode,
//                                               count, datatype, buffer, sequential mode)
//   f->view (io::View, src/io/view.h)           the view; f->pointer the individual pointer (in
//                                               etypes); f->comm a private duplicate of the
//                                               opening communicator, free for collectives
//   plan_access(f, offset, count, *t, &a)       offset (etypes) + count elements of type t ->
//                                               a.pos (stream byte), a.bytes (stream bytes of
//                                               the file side, after the data representation),
//                                               a.ranges (file byte ranges, stream order)
//   Staged s; stage_write(f, fn, buf, count, *t, &s)   the memory side as contiguous file-side
//                                               bytes (packed, device bytes copied by the device
//                                               layer, converted to the file's datarep): s.data
//   stage_read_begin(f, fn, count, *t, &s)      room for a.bytes; then stage_read_end(f, fn, buf,
//                                               count, *t, &s, got) unpacks/converts the first got
//                                               stream bytes into the user's buffer
//   f->posix.read / f->posix.write (io/posix.h) the file side of ranges, with sieving and locks
//   set_io_status(status, bytes)                a status whose MPI_Get_count is right
//   done_request(bytes, &request)               a request complete at once, with that status
//   f->at_close                                 functions MPI_File_close calls first (in order,
//                                               collectively, before the file is closed): the
//                                               place for shared-pointer state to go
//   f->at_set_view                              functions MPI_File_set_view calls once the new
//                                               view is in place (the shared pointer's reset)
//   f->shared_state, f->coll_state              slots for the collective half's own state
//   f->info                                     every hint given (cb_nodes, cb_buffer_size,
//                                               romio_cb_*: read them there; set the values in
//                                               force there too, MPI_File_get_info reports it)
//
// Two-phase collective buffering works on (a.ranges, s.data) of every process: exchange the
// bytes with torusmpi's collectives over f->comm, and read/write contiguous file domains.
#ifndef TORUSMPI_MPI_FILE_H_
#define TORUSMPI_MPI_FILE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dtype/dtype.h"
#include "io/posix.h"
#include "io/view.h"
#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

// A data representation (MPI_Register_datarep), or a predefined one (conversion nullptr).
struct Datarep {
  std::string name;
  MPI_Datarep_conversion_function* read_fn = nullptr;
  MPI_Datarep_conversion_function* write_fn = nullptr;
  MPI_Datarep_extent_function* extent_fn = nullptr;
  void* extra_state = nullptr;
  bool external32 = false;
  bool user = false;
};

struct File {
  ompi_file_t handle;  // MPI_File is &handle; handle.impl == this
  io::PosixFile posix;
  std::string path;  // as given to MPI_File_open
  int amode = 0;
  MPI_Comm comm = MPI_COMM_NULL;  // a private duplicate of the opening communicator
  int rank = 0, size = 1;
  MPI_Info info = MPI_INFO_NULL;  // the hints set (a copy), for MPI_File_get_info
  io::Hints hints;
  bool atomic = false;
  // The view and its handles (retained; MPI_File_get_view gives new references to derived ones).
  io::View view;
  MPI_Datatype etype = MPI_BYTE, filetype = MPI_BYTE;
  const Datarep* datarep = nullptr;
  int64_t pointer = 0;  // the individual file pointer, in etypes of the view
  // Functions MPI_File_close runs, in order, before it closes the file (collectively: every
  // process runs its own). A nonzero return is an MPI error class: close goes on, and returns it.
  std::vector<std::function<int(File*)>> at_close;
  // Functions MPI_File_set_view calls, in order, once the new view is in place (collectively,
  // before the processes leave it together): the shared file pointer goes back to 0 there.
  std::vector<std::function<int(File*)>> at_set_view;
  // State of the shared file pointer and of collective buffering, kept by their own files.
  std::shared_ptr<void> shared_state;
  std::shared_ptr<void> coll_state;
  // Nonblocking independent accesses whose file calls the I/O worker has not finished: close
  // waits for them (wait_async).
  int async_jobs = 0;
};

// The File behind a handle; nullptr for MPI_FILE_NULL, a closed file or another kind of handle.
inline File* file_impl(MPI_File fh) {
  return fh != nullptr && fh->magic == kMagicFile ? static_cast<File*>(fh->impl) : nullptr;
}

// Resolves fn's fh argument, or raises MPI_ERR_FILE (on MPI_FILE_NULL's handler).
int check_file(const char* fn, MPI_File fh, File** out);

// Raises cls from fn on the file's handler; the message is prefixed with the file's name.
int raise_error_on(File* f, int cls, const char* fn, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
// The error class of an errno of a file operation (ENOENT: MPI_ERR_NO_SUCH_FILE, ENOSPC:
// MPI_ERR_NO_SPACE ...), and an error raised with it: "file F: pwrite: No space left on device".
int errno_class(int err);
int os_error(File* f, const char* fn, const char* op, int err);

// The checks every data access call makes: buf/count/datatype valid (datatype committed), the
// file opened for reading (write false) or writing, not MPI_MODE_SEQUENTIAL for explicit offsets
// (explicit) ... *t gets the engine's type.
int check_access(File* f, const char* fn, const void* buf, int count, MPI_Datatype type, bool write,
                 bool explicit_offset, const dtype::Type** t);

// An access through the view: stream byte pos (offset etypes in), the file-side stream bytes
// and the file ranges they go to.
struct Access {
  int64_t pos = 0;
  int64_t bytes = 0;
  std::vector<io::Extent> ranges;
};
// offset in etypes of f's view, count elements of t (memory side). Errors raised on f: the
// datarep cannot convert t (MPI_ERR_UNSUPPORTED_DATAREP), a negative offset (MPI_ERR_ARG).
int plan_access(File* f, const char* fn, int64_t offset, int64_t count, const dtype::Type& t,
                Access* a);

// The memory side of an access as the file sees it: Access::bytes at data (the user's own
// buffer when it is contiguous host memory in the native representation, else `own`).
struct Staged {
  std::vector<char> own;
  char* data = nullptr;
};
int stage_write(File* f, const char* fn, const void* buf, int64_t count, MPI_Datatype type,
                const dtype::Type& t, Staged* s);
int stage_read_begin(File* f, const char* fn, int64_t count, const dtype::Type& t, Staged* s);
int stage_read_end(File* f, const char* fn, void* buf, int64_t count, MPI_Datatype type,
                   const dtype::Type& t, Staged* s, int64_t got);

// Bytes that count elements of t take in the file (external32: their external size) and the
// memory-side bytes of file_bytes of them (a status counts those).
int64_t file_size_of(const File* f, const dtype::Type& t);
int64_t memory_bytes(const File* f, const dtype::Type& t, int64_t file_bytes);
// A status for an I/O call that moved `bytes` of the memory side (MPI_Get_count = bytes / size).
void set_io_status(MPI_Status* st, int64_t bytes);
// A request complete at once whose status says `bytes` (nonblocking forms).
void done_request(int64_t bytes, MPI_Request* request);
// A nonblocking independent access, planned (a) and checked: the memory side staged now, the
// file calls made by the I/O worker thread (io/worker.h) while the caller goes on, the request
// completed by the progress engine once they are done (a read unstaged into buf there; an error
// raised on f's handler when MPI_Wait or MPI_Test completes it). *request is set.
int start_async(File* f, const char* fn, bool write, Access a, const void* buf, int count,
                MPI_Datatype type, const dtype::Type& t, MPI_Request* request);
// Completes a nonblocking access's request as MPI_Grequest_complete does (not by calling it: the
// progress engine may run inside MPI_Finalize): a request the program freed already ends here,
// its state (free_fn) with it.
struct Request;
void complete_io_request(Request* r);
// Until every access start_async made on f is over (MPI_File_close, before the descriptor goes).
void wait_async(File* f);

// The data representations: "native", "internal", "external32" and registered ones.
const Datarep* find_datarep(const char* name);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_FILE_H_
