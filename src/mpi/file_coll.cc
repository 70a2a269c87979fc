// MPI-IO's collective data access (read_all, write_all, the _at, _begin/_end and nonblocking
// forms) and shared file pointers (read/write_shared and their nonblocking forms, read/write
// _ordered and their split forms, seek_shared, get_position_shared).
//
// A collective call packs the caller's data (in place when the memory datatype is dense and on
// the host), asks the view for the call's file extents and hands both to io::TwoPhase, which
// moves them over the pml on the file's own communicator (its point-to-point context, which the
// application cannot reach: the file holds a private duplicate), so a profiling layer on the
// application's MPI_ calls sees only the MPI_File_ call. A blocking call steps it to the end; a
// nonblocking one (and _begin) starts it and leaves it to the progress engine, whose poll steps
// every access in flight; its request completes when the access is over (a read's staged data
// unpacked first).
//
// Shared pointer: an independent access takes its place by one fetch-and-add under the lock of
// the pointer's file, then reads or writes there; an ordered one is collective: rank 0 moves the
// pointer once by the group's total and tells each rank where its part starts (a gather and a
// scatter of 8 bytes over the same private context), then the access is a collective one at those
// offsets.
#include "mpi/file_coll.h"

#include <algorithm>
#include <cstring>
#include <deque>

#include "boot/boot.h"
#include "core/progress.h"
#include "mpi/datatype.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/file.h"
#include "mpi/info.h"
#include "mpi/p2p.h"
#include "mpi/runtime.h"

