// Communicator management: context ids (see group.h for the protocol), the making and freeing of
// communicators, and MPI_Comm_dup, _dup_with_info, _idup, _split, _split_type, _create,
// _create_group, _free, _compare, _set_info, _get_info.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <unordered_set>
#include <utility>

#include "coll/sched/rescue.h"
#include "coll/select/registry.h"
#include "core/progress.h"
#include "mpi/attr.h"
#include "mpi/errors.h"
#include "mpi/fortran.h"
#include "mpi/group.h"
#include "mpi/p2p.h"
#include "mpi/topo.h"
#include "topo/host.h"

namespace torusmpi::mpi {
namespace {

// --- Context ids: this process's map of the pairs it uses.

struct ContextMap {
  uint64_t used[kContextWords] = {};
  uint64_t reserved[kContextWords] = {};  // chosen by a creation that is checking its choice
  int nonblocking = 0;                    // nonblocking creations in flight
};
ContextMap g_map;

bool taken(int pair) {
  const uint64_t bit = uint64_t{1} << (pair % 64);
  return ((g_map.used[pair / 64] | g_map.reserved[pair / 64]) & bit) != 0;
}
void set_bit(uint64_t* map, int pair, bool on) {
  const uint64_t bit = uint64_t{1} << (pair % 64);
  if (on) {
    map[pair / 64] |= bit;
  } else {
    map[pair / 64] &= ~bit;
  }
}

// What this process contributes: the pairs it uses or has reserved, then whether a nonblocking
// creation of its own, or another thread's (MPI_THREAD_MULTIPLE), may change that before the
// answer comes.
std::vector<uint64_t> contribution() {
  progress::Lock lock;  // the progress thread may be completing a nonblocking creation
  std::vector<uint64_t> words(kContextWords + 1);
  for (int i = 0; i < kContextWords; ++i) words[i] = g_map.used[i] | g_map.reserved[i];
  words[kContextWords] = g_map.nonblocking > 0 || progress::threaded();
  return words;
}

// The n lowest (or highest) pairs free in the OR of every contribution.
bool choose(const std::vector<uint64_t>& words, int n, bool from_top, int* pairs) {
  int found = 0;
  for (int k = 0; k < kContextPairs && found < n; ++k) {
    int pair = from_top ? kContextPairs - 1 - k : k;
    if ((words[pair / 64] & (uint64_t{1} << (pair % 64))) == 0) pairs[found++] = pair;
  }
  return found == n;
}

// Reserves the pairs unless one of them is taken here since the contribution; true when reserved.
bool try_reserve(const int* pairs, int n) {
  progress::Lock lock;
  for (int i = 0; i < n; ++i) {
    if (taken(pairs[i])) return false;
  }
  for (int i = 0; i < n; ++i) set_bit(g_map.reserved, pairs[i], true);
  return true;
}

void unreserve(const int* pairs, int n) {
  progress::Lock lock;
  for (int i = 0; i < n; ++i) set_bit(g_map.reserved, pairs[i], false);
}

void commit(const int* pairs, int n, uint32_t* contexts) {
  progress::Lock lock;
  for (int i = 0; i < n; ++i) {
    set_bit(g_map.reserved, pairs[i], false);
    set_bit(g_map.used, pairs[i], true);
    contexts[i] = static_cast<uint32_t>(pairs[i]) * 2;
  }
}

// --- Runs of the engine outside a team.

std::shared_ptr<coll::Schedule> build(const pml::Comm& view, coll::Args* a) {
  a->rank = view.rank;
  a->size = view.size;
  auto s = std::make_shared<coll::Schedule>();
  coll::Builder b(s.get());
  coll::fallback(a->coll).build(b, *a);
  b.finish();
  return s;
}

coll::Args or_args(size_t words) {
  coll::Args a;
  a.coll = coll::Coll::kAllreduce;
  a.count = words;
  a.elem = sizeof(uint64_t);
  return a;
}

coll::RunArgs or_run(const pml::Comm& view, int tag, const void* in, void* out) {
  coll::RunArgs r;
  r.send = in;
  r.recv = out;
  r.reduce.kernel = coll::reduce_fn(coll::ReduceOp::kBor, coll::Elem::kU64);
  r.elem = sizeof(uint64_t);
  r.comm = &view;
  r.tag = tag;
  return r;
}

// --- Communicator objects.

// Handles of communicators made here. They come from a pool and are never given back to the
// system, so a stale handle still points at a handle object, whose magic says "freed".
std::vector<ompi_communicator_t*>& g_free_handles = *new std::vector<ompi_communicator_t*>;
std::unordered_set<Comm*>& g_live = *new std::unordered_set<Comm*>;

// Freed communicators whose object or pair something may still use: a nonblocking collective in
// flight holds the object, a posted receive or an unmatched message the pair.
struct Grave {
  Comm* comm;
  bool owns_pair;  // shadows use their intercommunicator's pair
};
std::vector<Grave>& g_graves = *new std::vector<Grave>;

void bury_ready() {
  if (g_graves.empty() || coll::exec_active() != 0) return;
  for (size_t i = 0; i < g_graves.size();) {
    Grave& g = g_graves[i];
    // No run is left on it (exec_active): nobody's aggregation needs its listener any more.
    coll::rescue::forget(g.comm->coll_context());
    if (g.owns_pair && !pml::contexts_idle(g.comm->context)) {
      ++i;
      continue;
    }
    if (g.owns_pair) context_release(g.comm->context);
    delete g.comm;
    g = g_graves.back();
    g_graves.pop_back();
  }
}

MPI_Comm handle_new(Comm* c) {
  ompi_communicator_t* h;
  if (g_free_handles.empty()) {
    h = new ompi_communicator_t;
  } else {
    h = g_free_handles.back();
    g_free_handles.pop_back();
  }
  h->magic = kMagicComm;
  h->impl = c;
  c->handle = h;
  comm_sync_handle(c);
  return h;
}

void retire(Comm* c) {
  const bool owns_pair = c->owns_context;
  g_live.erase(c);
  errhandler_release(c->errhandler);
  c->errhandler = nullptr;
  if (c->info != MPI_INFO_NULL) PMPI_Info_free(&c->info);
  if (c->handle != MPI_COMM_WORLD && c->handle != MPI_COMM_SELF) {
    c->handle->magic = kMagicFreed;
    c->handle->impl = nullptr;
    c->handle->error_handler = nullptr;
    fortran_forget(HandleKind::kComm, c->handle);
    g_free_handles.push_back(c->handle);
  }
  g_graves.push_back({c, owns_pair});
}

bool is_identity(const std::vector<int>& members) {
  if (static_cast<int>(members.size()) != runtime().job.size) return false;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i] != static_cast<int>(i)) return false;
  }
  return true;
}

