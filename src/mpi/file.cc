// MPI-IO: opening, closing and deleting files, their sizes, hints, atomicity and groups, and the
// errors of file calls. Data access and views are in file_data.cc.
//
// MPI_File_open is collective: the first process creates the file (so that MPI_MODE_EXCL fails
// in one place and the others do not race it), tells the others how that went, and then every
// process opens it and all agree whether every one did. A file keeps a private duplicate of the
// communicator for the collective calls on it.
#include "mpi/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/progress.h"
#include "mpi/datatype.h"
#include "mpi/errors.h"
#include "mpi/file_coll.h"
#include "mpi/fortran.h"
#include "mpi/info.h"
#include "mpi/p2p.h"

namespace torusmpi::mpi {
namespace {

constexpr int kAllModes = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE |
                          MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                          MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;

// Why amode is wrong (MPI 3.1 section 13.2.1), or nullptr.
const char* bad_amode(int amode) {
  if ((amode & ~kAllModes) != 0) return "has bits that are no MPI_MODE_*";
  int rw = ((amode & MPI_MODE_RDONLY) != 0) + ((amode & MPI_MODE_RDWR) != 0) +
           ((amode & MPI_MODE_WRONLY) != 0);
  if (rw != 1) return "must have exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR, MPI_MODE_WRONLY";
  if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
    return "has MPI_MODE_CREATE or MPI_MODE_EXCL with MPI_MODE_RDONLY";
  if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
    return "has MPI_MODE_SEQUENTIAL with MPI_MODE_RDWR";
  return nullptr;
}

// ROMIO's file system prefixes ("ufs:/tmp/x"): the file is the rest on a POSIX file system.
std::string strip_prefix(const char* name) {
  static const char* const kPrefixes[] = {"ufs:", "nfs:", "posix:", "lustre:", "gpfs:", "xfs:"};
  for (const char* p : kPrefixes) {
    if (std::strncmp(name, p, std::strlen(p)) == 0) return name + std::strlen(p);
  }
  return name;
}

std::vector<File*>& free_files() {
  static auto* const files = new std::vector<File*>;
  return *files;
}

File* file_new() {
  File* f;
  if (!free_files().empty()) {
    f = free_files().back();
    free_files().pop_back();
  } else {
    f = new File;
  }
  f->handle.magic = kMagicFile;
  f->handle.impl = f;
  f->handle.f_f_to_c_index = kNoFortranIndex;
  f->handle.errhandler_type = ompi::kTypeFile;
  // A file starts with MPI_FILE_NULL's handler (MPI_ERRORS_RETURN unless the application set it).
  f->handle.error_handler = MPI_FILE_NULL->error_handler;
  errhandler_retain(f->handle.error_handler);
  return f;
}

// Gives back what a file holds and marks its handle freed. The object is kept (on a free list),
// so that a stale handle reads as closed rather than as garbage.
void file_delete(File* f) {
  const char* op = nullptr;
  f->posix.close(&op);
  if (f->comm != MPI_COMM_NULL) PMPI_Comm_free(&f->comm);
  info_free(f->info);
  release_type(f->etype);
  release_type(f->filetype);
  errhandler_release(f->handle.error_handler);
  fortran_forget(HandleKind::kFile, &f->handle);
  ompi_file_t h = f->handle;
  f->~File();
  new (f) File;
  f->handle = h;
  f->handle.magic = kMagicFreed;
  f->handle.impl = nullptr;
  free_files().push_back(f);
}

// A hint's value as a positive size; false (and the hint ignored) when it is not one.
bool size_hint(const std::string& v, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (errno != 0 || end == v.c_str() || *end != '\0' || n <= 0) return false;
  *out = n;
  return true;
}

bool toggle_hint(const std::string& v, io::Toggle* out) {
  if (v == "enable") {
    *out = io::Toggle::kEnable;
  } else if (v == "disable") {
    *out = io::Toggle::kDisable;
  } else if (v == "automatic") {
    *out = io::Toggle::kAutomatic;
  } else {
    return false;
  }
  return true;
}

const char* toggle_name(io::Toggle t) {
  return t == io::Toggle::kEnable ? "enable" : t == io::Toggle::kDisable ? "disable" : "automatic";
}

// Takes the hints of info (MPI_File_open, MPI_File_set_info, MPI_File_set_view): the ones this
// part of MPI-IO acts on are parsed, every one is kept for MPI_File_get_info and for the
// collective half (cb_nodes, cb_buffer_size, romio_cb_*), which reads f->info.
void take_hints(File* f, MPI_Info info) {
  Info* in = info_impl(info);
  if (in == nullptr) return;
  if (f->info == MPI_INFO_NULL) f->info = info_new(nullptr);
  Info* kept = info_impl(f->info);
  for (int i = 0; i < in->size(); ++i) {
    const std::string& key = in->key(i);
    const std::string& v = *in->find(key);
    bool ok = true;
    if (key == "ind_rd_buffer_size") {
      ok = size_hint(v, &f->hints.ind_rd_buffer_size);
    } else if (key == "ind_wr_buffer_size") {
      ok = size_hint(v, &f->hints.ind_wr_buffer_size);
    } else if (key == "romio_ds_read") {
      ok = toggle_hint(v, &f->hints.ds_read);
    } else if (key == "romio_ds_write") {
      ok = toggle_hint(v, &f->hints.ds_write);
    }
    // A value this library cannot use is ignored, as MPI allows: get_info reports the one in force.
    if (ok) kept->set(key, v);
  }
}

// Whether every process succeeded: a process's own errno when it failed, else the largest errno
// among those that did (0 when none did), so that all return an error together.
int agree(MPI_Comm comm, int mine) {
  int any = 0;
  PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  return mine != 0 ? mine : any;
}

}  // namespace

int check_file(const char* fn, MPI_File fh, File** out) {
  if (int err = require_active(fn)) return err;
  *out = file_impl(fh);
  if (*out != nullptr) return MPI_SUCCESS;
  return raise_error_file(MPI_ERR_FILE, fn, "fh argument is %s",
                          fh == MPI_FILE_NULL                         ? "MPI_FILE_NULL"
                          : fh != nullptr && fh->magic == kMagicFreed ? "a closed file"
                                                                      : "not a file");
}

int raise_error_on(File* f, int cls, const char* fn, const char* fmt, ...) {
  char text[MPI_MAX_ERROR_STRING];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return raise_error_fh(&f->handle, cls, fn, "file %s: %s", f->path.c_str(), text);
}

int errno_class(int err) {
  switch (err) {
    case ENOENT:
      return MPI_ERR_NO_SUCH_FILE;
    case EEXIST:
      return MPI_ERR_FILE_EXISTS;
    case EACCES:
    case EPERM:
      return MPI_ERR_ACCESS;
    case EROFS:
      return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return MPI_ERR_NO_SPACE;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
      return MPI_ERR_BAD_FILE;
    case ETXTBSY:
    case EBUSY:
      return MPI_ERR_FILE_IN_USE;
    default:
      return MPI_ERR_IO;
  }
}

int os_error(File* f, const char* fn, const char* op, int err) {
  return raise_error_on(f, errno_class(err), fn, "%s: %s", op != nullptr ? op : "I/O",
                        std::strerror(err));
}

}  // namespace torusmpi::mpi

