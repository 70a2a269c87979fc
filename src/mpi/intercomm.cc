// Intercommunicators: MPI_Intercomm_create, MPI_Intercomm_merge, MPI_Comm_test_inter,
// MPI_Comm_remote_size, MPI_Comm_remote_group; their duplication, split and create; and their
// collectives.
//
// An intercommunicator owns two hidden communicators (runtime.h): `local`, its local group as an
// intracommunicator of its own, where the local part of an agreement runs; and `shadow`, a view
// of the intercommunicator on its collective context. Its collectives, every one MPI defines on
// an intercommunicator, blocking and nonblocking, are schedules of coll/inter (see there for the
// algorithms) run over the row of both groups (the end of this file).
#include <climits>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "coll/inter/inter.h"
#include "core/progress.h"
#include "mpi/coll_call.h"
#include "mpi/dynamic.h"
#include "mpi/errors.h"
#include "mpi/group.h"
#include "mpi/p2p.h"

namespace torusmpi::mpi {
namespace {

std::vector<uint8_t> as_bytes(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n);
}

std::vector<uint8_t> ints_bytes(const std::vector<int>& v) {
  return as_bytes(v.data(), v.size() * sizeof(int));
}

std::vector<int> bytes_ints(const std::vector<uint8_t>& b) {
  std::vector<int> v(b.size() / sizeof(int));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(int));
  return v;
}

// Gives the leader's vector of ints to every rank of view (its length first).
Status bcast_ints(const pml::Comm& view, int tag, int root, std::vector<int>* v) {
  uint64_t n = v->size();
  if (Status s = bcast_bytes(view, tag, root, &n, sizeof n); s != Status::kOk) return s;
  v->resize(n);
  return bcast_bytes(view, tag, root, v->data(), n * sizeof(int));
}

// The leaders of the two groups swap `mine` (over link: its collective context, rank peer), and
// each gives what came to its group (view, rooted at the leader). Every rank gets the other
// group's vector.
Status swap_groups(const pml::Comm& view, int leader, int view_tag, const pml::Comm& link, int peer,
                   int link_tag, const std::vector<int>& mine, std::vector<int>* theirs) {
  if (view.rank == leader) {
    std::vector<uint8_t> in;
    if (Status s = swap_bytes(link, true, peer, link_tag, ints_bytes(mine), &in); s != Status::kOk)
      return s;
    *theirs = bytes_ints(in);
  }
  return bcast_ints(view, view_tag, leader, theirs);
}

// An OrReduce across two groups: OR within each (view), the leaders swap and combine, each
// leader gives the result to its group.
OrReduce or_reduce_two(const pml::Comm* view, int leader, int view_tag, const pml::Comm* link,
                       int peer, int link_tag) {
  return [=](std::vector<uint64_t>* words) -> Status {
    if (Status s = or_words(*view, view_tag, words); s != Status::kOk) return s;
    const size_t bytes = words->size() * sizeof(uint64_t);
    if (view->rank == leader) {
      std::vector<uint8_t> in;
      Status s = swap_bytes(*link, true, peer, link_tag, as_bytes(words->data(), bytes), &in);
      if (s != Status::kOk) return s;
      if (in.size() != bytes) return Status::kErrInternal;
      const auto* theirs = reinterpret_cast<const uint64_t*>(in.data());
      for (size_t i = 0; i < words->size(); ++i) (*words)[i] |= theirs[i];
    }
    return bcast_bytes(*view, view_tag, leader, words->data(), bytes);
  };
}

int agree_failed(const char* fn, MPI_Comm comm, Status s) {
  if (s == Status::kErrNoMem) {
    return raise_error(comm, MPI_ERR_OTHER, fn,
                       "no context id is free on every member: each process may belong to at "
                       "most %d communicators at once",
                       kContextPairs);
  }
  return raise_error(comm, error_class_of(s), fn, "agreeing on a context id failed: %s",
                     status_string(s));
}

int exchange_failed(const char* fn, MPI_Comm comm, Status s) {
  return raise_error(comm, error_class_of(s), fn, "the exchange between the groups failed: %s",
                     status_string(s));
}

// Whether c's local group comes first in its collectives' row (the end of this file): the group
// whose leader comes first in the order every process agrees on, its own job's processes and
// those of other jobs (spawned, connected) alike.
bool local_first(const Comm& c) { return process_before(comm_members(c)[0], c.remote_ranks[0]); }

