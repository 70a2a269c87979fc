// MPI-IO data access: views (MPI_File_set_view and its queries), the individual file pointer,
// independent reads and writes at explicit offsets and at the individual pointer, their
// nonblocking forms, and data representations (MPI_Register_datarep).
//
// An access is planned (plan_access: the file ranges through the view), its memory side staged
// (stage_write / stage_read_*: packed, device bytes moved by the device layer, converted to the
// file's data representation) and then moved by src/io (sieving, locks). The nonblocking forms
// stage the memory side in the call and hand the file calls to the I/O worker thread
// (io/worker.h), so the caller computes while they run; the progress engine finishes them (a
// read unstaged, under the library's lock) and their requests complete through MPI_Test/MPI_Wait
// like any other, an error raised on the file's handler then, the status counting the elements
// moved.
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/progress.h"
#include "device/device.h"
#include "io/worker.h"
#include "mpi/datatype.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/file.h"
#include "mpi/info.h"
#include "mpi/p2p.h"

namespace torusmpi::mpi {
namespace {

std::vector<std::unique_ptr<Datarep>>& datareps() {
  static auto* const reps = [] {
    auto* v = new std::vector<std::unique_ptr<Datarep>>;
    // "internal" is this library's own representation: the native one (MPI leaves it to the
    // implementation; it need only be readable by the same implementation).
    for (const char* name : {"native", "internal", "external32"}) {
      auto d = std::make_unique<Datarep>();
      d->name = name;
      d->external32 = std::strcmp(name, "external32") == 0;
      v->push_back(std::move(d));
    }
    return v;
  }();
  return *reps;
}

// A view's etype or filetype as the file holds it: in external32 each element in its external
// size (datatype.h: external32_layout); else the type itself. nullptr when that overflows.
dtype::TypeRef file_layout(const Datarep* rep, MPI_Datatype type) {
  return rep->external32 ? external32_layout(type) : engine_type_ref(type);
}

}  // namespace

int64_t file_size_of(const File* f, const dtype::Type& t) {
  return f->datarep->external32 ? t.external_size() : t.size();
}

int64_t memory_bytes(const File* f, const dtype::Type& t, int64_t file_bytes) {
  const int64_t ext = file_size_of(f, t);
  if (ext == t.size() || ext <= 0) return file_bytes;
  // Whole instances of t, then the rest of one in proportion (exact when every element of t
  // changes size alike, as MPI_LONG's do).
  return file_bytes / ext * t.size() + file_bytes % ext * t.size() / ext;
}

namespace {

int io_query(void* extra_state, MPI_Status* st) {
  set_io_status(st, static_cast<int64_t>(reinterpret_cast<intptr_t>(extra_state)));
  return MPI_SUCCESS;
}

int io_free(void*) { return MPI_SUCCESS; }

// The engine type of a view's etype or filetype argument, or an MPI_ERR_TYPE raised on f.
int view_type(File* f, const char* fn, MPI_Datatype type, const char* arg, dtype::TypeRef* out) {
  if (const char* why = bad_datatype(type))
    return raise_error_on(f, MPI_ERR_TYPE, fn, "%s argument is %s", arg, why);
  Datatype* d = derived_type(type);
  if (d != nullptr && !d->committed)
    return raise_error_on(f, MPI_ERR_TYPE, fn, "%s argument is not committed", arg);
  *out = engine_type_ref(type);
  return MPI_SUCCESS;
}

// What an independent access, blocking or not, starts with: fn's checks and the plan from
// offset, explicit (use_pointer false) or the individual pointer's.
int plan_independent(const char* fn, MPI_File fh, bool write, bool use_pointer, MPI_Offset offset,
                     const void* buf, int count, MPI_Datatype type, File** f, const dtype::Type** t,
                     Access* a) {
  if (int err = check_file(fn, fh, f)) return err;
  if (int err = check_access(*f, fn, buf, count, type, write, !use_pointer, t)) return err;
  if (use_pointer) offset = (*f)->pointer;
  return plan_access(*f, fn, offset, count, **t, a);
}

// The whole of an independent access: its plan, the staging and the file side; the individual
// pointer (use_pointer) advances by the etypes moved. *bytes: memory-side bytes moved (a read
// stops at the end of the file).
int independent(const char* fn, MPI_File fh, bool write, bool use_pointer, MPI_Offset offset,
                const void* buf, int count, MPI_Datatype type, int64_t* bytes) {
  *bytes = 0;
  File* f = nullptr;
  const dtype::Type* t = nullptr;
  Access a;
  if (int err = plan_independent(fn, fh, write, use_pointer, offset, buf, count, type, &f, &t, &a))
    return err;
  if (a.bytes == 0) return MPI_SUCCESS;
  Staged s;
  const char* op = nullptr;
  int64_t moved = 0;
  if (write) {
    if (int err = stage_write(f, fn, buf, count, type, *t, &s)) return err;
    if (int e = f->posix.write(a.ranges, s.data, f->hints, f->atomic, &op))
      return os_error(f, fn, op, e);
    moved = a.bytes;
  } else {
    int64_t at = 0;
    if (!f->datarep->external32 && !f->datarep->user && t->contiguous(count, &at) &&
        !device::in_device_range(static_cast<const char*>(buf) + at)) {
      // Host bytes as they are: read into the user's buffer, no copy.
      char* direct = const_cast<char*>(static_cast<const char*>(buf)) + at;
      if (int e = f->posix.read(a.ranges, direct, f->hints, f->atomic, &moved, &op))
        return os_error(f, fn, op, e);
    } else {
      if (int err = stage_read_begin(f, fn, count, *t, &s)) return err;
      if (int e = f->posix.read(a.ranges, s.data, f->hints, f->atomic, &moved, &op))
        return os_error(f, fn, op, e);
      if (int err = stage_read_end(f, fn, const_cast<void*>(buf), count, type, *t, &s, moved))
        return err;
    }
  }
  if (use_pointer) f->pointer += moved / f->view.etype_size();
  *bytes = memory_bytes(f, *t, moved);
  return MPI_SUCCESS;
}

// --- Nonblocking independent accesses: the I/O worker's jobs ----------------------------------

struct AsyncAccess final : io::Job {
  File* f = nullptr;
  const char* fn = nullptr;
  bool write = false;
  Access a;
  Staged staged;
  bool direct = false;  // a read straight into the user's memory: nothing to unstage
  void* user = nullptr;
  int count = 0;
  MPI_Datatype type = nullptr;  // retained until the request goes
  dtype::TypeRef t;
  Request* request = nullptr;
  // The file's hints and atomicity as they were at the call: the program may change them while
  // the worker runs (MPI_File_set_info, set_atomicity), which it must not see half way.
  io::Hints hints;
  bool atomic = false;
  // The worker's results.
  int os_err = 0;
  const char* op = nullptr;
  int64_t moved = 0;
  // After them, the progress engine's.
  int unstage_error = MPI_SUCCESS;