namespace mpi = torusmpi::mpi;
using mpi::File;

int PMPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_open";
  if (int err = mpi::require_active(kFn)) return err;
  mpi::Comm* c = nullptr;
  if (int err = mpi::check_comm(kFn, comm, &c)) return err;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) {
    return mpi::raise_error(comm, MPI_ERR_COMM, kFn,
                            "comm argument is an intercommunicator (files need an intra one)");
  }
  if (fh == nullptr) return mpi::raise_error_file(MPI_ERR_ARG, kFn, "fh argument is NULL");
  if (filename == nullptr)
    return mpi::raise_error_file(MPI_ERR_BAD_FILE, kFn, "filename argument is NULL");
  if (info != MPI_INFO_NULL && mpi::info_impl(info) == nullptr)
    return mpi::raise_error_file(MPI_ERR_INFO, kFn, "info argument is not a valid info");
  if (const char* why = mpi::bad_amode(amode)) {
    return mpi::raise_error_file(MPI_ERR_AMODE, kFn, "amode argument (0x%x) %s", amode, why);
  }
  std::string path = mpi::strip_prefix(filename);
  if (path.empty()) return mpi::raise_error_file(MPI_ERR_BAD_FILE, kFn, "filename is empty");

  // Every process must give the same amode (MPI 3.1 section 13.2.1).
  int mine[2] = {amode, -amode}, both[2] = {0, 0};
  if (int err = PMPI_Allreduce(mine, both, 2, MPI_INT, MPI_MAX, comm)) return err;
  if (both[0] != -both[1]) {
    return mpi::raise_error_file(MPI_ERR_NOT_SAME, kFn,
                                 "amode argument differs between processes (0x%x here)", amode);
  }

  File* f = mpi::file_new();
  f->path = path;
  f->amode = amode;
  PMPI_Comm_dup(comm, &f->comm);
  // What a hang report calls the file's collective calls' communicator (its records keep a few
  // dozen characters: the file's own name, without its directories).
  mpi::comm_impl(f->comm)->name = "file " + f->path.substr(f->path.find_last_of('/') + 1);
  PMPI_Comm_rank(f->comm, &f->rank);
  PMPI_Comm_size(f->comm, &f->size);
  mpi::take_hints(f, info);

  int flags = (amode & MPI_MODE_RDONLY) ? O_RDONLY : O_RDWR;
  const char* op = nullptr;
  int err = 0;
  // The first process creates the file; the others open it once it exists.
  if (f->rank == 0) {
    int create = (amode & MPI_MODE_CREATE) ? O_CREAT : 0;
    if (amode & MPI_MODE_EXCL) create |= O_CREAT | O_EXCL;
    err = f->posix.open(path, flags | create, &op);
    if (err == EACCES && (amode & MPI_MODE_WRONLY)) {
      // Write-only permission: open so, and do without read-modify-write sieving.
      err = f->posix.open(path, O_WRONLY | create, &op);
      f->hints.ds_write = torusmpi::io::Toggle::kDisable;
    }
  }
  int first = err;
  PMPI_Bcast(&first, 1, MPI_INT, 0, f->comm);
  if (first == 0 && f->rank != 0) {
    err = f->posix.open(path, flags, &op);
    if (err == EACCES && (amode & MPI_MODE_WRONLY)) {
      err = f->posix.open(path, O_WRONLY, &op);
      f->hints.ds_write = torusmpi::io::Toggle::kDisable;
    }
  }
  if (first != 0 && f->rank != 0) err = first;
  // MPI_MODE_APPEND: the end of the file before any process can write to it (the agreement
  // below is the first point all processes pass after opening).
  int64_t end = 0;
  if (err == 0 && (amode & MPI_MODE_APPEND)) err = f->posix.size(&end, &op);
  if (first == 0) err = mpi::agree(f->comm, err);
  if (err != 0) {
    if (op == nullptr) op = "open";
    mpi::file_delete(f);
    return mpi::raise_error_file(mpi::errno_class(err), kFn, "file %s: %s: %s", path.c_str(), op,
                                 std::strerror(err));
  }
  // The default view: bytes from 0 (MPI_BYTE, "native").
  torusmpi::io::View::make(0, mpi::engine_type_ref(MPI_BYTE), mpi::engine_type_ref(MPI_BYTE),
                           &f->view);
  f->datarep = mpi::find_datarep("native");
  f->pointer = end;
  mpi::file_coll_open(f);
  *fh = &f->handle;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_open);