// --- MPI_Comm_idup: the agreement as a chain of nonblocking runs.
//
// round 1: OR of contributions -> choose from the top; reserve or report a conflict
// round 2: OR of conflicts     -> none: commit, done; any: give the reservation back, round 1
//
// With asynchronous progress the rounds after the first start on the progress thread, in the
// completion callback of the one before. So everything they need is made on the caller's thread
// (the run and both schedules: the executor's pool is the caller's), and the map they change is
// under progress::Lock.
class Idup {
 public:
  Idup(Comm* parent, Comm* made, Request* req)
      : tag_(agreement_tag(parent)), made_(made), req_(req), exec_(coll::Exec::make()) {
    view_.context = parent->context;
    view_.rank = parent->rank;
    view_.size = parent->size;
    view_.world_ranks = parent->world_ranks;
    coll::Args a = or_args(kContextWords + 1);
    words_schedule_ = build(view_, &a);
    a = or_args(1);
    flag_schedule_ = build(view_, &a);
    progress::Lock lock;
    ++g_map.nonblocking;
  }

  void start_round1() {
    words_in_ = contribution();
    words_out_.assign(words_in_.size(), 0);
    run(*words_schedule_, words_in_.data(), words_out_.data(), &Idup::round1_done);
  }

 private:
  using Next = void (Idup::*)(Status);

  void run(const coll::Schedule& s, const void* in, void* out, Next next) {
    next_ = next;
    exec_->bind(&s, or_run(view_, tag_, in, out));
    exec_->set_on_complete(&Idup::on_run_done, this);
    exec_->start_nonblocking();
  }

  static void on_run_done(coll::Exec* e, void* self) {
    auto* op = static_cast<Idup*>(self);
    (op->*(op->next_))(e->error());
  }

  void round1_done(Status s) {
    if (s != Status::kOk) return finish(s);
    if (!choose(words_out_, 1, true, &pair_)) return finish(Status::kErrNoMem);
    reserved_ = try_reserve(&pair_, 1);
    flag_in_ = reserved_ ? 0 : 1;
    flag_out_ = 0;
    run(*flag_schedule_, &flag_in_, &flag_out_, &Idup::round2_done);
  }

  void round2_done(Status s) {
    if (s == Status::kOk && flag_out_ == 0) {
      uint32_t context = 0;
      commit(&pair_, 1, &context);
      made_->context = context;
      made_->owns_context = true;
      return finish(Status::kOk);
    }
    if (reserved_) unreserve(&pair_, 1);
    if (s != Status::kOk) return finish(s);
    start_round1();
  }

