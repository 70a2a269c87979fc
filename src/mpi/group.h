// Groups, and what the files that make communicators share (comm_create.cc, intercomm.cc, the
// intercommunicator branch of coll.cc): groups as lists of job ranks, context ids agreed by the
// members of a new communicator, the making and freeing of communicators, and the collectives of
// intercommunicators.
//
// Context ids. A communicator uses a pair of pml contexts (context for point-to-point, context + 1
// for collectives, pml.h); pair i is context 2i. Each process keeps a bitmap of the pairs it uses.
// The processes of a creation OR their bitmaps together (an allreduce over the parent, or over
// each group and then between the two leaders for intercommunicators) and take the lowest pair free
// everywhere: every member computes the same answer from the same OR. A process with a nonblocking
// creation in flight (MPI_Comm_idup) may change its bitmap between its contribution and the
// answer, so it says so in one more word of the OR; the creation then checks the choice in a
// second round (every member reserves the pair or reports a conflict, OR-ed again) and starts over
// on a conflict. Nonblocking creations choose from the top of the map, blocking ones from the
// bottom, so the two kinds rarely meet.
//
// Tags on a communicator's collective context (its own collectives and these protocols share it):
//   0 .. 2^30-1               the collective engine's sequence (coll::Team)
//   2^30 .. 2^31-1            context agreements of creations on this communicator (create_seq)
//   negative, below -2^30     MPI_Comm_create_group and MPI_Intercomm_create, from the user's tag
#ifndef TORUSMPI_MPI_GROUP_H_
#define TORUSMPI_MPI_GROUP_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "coll/coll.h"
#include "coll/sched/exec.h"
#include "core/status.h"
#include "mpi/ompi_abi.h"
#include "mpi/runtime.h"

