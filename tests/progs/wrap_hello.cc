// wrap_hello: a C++ program on Open MPI's C++ bindings (MPI::), built by torusmpi's mpicxx in
// tests/integration/wrappers.sh. The bindings (libmpi_cxx.so.40, Open MPI's) run on torusmpi's
// libmpi.so.40; the C and C++ handles are the same objects.
//
//   wrap_hello <expected size>
//
// Prints check.h's "ok"/"FAIL" lines and a last "done <rank> of <size>: ..." line.
#include <mpi.h>

#include <cstdlib>

#include "check.h"

int main(int argc, char** argv) {
  MPI::Init(argc, argv);
  const MPI::Intracomm& world = MPI::COMM_WORLD;
  g_rank = world.Get_rank();
  const int size = world.Get_size();
  const int expected = argc > 1 ? std::atoi(argv[1]) : size;
  check(size == expected, "size", "%d ranks, expected %d", size, expected);

  // The C++ communicator is the C one.
  check(static_cast<MPI_Comm>(world) == MPI_COMM_WORLD, "handle",
        "MPI::COMM_WORLD is not MPI_COMM_WORLD");

  // Integer data: the sum of the ranks is exact.
  int sum = -1;
  world.Allreduce(&g_rank, &sum, 1, MPI::INT, MPI::SUM);
  check(sum == size * (size - 1) / 2, "allreduce", "sum of ranks %d, expected %d", sum,
        size * (size - 1) / 2);

  // A duplicate talks on its own: a ring of one int.
  MPI::Intracomm ring = world.Dup();
  const int right = (g_rank + 1) % size, left = (g_rank + size - 1) % size;
  int got = -1;
  ring.Sendrecv(&g_rank, 1, MPI::INT, right, 7, &got, 1, MPI::INT, left, 7);
  check(got == left, "sendrecv", "got %d from rank %d", got, left);
  ring.Free();

  const int status = check_done(size);
  MPI::Finalize();
  return status;
}