  // Runs in the last callback of the chain: nothing may touch this object or the run afterwards
  // (the executor does not, once the callback is called).
  void finish(Status s) {
    {
      progress::Lock lock;
      --g_map.nonblocking;
    }
    // Failed: the application's handle reads as freed (the object goes at MPI_Finalize: freeing
    // it here could race the caller's thread).
    if (s != Status::kOk) made_->handle->magic = kMagicFreed;
    Request* req = req_;
    delete exec_;  // not back to the pool, which belongs to the caller's thread
    delete this;
    req->pml.error = s;
    __atomic_store_n(&req->pml.done_, true, __ATOMIC_RELEASE);
    if (req->pml.on_complete != nullptr) req->pml.on_complete(&req->pml);  // MPI_Request_free
  }

  pml::Comm view_;  // the parent's ranks: the parent may be freed while this runs
  int tag_;
  Comm* made_;
  Request* req_;
  coll::Exec* exec_;
  std::shared_ptr<coll::Schedule> words_schedule_, flag_schedule_;
  std::vector<uint64_t> words_in_, words_out_;
  uint64_t flag_in_ = 0, flag_out_ = 0;
  int pair_ = -1;
  bool reserved_ = false;
  Next next_ = nullptr;
};

}  // namespace

// --- Context ids

void contexts_init() {
  g_map = ContextMap{};
  set_bit(g_map.used, static_cast<int>(pml::kWorldContext / 2), true);
  set_bit(g_map.used, static_cast<int>(pml::kSelfContext / 2), true);
}

Status contexts_agree(const OrReduce& reduce, int n, uint32_t* contexts) {
  int pairs[2];
  for (;;) {
    std::vector<uint64_t> words = contribution();
    if (Status s = reduce(&words); s != Status::kOk) return s;
    if (!choose(words, n, false, pairs)) return Status::kErrNoMem;
    // Nobody's map can have changed since it contributed: the choice stands.
    if (words[kContextWords] == 0) {
      commit(pairs, n, contexts);
      return Status::kOk;
    }
    bool reserved = try_reserve(pairs, n);
    std::vector<uint64_t> conflict{reserved ? 0u : 1u};
    Status s = reduce(&conflict);
    if (s == Status::kOk && conflict[0] == 0) {
      commit(pairs, n, contexts);
      return Status::kOk;
    }
    if (reserved) unreserve(pairs, n);
    if (s != Status::kOk) return s;
  }
}

void context_release(uint32_t context) {
  progress::Lock lock;
  set_bit(g_map.used, static_cast<int>(context / 2), false);
}

int agreement_tag(Comm* c) {
  return static_cast<int>(0x40000000u | (c->create_seq++ & 0x3fffffffu));
}

int user_protocol_tag(int kind, int tag) {
  return static_cast<int>(0x80000000u | static_cast<uint32_t>(kind) << 29 |
                          (static_cast<uint32_t>(tag) & 0x1fffffffu));
}

// --- Runs

Status run_tagged(const pml::Comm& view, int tag, coll::Args a, coll::RunArgs r) {
  std::shared_ptr<coll::Schedule> s = build(view, &a);
  r.comm = &view;
  r.tag = tag;
  coll::Exec* e = coll::Exec::make();
  e->bind(s.get(), r);
  e->start();
  if (!e->done()) e->wait();
  Status st = e->error();
  coll::Exec::release(e);
  return st;
}

Status or_words(const pml::Comm& view, int tag, std::vector<uint64_t>* words) {
  std::vector<uint64_t> in = *words;
  coll::RunArgs r = or_run(view, tag, in.data(), words->data());
  return run_tagged(view, tag, or_args(words->size()), r);
}

Status bcast_bytes(const pml::Comm& view, int tag, int root, void* buf, size_t bytes) {
  coll::Args a;
  a.coll = coll::Coll::kBcast;
  a.root = root;
  a.count = bytes;
  coll::RunArgs r;
  r.recv = buf;
  return run_tagged(view, tag, a, r);
}

Status swap_bytes(const pml::Comm& link, bool coll, int peer, int tag,
                  const std::vector<uint8_t>& out, std::vector<uint8_t>* in) {
  const uint32_t context = coll ? link.coll_context() : link.context;
  uint64_t out_len = out.size(), in_len = 0;
  pml::Request sreq, rreq;
  Status s = pml::irecv(link, context, &in_len, sizeof in_len, peer, tag, &rreq);
  if (s == Status::kOk) {
    s = pml::isend(link, context, &out_len, sizeof out_len, peer, tag, pml::SendMode::kStandard,
                   &sreq);
    if (s == Status::kOk) pml::wait(&sreq);
    pml::wait(&rreq);
  }
  if (s != Status::kOk) return s;
  if (sreq.error != Status::kOk) return sreq.error;
  if (rreq.error != Status::kOk) return rreq.error;
  in->assign(in_len, 0);
  s = pml::irecv(link, context, in->data(), in_len, peer, tag, &rreq);
  if (s != Status::kOk) return s;
  s = pml::isend(link, context, out.data(), out.size(), peer, tag, pml::SendMode::kStandard, &sreq);
  if (s == Status::kOk) pml::wait(&sreq);
  pml::wait(&rreq);
  if (s != Status::kOk) return s;
  return sreq.error != Status::kOk ? sreq.error : rreq.error;
}