namespace torusmpi::mpi {

// --- One access: its data, packed, and its progress ---------------------------------------------

namespace {

// Tags of the file's private context: 4 per collective call (io::TwoPhaseArgs::tag), the
// ordered and seek exchanges after them.
constexpr int kTagsPerCall = 8;
constexpr uint32_t kCallTagCycle = (1u << 26);

// A data access in flight: the caller's buffer, its packed bytes, the extents, the engine.
struct Access {
  const char* fn = nullptr;
  MPI_File fh = nullptr;
  bool write = false;
  void* user = nullptr;
  dtype::TypeRef type;  // the memory datatype (engine's), when the data is staged
  int64_t count = 0;
  int64_t bytes = 0;
  StageMem stage;  // packed data when not used in place
  char* data = nullptr;
  std::vector<io::Extent> extents;
  std::unique_ptr<io::PmlChannel> channel;  // the file's private context
  std::unique_ptr<io::TwoPhase> op;
  io::TwoPhaseResult result;
  bool over = false;
  Request* request = nullptr;  // nonblocking: its request
};

// The packed bytes of an access: the user's memory when the datatype is dense on the host.
void stage_access(Access* x, MPI_Datatype datatype, const TypeArg& t) {
  x->bytes = x->count * static_cast<int64_t>(t.size);
  char* user = static_cast<char*>(x->user);
  bool on_device = x->bytes > 0 && t.derived ? span_on_device(*t.t, user)
                                             : device::in_device_range(user);
  if (t.dense && !on_device) {
    x->data = user + t.offset;
    return;
  }
  x->type = engine_type_ref(datatype);
  x->data = x->stage.make(static_cast<size_t>(std::max<int64_t>(x->bytes, 1)), false);
  if (x->write && x->bytes > 0) pack_any(*x->type, user, x->count, x->data);
}

// A read's staged bytes back into the user's layout: only what was read.
void drain_access(Access* x) {
  if (x->write || !x->type || x->result.transferred <= 0) return;
  unpack_range_any(*x->type, x->data, x->count, 0, x->result.transferred, x->user);
}

// --- Nonblocking accesses: stepped by the progress engine ---------------------------------------

std::deque<Access*>& in_flight() {
  static std::deque<Access*> list;
  return list;
}
int g_poll_id = -1;

int poll_accesses(void*) {
  int events = 0;
  auto& list = in_flight();
  for (size_t i = 0; i < list.size();) {
    Access* x = list[i];
    if (!x->op->step()) {
      ++i;
      continue;
    }
    x->result = x->op->result();
    x->op.reset();
    drain_access(x);
    x->over = true;
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    progress::add_work(-1);
    ++events;
    if (x->request != nullptr) __atomic_store_n(&x->request->gcomplete, true, __ATOMIC_RELEASE);
  }
  return events;
}

void start_in_flight(Access* x) {
  if (g_poll_id < 0) g_poll_id = progress::add(poll_accesses, nullptr);
  in_flight().push_back(x);
  progress::add_work(1);
  // The first step now: the messages go out before the call returns.
  poll_accesses(nullptr);
}

}  // namespace

struct FileColl::Split {
  std::unique_ptr<Access> access;
  bool ordered = false;
};

FileColl::FileColl() = default;
FileColl::~FileColl() = default;


// --- What the file object gives (file.h) ---------------------------------------------------------

namespace {

// One call's file, checked: the handle is an open file, and the access is allowed.
struct Target {
  MPI_File fh = nullptr;
  File* f = nullptr;
  FileColl* fc = nullptr;
};

// fh is an open file (MPI_ERR_FILE), and its access mode allows reading or writing
// (MPI_ERR_READ_ONLY, MPI_ERR_ACCESS); MPI_MODE_SEQUENTIAL files take only the shared-pointer
// calls (MPI_ERR_UNSUPPORTED_OPERATION).
int target(const char* fn, MPI_File fh, bool write, bool shared, Target* t) {
  if (int err = check_file(fn, fh, &t->f)) return err;
  t->fh = fh;
  t->fc = file_coll_of(t->f);
  if (write && (file_amode(t->f) & MPI_MODE_RDONLY) != 0) {
    return raise_file(fh, MPI_ERR_READ_ONLY, fn, "the file was opened MPI_MODE_RDONLY");
  }
  if (!write && (file_amode(t->f) & MPI_MODE_WRONLY) != 0) {
    return raise_file(fh, MPI_ERR_ACCESS, fn, "the file was opened MPI_MODE_WRONLY");
  }
  if (!shared && (file_amode(t->f) & MPI_MODE_SEQUENTIAL) != 0) {
    return raise_file(fh, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                      "the file was opened MPI_MODE_SEQUENTIAL: only shared file pointers");
  }
  return MPI_SUCCESS;
}

// The data arguments: count >= 0 elements of a committed datatype at buf, a whole number of
// etypes; fills x (packs a write's data).
int data_args(const char* fn, const Target& t, void* buf, int count, MPI_Datatype datatype,
              bool write, Access* x) {
  TypeArg ta;
  if (int err = check_file_datatype(fn, t.fh, datatype, &ta)) return err;
  if (count < 0) return raise_file(t.fh, MPI_ERR_COUNT, fn, "count argument is negative (%d)", count);
  x->fn = fn;
  x->fh = t.fh;
  x->write = write;
  x->user = buf;
  x->count = count;
  int64_t bytes = static_cast<int64_t>(count) * static_cast<int64_t>(ta.size);
  if (int err = check_file_buffer(fn, t.fh, buf, ta, count)) return err;
  int64_t esize = file_etype_size(t.f);
  if (esize > 0 && bytes % esize != 0) {
    return raise_file(t.fh, MPI_ERR_ARG, fn,
                      "count * datatype size (%lld bytes) is not a whole number of etypes of %lld "
                      "bytes",
                      static_cast<long long>(bytes), static_cast<long long>(esize));
  }
  stage_access(x, datatype, ta);
  return MPI_SUCCESS;
}

void set_file_status(MPI_Status* st, int64_t bytes) {
  set_status(st, MPI_ANY_SOURCE, MPI_ANY_TAG, static_cast<size_t>(bytes), false);
  if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = MPI_SUCCESS;
}

// The engine's arguments for an access at `offset` (etypes of the view).
void engine_args(const Target& t, Access* x, int64_t offset, io::TwoPhaseArgs* a) {
  file_extents(t.f, offset, x->bytes, &x->extents);
  Comm* comm = file_comm(t.f);
  x->channel = std::make_unique<io::PmlChannel>(comm, comm->context);
  a->channel = x->channel.get();
  a->tag = static_cast<int>((t.fc->calls++ % kCallTagCycle) * kTagsPerCall);
  a->fd = file_fd(t.f);
  a->write = x->write;
  a->extents = x->extents;
  a->data = x->data;
  a->aggregators = t.fc->aggregators;
  a->cb_buffer_size = t.fc->hints.cb_buffer_size;
  a->mode = x->write ? t.fc->hints.write : t.fc->hints.read;
}

// The end of an access: its error on the file's handler, or its status.
int finish_access(Access* x, MPI_Status* st) {
  const io::TwoPhaseResult& r = x->result;
  if (!r.ok) {
    int cls = r.os_error == ENOSPC || r.os_error == EDQUOT ? MPI_ERR_NO_SPACE : MPI_ERR_IO;
    if (r.os_error == 0) cls = MPI_ERR_OTHER;
    return raise_file(x->fh, cls, x->fn, "%s: %s", file_path(x->fh).c_str(), r.what.c_str());
  }
  set_file_status(st, r.transferred);
  return MPI_SUCCESS;
}

// A blocking collective access.
int run_access(const Target& t, Access* x, int64_t offset, MPI_Status* st) {
  io::TwoPhaseArgs a;
  engine_args(t, x, offset, &a);
  x->result = io::two_phase(a);
  drain_access(x);
  return finish_access(x, st);
}

// The request of a nonblocking access: a generalized request, completed by poll_accesses.
int query_access(void* state, MPI_Status* st) {
  auto* x = static_cast<Access*>(state);
  return finish_access(x, st);
}
int free_access(void* state) {
  delete static_cast<Access*>(state);
  return MPI_SUCCESS;
}
int cancel_access(void*, int) { return MPI_SUCCESS; }  // MPI-IO accesses are not cancelled

int start_access(const Target& t, std::unique_ptr<Access> x, int64_t offset,
                 MPI_Request* request) {
  io::TwoPhaseArgs a;
  engine_args(t, x.get(), offset, &a);
  x->op = std::make_unique<io::TwoPhase>(std::move(a));
  Request* r = Request::make();
  r->kind = Request::Kind::kGrequest;
  r->query_fn = query_access;
  r->free_fn = free_access;
  r->cancel_fn = cancel_access;
  r->grequest_funcs_are_c() = 1;
  Access* raw = x.release();
  r->extra_state = raw;
  raw->request = r;
  *request = &r->handle;
  start_in_flight(raw);
  return MPI_SUCCESS;
}

// --- The collective calls ------------------------------------------------------------------------

enum class Where { kIndividual, kExplicit };

// Blocking (request == nullptr, split == false), nonblocking, or a split _begin.
int collective(const char* fn, MPI_File fh, Where where, MPI_Offset offset, void* buf, int count,
               MPI_Datatype datatype, bool write, MPI_Status* st, MPI_Request* request,
               bool split) {
  Target t;
  if (int err = target(fn, fh, write, false, &t)) return err;
  if (request != nullptr && request == nullptr) return MPI_ERR_REQUEST;
  if (where == Where::kExplicit && offset < 0) {
    return raise_file(fh, MPI_ERR_ARG, fn, "offset argument is negative (%lld)",
                      static_cast<long long>(offset));
  }
  if (split && t.fc->split) {
    return raise_file(fh, MPI_ERR_REQUEST, fn,
                      "a split collective is already active on this file (MPI allows one)");
  }
  auto x = std::make_unique<Access>();
  if (int err = data_args(fn, t, buf, count, datatype, write, x.get())) return err;
  int64_t at = offset;
  if (where == Where::kIndividual) {
    // The pointer moves now, as if the access were done (MPI 3.1, 13.4.3).
    int64_t* pos = file_individual_pointer(t.f);
    at = *pos;
    *pos += x->bytes / std::max<int64_t>(file_etype_size(t.f), 1);
  }
  if (split) {
    auto s = std::make_unique<FileColl::Split>();
    MPI_Request req;
    Access* raw = x.get();
    int err = start_access(t, std::move(x), at, &req);
    // The split keeps the access; the request object goes (its free_fn must not delete it).
    Request* r = request_impl(req);
    r->free_fn = nullptr;
    r->extra_state = nullptr;
    raw->request = nullptr;
    Request::release(r);
    s->access.reset(raw);
    t.fc->split = std::move(s);
    return err;
  }
  if (request != nullptr) return start_access(t, std::move(x), at, request);
  return run_access(t, x.get(), at, st);
}

// MPI_File_*_end: waits for the split collective begun on the file, which must be the same kind.
int split_end(const char* fn, MPI_File fh, void* buf, bool write, bool ordered, MPI_Status* st) {
  File* f = nullptr;
  if (int err = check_file(fn, fh, &f)) return err;
  FileColl* fc = file_coll_of(f);
  if (!fc->split || fc->split->access->write != write || fc->split->ordered != ordered) {
    return raise_file(fh, MPI_ERR_REQUEST, fn, "no matching split collective is active on this file");
  }
  Access* x = fc->split->access.get();
  if (buf != x->user) {
    return raise_file(fh, MPI_ERR_BUFFER, fn, "buf argument is not the buffer of the _begin call");
  }
  progress::wait_until([x] { return x->over; });
  std::unique_ptr<FileColl::Split> s = std::move(fc->split);
  return finish_access(x, st);
}

}  // namespace


// --- Shared file pointers ------------------------------------------------------------------------

namespace {

int shared_unavailable(const char* fn, const Target& t) {
  return raise_file(t.fh, MPI_ERR_IO, fn, "%s",
                    t.fc->shared_error.empty() ? "the shared file pointer is not available"
                                               : t.fc->shared_error.c_str());
}

// read_shared, write_shared, and their nonblocking forms: the place by one fetch-and-add, then an
// access of this rank alone there (the engine with no aggregation and a group of one).
int shared_access(const char* fn, MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                  bool write, MPI_Status* st, MPI_Request* request) {
  Target t;
  if (int err = target(fn, fh, write, true, &t)) return err;
  if (!t.fc->shared.ready()) return shared_unavailable(fn, t);
  auto x = std::make_unique<Access>();
  if (int err = data_args(fn, t, buf, count, datatype, write, x.get())) return err;
  int64_t etypes = x->bytes / std::max<int64_t>(file_etype_size(t.f), 1);
  int64_t at = 0;
  std::string why;
  if (!t.fc->shared.fetch_add(etypes, &at, &why)) return raise_file(fh, MPI_ERR_IO, fn, "%s", why.c_str());
  file_extents(t.f, at, x->bytes, &x->extents);
  x->result = io::independent_access(file_fd(t.f), write, x->extents, x->data);
  drain_access(x.get());
  x->over = true;
  if (request == nullptr) return finish_access(x.get(), st);
  // Done in the call (one process's file calls): a request that is complete already.
  Request* r = Request::make();
  r->kind = Request::Kind::kGrequest;
  r->query_fn = query_access;
  r->free_fn = free_access;
  r->cancel_fn = cancel_access;
  r->grequest_funcs_are_c() = 1;
  r->extra_state = x.release();
  r->gcomplete = true;
  *request = &r->handle;
  return MPI_SUCCESS;
}

// The group's exchange of ordered and seek calls on the file's private context: every rank sends
// rank 0 a word, rank 0 answers each with one. Blocking (the calls are collective).
bool exchange_with_root(Comm* comm, int tag, int64_t mine, const std::function<void(
                        const std::vector<int64_t>&, std::vector<int64_t>*)>& at_root,
                        int64_t* answer, std::string* why) {
  std::vector<pml::Request> reqs(static_cast<size_t>(2 * comm->size));
  std::vector<int64_t> in(static_cast<size_t>(comm->size)), out(static_cast<size_t>(comm->size));
  auto fail = [&](Status s) {
    *why = std::string("exchange with rank 0 failed: ") + status_string(s);
    return false;
  };
  if (comm->rank == 0) {
    in[0] = mine;
    for (int r = 1; r < comm->size; ++r) {
      if (Status s = pml::irecv(*comm, comm->context, &in[r], sizeof(int64_t), r, tag, &reqs[r]);
          s != Status::kOk)
        return fail(s);
    }
    for (int r = 1; r < comm->size; ++r) pml::wait(&reqs[r]);
    at_root(in, &out);
    for (int r = 1; r < comm->size; ++r) {
      if (Status s = pml::isend(*comm, comm->context, &out[r], sizeof(int64_t), r, tag + 1,
                                pml::SendMode::kStandard, &reqs[comm->size + r]);
          s != Status::kOk)
        return fail(s);
    }
    for (int r = 1; r < comm->size; ++r) pml::wait(&reqs[comm->size + r]);
    *answer = out[0];
    return true;
  }
  if (Status s = pml::isend(*comm, comm->context, &mine, sizeof(int64_t), 0, tag,
                            pml::SendMode::kStandard, &reqs[0]);
      s != Status::kOk)
    return fail(s);
  if (Status s = pml::irecv(*comm, comm->context, answer, sizeof(int64_t), 0, tag + 1, &reqs[1]);
      s != Status::kOk)
    return fail(s);
  pml::wait(&reqs[0]);
  pml::wait(&reqs[1]);
  if (reqs[1].error != Status::kOk) return fail(reqs[1].error);
  return true;
}

// A tag of the private context for a group exchange that is no engine call's.
int exchange_tag(FileColl* fc) {
  return static_cast<int>((fc->calls++ % kCallTagCycle) * kTagsPerCall) + 4;
}

// read_ordered, write_ordered and their _begin: rank 0 moves the shared pointer by the total and
// gives each rank the pointer plus the counts of the ranks below it; then a collective access.
int ordered(const char* fn, MPI_File fh, void* buf, int count, MPI_Datatype datatype, bool write,
            MPI_Status* st, bool split) {
  Target t;
  if (int err = target(fn, fh, write, true, &t)) return err;
  if (!t.fc->shared.ready()) return shared_unavailable(fn, t);
  if (split && t.fc->split) {
    return raise_file(fh, MPI_ERR_REQUEST, fn,
                      "a split collective is already active on this file (MPI allows one)");
  }
  auto x = std::make_unique<Access>();
  if (int err = data_args(fn, t, buf, count, datatype, write, x.get())) return err;
  int64_t etypes = x->bytes / std::max<int64_t>(file_etype_size(t.f), 1);
  Comm* comm = file_comm(t.f);
  std::string why;
  bool lock_ok = true;
  int64_t at = 0;
  auto root = [&](const std::vector<int64_t>& counts, std::vector<int64_t>* starts) {
    int64_t total = 0;
    for (int64_t c : counts) total += c;
    int64_t base = 0;
    lock_ok = t.fc->shared.fetch_add(total, &base, &why);
    for (size_t r = 0; r < counts.size(); ++r) {
      (*starts)[r] = base;
      base += counts[r];
    }
  };
  if (!exchange_with_root(comm, exchange_tag(t.fc), etypes, root, &at, &why) || !lock_ok) {
    return raise_file(fh, MPI_ERR_IO, fn, "%s", why.c_str());
  }
  if (split) {
    auto s = std::make_unique<FileColl::Split>();
    s->ordered = true;
    Access* raw = x.get();
    MPI_Request req;
    int err = start_access(t, std::move(x), at, &req);
    Request* r = request_impl(req);
    r->free_fn = nullptr;
    r->extra_state = nullptr;
    raw->request = nullptr;
    Request::release(r);
    s->access.reset(raw);
    t.fc->split = std::move(s);
    return err;
  }
  return run_access(t, x.get(), at, st);
}

}  // namespace


namespace {

// MPI_File_seek_shared, collective: rank 0 moves the pointer, then every rank learns the result
// (so no rank returns before it moved). Every rank must give the same offset and whence.
int seek_shared(const char* fn, MPI_File fh, MPI_Offset offset, int whence) {
  File* f = nullptr;
  if (int err = check_file(fn, fh, &f)) return err;
  FileColl* fc = file_coll_of(f);
  if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END) {
    return raise_file(fh, MPI_ERR_ARG, fn,
                      "whence argument is %d, not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END",
                      whence);
  }
  if (!fc->shared.ready()) {
    return raise_file(fh, MPI_ERR_IO, fn, "%s",
                      fc->shared_error.empty() ? "the shared file pointer is not available"
                                               : fc->shared_error.c_str());
  }
  // -1: the ranks disagree; -2: the position would be negative; -3: the pointer's file failed.
  std::string why;
  int64_t result = 0;
  auto root = [&](const std::vector<int64_t>& in, std::vector<int64_t>* out) {
    int64_t verdict = 0;
    for (int64_t v : in)
      if (v != in[0]) verdict = -1;
    if (verdict == 0) {
      int64_t cur = 0;
      if (!fc->shared.fetch_add(0, &cur, &why)) verdict = -3;
      int64_t base = whence == MPI_SEEK_SET ? 0 : whence == MPI_SEEK_CUR ? cur : file_eof_etypes(f);
      int64_t next = base + offset;
      if (verdict == 0 && next < 0) verdict = -2;
      if (verdict == 0 && !fc->shared.set(next, &why)) verdict = -3;
      if (verdict == 0) verdict = next;
    }
    std::fill(out->begin(), out->end(), verdict);
  };
  // Offset and whence in one word: seek offsets are etypes, far below 2^60.
  int64_t word = static_cast<int64_t>(offset) * 4 + whence;
  Comm* comm = file_comm(f);
  if (!exchange_with_root(comm, exchange_tag(fc), word, root, &result, &why)) {
    return raise_file(fh, MPI_ERR_IO, fn, "%s", why.c_str());
  }
  if (result == -1) {
    return raise_file(fh, MPI_ERR_NOT_SAME, fn, "the ranks gave different offsets or whences");
  }
  if (result == -2) {
    return raise_file(fh, MPI_ERR_ARG, fn, "offset argument %lld would put the pointer before 0",
                      static_cast<long long>(offset));
  }
  if (result == -3) {
    return raise_file(fh, MPI_ERR_IO, fn, "the shared file pointer's file failed at rank 0%s%s",
                      why.empty() ? "" : ": ", why.c_str());
  }
  return MPI_SUCCESS;
}

int position_shared(const char* fn, MPI_File fh, MPI_Offset* offset) {
  File* f = nullptr;
  if (int err = check_file(fn, fh, &f)) return err;
  if (offset == nullptr) return raise_file(fh, MPI_ERR_ARG, fn, "offset argument is NULL");
  FileColl* fc = file_coll_of(f);
  std::string why;
  int64_t pos = 0;
  if (!fc->shared.ready() || !fc->shared.fetch_add(0, &pos, &why)) {
    if (why.empty()) why = fc->shared_error;
    return raise_file(fh, MPI_ERR_IO, fn, "%s", why.c_str());
  }
  *offset = pos;
  return MPI_SUCCESS;
}

}  // namespace

