// Simple, always-correct collectives over point-to-point, on the communicator's collective context:
// dissemination barrier, binomial broadcast and reduce, allreduce as reduce then broadcast. They
// serve MPI_Barrier, MPI_Bcast, MPI_Reduce and MPI_Allreduce until the schedule-based collective
// engine (coll/sched) replaces them. Blocking; every rank of comm calls them in the same order.
#ifndef TORUSMPI_COLL_BASIC_BASIC_H_
#define TORUSMPI_COLL_BASIC_BASIC_H_

#include <cstddef>

#include "coll/ops/ops.h"
#include "core/status.h"
#include "pml/pml.h"

namespace torusmpi::coll::basic {

// Costs for p ranks and n bytes (a: latency, b: time per byte, g: time per reduced byte):
//   barrier    ceil(log2 p) a
//   bcast      ceil(log2 p) (a + n b)
//   reduce     ceil(log2 p) (a + n b + n g)
//   allreduce  reduce + bcast
Status barrier(const pml::Comm& comm);
Status bcast(const pml::Comm& comm, void* buf, size_t bytes, int root);
// count elements of `stride` bytes; sendbuf == recvbuf means in place (at the root, for reduce).
// recvbuf matters only at the root. fn combines in rank order only for commutative ops, which every
// predefined op is.
Status reduce(const pml::Comm& comm, const void* sendbuf, void* recvbuf, size_t count,
              size_t stride, ReduceFn fn, int root);
Status allreduce(const pml::Comm& comm, const void* sendbuf, void* recvbuf, size_t count,
                 size_t stride, ReduceFn fn);

}  // namespace torusmpi::coll::basic

#endif  // TORUSMPI_COLL_BASIC_BASIC_H_