// --- Communicators

Comm* comm_new(const Comm& parent, std::vector<int> members, int rank, uint32_t context) {
  bury_ready();
  auto* c = new Comm;
  c->context = context;
  c->rank = rank;
  c->size = static_cast<int>(members.size());
  if (!is_identity(members)) c->world_ranks = std::move(members);
  c->errhandler = parent.errhandler;
  errhandler_retain(c->errhandler);
  handle_new(c);
  g_live.insert(c);
  return c;
}

void comm_make_inter(Comm* c, std::vector<int> remote, uint32_t local_context) {
  c->remote_ranks = std::move(remote);
  // Hidden parts report to their caller, which raises on the intercommunicator's own handler.
  Comm* local = comm_new(*c, comm_members(*c), c->rank, local_context);
  Comm* shadow = comm_new(*c, comm_members(*c), c->rank, c->context + 1);
  for (Comm* h : {local, shadow}) {
    errhandler_release(h->errhandler);
    h->errhandler = MPI_ERRORS_RETURN;
    h->hidden = true;
    comm_sync_handle(h);
  }
  local->name = "local group of an intercommunicator";
  shadow->name = "an intercommunicator's collective context";
  shadow->remote_ranks = c->remote_ranks;
  shadow->owns_context = false;
  c->local = local;
  c->shadow = shadow;
  comm_sync_handle(c);
  comm_sync_handle(shadow);
}

void comm_sync_handle(Comm* c) {
  ompi_communicator_t* h = c->handle;
  if (h == nullptr) return;
  uint32_t flags = h->c_flags & ompi::kCommIntrinsic;
  if (c->is_inter()) flags |= ompi::kCommInter;
  if (const Topology* t = topology_of(h)) {
    flags |= t->kind == MPI_CART    ? ompi::kCommCart
             : t->kind == MPI_GRAPH ? ompi::kCommGraph
                                    : ompi::kCommDistGraph;
  }
  h->c_flags = flags;
  c->local_view.grp_proc_count = c->size;
  c->local_view.grp_my_rank = c->rank;
  c->remote_view.grp_proc_count = c->remote_size();
  h->c_local_group = &c->local_view;
  // Open MPI's intracommunicators have their one group on both sides.
  h->c_remote_group = c->is_inter() ? &c->remote_view : &c->local_view;
  h->c_keyhash = h;
  h->error_handler = c->errhandler;
  h->errhandler_type = ompi::kTypeComm;
}

void comm_destroy(Comm* c) {
  if (c->local != nullptr) retire(c->local);
  if (c->shadow != nullptr) retire(c->shadow);
  c->local = c->shadow = nullptr;
  retire(c);
  bury_ready();
}

void comm_keep(Comm* c) { ++c->kept; }

void comm_release(Comm* c) {
  if (g_live.count(c) == 0) return;  // gone with MPI_Finalize
  if (--c->kept == 0 && c->free_deferred) comm_destroy(c);
}

void comms_finalize() {
  std::vector<Comm*> left(g_live.begin(), g_live.end());
  for (Comm* c : left) {
    if (!c->hidden && g_live.count(c) != 0) comm_destroy(c);
  }
  for (Grave& g : g_graves) delete g.comm;
  g_graves.clear();
}

OrReduce or_reduce_intra(Comm* c) {
  int tag = agreement_tag(c);
  const pml::Comm* view = c;
  return [view, tag](std::vector<uint64_t>* words) { return or_words(*view, tag, words); };
}

std::string Comm::label() const {
  if (!name.empty()) return name;
  if (is_inter()) {
    return "an intercommunicator (" + std::to_string(size) + " local, " +
           std::to_string(remote_size()) + " remote ranks)";
  }
  return "a communicator of " + std::to_string(size) + " rank" + (size == 1 ? "" : "s");
}

}  // namespace torusmpi::mpi

using torusmpi::Status;
using torusmpi::mpi::Comm;
using torusmpi::mpi::Group;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
using torusmpi::mpi::runtime;
namespace mpi = torusmpi::mpi;
namespace coll = torusmpi::coll;
namespace topo = torusmpi::topo;

namespace {

int resolve(const char* fn, MPI_Comm comm, Comm** c) {
  if (int err = require_active(fn)) return err;
  return mpi::check_comm(fn, comm, c);
}

int check_newcomm(const char* fn, MPI_Comm comm, MPI_Comm* newcomm) {
  if (newcomm != nullptr) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_ARG, fn, "newcomm argument is NULL");
}

