/* abort: one rank calls MPI_Abort(MPI_COMM_WORLD, 7); the others must be taken down with it.
 *
 *   abort finalize   the other ranks wait in MPI_Finalize
 *   abort sleep      the other ranks sleep for a minute outside MPI
 *
 * The aborting rank is 1, or 0 in a one-rank job. It waits a little first so that the others are
 * where they should be when the abort comes. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int sleep_mode = argc > 1 && strcmp(argv[1], "sleep") == 0;
  MPI_Init(&argc, &argv);
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int aborter = size > 1 ? 1 : 0;
  printf("rank %d of %d: pid %d\n", rank, size, (int)getpid());
  fflush(stdout);
  if (rank == aborter) {
    struct timespec pause = {0, 300000000};
    nanosleep(&pause, NULL);
    MPI_Abort(MPI_COMM_WORLD, 7);
    printf("rank %d: MPI_Abort returned\n", rank);
    return 1;
  }
  if (sleep_mode) {
    /* Short sleeps: a signal ends the wait without depending on sleep's restart behaviour. */
    for (int i = 0; i < 600; ++i) usleep(100000);
    printf("rank %d: still alive after 60 s\n", rank);
    return 1;
  }
  MPI_Finalize();
  printf("rank %d: MPI_Finalize returned\n", rank);
  return 0;
}
