// MPI-IO's collective data access (read_all, write_all, the _at, _begin/_end and nonblocking
// forms) and shared file pointers (read/write_shared and their nonblocking forms, read/write
// _ordered and their split forms, seek_shared, get_position_shared).
//
// A collective call stages the caller's data as the file sees it (file.h: packed, device bytes
// moved by the device layer, converted to the datarep; in place when it is contiguous host
// memory), asks the view for the call's file ranges and hands both to io::TwoPhase, which moves
// them over the pml on the file's private duplicate communicator (its point-to-point context,
// which nothing else uses: the file's own collectives run on its collective context), so a
// profiling layer on the application's MPI_ calls sees only the MPI_File_ call. A blocking call
// steps the access to its end; a nonblocking one (and _begin) starts it and leaves it to the
// progress engine, whose poll steps every access in flight, and its request completes when the
// access is over (a read unstaged first).
//
// Shared pointer: an independent access takes its place by one fetch-and-add under the lock of
// the pointer's file (io/shared_fp.h), then reads or writes there; an ordered one is collective:
// rank 0 moves the pointer once by the group's total and tells each rank where its part starts
// (a gather and a scatter of 8 bytes), then the access is a collective one at those offsets.
#include "mpi/file_coll.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "boot/boot.h"
#include "core/flight.h"
#include "core/progress.h"
#include "device/device.h"
#include "io/coll_io.h"
#include "io/shared_fp.h"
#include "mpi/datatype.h"
#include "mpi/errors.h"
#include "mpi/info.h"
#include "mpi/p2p.h"
#include "mpi/runtime.h"

namespace torusmpi::io {

// The pml on one context of a communicator: the engine's channel in the library.
class PmlChannel final : public Channel {
 public:
  PmlChannel(const pml::Comm* comm, uint32_t context) : comm_(comm), context_(context) {}
  int rank() const override { return comm_->rank; }
  int size() const override { return comm_->size; }
  int send(int dest, int tag, const void* buf, size_t bytes) override;
  int recv(int source, int tag, void* buf, size_t bytes) override;
  bool test(int id, bool* failed, std::string* error) override;
  void wait(int id) override;

 private:
  pml::Request* slot(int id);
  const pml::Comm* comm_;
  uint32_t context_;
  // Requests the pml holds by address: a deque keeps them in place; ids count from base_.
  std::deque<pml::Request> reqs_;
  std::deque<bool> live_;
  std::deque<Status> failed_;  // a send or receive the pml would not start
  int base_ = 0;
};

pml::Request* PmlChannel::slot(int id) { return &reqs_[static_cast<size_t>(id - base_)]; }

int PmlChannel::send(int dest, int tag, const void* buf, size_t bytes) {
  reqs_.emplace_back();
  live_.push_back(true);
  failed_.push_back(Status::kOk);
  int id = base_ + static_cast<int>(reqs_.size()) - 1;
  Status s =
      pml::isend(*comm_, context_, buf, bytes, dest, tag, pml::SendMode::kStandard, slot(id));
  failed_.back() = s;
  return id;
}

int PmlChannel::recv(int source, int tag, void* buf, size_t bytes) {
  reqs_.emplace_back();
  live_.push_back(true);
  failed_.push_back(Status::kOk);
  int id = base_ + static_cast<int>(reqs_.size()) - 1;
  Status s = pml::irecv(*comm_, context_, buf, bytes, source, tag, slot(id));
  failed_.back() = s;
  return id;
}

bool PmlChannel::test(int id, bool* failed, std::string* error) {
  pml::Request* r = slot(id);
  Status start = failed_[static_cast<size_t>(id - base_)];
  if (start == Status::kOk && !r->done()) return false;
  Status s = start != Status::kOk ? start : r->error;
  if (s != Status::kOk) {
    *failed = true;
    *error = std::string("with rank ") + std::to_string(r->source) + ": " + status_string(s);
  }
  // Done requests at the front are forgotten (ids stay valid: base_ moves with them).
  live_[static_cast<size_t>(id - base_)] = false;
  while (!live_.empty() && !live_.front()) {
    live_.pop_front();
    failed_.pop_front();
    reqs_.pop_front();
    ++base_;
  }
  return true;
}

void PmlChannel::wait(int id) {
  if (failed_[static_cast<size_t>(id - base_)] == Status::kOk) pml::wait(slot(id));
}

}  // namespace torusmpi::io