int PMPI_File_close(MPI_File* fh) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_close";
  if (int err = mpi::require_active(kFn)) return err;
  if (fh == nullptr) return mpi::raise_error_file(MPI_ERR_ARG, kFn, "fh argument is NULL");
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, *fh, &f)) return err;
  // Nonblocking accesses the program has not waited for (MPI wants them completed first) still
  // end before the descriptor goes.
  mpi::wait_async(f);
  int rc = MPI_SUCCESS;
  for (auto& hook : f->at_close) {
    int e = hook(f);
    if (rc == MPI_SUCCESS) rc = e;
  }
  const char* op = nullptr;
  int err = f->posix.close(&op);
  std::string path = f->path;
  bool remove = (f->amode & MPI_MODE_DELETE_ON_CLOSE) != 0;
  if (remove) {
    // Every process has closed it before it goes.
    PMPI_Barrier(f->comm);
    if (f->rank == 0 && err == 0 && ::unlink(path.c_str()) != 0) {
      err = errno;
      op = "unlink";
    }
  }
  if (err != 0 && rc == MPI_SUCCESS) rc = mpi::os_error(f, kFn, op, err);
  mpi::file_delete(f);
  *fh = MPI_FILE_NULL;
  return rc;
}
TORUSMPI_WEAK_ALIAS(MPI_File_close);