  ~AsyncAccess() override { release_type(type); }
  void run() override {
    if (write) {
      os_err = f->posix.write(a.ranges, staged.data, hints, atomic, &op);
      moved = os_err == 0 ? a.bytes : 0;
    } else {
      os_err = f->posix.read(a.ranges, staged.data, hints, atomic, &moved, &op);
    }
  }
};

std::deque<AsyncAccess*>& async_in_flight() {
  static std::deque<AsyncAccess*> list;
  return list;
}
int g_async_poll_id = -1;

// Finishes the accesses whose file calls are done: unstages reads, completes requests.
int poll_async(void*) {
  int events = 0;
  auto& list = async_in_flight();
  for (size_t i = 0; i < list.size();) {
    AsyncAccess* x = list[i];
    if (!x->done()) {
      ++i;
      continue;
    }
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    if (!x->write && !x->direct && x->os_err == 0) {
      x->unstage_error =
          stage_read_end(x->f, x->fn, x->user, x->count, x->type, *x->t, &x->staged, x->moved);
    }
    --x->f->async_jobs;
    progress::add_work(-1);
    ++events;
    complete_io_request(x->request);
  }
  return events;
}

int query_async(void* state, MPI_Status* st) {
  auto* x = static_cast<AsyncAccess*>(state);
  if (x->os_err != 0) return os_error(x->f, x->fn, x->op, x->os_err);
  if (x->unstage_error != MPI_SUCCESS) return x->unstage_error;
  set_io_status(st, memory_bytes(x->f, *x->t, x->moved));
  return MPI_SUCCESS;
}
int free_async(void* state) {
  delete static_cast<AsyncAccess*>(state);
  return MPI_SUCCESS;
}

// The nonblocking forms of independent(): the pointer moves by what is asked, at once (MPI 3.1,
// 13.4.3), the access goes to the worker.
int independent_async(const char* fn, MPI_File fh, bool write, bool use_pointer, MPI_Offset offset,
                      const void* buf, int count, MPI_Datatype type, MPI_Request* request) {
  File* f = nullptr;
  const dtype::Type* t = nullptr;
  Access a;
  if (int err = plan_independent(fn, fh, write, use_pointer, offset, buf, count, type, &f, &t, &a))
    return err;
  const int64_t bytes = a.bytes;
  if (int err = start_async(f, fn, write, std::move(a), buf, count, type, *t, request)) return err;
  if (use_pointer) f->pointer += bytes / f->view.etype_size();
  return MPI_SUCCESS;
}

}  // namespace

void complete_io_request(Request* r) {
  __atomic_store_n(&r->gcomplete, true, __ATOMIC_RELEASE);
  if (!r->gfreed) return;
  r->free_fn(r->extra_state);
  Request::release(r);
}

int start_async(File* f, const char* fn, bool write, Access a, const void* buf, int count,
                MPI_Datatype type, const dtype::Type& t, MPI_Request* request) {
  if (a.bytes == 0) {
    done_request(0, request);
    return MPI_SUCCESS;
  }
  auto x = std::make_unique<AsyncAccess>();
  x->f = f;
  x->fn = fn;
  x->write = write;
  x->user = const_cast<void*>(buf);
  x->count = count;
  x->t = engine_type_ref(type);
  int64_t at = 0;
  if (write) {
    // Staged (or pointed at) now: MPI lets the caller not touch buf until the request completes,
    // so the user's own bytes may be written from directly.
    if (int err = stage_write(f, fn, buf, count, type, t, &x->staged)) return err;
  } else if (!f->datarep->external32 && !f->datarep->user && t.contiguous(count, &at) &&
             !device::in_device_range(static_cast<const char*>(buf) + at)) {
    x->staged.data = static_cast<char*>(x->user) + at;
    x->direct = true;
  } else if (int err = stage_read_begin(f, fn, count, t, &x->staged)) {
    return err;
  }
  x->a = std::move(a);
  x->hints = f->hints;
  x->atomic = f->atomic;
  retain_type(type);
  x->type = type;
  Request* r = Request::make();
  r->kind = Request::Kind::kGrequest;
  r->query_fn = query_async;
  r->free_fn = free_async;
  r->grequest_funcs_are_c() = 1;
  r->graises_own = true;
  r->extra_state = x.get();
  x->request = r;
  *request = &r->handle;
  if (g_async_poll_id < 0) g_async_poll_id = progress::add(poll_async, nullptr);
  ++f->async_jobs;
  progress::add_work(1);
  async_in_flight().push_back(x.get());
  io::submit(x.release());
  return MPI_SUCCESS;
}

void wait_async(File* f) {
  if (f->async_jobs > 0) progress::wait_until([f] { return f->async_jobs == 0; });
}

const Datarep* find_datarep(const char* name) {
  for (const auto& d : datareps()) {
    if (d->name == name) return d.get();
  }
  return nullptr;
}

void set_io_status(MPI_Status* st, int64_t bytes) {
  if (st == MPI_STATUS_IGNORE) return;
  set_empty_status(st);
  st->_ucount = static_cast<size_t>(bytes);
}

void done_request(int64_t bytes, MPI_Request* request) {
  Request* r = Request::make();
  r->kind = Request::Kind::kGrequest;
  r->query_fn = io_query;
  r->free_fn = io_free;
  r->extra_state = reinterpret_cast<void*>(static_cast<intptr_t>(bytes));
  r->grequest_funcs_are_c() = 1;
  r->gcomplete = true;
  *request = &r->handle;
}

int check_access(File* f, const char* fn, const void* buf, int count, MPI_Datatype type, bool write,
                 bool explicit_offset, const dtype::Type** t) {
  if (write && (f->amode & MPI_MODE_RDONLY))
    return raise_error_on(f, MPI_ERR_READ_ONLY, fn, "file was opened MPI_MODE_RDONLY");
  if (!write && (f->amode & MPI_MODE_WRONLY))
    return raise_error_on(f, MPI_ERR_ACCESS, fn, "file was opened MPI_MODE_WRONLY");
  if (explicit_offset && (f->amode & MPI_MODE_SEQUENTIAL)) {
    return raise_error_on(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                          "explicit offsets on a file opened MPI_MODE_SEQUENTIAL");
  }
  if (count < 0) return raise_error_on(f, MPI_ERR_COUNT, fn, "count argument is %d", count);
  if (const char* why = bad_datatype(type))
    return raise_error_on(f, MPI_ERR_TYPE, fn, "datatype argument is %s", why);
  Datatype* d = derived_type(type);
  if (d != nullptr && !d->committed)
    return raise_error_on(f, MPI_ERR_TYPE, fn, "datatype argument is not committed");
  *t = engine_type(type);
  if (count > 0 && (*t)->size() > 0) {
    if (buf == nullptr && (*t)->true_lb() == 0 && type != MPI_DATATYPE_NULL)
      return raise_error_on(f, MPI_ERR_BUFFER, fn, "buf argument is NULL");
    const char* lo = nullptr;
    size_t span = 0;
    type_span(**t, buf, count, &lo, &span);
    if (!device::known_host(lo, span) && device::kind(lo, span) == device::Kind::kInvalid) {
      return raise_error_on(f, MPI_ERR_BUFFER, fn,
                            "buf argument %p (%zu B) is neither host memory nor device memory of "
                            "this job",
                            buf, span);
    }
  }
  return MPI_SUCCESS;
}

int plan_access(File* f, const char* fn, int64_t offset, int64_t count, const dtype::Type& t,
                Access* a) {
  if (offset < 0)
    return raise_error_on(f, MPI_ERR_ARG, fn, "offset is negative (%lld)", (long long)offset);
  const int64_t bytes = count * file_size_of(f, t);
  if (bytes % f->view.etype_size() != 0) {
    return raise_error_on(f, MPI_ERR_TYPE, fn,
                          "the access is %lld bytes, not a whole number of etypes (%lld bytes)",
                          (long long)bytes, (long long)f->view.etype_size());
  }
  if (bytes > 0 && f->view.empty()) {
    return raise_error_on(f, MPI_ERR_ARG, fn,
                          "the view's filetype has no data: no byte of the file can be accessed");
  }
  a->pos = offset * f->view.etype_size();
  if (!f->view.increasing(a->pos, bytes)) {
    return raise_error_on(
        f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
        "the access crosses into the filetype's next instance, which starts before this one's "
        "data ends (extent %lld, data to byte %lld): torusmpi moves file bytes in increasing "
        "order",
        (long long)f->view.filetype().extent(), (long long)f->view.data_end());
  }
  a->bytes = bytes;
  a->ranges.clear();
  f->view.map(a->pos, a->bytes, &a->ranges);
  return MPI_SUCCESS;
}

int stage_write(File* f, const char* fn, const void* buf, int64_t count, MPI_Datatype type,
                const dtype::Type& t, Staged* s) {
  const int64_t bytes = count * t.size();
  const Datarep* rep = f->datarep;
  int64_t offset = 0;
  if (rep->user) {
    if (span_on_device(t, buf)) {
      return raise_error_on(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                            "user data representation %s on device memory", rep->name.c_str());
    }
    s->own.resize(static_cast<size_t>(bytes));
    s->data = s->own.data();
    if (rep->write_fn != nullptr) {
      int rc = rep->write_fn(const_cast<void*>(buf), type, static_cast<int>(count), s->data, 0,
                             rep->extra_state);
      if (rc != MPI_SUCCESS) {
        return raise_error_on(f, rc, fn, "write conversion of data representation %s failed",
                              rep->name.c_str());
      }
      return MPI_SUCCESS;
    }
    t.pack(buf, count, s->data);
    return MPI_SUCCESS;
  }
  if (!rep->external32 && t.contiguous(count, &offset) &&
      !device::in_device_range(static_cast<const char*>(buf) + offset)) {
    // Host bytes as they are: written from the user's buffer, no copy.
    s->data = const_cast<char*>(static_cast<const char*>(buf) + offset);
    return MPI_SUCCESS;
  }
  s->own.resize(static_cast<size_t>(bytes));
  s->data = s->own.data();
  pack_any(t, buf, count, s->data);
  if (rep->external32) {
    std::vector<char> ext(static_cast<size_t>(count * t.external_size()));
    t.to_external(s->data, count, ext.data());
    s->own.swap(ext);
    s->data = s->own.data();
  }
  return MPI_SUCCESS;
}

int stage_read_begin(File* f, const char* fn, int64_t count, const dtype::Type& t, Staged* s) {
  (void)fn;
  s->own.resize(static_cast<size_t>(count * file_size_of(f, t)));
  s->data = s->own.data();
  return MPI_SUCCESS;
}

int stage_read_end(File* f, const char* fn, void* buf, int64_t count, MPI_Datatype type,
                   const dtype::Type& t, Staged* s, int64_t got) {
  const Datarep* rep = f->datarep;
  if (got <= 0) return MPI_SUCCESS;
  if (rep->user) {
    if (span_on_device(t, buf)) {
      return raise_error_on(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                            "user data representation %s on device memory", rep->name.c_str());
    }
    if (rep->read_fn != nullptr) {
      // Whole elements only: a conversion function converts elements.
      int64_t whole = t.size() > 0 ? got / t.size() : 0;
      int rc = rep->read_fn(buf, type, static_cast<int>(whole), s->data, 0, rep->extra_state);
      if (rc != MPI_SUCCESS) {
        return raise_error_on(f, rc, fn, "read conversion of data representation %s failed",
                              rep->name.c_str());
      }
      return MPI_SUCCESS;
    }
    t.unpack_range(s->data, count, 0, got, buf);
    return MPI_SUCCESS;
  }
  if (rep->external32) {
    std::vector<char> native(static_cast<size_t>(count * t.size()));
    t.from_external(s->data, count, native.data());
    s->own.swap(native);
    s->data = s->own.data();
    got = memory_bytes(f, t, got);  // the stream's bytes now: native ones
  }
  unpack_range_any(t, s->data, count, 0, got, buf);
  return MPI_SUCCESS;
}

namespace {

// MPI_File_set_view's checks of this process's arguments, and the view they make (*v, *rep_out);
// an error is raised on the file's handler and returned.
int check_view(File* f, const char* kFn, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
               const char* datarep, MPI_Info info, io::View* v, const Datarep** rep_out) {
  dtype::TypeRef et, ft;
  if (int err = view_type(f, kFn, etype, "etype", &et)) return err;
  if (int err = view_type(f, kFn, filetype, "filetype", &ft)) return err;
  if (datarep == nullptr)
    return raise_error_on(f, MPI_ERR_UNSUPPORTED_DATAREP, kFn, "datarep argument is NULL");
  const Datarep* rep = find_datarep(datarep);
  if (rep == nullptr) {
    return raise_error_on(f, MPI_ERR_UNSUPPORTED_DATAREP, kFn,
                          "datarep argument \"%s\" is not a data representation", datarep);
  }
  if (info != MPI_INFO_NULL && info_impl(info) == nullptr)
    return raise_error_on(f, MPI_ERR_INFO, kFn, "info argument is not a valid info");
  if (disp == MPI_DISPLACEMENT_CURRENT) {
    if (!(f->amode & MPI_MODE_SEQUENTIAL)) {
      return raise_error_on(f, MPI_ERR_ARG, kFn,
                            "disp MPI_DISPLACEMENT_CURRENT on a file not opened "
                            "MPI_MODE_SEQUENTIAL");
    }
    disp = f->view.file_offset(f->pointer * f->view.etype_size());
  }
  dtype::TypeRef file_et = file_layout(rep, etype), file_ft = file_layout(rep, filetype);
  if (file_et == nullptr || file_ft == nullptr) {
    return raise_error_on(f, MPI_ERR_ARG, kFn, "%s's layout in %s overflows 63 bits",
                          file_et == nullptr ? "etype" : "filetype", datarep);
  }
  if (rep->user && rep->extent_fn != nullptr && derived_type(etype) == nullptr) {
    MPI_Aint extent = 0;
    int rc = rep->extent_fn(etype, &extent, rep->extra_state);
    if (rc != MPI_SUCCESS || extent != et->extent()) {
      return raise_error_on(
          f, MPI_ERR_UNSUPPORTED_DATAREP, kFn,
          "data representation %s gives the etype %ld file bytes, not its %lld native ones "
          "(this library converts elements in place)",
          datarep, static_cast<long>(extent), static_cast<long long>(et->extent()));
    }
  }
  std::string why = io::View::make(disp, file_et, file_ft, v);
  if (!why.empty()) return raise_error_on(f, MPI_ERR_ARG, kFn, "%s", why.c_str());
  *rep_out = rep;
  return MPI_SUCCESS;
}

}  // namespace

}  // namespace torusmpi::mpi

