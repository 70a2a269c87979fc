#include "mpi/coll_call.h"

#include "mpi/datatype.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/group.h"
#include "mpi/info.h"
#include "mpi/reduction.h"

namespace torusmpi::mpi {
namespace {

int coll_failed(const char* fn, MPI_Comm comm, Status s, const std::string& why) {
  if (!why.empty()) return raise_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", why.c_str());
  return raise_error(comm, error_class_of(s), fn, "failed: %s", status_string(s));
}

void request_done(coll::Exec*, void*) {}

}  // namespace

// --- Datatypes and staging

namespace {
// While a persistent collective's init checks its call: the derived datatypes and user ops met,
// to keep.
struct Kept {
  std::vector<MPI_Datatype> types;
  std::vector<MPI_Op> ops;
};
Kept* g_checked = nullptr;
}  // namespace

int check_type_arg(const char* fn, MPI_Comm comm, const char* what, MPI_Datatype type,
                   TypeArg* out) {
  out->handle = type;
  const BuiltinTypeInfo* info = nullptr;
  if (int err = check_datatype(fn, comm, type, what, &info, &out->t)) return err;
  if (info != nullptr) {
    // Predefined: the fast path of every call, without the engine unless the layout needs it.
    out->size = static_cast<size_t>(info->size);
    out->extent = static_cast<size_t>(info->extent);
    out->derived = false;
    out->dense = info->size == info->extent;
    out->offset = 0;
    out->t = out->dense ? nullptr : engine_type(type);
    return MPI_SUCCESS;
  }
  out->size = static_cast<size_t>(out->t->size());
  out->extent = static_cast<size_t>(out->t->extent());
  out->derived = true;
  if (__builtin_expect(g_checked != nullptr, 0)) g_checked->types.push_back(type);
  out->dense = out->t->size() == out->t->extent() && out->t->contiguous(2, &out->offset);
  if (!out->dense) out->offset = 0;
  return MPI_SUCCESS;
}

Staging::~Staging() {
  for (MPI_Datatype t : retained_) release_type(t);
}

char* Staging::stage(size_t bytes, bool on_device) {
  buffers_.emplace_back();
  return buffers_.back().make(bytes, on_device);
}

void Staging::pack_or_drain(char* packed, void* buf, const dtype::TypeRef& t, size_t count,
                            int64_t at, bool fill, bool drain) {
  if (count == 0) return;
  char* user = static_cast<char*>(buf) + at;
  if (fill) pack_any(*t, user, static_cast<int64_t>(count), packed);
  if (drain) drains_.push_back(Drain{t, packed, user, static_cast<int64_t>(count)});
}

void* Staging::blocks(void* buf, const TypeArg& t, size_t count, size_t n, bool fill, bool drain) {
  char* packed = stage(count * t.size * n, span_on_device(*engine_type_ref(t.handle), buf));
  // Block j's elements follow block j - 1's: one run of n * count elements.
  pack_or_drain(packed, buf, engine_type_ref(t.handle), count * n, 0, fill, drain);
  return packed;
}

void* Staging::side(const Side& s, bool fill, bool drain, const std::vector<size_t>& bytes,
                    std::vector<size_t>* displs) {
  auto type = [&](size_t i) { return s.types.size() == 1 ? s.types[0] : s.types[i]; };
  size_t total = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    (*displs)[i] = total;
    total += bytes[i];
  }
  bool on_device = false;
  for (size_t i = 0; i < bytes.size(); ++i) {
    on_device = on_device || (bytes[i] > 0 && span_on_device(*engine_type_ref(type(i)->handle),
                                                             static_cast<char*>(s.buf) + s.at[i]));
  }
  char* packed = stage(total, on_device);
  for (size_t i = 0; i < bytes.size(); ++i) {
    pack_or_drain(packed + (*displs)[i], s.buf, engine_type_ref(type(i)->handle), s.counts[i],
                  s.at[i], fill, drain);
  }
  return packed;
}

void* CollCall::place(void* buf, const TypeArg& t, size_t count, size_t n, bool fill, bool drain) {
  // NULL is MPI_BOTTOM for a derived datatype (absolute addresses); with a predefined one it
  // can only come with nothing to move.
  if (buf == nullptr && !t.derived) return nullptr;
  if (t.dense) return static_cast<char*>(buf) + t.offset;
  return staging().blocks(buf, t, count, n, fill, drain);
}