int PMPI_File_delete(const char* filename, MPI_Info info) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_delete";
  if (int err = mpi::require_active(kFn)) return err;
  if (filename == nullptr)
    return mpi::raise_error_file(MPI_ERR_BAD_FILE, kFn, "filename argument is NULL");
  if (info != MPI_INFO_NULL && mpi::info_impl(info) == nullptr)
    return mpi::raise_error_file(MPI_ERR_INFO, kFn, "info argument is not a valid info");
  std::string path = mpi::strip_prefix(filename);
  if (::unlink(path.c_str()) != 0) {
    int e = errno;
    return mpi::raise_error_file(mpi::errno_class(e), kFn, "file %s: unlink: %s", path.c_str(),
                                 std::strerror(e));
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_delete);

namespace {

// set_size's and preallocate's checks of this process's arguments (f resolved): MPI_SUCCESS, or
// the error raised on f.
int check_resize(const char* fn, File* f, MPI_Offset size) {
  if (size < 0) return mpi::raise_error_on(f, MPI_ERR_ARG, fn, "size argument is negative");
  if (f->amode & MPI_MODE_RDONLY)
    return mpi::raise_error_on(f, MPI_ERR_READ_ONLY, fn, "file was opened MPI_MODE_RDONLY");
  if (f->amode & MPI_MODE_SEQUENTIAL) {
    return mpi::raise_error_on(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                               "file was opened MPI_MODE_SEQUENTIAL");
  }
  return MPI_SUCCESS;
}

// Collective: every process passes the same size. One exchange tells every process whether the
// sizes agree and whether some process's arguments were wrong (err: its checks' result, raised
// already), so that all of them fail then, none waiting for the others.
int agree_resize(const char* fn, File* f, MPI_Offset size, int err) {
  MPI_Offset mine[3] = {size, -size, err}, all[3] = {0, 0, 0};
  if (int rc = PMPI_Allreduce(mine, all, 3, MPI_OFFSET, MPI_MAX, f->comm)) return rc;
  if (err != MPI_SUCCESS) return err;
  if (all[2] != MPI_SUCCESS) {
    return mpi::raise_error_on(f, static_cast<int>(all[2]), fn,
                               "the arguments of another process of the file's group were wrong");
  }
  if (all[0] != -all[1]) {
    return mpi::raise_error_on(f, MPI_ERR_NOT_SAME, fn,
                               "size argument differs between processes (%lld here)",
                               static_cast<long long>(size));
  }
  return MPI_SUCCESS;
}

}  // namespace