// A new intercommunicator: local group `local` (this process at rank `rank`), remote group
// `remote`, on the two pairs agreed.
Comm* make_inter(const Comm& parent, std::vector<int> local, int rank, std::vector<int> remote,
                 const uint32_t* contexts) {
  Comm* n = comm_new(parent, std::move(local), rank, contexts[0]);
  comm_make_inter(n, std::move(remote), contexts[1]);
  return n;
}

// Members of one color of a split, ordered by (key, rank).
std::vector<int> color_members(const std::vector<int>& entries, const std::vector<int>& ranks,
                               int color, int* my_index, int my_rank) {
  std::vector<int> order;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (entries[2 * i] == color) order.push_back(static_cast<int>(i));
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return entries[2 * x + 1] < entries[2 * y + 1]; });
  std::vector<int> members;
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == my_rank && my_index != nullptr) *my_index = static_cast<int>(i);
    members.push_back(ranks[order[i]]);
  }
  return members;
}

}  // namespace

OrReduce or_reduce_inter(Comm* c) {
  const int tag = agreement_tag(c);
  return or_reduce_two(c->local, 0, tag, c, 0, tag);
}

int inter_dup(const char* fn, Comm* c, MPI_Comm* newcomm) {
  uint32_t contexts[2];
  if (Status s = contexts_agree(or_reduce_inter(c), 2, contexts); s != Status::kOk)
    return agree_failed(fn, c->handle, s);
  *newcomm = make_inter(*c, comm_members(*c), c->rank, c->remote_ranks, contexts)->handle;
  return MPI_SUCCESS;
}

int inter_split(const char* fn, Comm* c, int color, int key, MPI_Comm* newcomm) {
  // Every rank learns the colors and keys of both groups: gathered in each, swapped by the leaders.
  const int tag = agreement_tag(c);
  std::vector<int> mine(2 * c->size), theirs;
  int entry[2] = {color, key};
  coll::Args a;
  a.coll = coll::Coll::kAllgather;
  a.count = sizeof entry;
  coll::RunArgs r;
  r.send = entry;
  r.recv = mine.data();
  Status s = run_tagged(*c->local, tag, a, r);
  if (s == Status::kOk) s = swap_groups(*c->local, 0, tag, *c, 0, tag, mine, &theirs);
  if (s != Status::kOk) return exchange_failed(fn, c->handle, s);
  uint32_t contexts[2];
  if (s = contexts_agree(or_reduce_inter(c), 2, contexts); s != Status::kOk)
    return agree_failed(fn, c->handle, s);
  *newcomm = MPI_COMM_NULL;
  int rank = 0;
  std::vector<int> local, remote;
  if (color != MPI_UNDEFINED) {
    local = color_members(mine, comm_members(*c), color, &rank, c->rank);
    remote = color_members(theirs, c->remote_ranks, color, nullptr, -1);
  }
  // A color with no process on the other side makes no intercommunicator; the pairs serve the
  // processes that get one.
  if (remote.empty()) {
    context_release(contexts[0]);
    context_release(contexts[1]);
    return MPI_SUCCESS;
  }
  *newcomm = make_inter(*c, std::move(local), rank, std::move(remote), contexts)->handle;
  return MPI_SUCCESS;
}

int inter_create(const char* fn, Comm* c, Group* g, MPI_Comm* newcomm) {
  std::vector<char> in(torusmpi::pml::peer_count(), 0);
  for (int r : comm_members(*c)) in[r] = 1;
  for (size_t i = 0; i < g->ranks.size(); ++i) {
    if (!in[g->ranks[i]]) {
      return raise_error(c->handle, MPI_ERR_GROUP, fn,
                         "group argument's rank %zu (process %d of MPI_COMM_WORLD) is not in "
                         "comm's local group",
                         i, g->ranks[i]);
    }
  }
  const int tag = agreement_tag(c);
  std::vector<int> remote;
  if (Status s = swap_groups(*c->local, 0, tag, *c, 0, tag, g->ranks, &remote); s != Status::kOk)
    return exchange_failed(fn, c->handle, s);
  uint32_t contexts[2];
  if (Status s = contexts_agree(or_reduce_inter(c), 2, contexts); s != Status::kOk)
    return agree_failed(fn, c->handle, s);
  *newcomm = MPI_COMM_NULL;
  if (g->rank == MPI_UNDEFINED || remote.empty()) {
    context_release(contexts[0]);
    context_release(contexts[1]);
    return MPI_SUCCESS;
  }
  *newcomm = make_inter(*c, g->ranks, g->rank, std::move(remote), contexts)->handle;
  return MPI_SUCCESS;
}

}  // namespace torusmpi::mpi