// --- Hooks of the file object --------------------------------------------------------------------

void file_coll_hints(FileColl* fc, Comm* comm, MPI_Info info) {
  for (const char* key : {"romio_cb_read", "romio_cb_write", "cb_nodes", "cb_buffer_size"}) {
    std::string value;
    if (info_value(info, key, &value)) fc->hints.set(key, value);
  }
  // The aggregators: by the nodes the launcher put the group's ranks on.
  std::vector<int> node_of_job;
  boot::rank_nodes(&node_of_job);
  std::vector<int> node_of(static_cast<size_t>(comm->size), 0);
  for (int r = 0; r < comm->size; ++r) {
    int j = comm->world_rank(r);
    node_of[r] = j < static_cast<int>(node_of_job.size()) ? node_of_job[j] : 0;
  }
  fc->aggregators = io::choose_aggregators(node_of, fc->hints.cb_nodes);
}

std::unique_ptr<FileColl> file_coll_open(Comm* comm, const std::string& path, MPI_Info info,
                                         uint64_t open_number) {
  auto fc = std::make_unique<FileColl>();
  file_coll_hints(fc.get(), comm, info);
  // The shared pointer's file: rank 0 makes it, everyone opens it, rank 0 unlinks it (its name
  // from the job's and this open's numbers, which every rank knows alike).
  uint64_t job = boot::job_id(boot::job().nspace);
  std::string name = io::SharedPointer::name_for(path, job, open_number);
  int64_t made = 0;
  if (comm->rank == 0) made = fc->shared.create(name, &fc->shared_error) ? 1 : 0;
  std::string why;
  int64_t ok_root = 0;
  int tag = exchange_tag(fc.get());
  // Rank 0 says whether it made it; then everyone says whether they opened it.
  auto tell = [&](const std::vector<int64_t>&, std::vector<int64_t>* out) {
    std::fill(out->begin(), out->end(), made);
  };
  exchange_with_root(comm, tag, 0, tell, &ok_root, &why);
  int64_t opened = 1;
  if (comm->rank != 0) opened = ok_root && fc->shared.open(name, &fc->shared_error) ? 1 : 0;
  if (!ok_root && comm->rank != 0) fc->shared_error = "rank 0 could not make the shared file pointer's file " + name;
  int64_t all = 0;
  auto all_opened = [&](const std::vector<int64_t>& in, std::vector<int64_t>* out) {
    int64_t v = 1;
    for (int64_t x : in) v &= x;
    std::fill(out->begin(), out->end(), v);
  };
  exchange_with_root(comm, exchange_tag(fc.get()), opened, all_opened, &all);
  if (comm->rank == 0) fc->shared.unlink_name();
  if (!all) {
    if (fc->shared_error.empty()) fc->shared_error = "a rank could not open the shared file pointer's file " + name;
    fc->shared.close();
  }
  return fc;
}

