// Intercommunicators: MPI_Intercomm_create, MPI_Intercomm_merge, MPI_Comm_test_inter,
// MPI_Comm_remote_size, MPI_Comm_remote_group; their duplication, split and create; and their
// collectives.
//
// An intercommunicator owns two hidden communicators (runtime.h): `local`, its local group as an
// intracommunicator of its own, where the local part of each collective runs through the engine;
// and `shadow`, a view of the intercommunicator on its collective context, where the leaders (or a
// root and the other group's leader) exchange data with MPI's own point-to-point calls, so any
// datatype the library takes works, and no message meets the application's. A collective is then
//
//   Allreduce:  reduce to local rank 0 | leaders swap their group's result | bcast from rank 0
//   Bcast:      MPI_ROOT sends to remote rank 0 | bcast there from rank 0
//   Reduce:     reduce to rank 0 of the non-root group | its rank 0 sends to MPI_ROOT
//   Allgather:  gather to rank 0 | leaders swap both groups' blocks | bcast from rank 0
//   Gather:     gather to rank 0 of the non-root group | sent to MPI_ROOT in one message
//   Scatter:    MPI_ROOT sends all to remote rank 0 | scatter there from rank 0
//   Alltoall:   every pair of ranks of the two groups exchanges its block directly
//   Barrier:    barrier | leaders swap an empty message | barrier
#include <climits>
#include <cstring>
#include <vector>

#include "core/progress.h"
#include "mpi/coll_call.h"
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
  std::vector<char> in(runtime().job.size, 0);
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
  std::vector<char> in(mpi::runtime().job.size, 0);
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
  // The group that said high = false comes first; on a tie, the group whose leader has the
  // lower rank in MPI_COMM_WORLD (both groups compute the same).
  std::vector<int> local = mpi::comm_members(*c);
  bool first = own_high[0] != theirs[0] ? own_high[0] == 0 : local[0] < c->remote_ranks[0];
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

namespace torusmpi::mpi {
namespace {

// A buffer for n elements of type, laid out as MPI lays them (room for the true extent, the
// pointer moved back by the true lower bound).
class TypedBuffer {
 public:
  TypedBuffer(int n, MPI_Datatype type) {
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    size_t bytes = n > 0 ? static_cast<size_t>(n - 1) * extent + true_extent : 0;
    bytes_.resize(bytes + 1);
    base_ = bytes_.data() - true_lb;
  }
  void* get() { return base_; }

 private:
  std::vector<uint8_t> bytes_;
  uint8_t* base_;
};

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return extent;
}

// The root argument of a rooted collective: MPI_ROOT or MPI_PROC_NULL in the root's group, a rank
// of the remote group in the other.
int check_inter_root(const char* fn, MPI_Comm comm, const Comm& c, int root) {
  if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c.remote_size()))
    return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_ROOT, fn,
                     "root argument is %d: on an intercommunicator it is MPI_ROOT, "
                     "MPI_PROC_NULL or a rank of the remote group (size %d)",
                     root, c.remote_size());
}

// count elements of type at buf, which may be NULL only when there is nothing; `what` names the
// arguments ("send", "recv", "").
int check_data(const char* fn, MPI_Comm comm, const char* what, const void* buf, int count,
               MPI_Datatype type) {
  if (count < 0) return raise_error(comm, MPI_ERR_COUNT, fn, "%scount argument is %d", what, count);
  TypeArg t;
  if (int err = check_type_arg(fn, comm, what, type, &t)) return err;
  if (buf == MPI_IN_PLACE) {
    return raise_error(comm, MPI_ERR_BUFFER, fn,
                       "%sbuf is MPI_IN_PLACE, which intercommunicator collectives do not take",
                       what[0] != '\0' ? what : "");
  }
  // A NULL buf is MPI_BOTTOM, which only a derived datatype (absolute addresses) can use.
  if (buf == nullptr && count > 0 && t.size > 0 && !t.derived) {
    return raise_error(comm, MPI_ERR_BUFFER, fn, "%sbuf argument is NULL with %scount %d",
                       what[0] != '\0' ? what : "", what, count);
  }
  return MPI_SUCCESS;
}

// n * count as an int count, or MPI_ERR_COUNT.
int times(const char* fn, MPI_Comm comm, int n, int count, int* out) {
  long long total = static_cast<long long>(n) * count;
  if (total > INT_MAX) {
    return raise_error(comm, MPI_ERR_COUNT, fn,
                       "%d blocks of %d elements exceed what one message of this build counts", n,
                       count);
  }
  *out = static_cast<int>(total);
  return MPI_SUCCESS;
}

// An internal call on a hidden communicator failed (it returned, its handler being
// MPI_ERRORS_RETURN): raise it on the intercommunicator's own handler.
int failed(const char* fn, MPI_Comm comm, int err) {
  return raise_error(comm, err, fn, "a step within or between the groups failed (error class %d)",
                     err);
}