namespace torusmpi::mpi {

// --- Groups

// An ordered set of processes. MPI_Group is &handle; the object comes from a pool and goes back
// to it at MPI_Group_free (its magic then says "freed", so a stale handle is reported).
struct Group {
  ompi_group_t handle;
  std::vector<int> ranks;    // job rank of each member, in group order
  int rank = MPI_UNDEFINED;  // this process's rank in the group
};

// The group behind a handle: MPI_GROUP_EMPTY's is an empty group; nullptr for MPI_GROUP_NULL, a
// freed group and anything else.
Group* group_impl(MPI_Group g);
// A new group handle with these members (job ranks, distinct); MPI_GROUP_EMPTY when there are none.
MPI_Group group_new(std::vector<int> ranks);
// Gives a handle of group_new back (MPI_GROUP_EMPTY: nothing to give).
void group_release(MPI_Group g);

// Job ranks of a communicator's group (the local group of an intercommunicator).
std::vector<int> comm_members(const Comm& c);

// --- Context ids

// Pairs of context ids a process can use at once (communicators it belongs to, hidden ones of
// intercommunicators included).
constexpr int kContextPairs = 8192;
constexpr int kContextWords = kContextPairs / 64;

// Marks MPI_COMM_WORLD's and MPI_COMM_SELF's pairs used (MPI_Init).
void contexts_init();

// Combines `words` in place across the processes of one creation, each ending with the OR of all
// of them; every process calls it with the same number of words, in the same order.
using OrReduce = std::function<Status(std::vector<uint64_t>* words)>;

// Agrees with the other processes of a creation on n context pairs free for all of them and marks
// them used; blocking. kErrNoMem (on every process alike) when fewer than n are free.
Status contexts_agree(const OrReduce& reduce, int n, uint32_t* contexts);

// Gives a pair back (the communicator that used it is gone and nothing waits on it).
void context_release(uint32_t context);

// The tag of the next agreement of a creation on c (every member counts its creations alike).
int agreement_tag(Comm* c);
// A tag of MPI_Comm_create_group (kind 0) or MPI_Intercomm_create (kind 1), from the user's tag:
// negative, so it meets neither the engine's tags nor the agreements'.
int user_protocol_tag(int kind, int tag);

// --- Running the engine with a tag of one's own

// Runs a collective of the engine (its fallback algorithm: any size, any op) over `view` with the
// given tag on view's collective context, blocking. a.rank and a.size are set here; r.comm and
// r.tag too.
Status run_tagged(const pml::Comm& view, int tag, coll::Args a, coll::RunArgs r);
// The OR of words over an intracommunicator's view (run_tagged: an allreduce of 64-bit words).
Status or_words(const pml::Comm& view, int tag, std::vector<uint64_t>* words);
// Rank root's bytes to every rank of view.
Status bcast_bytes(const pml::Comm& view, int tag, int root, void* buf, size_t bytes);
// Two processes swap byte strings over `link` (its point-to-point context, or the collective one
// with coll = true): out goes to peer, what peer sends comes into *in, whatever its length.
Status swap_bytes(const pml::Comm& link, bool coll, int peer, int tag,
                  const std::vector<uint8_t>& out, std::vector<uint8_t>* in);

// --- Communicators

// A new communicator with these members (job ranks, in rank order), this process being rank
// `rank` among them, on the context pair `context`: its own handle, the parent's error handler
// (MPI: a new communicator inherits it), no name, no info, no attributes.
Comm* comm_new(const Comm& parent, std::vector<int> members, int rank, uint32_t context);
// Writes what Open MPI's bindings read of a communicator into its handle (ompi_abi.h): the
// inter/topology flags, the groups' sizes, the error handler. Called whenever one of them changes.
void comm_sync_handle(Comm* c);
// Makes c an intercommunicator: its remote group, and its hidden local communicator (on pair
// local_context) and shadow view.
void comm_make_inter(Comm* c, std::vector<int> remote, uint32_t local_context);
// Frees c (and its hidden parts): its handle is marked freed at once; the object and its context
// pair go when nothing can touch them any more (nonblocking collectives in flight, receives
// posted).
void comm_destroy(Comm* c);
// A persistent request on c holds it: MPI_Comm_free takes the application's handle at once but
// leaves the communicator (its handle still valid for the request) to the last comm_release.
void comm_keep(Comm* c);
void comm_release(Comm* c);
// Frees every communicator the application did not free, and what waits to be freed (MPI_Finalize).
void comms_finalize();

// An intracommunicator's OrReduce (or_words with the next agreement tag of c).
OrReduce or_reduce_intra(Comm* c);

// --- Intercommunicators (intercomm.cc)

// The OrReduce of a creation on an intercommunicator: OR within each group, the leaders swap and
// combine, each leader gives the result to its group.
OrReduce or_reduce_inter(Comm* c);
// MPI_Comm_dup and MPI_Comm_split / MPI_Comm_create of an intercommunicator (blocking).
int inter_dup(const char* fn, Comm* c, MPI_Comm* newcomm);
int inter_split(const char* fn, Comm* c, int color, int key, MPI_Comm* newcomm);
int inter_create(const char* fn, Comm* c, Group* g, MPI_Comm* newcomm);

// Collectives on an intercommunicator, MPI's semantics (a root is MPI_ROOT in its own group,
// MPI_PROC_NULL for its group's other ranks, its rank in the other group there). coll.cc hands
// them every call whose communicator is an intercommunicator; `request` is set for the MPI_I forms.
int inter_barrier(const char* fn, MPI_Comm comm, Comm* c, MPI_Request* request);
int inter_bcast(const char* fn, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                Comm* c, MPI_Request* request);
// kind: coll::Coll::kReduce or kAllreduce.
int inter_reduce(const char* fn, coll::Coll kind, const void* sendbuf, void* recvbuf, int count,
                 MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, Comm* c,
                 MPI_Request* request);
// kind: kAllgather or kAlltoall.
int inter_exchange(const char* fn, coll::Coll kind, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, Comm* c, MPI_Request* request);
// kind: kGather or kScatter.
int inter_rooted(const char* fn, coll::Coll kind, const void* sendbuf, int sendcount,
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm, Comm* c, MPI_Request* request);
// Any other collective: MPI_ERR_UNSUPPORTED_OPERATION naming it.
int inter_unsupported(const char* fn, MPI_Comm comm);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_GROUP_H_