std::vector<std::pair<std::string, std::string>> file_coll_report(const FileColl& fc) {
  return fc.hints.report(static_cast<int>(fc.aggregators.size()));
}

void file_coll_view_reset(FileColl* fc, Comm* comm) {
  std::string why;
  if (comm->rank == 0 && fc->shared.ready()) fc->shared.set(0, &why);
}

}  // namespace torusmpi::mpi

// --- Entry points --------------------------------------------------------------------------------

namespace mpi = torusmpi::mpi;
using mpi::Where;

#define TM_COLL(name, where, write, req, split)                                                \
  torusmpi::progress::Lock lock;                                                               \
  return mpi::collective("MPI_File_" name, fh, where, offset, buf, count, datatype, write, st, \
                         req, split)

extern "C" {

int PMPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* st) {
  MPI_Offset offset = 0;
  TM_COLL("read_all", Where::kIndividual, false, nullptr, false);
}
int PMPI_File_write_all(MPI_File fh, const void* cbuf, int count, MPI_Datatype datatype,
                        MPI_Status* st) {
  MPI_Offset offset = 0;
  void* buf = const_cast<void*>(cbuf);
  TM_COLL("write_all", Where::kIndividual, true, nullptr, false);
}
int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                          MPI_Datatype datatype, MPI_Status* st) {
  TM_COLL("read_at_all", Where::kExplicit, false, nullptr, false);
}
int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* cbuf, int count,
                           MPI_Datatype datatype, MPI_Status* st) {
  void* buf = const_cast<void*>(cbuf);
  TM_COLL("write_at_all", Where::kExplicit, true, nullptr, false);
}
int PMPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                        MPI_Request* request) {
  MPI_Offset offset = 0;
  MPI_Status* st = MPI_STATUS_IGNORE;
  if (request == nullptr) return mpi::raise_file(fh, MPI_ERR_REQUEST, "MPI_File_iread_all", "request argument is NULL");
  TM_COLL("iread_all", Where::kIndividual, false, request, false);
}
int PMPI_File_iwrite_all(MPI_File fh, const void* cbuf, int count, MPI_Datatype datatype,
                         MPI_Request* request) {
  MPI_Offset offset = 0;
  MPI_Status* st = MPI_STATUS_IGNORE;
  void* buf = const_cast<void*>(cbuf);
  if (request == nullptr) return mpi::raise_file(fh, MPI_ERR_REQUEST, "MPI_File_iwrite_all", "request argument is NULL");
  TM_COLL("iwrite_all", Where::kIndividual, true, request, false);
}
int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                           MPI_Datatype datatype, MPI_Request* request) {
  MPI_Status* st = MPI_STATUS_IGNORE;
  if (request == nullptr) return mpi::raise_file(fh, MPI_ERR_REQUEST, "MPI_File_iread_at_all", "request argument is NULL");
  TM_COLL("iread_at_all", Where::kExplicit, false, request, false);
}
int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* cbuf, int count,
                            MPI_Datatype datatype, MPI_Request* request) {
  MPI_Status* st = MPI_STATUS_IGNORE;
  void* buf = const_cast<void*>(cbuf);
  if (request == nullptr) return mpi::raise_file(fh, MPI_ERR_REQUEST, "MPI_File_iwrite_at_all", "request argument is NULL");
  TM_COLL("iwrite_at_all", Where::kExplicit, true, request, false);
}
int PMPI_File_read_all_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  MPI_Offset offset = 0;
  MPI_Status* st = MPI_STATUS_IGNORE;
  TM_COLL("read_all_begin", Where::kIndividual, false, nullptr, true);
}
int PMPI_File_write_all_begin(MPI_File fh, const void* cbuf, int count, MPI_Datatype datatype) {
  MPI_Offset offset = 0;
  MPI_Status* st = MPI_STATUS_IGNORE;
  void* buf = const_cast<void*>(cbuf);
  TM_COLL("write_all_begin", Where::kIndividual, true, nullptr, true);
}
int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf, int count,
                                MPI_Datatype datatype) {
  MPI_Status* st = MPI_STATUS_IGNORE;
  TM_COLL("read_at_all_begin", Where::kExplicit, false, nullptr, true);
}
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void* cbuf, int count,
                                 MPI_Datatype datatype) {
  MPI_Status* st = MPI_STATUS_IGNORE;
  void* buf = const_cast<void*>(cbuf);
  TM_COLL("write_at_all_begin", Where::kExplicit, true, nullptr, true);
}
int PMPI_File_read_all_end(MPI_File fh, void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_read_all_end", fh, buf, false, false, st);
}
int PMPI_File_write_all_end(MPI_File fh, const void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_write_all_end", fh, const_cast<void*>(buf), true, false, st);
}
int PMPI_File_read_at_all_end(MPI_File fh, void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_read_at_all_end", fh, buf, false, false, st);
}
int PMPI_File_write_at_all_end(MPI_File fh, const void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_write_at_all_end", fh, const_cast<void*>(buf), true, false, st);
}

int PMPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::shared_access("MPI_File_read_shared", fh, buf, count, datatype, false, st, nullptr);
}
int PMPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::shared_access("MPI_File_write_shared", fh, const_cast<void*>(buf), count, datatype,
                            true, st, nullptr);
}
int PMPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                           MPI_Request* request) {
  torusmpi::progress::Lock lock;
  if (request == nullptr) return mpi::raise_file(fh, MPI_ERR_REQUEST, "MPI_File_iread_shared", "request argument is NULL");
  return mpi::shared_access("MPI_File_iread_shared", fh, buf, count, datatype, false,
                            MPI_STATUS_IGNORE, request);
}
int PMPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                            MPI_Request* request) {
  torusmpi::progress::Lock lock;
  if (request == nullptr) return mpi::raise_file(fh, MPI_ERR_REQUEST, "MPI_File_iwrite_shared", "request argument is NULL");
  return mpi::shared_access("MPI_File_iwrite_shared", fh, const_cast<void*>(buf), count,
                            datatype, true, MPI_STATUS_IGNORE, request);
}
int PMPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                           MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::ordered("MPI_File_read_ordered", fh, buf, count, datatype, false, st, false);
}
int PMPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                            MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::ordered("MPI_File_write_ordered", fh, const_cast<void*>(buf), count, datatype, true,
                      st, false);
}
int PMPI_File_read_ordered_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  torusmpi::progress::Lock lock;
  return mpi::ordered("MPI_File_read_ordered_begin", fh, buf, count, datatype, false,
                      MPI_STATUS_IGNORE, true);
}
int PMPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  torusmpi::progress::Lock lock;
  return mpi::ordered("MPI_File_write_ordered_begin", fh, const_cast<void*>(buf), count,
                      datatype, true, MPI_STATUS_IGNORE, true);
}
int PMPI_File_read_ordered_end(MPI_File fh, void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_read_ordered_end", fh, buf, false, true, st);
}
int PMPI_File_write_ordered_end(MPI_File fh, const void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_write_ordered_end", fh, const_cast<void*>(buf), true, true, st);
}

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  torusmpi::progress::Lock lock;
  return mpi::seek_shared("MPI_File_seek_shared", fh, offset, whence);
}
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  torusmpi::progress::Lock lock;
  return mpi::position_shared("MPI_File_get_position_shared", fh, offset);
}

}  // extern "C"