using torusmpi::Status;
using torusmpi::mpi::Comm;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
namespace mpi = torusmpi::mpi;
namespace coll = torusmpi::coll;

namespace {

int resolve(const char* fn, MPI_Comm comm, Comm** c) {
  if (int err = require_active(fn)) return err;
  return mpi::check_comm(fn, comm, c);
}

int resolve_inter(const char* fn, MPI_Comm comm, Comm** c) {
  if (int err = resolve(fn, comm, c)) return err;
  if ((*c)->is_inter()) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_COMM, fn,
                     "comm argument is an intracommunicator: this call takes an intercommunicator");
}

}  // namespace

int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_test_inter";
  Comm* c;
  if (int err = resolve(kFn, comm, &c)) return err;
  if (flag == nullptr) return raise_error(comm, MPI_ERR_ARG, kFn, "flag argument is NULL");
  *flag = c->is_inter();
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_test_inter);

int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_remote_size";
  Comm* c;
  if (int err = resolve_inter(kFn, comm, &c)) return err;
  if (size == nullptr) return raise_error(comm, MPI_ERR_ARG, kFn, "size argument is NULL");
  *size = c->remote_size();
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_remote_size);

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_remote_group";
  Comm* c;
  if (int err = resolve_inter(kFn, comm, &c)) return err;
  if (group == nullptr) return raise_error(comm, MPI_ERR_ARG, kFn, "group argument is NULL");
  *group = mpi::group_new(c->remote_ranks);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_remote_group);

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm* newintercomm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Intercomm_create";
  Comm* lc;
  if (int err = require_active(kFn)) return err;
  if (int err = mpi::check_comm(kFn, local_comm, &lc)) return err;
  if (lc->is_inter()) {
    return raise_error(local_comm, MPI_ERR_COMM, kFn,
                       "local_comm argument is an intercommunicator: it must be an "
                       "intracommunicator");
  }
  if (local_leader < 0 || local_leader >= lc->size) {
    return raise_error(local_comm, MPI_ERR_RANK, kFn,
                       "local_leader argument is %d, not a rank of local_comm (size %d)",
                       local_leader, lc->size);
  }
  if (int err = mpi::check_send_tag(kFn, local_comm, tag)) return err;
  if (newintercomm == nullptr)
    return raise_error(local_comm, MPI_ERR_ARG, kFn, "newintercomm argument is NULL");
  const bool leader = lc->rank == local_leader;
  // peer_comm and remote_leader mean something at the local leader only.
  Comm* pc = nullptr;
  if (leader) {
    pc = mpi::comm_impl(peer_comm);
    if (pc == nullptr) {
      return raise_error(local_comm, MPI_ERR_COMM, kFn, "peer_comm argument is %s",
                         peer_comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a valid communicator");
    }
    if (remote_leader < 0 || remote_leader >= pc->peer_count()) {
      return raise_error(local_comm, MPI_ERR_RANK, kFn,
                         "remote_leader argument is %d, not a rank of peer_comm (size %d)",
                         remote_leader, pc->peer_count());
    }
    if (!pc->is_inter() && remote_leader == pc->rank) {
      return raise_error(local_comm, MPI_ERR_RANK, kFn,
                         "remote_leader argument is %d, this process itself: the leaders of the "
                         "two groups are different processes",
                         remote_leader);
    }
  }
  // The leaders swap their groups over peer_comm's collective context, with a tag made of the
  // user's; each leader gives the other group to its own.
  const int view_tag = mpi::agreement_tag(lc);
  const int link_tag = mpi::user_protocol_tag(1, tag);
  std::vector<int> local = mpi::comm_members(*lc), remote;
  static const torusmpi::pml::Comm kNoLink;  // non-leaders never use the link
  const torusmpi::pml::Comm* link = leader ? pc : &kNoLink;
  Status s =
      mpi::swap_groups(*lc, local_leader, view_tag, *link, remote_leader, link_tag, local, &remote);
  if (s != Status::kOk) {
    return raise_error(local_comm, mpi::error_class_of(s), kFn,
                       "the exchange between the leaders failed: %s", torusmpi::status_string(s));
  }
  // Both groups see both lists, so all of them find an overlap alike.
  std::vector<char> in(torusmpi::pml::peer_count(), 0);
  for (int r : local) in[r] = 1;
  for (int r : remote) {
    if (in[r]) {
      return raise_error(local_comm, MPI_ERR_COMM, kFn,
                         "the two groups share process %d of MPI_COMM_WORLD: an "
                         "intercommunicator's groups must be disjoint",
                         r);
    }
  }
  uint32_t contexts[2];
  s = mpi::contexts_agree(
      mpi::or_reduce_two(lc, local_leader, view_tag, link, remote_leader, link_tag), 2, contexts);
  if (s != Status::kOk) return mpi::agree_failed(kFn, local_comm, s);
  *newintercomm =
      mpi::make_inter(*lc, std::move(local), lc->rank, std::move(remote), contexts)->handle;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Intercomm_create);

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Intercomm_merge";
  Comm* c;
  if (int err = resolve_inter(kFn, intercomm, &c)) return err;
  if (newintracomm == nullptr)
    return raise_error(intercomm, MPI_ERR_ARG, kFn, "newintracomm argument is NULL");
  // The leaders swap their groups' `high` (the leader's speaks for its group).
  const int tag = mpi::agreement_tag(c);
  std::vector<int> mine{high != 0}, theirs;
  Status s = mpi::swap_groups(*c->local, 0, tag, *c, 0, tag, mine, &theirs);
  if (s == Status::kOk && theirs.size() != 1) s = Status::kErrInternal;
  if (s != Status::kOk) return mpi::exchange_failed(kFn, intercomm, s);
  std::vector<int> own_high{high != 0};
  if (s = mpi::bcast_ints(*c->local, tag, 0, &own_high); s != Status::kOk)
    return mpi::exchange_failed(kFn, intercomm, s);
  // The group that said high = false comes first; on a tie, the group whose leader comes first
  // in the order of processes every process agrees on (both groups compute the same).
  std::vector<int> local = mpi::comm_members(*c);
  bool first = own_high[0] != theirs[0] ? own_high[0] == 0 : mpi::local_first(*c);
  std::vector<int> members = first ? local : c->remote_ranks;
  const std::vector<int>& second = first ? c->remote_ranks : local;
  members.insert(members.end(), second.begin(), second.end());
  const int rank = first ? c->rank : c->remote_size() + c->rank;
  uint32_t context;
  if (s = mpi::contexts_agree(mpi::or_reduce_inter(c), 1, &context); s != Status::kOk)
    return mpi::agree_failed(kFn, intercomm, s);
  *newintracomm = mpi::comm_new(*c, std::move(members), rank, context)->handle;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Intercomm_merge);