int PMPI_File_set_size(MPI_File fh, MPI_Offset size) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_set_size";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (int err = agree_resize(kFn, f, size, check_resize(kFn, f, size))) return err;
  // The first process sets it.
  const char* op = nullptr;
  int err = f->rank == 0 ? f->posix.truncate(size, &op) : 0;
  PMPI_Bcast(&err, 1, MPI_INT, 0, f->comm);
  if (err != 0) return mpi::os_error(f, kFn, op != nullptr ? op : "ftruncate", err);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_set_size);

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_preallocate";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (int err = agree_resize(kFn, f, size, check_resize(kFn, f, size))) return err;
  const char* op = nullptr;
  int err = f->rank == 0 ? f->posix.preallocate(size, &op) : 0;
  PMPI_Bcast(&err, 1, MPI_INT, 0, f->comm);
  if (err != 0) return mpi::os_error(f, kFn, op != nullptr ? op : "posix_fallocate", err);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_preallocate);

int PMPI_File_get_size(MPI_File fh, MPI_Offset* size) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_get_size";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (size == nullptr) return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "size argument is NULL");
  const char* op = nullptr;
  int64_t n = 0;
  if (int err = f->posix.size(&n, &op)) return mpi::os_error(f, kFn, op, err);
  *size = n;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_get_size);

int PMPI_File_sync(MPI_File fh) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_sync";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  const char* op = nullptr;
  int err = 0;
  if (!(f->amode & MPI_MODE_RDONLY)) err = f->posix.sync(&op);
  // Collective: what one process wrote is on the file before the others go on (MPI 3.1 13.6.1).
  int any = mpi::agree(f->comm, err);
  if (any != 0) return mpi::os_error(f, kFn, op != nullptr ? op : "fsync", any);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_sync);

int PMPI_File_set_atomicity(MPI_File fh, int flag) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_set_atomicity";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  int mine[2] = {flag != 0, -(flag != 0)}, both[2] = {0, 0};
  PMPI_Allreduce(mine, both, 2, MPI_INT, MPI_MAX, f->comm);
  if (both[0] != -both[1]) {
    return mpi::raise_error_on(f, MPI_ERR_NOT_SAME, kFn,
                               "flag argument differs between processes (%d here)", flag);
  }
  f->atomic = flag != 0;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_set_atomicity);

int PMPI_File_get_atomicity(MPI_File fh, int* flag) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_get_atomicity";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (flag == nullptr) return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "flag argument is NULL");
  *flag = f->atomic ? 1 : 0;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_get_atomicity);

int PMPI_File_set_info(MPI_File fh, MPI_Info info) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_set_info";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (info != MPI_INFO_NULL && mpi::info_impl(info) == nullptr)
    return mpi::raise_error_on(f, MPI_ERR_INFO, kFn, "info argument is not a valid info");
  mpi::take_hints(f, info);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_set_info);

int PMPI_File_get_info(MPI_File fh, MPI_Info* info_used) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_get_info";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (info_used == nullptr)
    return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "info_used argument is NULL");
  // The hints given, with the values in force of those this library acts on.
  *info_used = mpi::info_new(mpi::info_impl(f->info));
  mpi::Info* out = mpi::info_impl(*info_used);
  out->set("ind_rd_buffer_size", std::to_string(f->hints.ind_rd_buffer_size));
  out->set("ind_wr_buffer_size", std::to_string(f->hints.ind_wr_buffer_size));
  out->set("romio_ds_read", mpi::toggle_name(f->hints.ds_read));
  out->set("romio_ds_write", mpi::toggle_name(f->hints.ds_write));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_get_info);

int PMPI_File_get_group(MPI_File fh, MPI_Group* group) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_get_group";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (group == nullptr) return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "group argument is NULL");
  return PMPI_Comm_group(f->comm, group);
}
TORUSMPI_WEAK_ALIAS(MPI_File_get_group);

int PMPI_File_get_amode(MPI_File fh, int* amode) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_get_amode";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (amode == nullptr) return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "amode argument is NULL");
  *amode = f->amode;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_get_amode);