namespace mpi = torusmpi::mpi;
using mpi::File;

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char* datarep, MPI_Info info) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_set_view";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  torusmpi::io::View v;
  const mpi::Datarep* rep = nullptr;
  int err = mpi::check_view(f, kFn, disp, etype, filetype, datarep, info, &v, &rep);
  // Collective: a process whose arguments are wrong (its error already raised) still joins the
  // group's one exchange, so that every process fails instead of the others waiting for it; the
  // exchange is also the barrier the shared pointer's reset needs (the processes leave together).
  int mine[2] = {err, err != MPI_SUCCESS ? f->rank : -1}, any[2] = {0, -1};
  int rc = PMPI_Allreduce(mine, any, 2, MPI_INT, MPI_MAX, f->comm);
  if (rc != MPI_SUCCESS) return rc;
  if (err != MPI_SUCCESS) return err;
  if (any[0] != MPI_SUCCESS) {
    return mpi::raise_error_on(f, any[0], kFn,
                               "the view was left as it was: the arguments of rank %d of the "
                               "file's group were wrong",
                               any[1]);
  }
  mpi::retain_type(etype);
  mpi::retain_type(filetype);
  mpi::release_type(f->etype);
  mpi::release_type(f->filetype);
  f->etype = etype;
  f->filetype = filetype;
  f->view = std::move(v);
  f->datarep = rep;
  f->pointer = 0;
  if (info != MPI_INFO_NULL) PMPI_File_set_info(fh, info);
  for (auto& hook : f->at_set_view) {
    int e = hook(f);
    if (rc == MPI_SUCCESS) rc = e;
  }
  if (rc != MPI_SUCCESS) return rc;
  // The hooks' work (rank 0's reset of the shared pointer) is done before anyone goes on.
  return PMPI_Barrier(f->comm);
}
TORUSMPI_WEAK_ALIAS(MPI_File_set_view);