// --- Collectives
//
// Every collective on an intercommunicator is a schedule of coll/inter (inter.h) over the row of
// both groups: the first group (its leader comes first in the order of processes every process
// agrees on, dynamic.h: process_before, so processes of other jobs too) then the second, each in
// rank order. The row is a pml view on the intercommunicator's collective context (where the
// context agreements' messages also go, with tags of their own range), so the schedule runs on the
// executor like any collective: blocking, nonblocking, staged datatypes, flight recorder. Every
// rank of both groups builds its schedule from its own arguments, which MPI makes consistent.

namespace torusmpi::mpi {
namespace {

struct Row {
  std::shared_ptr<pml::Comm> view;
  int split = 0;
  bool first = false;  // the local group comes first
};

// The rows of live intercommunicators, by communicator. A row replaced (its communicator freed
// and the object reused) is kept: a nonblocking run of the old one may still use it.
std::unordered_map<const Comm*, Row>& rows() {
  static auto* m = new std::unordered_map<const Comm*, Row>;
  return *m;
}
std::vector<std::shared_ptr<pml::Comm>>& retired_rows() {
  static auto* v = new std::vector<std::shared_ptr<pml::Comm>>;
  return *v;
}

const Row& row_of(Comm* c) {
  std::vector<int> local = comm_members(*c);
  const bool first = local_first(*c);
  std::vector<int> members = first ? local : c->remote_ranks;
  const std::vector<int>& second = first ? c->remote_ranks : local;
  members.insert(members.end(), second.begin(), second.end());
  Row& row = rows()[c];
  if (row.view && row.view->context == c->context && row.view->world_ranks == members) return row;
  if (row.view) retired_rows().push_back(std::move(row.view));
  auto v = std::make_shared<pml::Comm>();
  v->context = c->context;
  v->rank = first ? c->rank : c->remote_size() + c->rank;
  v->size = static_cast<int>(members.size());
  v->world_ranks = std::move(members);
  row.view = std::move(v);
  row.split = first ? c->size : c->remote_size();
  row.first = first;
  return row;
}

// The row rank of rank r of the remote group.
int remote_in_row(const Row& row, int r) { return row.first ? row.split + r : r; }

// Builds this rank's schedule of the call and runs it (or starts it: request).
int run(const char* fn, MPI_Comm comm, Comm* c, CollCall& call, MPI_Request* request) {
  const Row& row = row_of(c);
  call.a.rank = row.view->rank;
  call.a.size = row.view->size;
  call.a.split = row.split;
  auto schedule = std::make_shared<coll::Schedule>();
  coll::Builder b(schedule.get());
  coll::inter::build(b, call.a);
  b.finish();
  call.r.comm = row.view.get();
  // Both groups make their collective calls in one order, so the sequence agrees everywhere.
  call.r.tag = static_cast<int>(c->inter_seq++ & 0x3fffffffu);
  return run_schedule(fn, comm, c, call, std::move(schedule), request);
}

// The root argument of a rooted collective: MPI_ROOT or MPI_PROC_NULL in the root's group, a rank
// of the remote group in the other. Sets a.root as the row has it.
int inter_root(const char* fn, MPI_Comm comm, Comm* c, int root, coll::Args* a) {
  if (root == MPI_ROOT) {
    a->root = row_of(c).view->rank;
  } else if (root == MPI_PROC_NULL) {
    a->root = -1;
  } else if (root >= 0 && root < c->remote_size()) {
    a->root = remote_in_row(row_of(c), root);
  } else {
    return raise_error(comm, MPI_ERR_ROOT, fn,
                       "root argument is %d: on an intercommunicator it is MPI_ROOT, "
                       "MPI_PROC_NULL or a rank of the remote group (size %d)",
                       root, c->remote_size());
  }
  return MPI_SUCCESS;
}

// MPI_IN_PLACE has no meaning on an intercommunicator: a rank's data never stays with it.
// MPI_ERR_ARG, as Open MPI answers it.
int no_in_place(const char* fn, MPI_Comm comm, const void* buf, const char* what) {
  if (buf != MPI_IN_PLACE) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_ARG, fn,
                     "%s is MPI_IN_PLACE, which intercommunicator collectives do not take", what);
}

// count elements of type at buf (the argument `what`, "sendbuf" or "recvbuf"; `prefix` names the
// count and type arguments): checked, their packed bytes in *bytes.
int check_block(const char* fn, MPI_Comm comm, const char* what, const char* prefix,
                const void* buf, int count, MPI_Datatype type, size_t n, TypeArg* t,
                size_t* bytes) {
  if (int err = no_in_place(fn, comm, buf, what)) return err;
  if (int err = check_type_arg(fn, comm, prefix, type, t)) return err;
  if (int err = check_count(fn, comm, prefix, count, *t, bytes)) return err;
  return check_span(fn, comm, buf, what, *t, static_cast<size_t>(count) * n);
}

// n blocks of one type: block i is counts[i] elements from buf + displs[i] * unit bytes.
Side side_of(const void* buf, const TypeArg* t, const int* counts, const int* displs, int n,
             size_t unit) {
  Side s;
  s.buf = const_cast<void*>(buf);
  s.types.assign(1, t);
  s.counts.resize(n);
  s.at.resize(n);
  for (int i = 0; i < n; ++i) {
    s.counts[i] = static_cast<size_t>(counts[i]);
    s.at[i] = static_cast<int64_t>(displs[i]) * static_cast<int64_t>(unit);
  }
  return s;
}

}  // namespace