namespace torusmpi::mpi {
namespace {

// Tags of the file's private point-to-point context: 8 per collective call, the engine's first
// 4 (io::TwoPhaseArgs::tag), the ordered and seek exchanges' after them.
constexpr int kTagsPerCall = 8;
constexpr uint32_t kCallTagCycle = 1u << 26;

// What a file keeps of the collective half (File::coll_state).
struct CollState {
  io::CollHints hints;
  std::vector<int> aggregators;  // ranks of the file's group, from cb_nodes and the nodes
  std::vector<int> node_of;      // each rank's node
  int aggregators_for = -1;      // the cb_nodes they were chosen for
  uint32_t calls = 0;            // collective calls so far: each one's tags
  io::SharedPointer shared;
  std::string shared_error;  // why the shared pointer is not there, when it is not
  // A split collective in flight (MPI allows one per file).
  struct Split;
  std::unique_ptr<Split> split;
  ~CollState();
};

CollState* state_of(File* f) { return static_cast<CollState*>(f->coll_state.get()); }

Comm* comm_of(File* f) { return comm_impl(f->comm); }

// The hints as the file's info has them now (MPI_File_open, set_info and set_view all keep theirs
// in f->info), and the aggregators for its cb_nodes.
void refresh_hints(File* f, CollState* cs) {
  cs->hints = io::CollHints{};
  for (const char* key : {"romio_cb_read", "romio_cb_write", "cb_nodes", "cb_buffer_size"}) {
    std::string value;
    if (info_value(f->info, key, &value)) cs->hints.set(key, value);
  }
  if (cs->aggregators_for != cs->hints.cb_nodes) {
    cs->aggregators = io::choose_aggregators(cs->node_of, cs->hints.cb_nodes);
    cs->aggregators_for = cs->hints.cb_nodes;
  }
}

// The cb hints in force into the file's info, which MPI_File_get_info reports.
void publish_hints(File* f, CollState* cs) {
  if (f->info == MPI_INFO_NULL) f->info = info_new(nullptr);
  Info* kept = info_impl(f->info);
  for (const auto& [key, value] : cs->hints.report(static_cast<int>(cs->aggregators.size())))
    kept->set(key, value);
}

int next_tag(CollState* cs) {
  return static_cast<int>((cs->calls++ % kCallTagCycle) * kTagsPerCall);
}

// --- One access: its data, as the file sees it, and its progress --------------------------------

struct CollAccess {
  const char* fn = nullptr;
  File* f = nullptr;
  bool write = false;
  void* user = nullptr;
  int64_t count = 0;
  MPI_Datatype type = nullptr;
  const dtype::Type* t = nullptr;
  Access plan;
  Staged staged;
  std::unique_ptr<io::PmlChannel> channel;
  std::unique_ptr<io::TwoPhase> op;
  io::TwoPhaseResult result;
  bool over = false;
  bool unstaged = false;
  bool in_place = false;  // a read into the user's memory: nothing to unstage
  int unstage_error = MPI_SUCCESS;
  Request* request = nullptr;            // a nonblocking access's request
  std::unique_ptr<io::Scratch> scratch;  // a blocking access's, from the pool
};

// An aggregator's round buffers, kept from one blocking call to the next, of any file: a program
// that opens a file per checkpoint (or a benchmark per iteration) would otherwise allocate and
// first-touch them in every call. A pool, not one set: threads may make blocking calls at once.
std::mutex g_scratch_mutex;
std::vector<std::unique_ptr<io::Scratch>> g_scratch_pool;
constexpr size_t kScratchKept = 2;

std::unique_ptr<io::Scratch> take_scratch() {
  std::lock_guard<std::mutex> g(g_scratch_mutex);
  if (g_scratch_pool.empty()) return std::make_unique<io::Scratch>();
  std::unique_ptr<io::Scratch> s = std::move(g_scratch_pool.back());
  g_scratch_pool.pop_back();
  return s;
}
void give_back_scratch(std::unique_ptr<io::Scratch> s) {
  std::lock_guard<std::mutex> g(g_scratch_mutex);
  if (s && g_scratch_pool.size() < kScratchKept) g_scratch_pool.push_back(std::move(s));
}

// A read's staged bytes into the user's layout (only what was read), once.
void unstage(CollAccess* x) {
  if (x->unstaged) return;
  x->unstaged = true;
  if (x->write || x->in_place || !x->result.ok) return;
  x->unstage_error = stage_read_end(x->f, x->fn, x->user, x->count, x->type, *x->t, &x->staged,
                                    x->result.transferred);
}

// The end of an access: its error on the file's handler, or its status.
int finish_access(CollAccess* x, MPI_Status* st) {
  const io::TwoPhaseResult& r = x->result;
  if (!r.ok) {
    if (r.refused != 0) return raise_error_on(x->f, r.refused, x->fn, "%s", r.what.c_str());
    if (r.os_error != 0) {
      return raise_error_on(x->f, errno_class(r.os_error), x->fn, "%s", r.what.c_str());
    }
    return raise_error_on(x->f, MPI_ERR_OTHER, x->fn, "%s", r.what.c_str());
  }
  if (x->unstage_error != MPI_SUCCESS) return x->unstage_error;
  set_io_status(st, memory_bytes(x->f, *x->t, r.transferred));
  return MPI_SUCCESS;
}

// --- Nonblocking accesses: stepped by the progress engine ---------------------------------------

std::deque<CollAccess*>& in_flight() {
  static std::deque<CollAccess*> list;
  return list;
}
int g_poll_id = -1;

int poll_accesses(void*) {
  int events = 0;
  auto& list = in_flight();
  for (size_t i = 0; i < list.size();) {
    CollAccess* x = list[i];
    if (!x->op->step()) {
      ++i;
      continue;
    }
    x->result = x->op->result();
    x->op.reset();
    unstage(x);
    x->over = true;
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    progress::add_work(-1);
    ++events;
    if (x->request != nullptr) complete_io_request(x->request);
  }
  return events;
}

int query_access(void* state, MPI_Status* st) {
  return finish_access(static_cast<CollAccess*>(state), st);
}
int free_access(void* state) {
  delete static_cast<CollAccess*>(state);
  return MPI_SUCCESS;
}

// The engine's arguments for an access: ranges and data are the plan's and the staging's.
void start_engine(File* f, CollState* cs, CollAccess* x, int tag, bool blocking) {
  Comm* comm = comm_of(f);
  x->channel = std::make_unique<io::PmlChannel>(comm, comm->context);
  io::TwoPhaseArgs a;
  a.channel = x->channel.get();
  a.tag = tag;
  a.fd = f->posix.fd();
  a.write = x->write;
  a.extents = x->plan.ranges;
  a.data = x->staged.data;
  a.aggregators = cs->aggregators;
  a.cb_buffer_size = cs->hints.cb_buffer_size;
  a.mode = x->write ? cs->hints.write : cs->hints.read;
  // Blocking calls reuse the process's buffers (nonblocking ones may overlap: their own).
  if (blocking) {
    x->scratch = take_scratch();
    a.scratch = x->scratch.get();
  }
  x->op = std::make_unique<io::TwoPhase>(std::move(a));
}

// A collective call whose arguments are wrong here (err, raised already): this process still
// takes the call's part in the engine's first exchange, so that the others fail too instead of
// waiting for it. Blocking, even for a nonblocking or split call: the others are in the same call.
int refuse(File* f, CollState* cs, bool write, int err) {
  refresh_hints(f, cs);  // the aggregators the others' calls have (prepare refreshes them)
  Comm* comm = comm_of(f);
  io::PmlChannel channel(comm, comm->context);
  io::TwoPhaseArgs a;
  a.channel = &channel;
  a.tag = next_tag(cs);
  a.fd = f->posix.fd();
  a.aggregators = cs->aggregators;
  a.mode = write ? cs->hints.write : cs->hints.read;
  a.refused = err;
  io::two_phase(a);
  return err;
}

// A blocking access, to its end.
int run_access(CollAccess* x, MPI_Status* st) {
  io::TwoPhase* op = x->op.get();
  progress::wait_until([op] { return op->step(); });
  x->result = op->result();
  x->op.reset();
  give_back_scratch(std::move(x->scratch));
  unstage(x);
  x->over = true;
  return finish_access(x, st);
}

// A nonblocking access: in the progress engine's hands from now on. With request nullptr (a
// split _begin) the caller keeps x and waits for x->over.
void launch(CollAccess* x, MPI_Request* request) {
  if (request != nullptr) {
    Request* r = Request::make();
    r->kind = Request::Kind::kGrequest;
    r->query_fn = query_access;
    r->free_fn = free_access;
    r->grequest_funcs_are_c() = 1;
    r->graises_own = true;
    r->extra_state = x;
    x->request = r;
    *request = &r->handle;
  }
  if (g_poll_id < 0) g_poll_id = progress::add(poll_accesses, nullptr);
  in_flight().push_back(x);
  progress::add_work(1);
  // A first step now: the first messages leave before the call returns.
  poll_accesses(nullptr);
}

}  // namespace

struct CollState::Split {
  std::unique_ptr<CollAccess> access;
  bool ordered = false;
  bool write = false;
};

CollState::~CollState() {
  // A split begun and never ended: its access must be over before its buffers go.
  if (split) progress::wait_until([this] { return split->access->over; });
}

namespace {

// --- The calls
// ------------------------------------------------------------------------------------

enum class Kind { kIndividual, kExplicit, kOrdered };

// The request argument of a blocking call (a nonblocking call's may be NULL: an error).
MPI_Request g_no_request = nullptr;
MPI_Request* const kNoRequest = &g_no_request;

// The checks and the staging of an access at `offset` (etypes; individual: the pointer's, which
// then moves past it).
int prepare(const char* fn, File* f, Kind kind, MPI_Offset offset, const void* buf, int count,
            MPI_Datatype type, bool write, CollAccess* x) {
  CollState* cs = state_of(f);
  if (int err = check_access(f, fn, buf, count, type, write, kind == Kind::kExplicit, &x->t))
    return err;
  if (kind == Kind::kIndividual && (f->amode & MPI_MODE_SEQUENTIAL)) {
    return raise_error_on(f, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                          "individual file pointers on a file opened MPI_MODE_SEQUENTIAL");
  }
  if (kind == Kind::kIndividual) offset = f->pointer;
  if (int err = plan_access(f, fn, offset, count, *x->t, &x->plan)) return err;
  x->fn = fn;
  x->f = f;
  x->write = write;
  x->user = const_cast<void*>(buf);
  x->count = count;
  x->type = type;
  int64_t at = 0;
  if (write) {
    if (int err = stage_write(f, fn, buf, count, type, *x->t, &x->staged)) return err;
  } else if (!f->datarep->user && !f->datarep->external32 && x->t->contiguous(count, &at) &&
             !device::in_device_range(static_cast<const char*>(buf) + at)) {
    // Contiguous host memory in the native representation: read straight into it, as a write
    // writes straight from it.
    x->staged.data = static_cast<char*>(x->user) + at;
    x->in_place = true;
  } else if (int err = stage_read_begin(f, fn, count, *x->t, &x->staged)) {
    return err;
  }
  // The pointer moves now, as if the access were done (MPI 3.1, 13.4.3).
  if (kind == Kind::kIndividual) f->pointer += x->plan.bytes / f->view.etype_size();
  refresh_hints(f, cs);
  return MPI_SUCCESS;
}

// A collective file call in the flight recorder, on the file's communicator, so that a hang
// report names it (its exchanges are the I/O engine's own messages, not MPI calls).
class CallRecord : public flight::Scope {
 public:
  CallRecord(const char* fn, File* f)
      : flight::Scope(fn, comm_of(f)->context, comm_of(f)->name.c_str(), 0, -1, flight::kNoPeer) {}
};

int split_busy(const char* fn, File* f) {
  return raise_error_on(f, MPI_ERR_REQUEST, fn,
                        "a split collective is active on this file already (MPI allows one)");
}

// Blocking (request nullptr, split false), nonblocking, or a split _begin.
int collective(const char* fn, MPI_File fh, Kind kind, MPI_Offset offset, const void* buf,
               int count, MPI_Datatype type, bool write, MPI_Status* st, MPI_Request* request,
               bool split) {
  File* f = nullptr;
  if (int err = check_file(fn, fh, &f)) return err;
  CollState* cs = state_of(f);
  CallRecord record(fn, f);
  if (split && cs->split) return refuse(f, cs, write, split_busy(fn, f));
  if (request == kNoRequest) {
    request = nullptr;
  } else if (request == nullptr) {
    return refuse(f, cs, write, raise_error_on(f, MPI_ERR_REQUEST, fn, "request argument is NULL"));
  }
  auto x = std::make_unique<CollAccess>();
  if (int err = prepare(fn, f, kind, offset, buf, count, type, write, x.get()))
    return refuse(f, cs, write, err);
  start_engine(f, cs, x.get(), next_tag(cs), !split && request == nullptr);
  if (split) {
    auto s = std::make_unique<CollState::Split>();
    s->write = write;
    launch(x.get(), nullptr);
    s->access = std::move(x);
    cs->split = std::move(s);
    record.finish(flight::State::kStarted);
    return MPI_SUCCESS;
  }
  if (request != nullptr) {
    launch(x.release(), request);
    record.finish(flight::State::kStarted);
    return MPI_SUCCESS;
  }
  return run_access(x.get(), st);
}

// MPI_File_*_end: waits for the split collective begun on the file, which must be the same kind.
int split_end(const char* fn, MPI_File fh, const void* buf, bool write, bool ordered,
              MPI_Status* st) {
  File* f = nullptr;
  if (int err = check_file(fn, fh, &f)) return err;
  CollState* cs = state_of(f);
  if (!cs->split || cs->split->write != write || cs->split->ordered != ordered) {
    return raise_error_on(f, MPI_ERR_REQUEST, fn,
                          "no split collective of this kind is active on the file");
  }
  CollAccess* x = cs->split->access.get();
  if (buf != x->user) {
    return raise_error_on(f, MPI_ERR_BUFFER, fn, "buf argument is not the _begin call's buffer");
  }
  CallRecord record(fn, f);
  progress::wait_until([x] { return x->over; });
  std::unique_ptr<CollState::Split> s = std::move(cs->split);
  return finish_access(x, st);
}

// --- Shared file pointers
// --------------------------------------------------------------------------

int shared_unavailable(const char* fn, File* f, CollState* cs) {
  return raise_error_on(f, MPI_ERR_IO, fn, "%s",
                        cs->shared_error.empty() ? "the shared file pointer is not available"
                                                 : cs->shared_error.c_str());
}

// read_shared, write_shared and their nonblocking forms: the place by one fetch-and-add, then
// this process's access there: in the call, or (iread_shared, iwrite_shared) by the I/O worker
// like the independent nonblocking calls' (start_async).
int shared_access(const char* fn, MPI_File fh, const void* buf, int count, MPI_Datatype type,
                  bool write, MPI_Status* st, MPI_Request* request) {
  File* f = nullptr;
  if (int err = check_file(fn, fh, &f)) return err;
  CollState* cs = state_of(f);
  if (request == kNoRequest) {
    request = nullptr;
  } else if (request == nullptr) {
    return raise_error_on(f, MPI_ERR_REQUEST, fn, "request argument is NULL");
  }
  const dtype::Type* t = nullptr;
  if (int err = check_access(f, fn, buf, count, type, write, false, &t)) return err;
  if (!cs->shared.ready()) return shared_unavailable(fn, f, cs);
  int64_t bytes = static_cast<int64_t>(count) * file_size_of(f, *t);
  if (bytes % f->view.etype_size() != 0) {
    return raise_error_on(
        f, MPI_ERR_TYPE, fn, "the access is %lld bytes, not a whole number of etypes (%lld bytes)",
        static_cast<long long>(bytes), static_cast<long long>(f->view.etype_size()));
  }
  int64_t at = 0;
  std::string why;
  if (!cs->shared.fetch_add(bytes / f->view.etype_size(), &at, &why))
    return raise_error_on(f, MPI_ERR_IO, fn, "%s", why.c_str());
  Access a;
  if (int err = plan_access(f, fn, at, count, *t, &a)) return err;
  if (request != nullptr) {
    return start_async(f, fn, write, std::move(a), buf, count, type, *t, request);
  }
  Staged s;
  const char* op = nullptr;
  int64_t moved = 0;
  if (a.bytes > 0) {
    if (write) {
      if (int err = stage_write(f, fn, buf, count, type, *t, &s)) return err;
      if (int e = f->posix.write(a.ranges, s.data, f->hints, f->atomic, &op))
        return os_error(f, fn, op, e);
      moved = a.bytes;
    } else {
      if (int err = stage_read_begin(f, fn, count, *t, &s)) return err;
      if (int e = f->posix.read(a.ranges, s.data, f->hints, f->atomic, &moved, &op))
        return os_error(f, fn, op, e);
      if (int err = stage_read_end(f, fn, const_cast<void*>(buf), count, type, *t, &s, moved))
        return err;
    }
  }
  set_io_status(st, memory_bytes(f, *t, moved));
  return MPI_SUCCESS;
}

// The group's exchange of ordered and seek calls on the file's private context: every process
// sends rank 0 a word, rank 0 answers each with one (at_root computes the answers). Blocking: the
// calls are collective.
bool exchange_with_root(
    Comm* comm, int tag, int64_t mine,
    const std::function<void(const std::vector<int64_t>&, std::vector<int64_t>*)>& at_root,
    int64_t* answer, std::string* why) {
  const int p = comm->size;
  std::deque<pml::Request> reqs;
  std::vector<int64_t> in(static_cast<size_t>(p)), out(static_cast<size_t>(p));
  auto fail = [&](Status s) {
    *why = std::string("exchange with rank 0 failed: ") + status_string(s);
    return false;
  };
  auto post_wait = [&](bool send, int peer, int64_t* word) {
    reqs.emplace_back();
    Status s = send ? pml::isend(*comm, comm->context, word, sizeof(int64_t), peer,
                                 send && comm->rank == 0 ? tag + 1 : tag, pml::SendMode::kStandard,
                                 &reqs.back())
                    : pml::irecv(*comm, comm->context, word, sizeof(int64_t), peer,
                                 comm->rank == 0 ? tag : tag + 1, &reqs.back());
    return s;
  };
  if (comm->rank == 0) {
    in[0] = mine;
    for (int r = 1; r < p; ++r)
      if (Status s = post_wait(false, r, &in[r]); s != Status::kOk) return fail(s);
    for (auto& r : reqs) pml::wait(&r);
    for (auto& r : reqs)
      if (r.error != Status::kOk) return fail(r.error);
    reqs.clear();
    at_root(in, &out);
    for (int r = 1; r < p; ++r)
      if (Status s = post_wait(true, r, &out[r]); s != Status::kOk) return fail(s);
    for (auto& r : reqs) pml::wait(&r);
    *answer = out[0];
    return true;
  }
  if (Status s = post_wait(true, 0, &mine); s != Status::kOk) return fail(s);
  if (Status s = post_wait(false, 0, answer); s != Status::kOk) return fail(s);
  for (auto& r : reqs) pml::wait(&r);
  for (auto& r : reqs)
    if (r.error != Status::kOk) return fail(r.error);
  return true;
}

// read_ordered, write_ordered and their _begin: rank 0 moves the shared pointer by the total and
// gives each process the old pointer plus the counts of the ranks below it; then a collective
// access at explicit offsets.
int ordered(const char* fn, MPI_File fh, const void* buf, int count, MPI_Datatype type, bool write,
            MPI_Status* st, bool split) {
  File* f = nullptr;
  if (int err = check_file(fn, fh, &f)) return err;
  CollState* cs = state_of(f);
  CallRecord record(fn, f);
  // A process whose arguments are wrong (its error raised) still takes its part in the exchange
  // with rank 0, telling it kRefused - class: every process's call fails then.
  constexpr int64_t kRefused = -1000;
  int err = split && cs->split ? split_busy(fn, f) : MPI_SUCCESS;
  const dtype::Type* t = nullptr;
  if (err == MPI_SUCCESS) err = check_access(f, fn, buf, count, type, write, false, &t);
  if (!cs->shared.ready()) return shared_unavailable(fn, f, cs);  // alike on every process
  int64_t etypes = err != MPI_SUCCESS
                       ? kRefused - err
                       : static_cast<int64_t>(count) * file_size_of(f, *t) / f->view.etype_size();
  std::string why;
  bool pointer_ok = true;
  int64_t at = 0;
  auto root = [&](const std::vector<int64_t>& counts, std::vector<int64_t>* starts) {
    for (int64_t c : counts) {
      if (c <= kRefused) {
        std::fill(starts->begin(), starts->end(), c);
        return;
      }
    }
    int64_t total = 0;
    for (int64_t c : counts) total += c;
    int64_t base = 0;
    pointer_ok = cs->shared.fetch_add(total, &base, &why);
    for (size_t r = 0; r < counts.size(); ++r) {
      (*starts)[r] = pointer_ok ? base : -1;
      base += counts[r];
    }
  };
  int tag = next_tag(cs) + 4;
  if (!exchange_with_root(comm_of(f), tag, etypes, root, &at, &why))
    return raise_error_on(f, MPI_ERR_IO, fn, "%s", why.c_str());
  if (err != MPI_SUCCESS) return err;
  if (at <= kRefused) {
    return raise_error_on(f, static_cast<int>(kRefused - at), fn,
                          "the arguments of another process of the file's group were wrong");
  }
  if (at < 0) {
    return raise_error_on(f, MPI_ERR_IO, fn, "the shared file pointer failed at rank 0%s%s",
                          why.empty() ? "" : ": ", why.c_str());
  }
  auto x = std::make_unique<CollAccess>();
  if (int err = prepare(fn, f, Kind::kOrdered, at, buf, count, type, write, x.get())) return err;
  start_engine(f, cs, x.get(), next_tag(cs), !split);
  if (split) {
    auto s = std::make_unique<CollState::Split>();
    s->write = write;
    s->ordered = true;
    launch(x.get(), nullptr);
    s->access = std::move(x);
    cs->split = std::move(s);
    return MPI_SUCCESS;
  }
  return run_access(x.get(), st);
}

// MPI_File_seek_shared, collective: rank 0 moves the pointer, then every process learns the
// result (so none returns before it moved). Every process must give the same offset and whence.
int seek_shared(const char* fn, MPI_File fh, MPI_Offset offset, int whence) {
  File* f = nullptr;
  if (int err = check_file(fn, fh, &f)) return err;
  CollState* cs = state_of(f);
  // A wrong whence is raised here and still goes to rank 0, whose verdict then fails every
  // process (the arguments differ, or all are wrong) instead of the others waiting.
  int err = MPI_SUCCESS;
  if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END) {
    err = raise_error_on(f, MPI_ERR_ARG, fn,
                         "whence argument is %d, not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END",
                         whence);
  }
  if (!cs->shared.ready()) return shared_unavailable(fn, f, cs);
  // The answer: the new position, or -1 the processes disagree, -2 it would be negative, -3 the
  // pointer's file failed, -4 every process's whence was wrong.
  constexpr int64_t kBadWhence = INT64_MIN;
  std::string why;
  int64_t result = 0;
  auto root = [&](const std::vector<int64_t>& in, std::vector<int64_t>* out) {
    int64_t verdict = 0;
    for (int64_t v : in)
      if (v != in[0]) verdict = -1;
    if (verdict == 0 && in[0] == kBadWhence) verdict = -4;
    if (verdict == 0) {
      int64_t cur = 0, base = 0;
      if (!cs->shared.fetch_add(0, &cur, &why)) verdict = -3;
      if (whence == MPI_SEEK_CUR) base = cur;
      if (whence == MPI_SEEK_END) {
        // The end of the file as a position of the view, from the displacement on (ROMIO does
        // the same; Open MPI's OMPIO counts from byte 0).
        int64_t size = 0;
        const char* op = nullptr;
        if (f->posix.size(&size, &op) != 0) verdict = -3;
        base = f->view.stream_position(size) / f->view.etype_size();
      }
      int64_t next = base + offset;
      if (verdict == 0 && next < 0) verdict = -2;
      if (verdict == 0 && !cs->shared.set(next, &why)) verdict = -3;
      if (verdict == 0) verdict = next;
    }
    std::fill(out->begin(), out->end(), verdict);
  };
  // Offset and whence in one word: offsets are etypes, far below 2^60.
  int64_t word = err != MPI_SUCCESS ? kBadWhence : static_cast<int64_t>(offset) * 4 + whence;
  if (!exchange_with_root(comm_of(f), next_tag(cs) + 4, word, root, &result, &why))
    return raise_error_on(f, MPI_ERR_IO, fn, "%s", why.c_str());
  if (err != MPI_SUCCESS) return err;
  if (result == -1) {
    return raise_error_on(f, MPI_ERR_NOT_SAME, fn,
                          "offset or whence argument differs between processes");
  }
  if (result == -2) {
    return raise_error_on(f, MPI_ERR_ARG, fn,
                          "offset argument %lld would put the shared pointer before 0",
                          static_cast<long long>(offset));
  }
  if (result == -3) {
    return raise_error_on(f, MPI_ERR_IO, fn, "the shared file pointer failed at rank 0%s%s",
                          why.empty() ? "" : ": ", why.c_str());
  }
  return MPI_SUCCESS;
}

int position_shared(const char* fn, MPI_File fh, MPI_Offset* offset) {
  File* f = nullptr;
  if (int err = check_file(fn, fh, &f)) return err;
  CollState* cs = state_of(f);
  if (offset == nullptr) return raise_error_on(f, MPI_ERR_ARG, fn, "offset argument is NULL");
  if (!cs->shared.ready()) return shared_unavailable(fn, f, cs);
  std::string why;
  int64_t pos = 0;
  if (!cs->shared.fetch_add(0, &pos, &why))
    return raise_error_on(f, MPI_ERR_IO, fn, "%s", why.c_str());
  *offset = pos;
  return MPI_SUCCESS;
}

}  // namespace

