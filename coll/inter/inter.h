// Intercommunicator collectives as schedules. An intercommunicator's collective runs over both of
// its groups at once, seen as one row of ranks: the first group (the MPI layer picks it so that
// both groups agree without talking) is ranks [0, split), the second [split, size), each in its
// own rank order. A builder here emits one rank's schedule of such a call, its
// peers being ranks of that row; src/mpi/intercomm.cc runs it over a view of the intercommunicator
// with the same row (blocking, nonblocking, flight recorder), and the simulator runs every rank of
// both groups and checks each output against the descriptor below.
//
// Args of a call on the row (besides rank, size, split, count, elem, commutative):
//   root      rooted collectives: the root's rank in the row, on the root and in the other group;
//             -1 on the root's group's other ranks (MPI_PROC_NULL), which take no part
//   count     barrier: none; bcast, reduce, allreduce: the vector (elements); allgather, alltoall,
//             gather, scatter: one block (bytes); reduce_scatter_block: one rank's block
//             (elements); allgatherv, gatherv (off the root), scatterv (off the root): this
//             rank's own block (bytes)
//   counts/displs   allgatherv, and gatherv and scatterv at the root: per rank of the OTHER group,
//                   its block (bytes) and where it lands in (or comes from) this rank's buffer;
//                   reduce_scatter: per rank of this rank's OWN group, what it keeps (elements)
//   scounts/sdispls, rcounts/rdispls   alltoallv, alltoallw: per rank of the other group (bytes)
// Each group's reduction is its ranks' run of the row, in rank order, so non-commutative ops keep
// MPI's order within the contributing group.
//
// Which group holds what (MPI 3.1 section 5.2.2 and each collective's intercommunicator rule):
//   allreduce: each group gets the reduction over the other group; allgather(v): the other
//   group's blocks; alltoall(v,w): block j goes to rank j of the other group; reduce_scatter
//   (_block): the reduction of one group's vectors is scattered over the other group, by the
//   receiving group's counts; bcast, reduce, gather(v), scatter(v): between the root and the
//   other group; barrier: nobody leaves before every rank of both groups has entered.
#ifndef TORUSMPI_COLL_INTER_INTER_H_
#define TORUSMPI_COLL_INTER_INTER_H_

#include "coll/coll.h"
#include "coll/collective.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll::inter {

// Where a rank of the row stands: its own group's and the other group's first rank and size, and
// its rank within its group.
struct Sides {
  int own_first = 0;
  int own_size = 0;
  int other_first = 0;
  int other_size = 0;
  int local = 0;
};
Sides sides(const Args& a);
// The same for the group of `row_rank` in a's row.
Sides sides_of(const Args& a, int row_rank);

// Whether the collective has an intercommunicator form (scans and the neighbourhood collectives
// do not).
bool supported(Coll c);

// Emits the calling rank's schedule of a.coll on the row (supported(a.coll)).
void build(Builder& b, const Args& a);

// The builders, one per collective (inter_leaders.cc: through each group's leader; inter_direct.cc:
// every pair of ranks of the two groups talks directly).
void barrier(Builder& b, const Args& a);
void bcast(Builder& b, const Args& a);
void reduce(Builder& b, const Args& a);
void allreduce(Builder& b, const Args& a);
void allgather(Builder& b, const Args& a);
void gather(Builder& b, const Args& a);
void scatter(Builder& b, const Args& a);
void reduce_scatter(Builder& b, const Args& a);  // both forms
void alltoall(Builder& b, const Args& a);
void alltoallv(Builder& b, const Args& a);  // and alltoallw: counts in bytes
void allgatherv(Builder& b, const Args& a);
void gatherv(Builder& b, const Args& a);
void scatterv(Builder& b, const Args& a);

// The descriptor of c's intercommunicator form (supported(c)): buffer sizes and the expected
// result on the row, for the simulator (sim::simulate with a descriptor).
const Collective& descriptor(Coll c);

}  // namespace torusmpi::coll::inter

#endif  // TORUSMPI_COLL_INTER_INTER_H_