int inter_unsupported(const char* fn, MPI_Comm comm) {
  if (int err = require_active(fn)) return err;
  return raise_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "not defined on intercommunicators");
}

int inter_barrier(const char* fn, MPI_Comm comm, Comm* c, MPI_Request* request) {
  CollCall call;
  call.a.coll = coll::Coll::kBarrier;
  return run(fn, comm, c, call, request);
}

int inter_bcast(const char* fn, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                Comm* c, MPI_Request* request) {
  CollCall call;
  call.a.coll = coll::Coll::kBcast;
  if (int err = inter_root(fn, comm, c, root, &call.a)) return err;
  if (root != MPI_PROC_NULL) {
    TypeArg t;
    size_t bytes = 0;
    if (int err = check_block(fn, comm, "buffer", "", buffer, count, type, 1, &t, &bytes))
      return err;
    call.a.count = bytes;
    const bool at_root = root == MPI_ROOT;
    call.r.recv = call.place(buffer, t, count, 1, at_root, !at_root);
  }
  return run(fn, comm, c, call, request);
}

int inter_reduce(const char* fn, coll::Coll kind, const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, Comm* c,
                 MPI_Request* request) {
  CollCall call;
  call.a.coll = kind;
  const bool all = kind == coll::Coll::kAllreduce;
  if (!all) {
    if (int err = inter_root(fn, comm, c, root, &call.a)) return err;
  }
  // Who holds what: the contributing group sends, the root (or everyone, allreduce) receives.
  const bool sends = all || (root != MPI_ROOT && root != MPI_PROC_NULL);
  const bool receives = all || root == MPI_ROOT;
  if (!sends && !receives) return run(fn, comm, c, call, request);
  TypeArg t;
  size_t per = 1;
  if (int err = check_reduction(fn, comm, count, type, op, &call, &t, &per)) return err;
  const size_t n = static_cast<size_t>(count);
  if (sends) {
    if (int err = no_in_place(fn, comm, sendbuf, "sendbuf")) return err;
    if (int err = check_span(fn, comm, sendbuf, "sendbuf", t, n)) return err;
    call.r.send = call.place(const_cast<void*>(sendbuf), t, n, 1, true, false);
  }
  if (receives) {
    if (int err = no_in_place(fn, comm, recvbuf, "recvbuf")) return err;
    if (int err = check_span(fn, comm, recvbuf, "recvbuf", t, n)) return err;
    call.r.recv = call.place(recvbuf, t, n, 1, false, true);
  }
  return run(fn, comm, c, call, request);
}