bool info_valid(MPI_Info info) {
  return info != nullptr && info != MPI_INFO_NULL && info->magic == mpi::kMagicInfo;
}

// info: an info object, or MPI_INFO_NULL where null_ok.
int check_info(const char* fn, MPI_Comm comm, MPI_Info info, bool null_ok) {
  if (info_valid(info) || (null_ok && info == MPI_INFO_NULL)) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_INFO, fn, "info argument is %s",
                     info == MPI_INFO_NULL ? "MPI_INFO_NULL" : "not a valid info object");
}

int agree_failed(const char* fn, MPI_Comm comm, Status s) {
  if (s == Status::kErrNoMem) {
    return raise_error(comm, MPI_ERR_OTHER, fn,
                       "no context id is free on every member: each process may belong to at "
                       "most %d communicators at once",
                       mpi::kContextPairs);
  }
  return raise_error(comm, mpi::error_class_of(s), fn, "agreeing on a context id failed: %s",
                     torusmpi::status_string(s));
}

// Gives the new communicator its info (a copy of `info`, unless MPI_INFO_NULL) and the parent's
// attributes (when copy_attrs), then hands it out; on failure frees it and raises.
int finish_new(const char* fn, MPI_Comm comm, Comm* n, MPI_Info info, bool copy_attrs,
               MPI_Comm* newcomm) {
  if (info != MPI_INFO_NULL) {
    if (int err = PMPI_Info_dup(info, &n->info)) {
      n->info = MPI_INFO_NULL;
      mpi::comm_destroy(n);
      return raise_error(comm, err, fn, "copying the info object failed");
    }
  }
  if (copy_attrs) {
    int err;
    try {
      err = mpi::attr_copy_all(mpi::AttrKind::kComm, comm, n->handle);
    } catch (...) {
      // A C++ copy callback threw: the exception is the application's to catch, the
      // communicator half made is ours to free (its attributes were deleted on the way out).
      mpi::comm_destroy(n);
      throw;
    }
    if (err != MPI_SUCCESS) {
      mpi::comm_destroy(n);
      return raise_error(comm, err, fn, "an attribute's copy callback returned error %d", err);
    }
    mpi::comm_sync_handle(n);  // a topology comes with the attributes
  }
  *newcomm = n->handle;
  return MPI_SUCCESS;
}

int dup(const char* fn, MPI_Comm comm, MPI_Info info, bool with_info, MPI_Comm* newcomm) {
  Comm* c;
  if (int err = resolve(fn, comm, &c)) return err;
  if (with_info) {
    if (int err = check_info(fn, comm, info, true)) return err;
  }
  if (int err = check_newcomm(fn, comm, newcomm)) return err;
  MPI_Info hints = with_info ? info : c->info;
  if (c->is_inter()) {
    MPI_Comm made;
    if (int err = mpi::inter_dup(fn, c, &made)) return err;
    return finish_new(fn, comm, mpi::comm_impl(made), hints, true, newcomm);
  }
  uint32_t context;
  if (Status s = mpi::contexts_agree(mpi::or_reduce_intra(c), 1, &context); s != Status::kOk)
    return agree_failed(fn, comm, s);
  Comm* n = mpi::comm_new(*c, mpi::comm_members(*c), c->rank, context);
  return finish_new(fn, comm, n, hints, true, newcomm);
}

// The members of one color, by (key, parent rank): what MPI_Comm_split gives each process.
struct Entry {
  int color;
  int key;
};

// Splits intracommunicator c by color and key (MPI_UNDEFINED: no new communicator).
int split(const char* fn, MPI_Comm comm, Comm* c, int color, int key, MPI_Comm* newcomm) {
  std::vector<Entry> all(c->size);
  Entry mine{color, key};
  coll::Args a;
  a.coll = coll::Coll::kAllgather;
  a.count = sizeof(Entry);
  coll::RunArgs r;
  r.send = &mine;
  r.recv = all.data();
  if (Status s = mpi::run_tagged(*c, mpi::agreement_tag(c), a, r); s != Status::kOk) {
    return raise_error(comm, mpi::error_class_of(s), fn, "exchanging colors and keys failed: %s",
                       torusmpi::status_string(s));
  }
  // Every process takes part in the agreement, MPI_UNDEFINED included: one pair serves every
  // color, since no process belongs to two of them.
  uint32_t context;
  if (Status s = mpi::contexts_agree(mpi::or_reduce_intra(c), 1, &context); s != Status::kOk)
    return agree_failed(fn, comm, s);
  if (color == MPI_UNDEFINED) {
    // The pair serves the others; this process never hears of it again.
    mpi::context_release(context);
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  std::vector<int> order;
  for (int i = 0; i < c->size; ++i) {
    if (all[i].color == color) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return all[x].key < all[y].key; });
  std::vector<int> members(order.size());
  int rank = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    members[i] = c->world_rank(order[i]);
    if (order[i] == c->rank) rank = static_cast<int>(i);
  }
  Comm* n = mpi::comm_new(*c, std::move(members), rank, context);
  return finish_new(fn, comm, n, MPI_INFO_NULL, false, newcomm);
}

