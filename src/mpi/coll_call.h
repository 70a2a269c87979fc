// What the collective entry points share (coll.cc, neighbor.cc): their argument checks, the call
// on its way to the engine, and running it, blocking or not.
#ifndef TORUSMPI_MPI_COLL_CALL_H_
#define TORUSMPI_MPI_COLL_CALL_H_

#include <string>
#include <vector>

#include "coll/team.h"
#include "mpi/p2p.h"

namespace torusmpi::mpi {

// A call on its way to the engine; the arrays of vector collectives live here until the schedule
// is built, which happens before the call returns, blocking or not.
struct CollCall {
  coll::Args a;
  coll::RunArgs r;
  std::vector<size_t> arrays[4];

  const size_t* keep(int i, std::vector<size_t> v) {
    arrays[i] = std::move(v);
    return arrays[i].data();
  }
};

// Runs the call (request == nullptr), or starts it and makes *request.
int run_collective(const char* fn, MPI_Comm comm, Comm* c, CollCall& call, MPI_Request* request);

// MPI is up, comm is a communicator, and a nonblocking call (fn is "MPI_I...") has its request.
int check_call(const char* fn, MPI_Comm comm, MPI_Request* request, Comm** c);

// count elements of type as bytes on the wire (count * extent); `what` ("send", "recv") names
// the arguments in messages.
int check_data(const char* fn, MPI_Comm comm, const char* what, int count, MPI_Datatype type,
               Buffer* b);
// A send and a receive description of one block must move the same bytes (MPI_ERR_TRUNCATE).
int check_same(const char* fn, MPI_Comm comm, const Buffer& s, const Buffer& r);
// A buffer with bytes to move is not NULL (MPI_ERR_BUFFER).
int check_nonnull(const char* fn, MPI_Comm comm, const void* p, const char* what, size_t bytes);
// An array of n ints is there, and with counts = true none is negative.
int check_counts(const char* fn, MPI_Comm comm, const int* v, int n, const char* what,
                 bool counts);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_COLL_CALL_H_