int inter_exchange(const char* fn, coll::Coll kind, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, Comm* c, MPI_Request* request) {
  const bool alltoall = kind == coll::Coll::kAlltoall;
  const size_t q = static_cast<size_t>(c->remote_size());
  TypeArg st, rt;
  size_t sbytes = 0, rbytes = 0;
  if (int err = check_block(fn, comm, "sendbuf", "send", sendbuf, sendcount, sendtype,
                            alltoall ? q : 1, &st, &sbytes))
    return err;
  if (int err =
          check_block(fn, comm, "recvbuf", "recv", recvbuf, recvcount, recvtype, q, &rt, &rbytes))
    return err;
  CollCall call;
  call.r.send =
      call.place(const_cast<void*>(sendbuf), st, sendcount, alltoall ? q : 1, true, false);
  call.r.recv = call.place(recvbuf, rt, recvcount, q, false, true);
  if (sbytes == rbytes) {
    call.a.coll = kind;
    call.a.count = sbytes;
    return run(fn, comm, c, call, request);
  }
  // The groups' blocks differ in size (MPI asks each pair to match, not the two directions):
  // the v form's row carries both, and every rank of both groups sees the same inequality.
  std::vector<size_t> rcounts(q, rbytes), rdispls(q);
  for (size_t j = 0; j < q; ++j) rdispls[j] = j * rbytes;
  if (alltoall) {
    std::vector<size_t> scounts(q, sbytes), sdispls(q);
    for (size_t j = 0; j < q; ++j) sdispls[j] = j * sbytes;
    call.a.coll = coll::Coll::kAlltoallv;
    call.a.scounts = call.keep(2, std::move(scounts));
    call.a.sdispls = call.keep(3, std::move(sdispls));
    call.a.rcounts = call.keep(0, std::move(rcounts));
    call.a.rdispls = call.keep(1, std::move(rdispls));
  } else {
    call.a.coll = coll::Coll::kAllgatherv;
    call.a.count = sbytes;
    call.a.counts = call.keep(0, std::move(rcounts));
    call.a.displs = call.keep(1, std::move(rdispls));
  }
  return run(fn, comm, c, call, request);
}