// Every member of g is a member of c.
int check_subgroup(const char* fn, MPI_Comm comm, const Comm& c, const Group& g) {
  std::vector<char> in(torusmpi::pml::peer_count(), 0);  // job ranks, then processes of other jobs
  for (int r : mpi::comm_members(c)) in[r] = 1;
  for (size_t i = 0; i < g.ranks.size(); ++i) {
    if (!in[g.ranks[i]]) {
      return raise_error(comm, MPI_ERR_GROUP, fn,
                         "group argument's rank %zu (process %d of MPI_COMM_WORLD) is not in comm",
                         i, g.ranks[i]);
    }
  }
  return MPI_SUCCESS;
}

int resolve_group(const char* fn, MPI_Comm comm, MPI_Group group, Group** g) {
  *g = mpi::group_impl(group);
  if (*g != nullptr) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_GROUP, fn, "group argument is %s",
                     group == MPI_GROUP_NULL ? "MPI_GROUP_NULL" : "not a valid group");
}

}  // namespace

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  torusmpi::progress::Lock lock;
  return dup("MPI_Comm_dup", comm, MPI_INFO_NULL, false, newcomm);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_dup);

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  torusmpi::progress::Lock lock;
  return dup("MPI_Comm_dup_with_info", comm, info, true, newcomm);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_dup_with_info);

// Nonblocking on intracommunicators: the new communicator's object, handle, info and attributes
// are made at once (the attribute callbacks run in the caller's thread), its context id comes
// from the agreement the request runs in the background. On an intercommunicator the agreement
// needs the leaders' exchange in the middle, which has no nonblocking form here: the call
// completes before it returns.
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_idup";
  Comm* c;
  if (int err = resolve(kFn, comm, &c)) return err;
  if (int err = check_newcomm(kFn, comm, newcomm)) return err;
  if (request == nullptr) return raise_error(comm, MPI_ERR_ARG, kFn, "request argument is NULL");
  mpi::Request* req = mpi::Request::make();
  req->kind = mpi::Request::Kind::kSend;  // its status is empty, like a send's
  req->comm = comm;
  req->fn = kFn;
  if (c->is_inter()) {
    if (int err = dup(kFn, comm, MPI_INFO_NULL, false, newcomm)) {
      mpi::Request::release(req);
      return err;
    }
    req->immediate = true;
    *request = &req->handle;
    return MPI_SUCCESS;
  }
  // No pair yet: the agreement gives one (until then the communicator must not be used, MPI says).
  Comm* n = mpi::comm_new(*c, mpi::comm_members(*c), c->rank, 0);
  n->owns_context = false;
  MPI_Comm made;
  if (int err = finish_new(kFn, comm, n, c->info, true, &made)) {
    mpi::Request::release(req);
    return err;
  }
  *newcomm = made;
  *request = &req->handle;
  (new mpi::Idup(c, n, req))->start_round1();
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_idup);

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_split";
  Comm* c;
  if (int err = resolve(kFn, comm, &c)) return err;
  if (color < 0 && color != MPI_UNDEFINED) {
    return raise_error(comm, MPI_ERR_ARG, kFn,
                       "color argument is %d: colors are non-negative, or MPI_UNDEFINED", color);
  }
  if (int err = check_newcomm(kFn, comm, newcomm)) return err;
  if (c->is_inter()) return mpi::inter_split(kFn, c, color, key, newcomm);
  return split(kFn, comm, c, color, key, newcomm);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_split);

