/* lifecycle: what MPI allows around MPI_Init and MPI_Finalize, and what it does not.
 *
 *   lifecycle               MPI_Init twice under MPI_ERRORS_RETURN (an error, the program goes
 *                           on), MPI_Init_thread's honest answer; reporting as in check.h
 *   lifecycle before-init   calls MPI_Comm_rank before MPI_Init: must abort, saying so
 *   lifecycle after-final   calls MPI_Comm_rank after MPI_Finalize: must abort, saying so */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int flag = -1, rank = -1, provided = -1;
  /* Allowed before MPI_Init. */
  check_rc(MPI_Initialized(&flag), "initialized-before");
  int version = 0, subversion = 0;
  check_rc(MPI_Get_version(&version, &subversion), "get_version-before");
  if (strcmp(mode, "before-init") == 0) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("FAIL -1 before-init: MPI_Comm_rank returned\n");
    return 1;
  }
  check_rc(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), "init_thread");
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  check(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided-range", "%d",
        provided);
  int queried = -1;
  MPI_Query_thread(&queried);
  check(queried == provided, "query_thread", "%d, MPI_Init_thread said %d", queried, provided);
  MPI_Is_thread_main(&flag);
  check(flag == 1, "is_thread_main", "%d", flag);

  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = MPI_Init(&argc, &argv);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_OTHER, "init-twice", "returned %d (class %d)", rc, cls);
  check_rc(MPI_Finalize(), "finalize");
  if (strcmp(mode, "after-final") == 0) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("FAIL %d after-final: MPI_Comm_rank returned\n", g_rank);
    return 1;
  }
  MPI_Finalized(&flag);
  check(flag == 1, "finalized", "%d", flag);
  return check_done(-1);
}