int next_tag(Comm* c) { return static_cast<int>(c->inter_seq++ & 0x3fffffffu); }

int nonblocking_unsupported(const char* fn, MPI_Comm comm) {
  return raise_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                     "the nonblocking form on an intercommunicator is not implemented (the "
                     "blocking one is)");
}

}  // namespace

int inter_unsupported(const char* fn, MPI_Comm comm) {
  if (int err = require_active(fn)) return err;
  return raise_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
                     "not implemented on intercommunicators (Barrier, Bcast, Reduce, Allreduce, "
                     "Allgather, Alltoall, Gather and Scatter are)");
}

int inter_barrier(const char* fn, MPI_Comm comm, Comm* c, MPI_Request* request) {
  if (request != nullptr) return nonblocking_unsupported(fn, comm);
  const int tag = next_tag(c);
  // Once every rank of the group is in, the leaders tell each other; then everyone may leave.
  int err = PMPI_Barrier(c->local->handle);
  if (err == MPI_SUCCESS && c->rank == 0) {
    err = PMPI_Sendrecv(nullptr, 0, MPI_BYTE, 0, tag, nullptr, 0, MPI_BYTE, 0, tag,
                        c->shadow->handle, MPI_STATUS_IGNORE);
  }
  if (err == MPI_SUCCESS) err = PMPI_Barrier(c->local->handle);
  return err == MPI_SUCCESS ? MPI_SUCCESS : failed(fn, comm, err);
}

int inter_bcast(const char* fn, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                Comm* c, MPI_Request* request) {
  if (request != nullptr) return nonblocking_unsupported(fn, comm);
  if (int err = check_inter_root(fn, comm, *c, root)) return err;
  if (root != MPI_PROC_NULL) {
    if (int err = check_data(fn, comm, "", buffer, count, type)) return err;
  }
  const int tag = next_tag(c);
  int err = MPI_SUCCESS;
  if (root == MPI_ROOT) {
    err = PMPI_Send(buffer, count, type, 0, tag, c->shadow->handle);
  } else if (root != MPI_PROC_NULL) {
    if (c->rank == 0)
      err = PMPI_Recv(buffer, count, type, root, tag, c->shadow->handle, MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS) err = PMPI_Bcast(buffer, count, type, 0, c->local->handle);
  }
  return err == MPI_SUCCESS ? MPI_SUCCESS : failed(fn, comm, err);
}

int inter_reduce(const char* fn, coll::Coll kind, const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, Comm* c,
                 MPI_Request* request) {
  if (request != nullptr) return nonblocking_unsupported(fn, comm);
  const bool all = kind == coll::Coll::kAllreduce;
  if (!all) {
    if (int err = check_inter_root(fn, comm, *c, root)) return err;
  }
  // Who holds what: the contributing group sends, the root (or everyone, allreduce) receives.
  const bool sends = all || (root != MPI_ROOT && root != MPI_PROC_NULL);
  const bool receives = all || root == MPI_ROOT;
  if (sends || receives) {
    CollCall probe;
    TypeArg t;
    size_t per = 1;
    if (int err = check_reduction(fn, comm, count, type, op, &probe, &t, &per)) return err;
  }
  if (sends) {
    if (int err = check_data(fn, comm, "send", sendbuf, count, type)) return err;
  }
  if (receives) {
    if (int err = check_data(fn, comm, "recv", recvbuf, count, type)) return err;
  }
  const int tag = next_tag(c);
  const MPI_Comm local = c->local->handle, shadow = c->shadow->handle;
  int err = MPI_SUCCESS;
  if (root == MPI_ROOT && !all) {
    err = PMPI_Recv(recvbuf, count, type, 0, tag, shadow, MPI_STATUS_IGNORE);
  } else if (sends) {
    // The group's reduction, at its rank 0, in rank order (non-commutative ops included).
    TypedBuffer partial(c->rank == 0 ? count : 0, type);
    err = PMPI_Reduce(sendbuf, partial.get(), count, type, op, 0, local);
    if (err == MPI_SUCCESS && c->rank == 0) {
      err = all ? PMPI_Sendrecv(partial.get(), count, type, 0, tag, recvbuf, count, type, 0, tag,
                                shadow, MPI_STATUS_IGNORE)
                : PMPI_Send(partial.get(), count, type, root, tag, shadow);
    }
    if (err == MPI_SUCCESS && all) err = PMPI_Bcast(recvbuf, count, type, 0, local);
  }
  return err == MPI_SUCCESS ? MPI_SUCCESS : failed(fn, comm, err);
}