void* CollCall::place(const Side& s, bool fill, bool drain, std::vector<size_t>* bytes,
                      std::vector<size_t>* displs) {
  const size_t n = s.counts.size();
  auto type = [&](size_t i) { return s.types.size() == 1 ? s.types[0] : s.types[i]; };
  bytes->resize(n);
  displs->resize(n);
  bool dense = true;
  for (size_t i = 0; i < n; ++i) {
    (*bytes)[i] = s.counts[i] * type(i)->size;
    (*displs)[i] = static_cast<size_t>(s.at[i] + type(i)->offset);
    dense = dense && (type(i)->dense || s.counts[i] == 0);
  }
  if (dense) return s.buf;
  return staging().side(s, fill, drain, *bytes, displs);
}

void Staging::retain(MPI_Datatype type) {
  retain_type(type);
  retained_.push_back(type);
}

void Staging::finish(void* ctx, Status status) {
  auto* s = static_cast<Staging*>(ctx);
  if (status == Status::kOk) {
    for (const Drain& d : s->drains_) unpack_any(*d.t, d.packed, d.count, d.user);
  }
  s->drains_.clear();
  if (s->owned_by_run_) delete s;
}

// --- Running

namespace {

// Starts a nonblocking run and hands the application its request.
int start_request(const char* fn, MPI_Comm comm, coll::Exec* e, MPI_Request* request) {
  Request* req = Request::make();
  req->kind = Request::Kind::kColl;
  req->comm = comm;
  req->exec = e;
  req->fn = fn;
  e->set_on_complete(request_done, nullptr);
  e->start_nonblocking();
  *request = &req->handle;
  return MPI_SUCCESS;
}

// Both forms of run_collective: `staging`, when not null, is the call's, and a nonblocking run
// takes it over.
int run_staged(const char* fn, MPI_Comm comm, Comm* c, coll::Args& a, coll::RunArgs& r,
               std::unique_ptr<Staging>* staged, MPI_Request* request) {
  if (request == check_only()) return MPI_SUCCESS;
  std::string why;
  // Reductions said so where their op was resolved (check_reduction).
  if (!coll::coll_reduces(a.coll)) a.in_network = coll::in_network(nullptr);
  const uint32_t seq = ++c->coll_calls;
  const auto bytes = static_cast<int64_t>(a.count * a.elem);
  if (request == nullptr) {
    // The record begins once the first messages are out: it then costs their travel time, not
    // the call's. A run that ended already (its peers' messages had come) is recorded done at
    // once, with one clock reading.
    struct Begin {
      const char* fn;
      const Comm* c;
      uint32_t seq;
      int64_t bytes;
      flight::Scope record;
    } begin{fn, c, seq, bytes, {}};
    auto open_record = [](void* p, bool done) {
      auto* b = static_cast<Begin*>(p);
      b->record.open(b->fn, b->c->context, b->c->name.c_str(), b->seq, b->bytes, flight::kNoPeer,
                     done);
    };
    Status s = c->team.run(a, r, &why, open_record, &begin);
    flight::Scope& record = begin.record;
    if (s != Status::kOk) record.finish(flight::State::kFailed);
    return s == Status::kOk ? MPI_SUCCESS : coll_failed(fn, comm, s, why);
  }
  flight::started(fn, c->context, c->name.c_str(), seq, bytes, flight::kNoPeer);
  // The run outlives the call: its end deletes the staging.
  if (staged != nullptr && *staged) (*staged)->set_owned_by_run();
  coll::Exec* e = nullptr;
  Status s = c->team.start(a, r, &e, &why);
  if (s != Status::kOk) return coll_failed(fn, comm, s, why);
  if (staged != nullptr) (void)staged->release();  // the run's now
  return start_request(fn, comm, e, request);
}

}  // namespace

MPI_Request* check_only() {
  static MPI_Request none = MPI_REQUEST_NULL;
  return &none;
}

int persistent_init(const char* fn, MPI_Comm comm, MPI_Info info, MPI_Request* request,
                    std::function<int(MPI_Request*)> call) {
  Kept kept;
  g_checked = &kept;
  const int checked = call(check_only());
  g_checked = nullptr;
  if (checked != MPI_SUCCESS) return checked;
  if (request == nullptr) return raise_error(comm, MPI_ERR_REQUEST, fn, "request argument is NULL");
  if (info != MPI_INFO_NULL && info_impl(info) == nullptr)
    return raise_error(comm, MPI_ERR_INFO, fn, "info argument is not a valid info object");
  Request* r = Request::make();
  r->kind = Request::Kind::kColl;
  r->persistent = true;
  r->active = false;
  r->comm = comm;
  r->fn = fn;
  r->start_coll = std::move(call);
  r->kept_comm = comm_impl(comm);
  if (r->kept_comm != nullptr) comm_keep(r->kept_comm);
  for (MPI_Datatype t : kept.types) retain_type(t);
  for (MPI_Op op : kept.ops) retain_op(op);
  r->kept_types = std::move(kept.types);
  r->kept_ops = std::move(kept.ops);
  *request = &r->handle;
  return MPI_SUCCESS;
}