TORUSMPI_WEAK_ALIAS(MPI_File_read_all);
TORUSMPI_WEAK_ALIAS(MPI_File_write_all);
TORUSMPI_WEAK_ALIAS(MPI_File_read_at_all);
TORUSMPI_WEAK_ALIAS(MPI_File_write_at_all);
TORUSMPI_WEAK_ALIAS(MPI_File_iread_all);
TORUSMPI_WEAK_ALIAS(MPI_File_iwrite_all);
TORUSMPI_WEAK_ALIAS(MPI_File_iread_at_all);
TORUSMPI_WEAK_ALIAS(MPI_File_iwrite_at_all);
TORUSMPI_WEAK_ALIAS(MPI_File_read_all_begin);
TORUSMPI_WEAK_ALIAS(MPI_File_write_all_begin);
TORUSMPI_WEAK_ALIAS(MPI_File_read_at_all_begin);
TORUSMPI_WEAK_ALIAS(MPI_File_write_at_all_begin);
TORUSMPI_WEAK_ALIAS(MPI_File_read_all_end);
TORUSMPI_WEAK_ALIAS(MPI_File_write_all_end);
TORUSMPI_WEAK_ALIAS(MPI_File_read_at_all_end);
TORUSMPI_WEAK_ALIAS(MPI_File_write_at_all_end);
TORUSMPI_WEAK_ALIAS(MPI_File_read_shared);
TORUSMPI_WEAK_ALIAS(MPI_File_write_shared);
TORUSMPI_WEAK_ALIAS(MPI_File_iread_shared);
TORUSMPI_WEAK_ALIAS(MPI_File_iwrite_shared);
TORUSMPI_WEAK_ALIAS(MPI_File_read_ordered);
TORUSMPI_WEAK_ALIAS(MPI_File_write_ordered);
TORUSMPI_WEAK_ALIAS(MPI_File_read_ordered_begin);
TORUSMPI_WEAK_ALIAS(MPI_File_write_ordered_begin);
TORUSMPI_WEAK_ALIAS(MPI_File_read_ordered_end);
TORUSMPI_WEAK_ALIAS(MPI_File_write_ordered_end);
TORUSMPI_WEAK_ALIAS(MPI_File_seek_shared);
TORUSMPI_WEAK_ALIAS(MPI_File_get_position_shared);