namespace {

// This process's color for a locality finer than a node (`level`; nullptr: none, this process
// passed another split_type or MPI_UNDEFINED): the lowest rank of comm sharing the node and the
// object of `level` that holds its binding (topo::locality_key). A rank with no such object
// (unbound, as Open MPI 4.1 decides) gets a color of its own. Collective over comm whatever the
// level, since a process passing MPI_UNDEFINED cannot know whether the others need it.
int locality_color(const char* fn, MPI_Comm comm, Comm* c, const topo::Locality* level,
                   int* color) {
  struct Place {
    int64_t node;
    int64_t first, last, weight;
    uint64_t hash;
  };
  const auto& rt = runtime();
  Place mine{rt.job.local_peers.empty() ? rt.job.rank : rt.job.local_peers.front(), -1,
             -1 - static_cast<int64_t>(rt.job.rank), 0, 0};
  topo::LocalityKey k;
  // Open MPI's launcher says it bound the process (possibly to the whole node) this way.
  const char* bound_at_launch = std::getenv("OMPI_MCA_orte_bound_at_launch");
  const bool launcher_bound = bound_at_launch != nullptr && std::strcmp(bound_at_launch, "1") == 0;
  if (level != nullptr && topo::locality_key(*level, launcher_bound, &k))
    mine = {mine.node, k.first, k.last, k.weight, k.hash};
  std::vector<Place> all(c->size);
  coll::Args a;
  a.coll = coll::Coll::kAllgather;
  a.count = sizeof(Place);
  coll::RunArgs r;
  r.send = &mine;
  r.recv = all.data();
  if (Status s = mpi::run_tagged(*c, mpi::agreement_tag(c), a, r); s != Status::kOk) {
    return raise_error(comm, mpi::error_class_of(s), fn, "exchanging localities failed: %s",
                       torusmpi::status_string(s));
  }
  for (int i = 0; i < c->size; ++i) {
    const Place& p = all[i];
    if (p.node == mine.node && p.first == mine.first && p.last == mine.last &&
        p.weight == mine.weight && p.hash == mine.hash) {
      *color = i;
      break;
    }
  }
  return MPI_SUCCESS;
}

}  // namespace

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_split_type";
  Comm* c;
  if (int err = resolve(kFn, comm, &c)) return err;
  if (c->is_inter()) {
    return raise_error(comm, MPI_ERR_COMM, kFn,
                       "comm argument is an intercommunicator: split_type takes an "
                       "intracommunicator");
  }
  if (int err = check_info(kFn, comm, info, true)) return err;
  if (int err = check_newcomm(kFn, comm, newcomm)) return err;
  int color = MPI_UNDEFINED;
  const topo::Locality* level = nullptr;
  const topo::Locality kLevels[] = {topo::Locality::kHwthread, topo::Locality::kCore,
                                    topo::Locality::kL1Cache,  topo::Locality::kL2Cache,
                                    topo::Locality::kL3Cache,  topo::Locality::kSocket,
                                    topo::Locality::kNuma};
  switch (split_type) {
    case MPI_UNDEFINED:
      break;
    // Shared memory reaches the ranks of one node: the bootstrap names them (local_peers, the
    // node's lowest job rank naming the node). OMPI_COMM_TYPE_NODE is MPI_COMM_TYPE_SHARED. A
    // compute unit (CU) is the node too, as Open MPI 4.1 has it.
    case MPI_COMM_TYPE_SHARED:
    case OMPI_COMM_TYPE_HOST:
    case OMPI_COMM_TYPE_BOARD:
    case OMPI_COMM_TYPE_CU:
      color = runtime().job.local_peers.empty() ? runtime().job.rank
                                                : runtime().job.local_peers.front();
      break;
    case OMPI_COMM_TYPE_CLUSTER:
      color = 0;
      break;
    // Below the node: by the hwloc object that holds each rank's binding.
    case OMPI_COMM_TYPE_HWTHREAD:
    case OMPI_COMM_TYPE_CORE:
    case OMPI_COMM_TYPE_L1CACHE:
    case OMPI_COMM_TYPE_L2CACHE:
    case OMPI_COMM_TYPE_L3CACHE:
    case OMPI_COMM_TYPE_SOCKET:
    case OMPI_COMM_TYPE_NUMA:
      level = &kLevels[split_type - OMPI_COMM_TYPE_HWTHREAD];
      break;
    default:
      return raise_error(comm, MPI_ERR_ARG, kFn,
                         "split_type argument is %d, not MPI_COMM_TYPE_SHARED, an "
                         "OMPI_COMM_TYPE_ value or MPI_UNDEFINED",
                         split_type);
  }
  int fine = MPI_UNDEFINED;
  if (int err = locality_color(kFn, comm, c, level, &fine)) return err;
  if (level != nullptr) color = fine;
  return split(kFn, comm, c, color, key, newcomm);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_split_type);

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_create";
  Comm* c;
  if (int err = resolve(kFn, comm, &c)) return err;
  Group* g;
  if (int err = resolve_group(kFn, comm, group, &g)) return err;
  if (int err = check_newcomm(kFn, comm, newcomm)) return err;
  if (c->is_inter()) return mpi::inter_create(kFn, c, g, newcomm);
  if (int err = check_subgroup(kFn, comm, *c, *g)) return err;
  // Every member of comm takes part, those outside group included (MPI allows each process a
  // different group, as long as they do not overlap: one pair serves them all).
  uint32_t context;
  if (Status s = mpi::contexts_agree(mpi::or_reduce_intra(c), 1, &context); s != Status::kOk)
    return agree_failed(kFn, comm, s);
  if (g->rank == MPI_UNDEFINED) {
    mpi::context_release(context);  // the group's, not this process's
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  Comm* n = mpi::comm_new(*c, g->ranks, g->rank, context);
  return finish_new(kFn, comm, n, MPI_INFO_NULL, false, newcomm);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_create);

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_create_group";
  Comm* c;
  if (int err = resolve(kFn, comm, &c)) return err;
  if (c->is_inter()) {
    return raise_error(comm, MPI_ERR_COMM, kFn,
                       "comm argument is an intercommunicator: create_group takes an "
                       "intracommunicator");
  }
  Group* g;
  if (int err = resolve_group(kFn, comm, group, &g)) return err;
  if (int err = mpi::check_send_tag(kFn, comm, tag)) return err;
  if (int err = check_newcomm(kFn, comm, newcomm)) return err;
  if (int err = check_subgroup(kFn, comm, *c, *g)) return err;
  // Collective over group only: a process outside it has nothing to do.
  if (g->rank == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  // The agreement runs among the group's members, on comm's collective context with a tag made
  // of the user's: concurrent calls on overlapping groups differ by tag, as MPI requires.
  torusmpi::pml::Comm view;
  view.context = c->context;
  view.rank = g->rank;
  view.size = static_cast<int>(g->ranks.size());
  view.world_ranks = g->ranks;
  const int ptag = mpi::user_protocol_tag(0, tag);
  uint32_t context;
  Status s = mpi::contexts_agree(
      [&](std::vector<uint64_t>* words) { return mpi::or_words(view, ptag, words); }, 1, &context);
  if (s != Status::kOk) return agree_failed(kFn, comm, s);
  Comm* n = mpi::comm_new(*c, g->ranks, g->rank, context);
  return finish_new(kFn, comm, n, MPI_INFO_NULL, false, newcomm);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_create_group);