int inter_rooted(const char* fn, coll::Coll kind, const void* sendbuf, int sendcount,
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm, Comm* c, MPI_Request* request) {
  CollCall call;
  call.a.coll = kind;
  if (int err = inter_root(fn, comm, c, root, &call.a)) return err;
  if (root == MPI_PROC_NULL) return run(fn, comm, c, call, request);
  const bool gather = kind == coll::Coll::kGather, at_root = root == MPI_ROOT;
  // The root's side (gather: recv; scatter: send) has a block per remote rank; the other
  // group's ranks have one block of the other side.
  const bool send_side = gather ? !at_root : at_root;
  const size_t blocks = at_root ? static_cast<size_t>(c->remote_size()) : 1;
  TypeArg t;
  size_t bytes = 0;
  if (send_side) {
    if (int err = check_block(fn, comm, "sendbuf", "send", sendbuf, sendcount, sendtype, blocks, &t,
                              &bytes))
      return err;
    call.r.send = call.place(const_cast<void*>(sendbuf), t, sendcount, blocks, true, false);
  } else {
    if (int err = check_block(fn, comm, "recvbuf", "recv", recvbuf, recvcount, recvtype, blocks, &t,
                              &bytes))
      return err;
    call.r.recv = call.place(recvbuf, t, recvcount, blocks, false, true);
  }
  call.a.count = bytes;
  return run(fn, comm, c, call, request);
}

int inter_allgatherv(const char* fn, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                     MPI_Comm comm, Comm* c, MPI_Request* request) {
  const int q = c->remote_size();
  TypeArg st, rt;
  size_t sbytes = 0;
  if (int err =
          check_block(fn, comm, "sendbuf", "send", sendbuf, sendcount, sendtype, 1, &st, &sbytes))
    return err;
  if (int err = no_in_place(fn, comm, recvbuf, "recvbuf")) return err;
  if (int err = check_type_arg(fn, comm, "recv", recvtype, &rt)) return err;
  if (int err = check_counts(fn, comm, recvcounts, q, "recvcounts", true)) return err;
  if (int err = check_counts(fn, comm, displs, q, "displs", false)) return err;
  const Side rs = side_of(recvbuf, &rt, recvcounts, displs, q, rt.extent);
  if (int err = check_side(fn, comm, "recvbuf", rs)) return err;
  CollCall call;
  call.a.coll = coll::Coll::kAllgatherv;
  call.a.count = sbytes;
  std::vector<size_t> bytes, at;
  call.r.recv = call.place(rs, false, true, &bytes, &at);
  call.a.counts = call.keep(0, std::move(bytes));
  call.a.displs = call.keep(1, std::move(at));
  call.r.send = call.place(const_cast<void*>(sendbuf), st, sendcount, 1, true, false);
  return run(fn, comm, c, call, request);
}

int inter_reduce_scatter(const char* fn, const void* sendbuf, void* recvbuf, const int* recvcounts,
                         int blockcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm, Comm* c,
                         MPI_Request* request) {
  const bool block = recvcounts == nullptr;
  const int p = c->size;
  if (!block) {
    if (int err = check_counts(fn, comm, recvcounts, p, "recvcounts", true)) return err;
  }
  CollCall call;
  TypeArg t;
  size_t per = 1;
  if (int err = check_reduction(fn, comm, block ? blockcount : 0, type, op, &call, &t, &per))
    return err;
  // The vector is the local group's blocks (elements of the datatype), each rank's one kept.
  size_t total = 0, mine = 0;
  if (block) {
    total = static_cast<size_t>(blockcount) * p;
    mine = static_cast<size_t>(blockcount);
  } else {
    std::vector<size_t> counts(p);
    for (int i = 0; i < p; ++i) {
      total += static_cast<size_t>(recvcounts[i]);
      counts[i] = static_cast<size_t>(recvcounts[i]) * per;
    }
    mine = static_cast<size_t>(recvcounts[c->rank]);
    call.a.counts = call.keep(0, std::move(counts));
  }
  if (int err = no_in_place(fn, comm, sendbuf, "sendbuf")) return err;
  if (int err = no_in_place(fn, comm, recvbuf, "recvbuf")) return err;
  if (int err = check_span(fn, comm, sendbuf, "sendbuf", t, total)) return err;
  if (int err = check_span(fn, comm, recvbuf, "recvbuf", t, mine)) return err;
  call.a.coll = block ? coll::Coll::kReduceScatterBlock : coll::Coll::kReduceScatter;
  call.r.send = call.place(const_cast<void*>(sendbuf), t, total, 1, true, false);
  call.r.recv = call.place(recvbuf, t, mine, 1, false, true);
  return run(fn, comm, c, call, request);
}