int inter_exchange(const char* fn, coll::Coll kind, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, Comm* c, MPI_Request* request) {
  if (request != nullptr) return nonblocking_unsupported(fn, comm);
  if (int err = check_data(fn, comm, "send", sendbuf, sendcount, sendtype)) return err;
  if (int err = check_data(fn, comm, "recv", recvbuf, recvcount, recvtype)) return err;
  const int tag = next_tag(c);
  const MPI_Comm local = c->local->handle, shadow = c->shadow->handle;
  const int p = c->size, q = c->remote_size();
  int err = MPI_SUCCESS;
  if (kind == coll::Coll::kAlltoall) {
    // Block j of the send buffer goes to remote rank j, block j of the receive buffer comes from
    // it: p * q messages in all, each pair's own.
    std::vector<MPI_Request> reqs(2 * q, MPI_REQUEST_NULL);
    const MPI_Aint sext = extent_of(sendtype), rext = extent_of(recvtype);
    for (int j = 0; j < q && err == MPI_SUCCESS; ++j) {
      err = PMPI_Irecv(static_cast<char*>(recvbuf) + j * recvcount * rext, recvcount, recvtype, j,
                       tag, shadow, &reqs[2 * j]);
      if (err == MPI_SUCCESS) {
        err = PMPI_Isend(static_cast<const char*>(sendbuf) + j * sendcount * sext, sendcount,
                         sendtype, j, tag, shadow, &reqs[2 * j + 1]);
      }
    }
    int werr = PMPI_Waitall(2 * q, reqs.data(), MPI_STATUSES_IGNORE);
    if (err == MPI_SUCCESS) err = werr;
    return err == MPI_SUCCESS ? MPI_SUCCESS : failed(fn, comm, err);
  }
  // Allgather: each group's blocks meet at its rank 0, the leaders swap them, and rank 0 gives
  // the other group's blocks to its own.
  int mine_count = 0, theirs_count = 0;
  if (int e = times(fn, comm, p, sendcount, &mine_count)) return e;
  if (int e = times(fn, comm, q, recvcount, &theirs_count)) return e;
  TypedBuffer gathered(c->rank == 0 ? mine_count : 0, sendtype);
  err = PMPI_Gather(sendbuf, sendcount, sendtype, gathered.get(), sendcount, sendtype, 0, local);
  if (err == MPI_SUCCESS && c->rank == 0) {
    err = PMPI_Sendrecv(gathered.get(), mine_count, sendtype, 0, tag, recvbuf, theirs_count,
                        recvtype, 0, tag, shadow, MPI_STATUS_IGNORE);
  }
  if (err == MPI_SUCCESS) err = PMPI_Bcast(recvbuf, theirs_count, recvtype, 0, local);
  return err == MPI_SUCCESS ? MPI_SUCCESS : failed(fn, comm, err);
}

int inter_rooted(const char* fn, coll::Coll kind, const void* sendbuf, int sendcount,
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm, Comm* c, MPI_Request* request) {
  if (request != nullptr) return nonblocking_unsupported(fn, comm);
  if (int err = check_inter_root(fn, comm, *c, root)) return err;
  const bool gather = kind == coll::Coll::kGather;
  const bool at_root = root == MPI_ROOT, in_other = root != MPI_ROOT && root != MPI_PROC_NULL;
  // The root's side of the arguments (gather: recv; scatter: send) counts remote_size blocks;
  // the other group's ranks each have one block of the other side.
  if (at_root || in_other) {
    const bool send_side = gather ? in_other : at_root;
    if (send_side) {
      if (int err = check_data(fn, comm, "send", sendbuf, sendcount, sendtype)) return err;
    } else {
      if (int err = check_data(fn, comm, "recv", recvbuf, recvcount, recvtype)) return err;
    }
  }
  const int tag = next_tag(c);
  const MPI_Comm local = c->local->handle, shadow = c->shadow->handle;
  const int p = c->size, q = c->remote_size();
  int err = MPI_SUCCESS;
  if (at_root) {
    int total = 0;
    if (int e = times(fn, comm, q, gather ? recvcount : sendcount, &total)) return e;
    err = gather ? PMPI_Recv(recvbuf, total, recvtype, 0, tag, shadow, MPI_STATUS_IGNORE)
                 : PMPI_Send(sendbuf, total, sendtype, 0, tag, shadow);
  } else if (in_other) {
    const int block = gather ? sendcount : recvcount;
    const MPI_Datatype type = gather ? sendtype : recvtype;
    int total = 0;
    if (int e = times(fn, comm, p, block, &total)) return e;
    TypedBuffer all(c->rank == 0 ? total : 0, type);
    if (gather) {
      err = PMPI_Gather(sendbuf, block, type, all.get(), block, type, 0, local);
      if (err == MPI_SUCCESS && c->rank == 0)
        err = PMPI_Send(all.get(), total, type, root, tag, shadow);
    } else {
      if (c->rank == 0)
        err = PMPI_Recv(all.get(), total, type, root, tag, shadow, MPI_STATUS_IGNORE);
      if (err == MPI_SUCCESS)
        err = PMPI_Scatter(all.get(), block, type, recvbuf, block, type, 0, local);
    }
  }
  return err == MPI_SUCCESS ? MPI_SUCCESS : failed(fn, comm, err);
}

}  // namespace torusmpi::mpi