int PMPI_File_get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype,
                       char* datarep) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_get_view";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (disp == nullptr || etype == nullptr || filetype == nullptr || datarep == nullptr) {
    return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "%s argument is NULL",
                               disp == nullptr       ? "disp"
                               : etype == nullptr    ? "etype"
                               : filetype == nullptr ? "filetype"
                                                     : "datarep");
  }
  *disp = f->view.disp();
  // Derived types come back as new references, which the application frees (MPI 3.1 13.3).
  mpi::retain_type(f->etype);
  mpi::retain_type(f->filetype);
  *etype = f->etype;
  *filetype = f->filetype;
  std::snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", f->datarep->name.c_str());
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_get_view);

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_get_type_extent";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (extent == nullptr) return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "extent argument is NULL");
  if (const char* why = mpi::bad_datatype(datatype))
    return mpi::raise_error_on(f, MPI_ERR_TYPE, kFn, "datatype argument is %s", why);
  const mpi::Datarep* rep = f->datarep;
  if (rep->user && rep->extent_fn != nullptr && mpi::derived_type(datatype) == nullptr) {
    int rc = rep->extent_fn(datatype, extent, rep->extra_state);
    if (rc != MPI_SUCCESS) {
      return mpi::raise_error_on(f, rc, kFn, "extent function of data representation %s failed",
                                 rep->name.c_str());
    }
    return MPI_SUCCESS;
  }
  torusmpi::dtype::TypeRef file_side = mpi::file_layout(rep, datatype);
  if (file_side == nullptr) {
    return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "datatype's layout in %s overflows 63 bits",
                               rep->name.c_str());
  }
  *extent = file_side->extent();
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_get_type_extent);

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset* disp) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_get_byte_offset";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (disp == nullptr) return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "disp argument is NULL");
  if (offset < 0) {
    return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "offset argument is negative (%lld)",
                               static_cast<long long>(offset));
  }
  *disp = f->view.file_offset(offset * f->view.etype_size());
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_get_byte_offset);

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_seek";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (f->amode & MPI_MODE_SEQUENTIAL) {
    return mpi::raise_error_on(f, MPI_ERR_UNSUPPORTED_OPERATION, kFn,
                               "file was opened MPI_MODE_SEQUENTIAL");
  }
  int64_t to = 0;
  switch (whence) {
    case MPI_SEEK_SET:
      to = offset;
      break;
    case MPI_SEEK_CUR:
      to = f->pointer + offset;
      break;
    case MPI_SEEK_END: {
      int64_t size = 0;
      const char* op = nullptr;
      if (int e = f->posix.size(&size, &op)) return mpi::os_error(f, kFn, op, e);
      // The end of the file in etypes of the view: the first etype at or past it.
      int64_t es = f->view.etype_size();
      to = (f->view.stream_position(size) + es - 1) / es + offset;
      break;
    }
    default:
      return mpi::raise_error_on(f, MPI_ERR_ARG, kFn,
                                 "whence argument is %d, not MPI_SEEK_SET, _CUR or _END", whence);
  }
  if (to < 0) {
    return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "the pointer would be negative (%lld)",
                               static_cast<long long>(to));
  }
  f->pointer = to;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_seek);

int PMPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_File_get_position";
  File* f = nullptr;
  if (int err = mpi::check_file(kFn, fh, &f)) return err;
  if (offset == nullptr) return mpi::raise_error_on(f, MPI_ERR_ARG, kFn, "offset argument is NULL");
  *offset = f->pointer;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_File_get_position);

// The eight independent data access calls: blocking ones fill a status, nonblocking ones hand
// the access to the I/O worker and return its request.
#define TORUSMPI_FILE_ACCESS(Name, Write, Pointer, ...)                                            \
  int PMPI_File_##Name(MPI_File fh, __VA_ARGS__ MPI_Datatype datatype, MPI_Status* status) {       \
    torusmpi::progress::Lock lock;                                                                 \
    int64_t bytes = 0;                                                                             \
    int err = mpi::independent("MPI_File_" #Name, fh, Write, Pointer, TORUSMPI_OFFSET, buf, count, \
                               datatype, &bytes);                                                  \
    if (err == MPI_SUCCESS) mpi::set_io_status(status, bytes);                                     \
    return err;                                                                                    \
  }                                                                                                \
  TORUSMPI_WEAK_ALIAS(MPI_File_##Name)
#define TORUSMPI_FILE_IACCESS(Name, Write, Pointer, ...)                                       \
  int PMPI_File_##Name(MPI_File fh, __VA_ARGS__ MPI_Datatype datatype, MPI_Request* request) { \
    torusmpi::progress::Lock lock;                                                             \
    if (request == nullptr)                                                                    \
      return mpi::raise_error_file(MPI_ERR_REQUEST, "MPI_File_" #Name,                         \
                                   "request argument is NULL");                                \
    return mpi::independent_async("MPI_File_" #Name, fh, Write, Pointer, TORUSMPI_OFFSET, buf, \
                                  count, datatype, request);                                   \
  }                                                                                            \
  TORUSMPI_WEAK_ALIAS(MPI_File_##Name)

#define TORUSMPI_OFFSET offset
TORUSMPI_FILE_ACCESS(read_at, false, false, MPI_Offset offset, void* buf, int count, );
TORUSMPI_FILE_ACCESS(write_at, true, false, MPI_Offset offset, const void* buf, int count, );
TORUSMPI_FILE_IACCESS(iread_at, false, false, MPI_Offset offset, void* buf, int count, );
TORUSMPI_FILE_IACCESS(iwrite_at, true, false, MPI_Offset offset, const void* buf, int count, );
#undef TORUSMPI_OFFSET
#define TORUSMPI_OFFSET 0
TORUSMPI_FILE_ACCESS(read, false, true, void* buf, int count, );
TORUSMPI_FILE_ACCESS(write, true, true, const void* buf, int count, );
TORUSMPI_FILE_IACCESS(iread, false, true, void* buf, int count, );
TORUSMPI_FILE_IACCESS(iwrite, true, true, const void* buf, int count, );
#undef TORUSMPI_OFFSET

int PMPI_Register_datarep(const char* datarep, MPI_Datarep_conversion_function* read_conversion_fn,
                          MPI_Datarep_conversion_function* write_conversion_fn,
                          MPI_Datarep_extent_function* dtype_file_extent_fn, void* extra_state) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Register_datarep";
  if (int err = mpi::require_active(kFn)) return err;
  if (datarep == nullptr)
    return mpi::raise_error_file(MPI_ERR_ARG, kFn, "datarep argument is NULL");
  size_t len = std::strlen(datarep);
  if (len == 0 || len >= MPI_MAX_DATAREP_STRING) {
    return mpi::raise_error_file(MPI_ERR_ARG, kFn,
                                 "datarep argument has %zu characters (1 to %d allowed)", len,
                                 MPI_MAX_DATAREP_STRING - 1);
  }
  if (dtype_file_extent_fn == nullptr)
    return mpi::raise_error_file(MPI_ERR_ARG, kFn, "dtype_file_extent_fn argument is NULL");
  if (mpi::find_datarep(datarep) != nullptr) {
    return mpi::raise_error_file(MPI_ERR_DUP_DATAREP, kFn,
                                 "datarep argument \"%s\" is registered already", datarep);
  }
  auto d = std::make_unique<mpi::Datarep>();
  d->name = datarep;
  d->read_fn = read_conversion_fn;
  d->write_fn = write_conversion_fn;
  d->extent_fn = dtype_file_extent_fn;
  d->extra_state = extra_state;
  d->user = true;
  mpi::datareps().push_back(std::move(d));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Register_datarep);