int start_persistent(Request* r) {
  MPI_Request run = MPI_REQUEST_NULL;
  if (int err = r->start_coll(&run)) return err;
  // The run's request gives its run to the persistent one, which completes as it does.
  Request* started = request_impl(run);
  r->exec = started->exec;
  started->exec = nullptr;
  Request::release(started);
  r->active = true;
  return MPI_SUCCESS;
}

int run_collective(const char* fn, MPI_Comm comm, Comm* c, CollCall& call, MPI_Request* request) {
  std::unique_ptr<Staging>& staging = call.staged;
  if (staging && staging->idle()) staging.reset();
  if (staging) {
    call.r.finish = Staging::finish;
    call.r.finish_ctx = staging.get();
  }
  return run_staged(fn, comm, c, call.a, call.r, &staging, request);
}

int run_collective(const char* fn, MPI_Comm comm, Comm* c, coll::Args& a, coll::RunArgs& r,
                   MPI_Request* request) {
  return run_staged(fn, comm, c, a, r, nullptr, request);
}

int run_schedule(const char* fn, MPI_Comm comm, Comm* c, CollCall& call,
                 std::shared_ptr<const coll::Schedule> schedule, MPI_Request* request) {
  if (request == check_only()) return MPI_SUCCESS;
  std::unique_ptr<Staging>& staging = call.staged;
  if (staging && staging->idle()) staging.reset();
  if (staging) {
    call.r.finish = Staging::finish;
    call.r.finish_ctx = staging.get();
  }
  const uint32_t seq = ++c->coll_calls;
  const auto bytes = static_cast<int64_t>(call.a.count * call.a.elem);
  coll::Exec* e = coll::Exec::make();
  e->bind(schedule.get(), call.r);
  if (request == nullptr) {
    flight::Scope record(fn, c->context, c->name.c_str(), seq, bytes, flight::kNoPeer);
    e->start();
    if (!e->done()) e->wait();
    const Status s = e->error();
    coll::Exec::release(e);
    if (s != Status::kOk) record.finish(flight::State::kFailed);
    return s == Status::kOk ? MPI_SUCCESS : coll_failed(fn, comm, s, "");
  }
  flight::started(fn, c->context, c->name.c_str(), seq, bytes, flight::kNoPeer);
  // The run outlives the call: it keeps the schedule, and its end deletes the staging.
  e->keep(std::move(schedule));
  if (staging) staging->set_owned_by_run();
  (void)staging.release();
  return start_request(fn, comm, e, request);
}

// --- Checks

int check_call_failed(const char* fn, MPI_Comm comm, MPI_Request* request, Comm** c) {
  if (int err = require_active(fn)) return err;
  if (int err = check_comm(fn, comm, c)) return err;
  // "MPI_Ibarrier", "MPI_Ineighbor_allgather": the nonblocking forms.
  if (fn[4] == 'I' && request == nullptr)
    return raise_error(comm, MPI_ERR_REQUEST, fn, "request argument is NULL");
  return MPI_SUCCESS;
}

int check_count(const char* fn, MPI_Comm comm, const char* what, int count, const TypeArg& t,
                size_t* bytes) {
  if (count < 0) return raise_error(comm, MPI_ERR_COUNT, fn, "%scount argument is %d", what, count);
  *bytes = static_cast<size_t>(count) * t.size;
  return MPI_SUCCESS;
}

int check_same(const char* fn, MPI_Comm comm, size_t send_bytes, size_t recv_bytes) {
  if (send_bytes == recv_bytes) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_TRUNCATE, fn,
                     "sendcount and sendtype give %zu B, recvcount and recvtype %zu B: a "
                     "collective's send and receive blocks must match",
                     send_bytes, recv_bytes);
}

namespace {

// Where count elements of t at p begin and how many bytes they cover. A predefined type needs no
// engine: its elements tile [p, p + count * extent).
void arg_span(const TypeArg& t, const void* p, size_t count, const char** lo, size_t* bytes) {
  if (t.derived && t.t != nullptr) {
    type_span(*t.t, p, static_cast<int64_t>(count), lo, bytes);
    return;
  }
  *lo = static_cast<const char*>(p);
  *bytes = count * t.extent;
}

}  // namespace

int check_span(const char* fn, MPI_Comm comm, const void* p, const char* what, const TypeArg& t,
               size_t count) {
  const size_t packed = count * t.size;
  if (packed == 0) return MPI_SUCCESS;
  // A NULL buffer is MPI_BOTTOM: a derived datatype may hold absolute addresses (its span is then
  // checked below), a predefined one would move bytes at address 0.
  if (p == nullptr && !t.derived) {
    return raise_error(comm, MPI_ERR_BUFFER, fn, "%s argument is NULL with %zu B to move", what,
                       packed);
  }
  const char* lo;
  size_t bytes;
  arg_span(t, p, count, &lo, &bytes);
  // A count that runs past a device allocation is caught here rather than by the DMA engine
  // halfway through the run, when other ranks already wait on this one.
  return check_memory(fn, comm, "", what, lo, bytes);
}