// --- Hooks of the file object
// ---------------------------------------------------------------------

void file_coll_open(File* f) {
  auto cs = std::make_shared<CollState>();
  Comm* comm = comm_of(f);
  // Each rank's node, for one aggregator per node.
  std::vector<int> node_of_job;
  boot::rank_nodes(&node_of_job);
  cs->node_of.assign(static_cast<size_t>(comm->size), 0);
  for (int r = 0; r < comm->size; ++r) {
    int j = comm->world_rank(r);
    cs->node_of[r] = j < static_cast<int>(node_of_job.size()) ? node_of_job[j] : 0;
  }
  refresh_hints(f, cs.get());
  f->coll_state = cs;
  // The shared pointer's file: rank 0 makes it, every process opens it, rank 0 unlinks it. Its
  // name: the data file's, the job's, and a number of rank 0's that no other open in the job
  // takes (rank 0's job rank, and its count of opens), which rank 0 tells the others (0: it could
  // not make the file).
  static uint64_t opens = 0;
  uint64_t job = boot::job_id(boot::job().nspace);
  int64_t number = 0;
  if (comm->rank == 0) {
    number = static_cast<int64_t>((static_cast<uint64_t>(comm->world_rank(0)) << 32) | ++opens);
    std::string name = io::SharedPointer::name_for(f->path, job, static_cast<uint64_t>(number));
    if (!cs->shared.create(name, &cs->shared_error)) number = 0;
  }
  std::string why;
  auto to_all = [](int64_t v) {
    return [v](const std::vector<int64_t>&, std::vector<int64_t>* out) {
      std::fill(out->begin(), out->end(), v);
    };
  };
  exchange_with_root(comm, next_tag(cs.get()) + 4, 0, to_all(number), &number, &why);
  std::string name = io::SharedPointer::name_for(f->path, job, static_cast<uint64_t>(number));
  int64_t opened = number != 0 ? 1 : 0, all = 0;
  if (comm->rank != 0) {
    opened = number != 0 && cs->shared.open(name, &cs->shared_error) ? 1 : 0;
    if (number == 0) cs->shared_error = "rank 0 could not make the shared file pointer's file";
  }
  auto every = [](const std::vector<int64_t>& in, std::vector<int64_t>* out) {
    int64_t v = 1;
    for (int64_t x : in) v &= x;
    std::fill(out->begin(), out->end(), v);
  };
  exchange_with_root(comm, next_tag(cs.get()) + 4, opened, every, &all, &why);
  // From here on the pointer's file is only the processes' descriptors: nothing outlives them.
  if (comm->rank == 0) cs->shared.unlink_name();
  if (!all) {
    if (cs->shared_error.empty())
      cs->shared_error = "a process could not open the shared file pointer's file " + name;
    cs->shared.close();
  }
  publish_hints(f, cs.get());
  f->at_set_view.push_back([](File* file) {
    CollState* s = state_of(file);
    if (s == nullptr) return MPI_SUCCESS;
    // MPI_File_set_view: the shared pointer goes back to 0 (rank 0 sets it; the view's barrier
    // follows), and the view's info may have brought hints.
    std::string why;
    if (file->rank == 0 && s->shared.ready() && !s->shared.set(0, &why))
      return raise_error_on(file, MPI_ERR_IO, "MPI_File_set_view", "%s", why.c_str());
    refresh_hints(file, s);
    publish_hints(file, s);
    return MPI_SUCCESS;
  });
  f->at_close.push_back([](File* file) {
    CollState* s = state_of(file);
    if (s == nullptr) return MPI_SUCCESS;
    if (s->split) progress::wait_until([s] { return s->split->access->over; });
    s->split.reset();
    s->shared.close();
    return MPI_SUCCESS;
  });
}

}  // namespace torusmpi::mpi

