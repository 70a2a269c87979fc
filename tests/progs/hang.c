/* hang.c: jobs that never end by themselves, for tests/integration/hang.sh. Each prints
 * "ready <rank>" once it is in place, then never finishes unless the library ends it.
 *   stop      a loop of MPI_Allreduce; the last rank stops itself (SIGSTOP) before call #58
 *   recv      rank 0 waits in MPI_Recv for a message rank 1 never sends; the others wait in
 *             MPI_Barrier
 *   testall   rank 0 polls MPI_Testall on a receive that never matches, in a loop of its own
 *             (a whole core); the others wait in MPI_Barrier
 *   compute   every rank sleeps outside MPI
 *   finalize  the last rank sleeps outside MPI; the others wait in MPI_Finalize
 *   busy      a loop of MPI_Allreduce that runs until the job is ended from outside
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void ready(int rank) {
  printf("ready %d\n", rank);
  fflush(stdout);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "stop";
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (strcmp(mode, "stop") == 0 || strcmp(mode, "busy") == 0) {
    const int stop = strcmp(mode, "stop") == 0;
    ready(rank);
    for (long i = 1;; ++i) {
      if (stop && i == 58 && rank == size - 1) raise(SIGSTOP);
      long in = rank + i, out = 0;
      MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
  } else if (strcmp(mode, "recv") == 0) {
    ready(rank);
    if (rank == 0) {
      int x;
      MPI_Recv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank != 1) {
      MPI_Barrier(MPI_COMM_WORLD);
    }
    for (;;) pause(); /* rank 1 */
  } else if (strcmp(mode, "testall") == 0) {
    ready(rank);
    if (rank == 0) {
      int x, flag = 0;
      MPI_Request req;
      MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &req);
      while (!flag) MPI_Testall(1, &req, &flag, MPI_STATUSES_IGNORE);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
    }
  } else if (strcmp(mode, "compute") == 0) {
    ready(rank);
    for (;;) pause();
  } else if (strcmp(mode, "finalize") == 0) {
    ready(rank);
    if (rank == size - 1) {
      for (;;) pause();
    }
  }
  MPI_Finalize();
  return 0;
}