int inter_alltoall_vw(const char* fn, bool w, const void* sendbuf, const int* sendcounts,
                      const int* sdispls, const MPI_Datatype* sendtypes, void* recvbuf,
                      const int* recvcounts, const int* rdispls, const MPI_Datatype* recvtypes,
                      MPI_Comm comm, Comm* c, MPI_Request* request) {
  const int q = c->remote_size();
  // Each side's types (one, or one per remote rank for w) and its blocks.
  auto layout = [&](const void* buf, const int* counts, const int* displs,
                    const MPI_Datatype* types, const char* what, std::vector<TypeArg>* targs,
                    Side* s) {
    const char* name = what[0] == 's' ? "sendbuf" : "recvbuf";
    if (int err = no_in_place(fn, comm, buf, name)) return err;
    if (int err = vector_side(fn, comm, buf, counts, displs, types, what, w, q, targs, s))
      return err;
    return check_side(fn, comm, name, *s);
  };
  std::vector<TypeArg> rtypes, stypes;
  Side rs, ss;
  if (int err = layout(sendbuf, sendcounts, sdispls, sendtypes, "send", &stypes, &ss)) return err;
  if (int err = layout(recvbuf, recvcounts, rdispls, recvtypes, "recv", &rtypes, &rs)) return err;
  CollCall call;
  call.a.coll = w ? coll::Coll::kAlltoallw : coll::Coll::kAlltoallv;
  std::vector<size_t> bytes, at;
  call.r.recv = call.place(rs, false, true, &bytes, &at);
  call.a.rcounts = call.keep(0, std::move(bytes));
  call.a.rdispls = call.keep(1, std::move(at));
  call.r.send = call.place(ss, true, false, &bytes, &at);
  call.a.scounts = call.keep(2, std::move(bytes));
  call.a.sdispls = call.keep(3, std::move(at));
  return run(fn, comm, c, call, request);
}

int inter_rooted_vector(const char* fn, coll::Coll kind, const void* sendbuf, const int* counts,
                        const int* displs, int owncount, MPI_Datatype owntype,
                        MPI_Datatype roottype, void* recvbuf, int root, MPI_Comm comm, Comm* c,
                        MPI_Request* request) {
  CollCall call;
  call.a.coll = kind;
  if (int err = inter_root(fn, comm, c, root, &call.a)) return err;
  if (root == MPI_PROC_NULL) return run(fn, comm, c, call, request);
  const bool gather = kind == coll::Coll::kGatherv;
  const void* own_buf = gather ? sendbuf : recvbuf;
  const void* whole_buf = gather ? recvbuf : sendbuf;
  const char* own_what = gather ? "sendbuf" : "recvbuf";
  const char* whole_what = gather ? "recvbuf" : "sendbuf";
  if (root != MPI_ROOT) {
    TypeArg t;
    size_t bytes = 0;
    if (int err = check_block(fn, comm, own_what, gather ? "send" : "recv", own_buf, owncount,
                              owntype, 1, &t, &bytes))
      return err;
    call.a.count = bytes;
    void* at = call.place(const_cast<void*>(own_buf), t, owncount, 1, gather, !gather);
    if (gather) {
      call.r.send = at;
    } else {
      call.r.recv = at;
    }
    return run(fn, comm, c, call, request);
  }
  const int q = c->remote_size();
  const char* cname = gather ? "recvcounts" : "sendcounts";
  TypeArg whole;
  if (int err = no_in_place(fn, comm, whole_buf, whole_what)) return err;
  if (int err = check_type_arg(fn, comm, gather ? "recv" : "send", roottype, &whole)) return err;
  if (int err = check_counts(fn, comm, counts, q, cname, true)) return err;
  if (int err = check_counts(fn, comm, displs, q, "displs", false)) return err;
  const Side ws = side_of(whole_buf, &whole, counts, displs, q, whole.extent);
  if (int err = check_side(fn, comm, whole_what, ws)) return err;
  std::vector<size_t> bytes, at;
  void* whole_at = call.place(ws, !gather, gather, &bytes, &at);
  call.a.counts = call.keep(0, std::move(bytes));
  call.a.displs = call.keep(1, std::move(at));
  if (gather) {
    call.r.recv = whole_at;
  } else {
    call.r.send = whole_at;
  }
  return run(fn, comm, c, call, request);
}

}  // namespace torusmpi::mpi