// --- Entry points
// ----------------------------------------------------------------------------------

namespace mpi = torusmpi::mpi;
using mpi::Kind;
using mpi::kNoRequest;

// Blocking (kNoRequest, no split), nonblocking (a request) and split _begin (kNoRequest, split).
#define TM_FILE_COLL(call, kind, offset, write, st, req, split)                                    \
  return mpi::collective("MPI_File_" call, fh, kind, offset, buf, count, datatype, write, st, req, \
                         split)

int PMPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("read_all", Kind::kIndividual, 0, false, st, kNoRequest, false);
}
int PMPI_File_write_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                        MPI_Status* st) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("write_all", Kind::kIndividual, 0, true, st, kNoRequest, false);
}
int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                          MPI_Datatype datatype, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("read_at_all", Kind::kExplicit, offset, false, st, kNoRequest, false);
}
int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                           MPI_Datatype datatype, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("write_at_all", Kind::kExplicit, offset, true, st, kNoRequest, false);
}
int PMPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                        MPI_Request* request) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("iread_all", Kind::kIndividual, 0, false, MPI_STATUS_IGNORE, request, false);
}
int PMPI_File_iwrite_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                         MPI_Request* request) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("iwrite_all", Kind::kIndividual, 0, true, MPI_STATUS_IGNORE, request, false);
}
int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                           MPI_Datatype datatype, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("iread_at_all", Kind::kExplicit, offset, false, MPI_STATUS_IGNORE, request, false);
}
int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                            MPI_Datatype datatype, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("iwrite_at_all", Kind::kExplicit, offset, true, MPI_STATUS_IGNORE, request, false);
}
int PMPI_File_read_all_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("read_all_begin", Kind::kIndividual, 0, false, MPI_STATUS_IGNORE, kNoRequest, true);
}
int PMPI_File_write_all_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("write_all_begin", Kind::kIndividual, 0, true, MPI_STATUS_IGNORE, kNoRequest, true);
}
int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf, int count,
                                MPI_Datatype datatype) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("read_at_all_begin", Kind::kExplicit, offset, false, MPI_STATUS_IGNORE, kNoRequest,
               true);
}
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                 MPI_Datatype datatype) {
  torusmpi::progress::Lock lock;
  TM_FILE_COLL("write_at_all_begin", Kind::kExplicit, offset, true, MPI_STATUS_IGNORE, kNoRequest,
               true);
}
int PMPI_File_read_all_end(MPI_File fh, void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_read_all_end", fh, buf, false, false, st);
}
int PMPI_File_write_all_end(MPI_File fh, const void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_write_all_end", fh, buf, true, false, st);
}
int PMPI_File_read_at_all_end(MPI_File fh, void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_read_at_all_end", fh, buf, false, false, st);
}
int PMPI_File_write_at_all_end(MPI_File fh, const void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_write_at_all_end", fh, buf, true, false, st);
}

int PMPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::shared_access("MPI_File_read_shared", fh, buf, count, datatype, false, st,
                            kNoRequest);
}
int PMPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::shared_access("MPI_File_write_shared", fh, buf, count, datatype, true, st,
                            kNoRequest);
}
int PMPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                           MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::shared_access("MPI_File_iread_shared", fh, buf, count, datatype, false,
                            MPI_STATUS_IGNORE, request);
}
int PMPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                            MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::shared_access("MPI_File_iwrite_shared", fh, buf, count, datatype, true,
                            MPI_STATUS_IGNORE, request);
}
int PMPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                           MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::ordered("MPI_File_read_ordered", fh, buf, count, datatype, false, st, false);
}
int PMPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                            MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::ordered("MPI_File_write_ordered", fh, buf, count, datatype, true, st, false);
}
int PMPI_File_read_ordered_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  torusmpi::progress::Lock lock;
  return mpi::ordered("MPI_File_read_ordered_begin", fh, buf, count, datatype, false,
                      MPI_STATUS_IGNORE, true);
}
int PMPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  torusmpi::progress::Lock lock;
  return mpi::ordered("MPI_File_write_ordered_begin", fh, buf, count, datatype, true,
                      MPI_STATUS_IGNORE, true);
}
int PMPI_File_read_ordered_end(MPI_File fh, void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_read_ordered_end", fh, buf, false, true, st);
}
int PMPI_File_write_ordered_end(MPI_File fh, const void* buf, MPI_Status* st) {
  torusmpi::progress::Lock lock;
  return mpi::split_end("MPI_File_write_ordered_end", fh, buf, true, true, st);
}
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  torusmpi::progress::Lock lock;
  return mpi::seek_shared("MPI_File_seek_shared", fh, offset, whence);
}
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  torusmpi::progress::Lock lock;
  return mpi::position_shared("MPI_File_get_position_shared", fh, offset);
}

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