int check_side(const char* fn, MPI_Comm comm, const char* what, const Side& s) {
  // One check of the blocks' hull, not one per block: a v-collective's blocks lie in one buffer,
  // and p lookups (each under the arena's lock for device memory) would cost more than the call.
  const char* lo = nullptr;
  const char* hi = nullptr;
  for (size_t i = 0; i < s.counts.size(); ++i) {
    const TypeArg& t = *(s.types.size() == 1 ? s.types[0] : s.types[i]);
    if (s.counts[i] == 0 || t.size == 0) continue;
    const char* b_lo;
    size_t b_bytes;
    arg_span(t, static_cast<const char*>(s.buf) + s.at[i], s.counts[i], &b_lo, &b_bytes);
    if (lo == nullptr || b_lo < lo) lo = b_lo;
    if (hi == nullptr || b_lo + b_bytes > hi) hi = b_lo + b_bytes;
  }
  if (lo == nullptr) return MPI_SUCCESS;
  // A NULL buf is MPI_BOTTOM: derived types with absolute addresses land on real memory, anything
  // else near address 0 and fails the check below.
  return check_memory(fn, comm, "", what, lo, static_cast<size_t>(hi - lo));
}

int check_counts(const char* fn, MPI_Comm comm, const int* v, int n, const char* what,
                 bool counts) {
  if (v == nullptr && n > 0) return raise_error(comm, MPI_ERR_ARG, fn, "%s argument is NULL", what);
  for (int i = 0; counts && i < n; ++i) {
    if (v[i] < 0) return raise_error(comm, MPI_ERR_COUNT, fn, "%s[%d] is %d", what, i, v[i]);
  }
  return MPI_SUCCESS;
}

int vector_side(const char* fn, MPI_Comm comm, const void* buf, const int* counts,
                const int* displs, const MPI_Datatype* types, const char* what, bool w, int n,
                std::vector<TypeArg>* targs, Side* s) {
  const bool sends = what[0] == 's';
  if (int err = check_counts(fn, comm, counts, n, sends ? "sendcounts" : "recvcounts", true))
    return err;
  if (int err = check_counts(fn, comm, displs, n, sends ? "sdispls" : "rdispls", false)) return err;
  if (types == nullptr) {
    return raise_error(comm, MPI_ERR_ARG, fn, "%stype%s argument is NULL", what, w ? "s" : "");
  }
  targs->resize(w ? n : 1);
  for (size_t j = 0; j < targs->size(); ++j) {
    if (int err = check_type_arg(fn, comm, what, types[j], &(*targs)[j])) return err;
  }
  s->buf = const_cast<void*>(buf);
  s->types.clear();
  for (const TypeArg& t : *targs) s->types.push_back(&t);
  s->counts.resize(n);
  s->at.resize(n);
  for (int j = 0; j < n; ++j) {
    s->counts[j] = static_cast<size_t>(counts[j]);
    s->at[j] = static_cast<int64_t>(displs[j]) * static_cast<int64_t>(w ? 1 : (*targs)[0].extent);
  }
  return MPI_SUCCESS;
}

int check_reduction(const char* fn, MPI_Comm comm, int count, MPI_Datatype type, MPI_Op op,
                    CollCall* call, TypeArg* t, size_t* per) {
  if (int err = check_type_arg(fn, comm, "", type, t)) return err;
  if (count < 0) return raise_error(comm, MPI_ERR_COUNT, fn, "count argument is %d", count);
  if (__builtin_expect(g_checked != nullptr, 0) && is_user_op(op)) g_checked->ops.push_back(op);
  size_t elem = t->extent;
  *per = 1;
  if (!t->derived) {
    // The kernels work on the predefined type's own layout, padding of pair types included: every
    // rank passes the same type, so it travels as it is.
    if (int err = resolve_reduction(fn, comm, op, type, &call->r.reduce, &call->a.commutative))
      return err;
    call->a.in_network = coll::in_network(&call->r.reduce);
    t->size = t->extent;
    t->dense = true;
  } else {
    if (int err = resolve_packed_reduction(fn, comm, op, type, *t->t, &call->r.reduce,
                                           &call->a.commutative, &elem, per))
      return err;
    if (call->r.reduce.user_fn != nullptr) call->staging().retain(type);
  }
  call->a.count = static_cast<size_t>(count) * *per;
  call->a.elem = elem;
  call->r.elem = elem;
  return MPI_SUCCESS;
}

}  // namespace torusmpi::mpi