int PMPI_Comm_free(MPI_Comm* comm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_free";
  if (int err = require_active(kFn)) return err;
  if (comm == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "comm argument is NULL");
  Comm* c;
  if (int err = mpi::check_comm(kFn, *comm, &c)) return err;
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
    return raise_error(*comm, MPI_ERR_COMM, kFn, "comm argument is %s, which cannot be freed",
                       *comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
  }
  // MPI: the attributes' delete callbacks run first; one that fails stops the free.
  if (int err = mpi::attr_delete_all(mpi::AttrKind::kComm, *comm)) {
    return raise_error(*comm, err, kFn, "an attribute's delete callback returned error %d", err);
  }
  if (c->kept > 0) {
    c->free_deferred = true;  // its persistent requests still start on it (comm_release)
  } else {
    mpi::comm_destroy(c);
  }
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_free);

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_compare";
  Comm *c1, *c2;
  if (int err = resolve(kFn, comm1, &c1)) return err;
  if (int err = mpi::check_comm(kFn, comm2, &c2)) return err;
  if (result == nullptr) return raise_error(comm1, MPI_ERR_ARG, kFn, "result argument is NULL");
  if (comm1 == comm2) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  if (c1->is_inter() != c2->is_inter()) {
    *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  // Congruent: the same processes in the same order (both groups, for intercommunicators);
  // similar: the same processes.
  std::vector<int> a = mpi::comm_members(*c1), b = mpi::comm_members(*c2);
  std::vector<int> ra = c1->remote_ranks, rb = c2->remote_ranks;
  if (a == b && ra == rb) {
    *result = MPI_CONGRUENT;
    return MPI_SUCCESS;
  }
  for (std::vector<int>* v : {&a, &b, &ra, &rb}) std::sort(v->begin(), v->end());
  *result = a == b && ra == rb ? MPI_SIMILAR : MPI_UNEQUAL;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_compare);

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_set_info";
  Comm* c;
  if (int err = resolve(kFn, comm, &c)) return err;
  if (int err = check_info(kFn, comm, info, false)) return err;
  // No hint changes what torusmpi does yet; they are kept for MPI_Comm_get_info.
  MPI_Info copy = MPI_INFO_NULL;
  if (int err = PMPI_Info_dup(info, &copy))
    return raise_error(comm, err, kFn, "copying the info object failed");
  if (c->info != MPI_INFO_NULL) PMPI_Info_free(&c->info);
  c->info = copy;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_set_info);

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_get_info";
  Comm* c;
  if (int err = resolve(kFn, comm, &c)) return err;
  if (info_used == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "info_used argument is NULL");
  // A new object every time, which the caller frees.
  int err =
      c->info != MPI_INFO_NULL ? PMPI_Info_dup(c->info, info_used) : PMPI_Info_create(info_used);
  if (err != MPI_SUCCESS) return raise_error(comm, err, kFn, "making the info object failed");
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_get_info);
