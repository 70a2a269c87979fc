/* errors: bad calls get the right error class, and the program goes on.
 *
 *   errors          MPI_ERRORS_RETURN on MPI_COMM_WORLD; every check prints "ok <rank> <check>" or
 *                   "FAIL <rank> <check>: why", then "done <rank> ..."; exits 1 on any failure.
 *   errors fatal    leaves MPI_ERRORS_ARE_FATAL and calls MPIX_Barrier_init (Open MPI's persistent
 *                   collectives, mpi-ext.h) without a request: the job must end with a non-zero
 *                   status and a message naming the call and the argument. */
#include <mpi.h>
/* mpi-ext.h (MPIX_Barrier_init) needs mpi.h first. */
#include <mpi-ext.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

/* rc is exactly the class expected (torusmpi returns classes as codes), and names it. */
static void check_class(int rc, int expected, const char* what) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  check(rc == expected && cls == expected, what, "returned %d (class %d), expected %d", rc, cls,
        expected);
}

/* What the user error handler saw on its last call. */
static int g_handler_calls, g_handler_code;
static MPI_Comm g_handler_comm = MPI_COMM_NULL;

static void user_handler(MPI_Comm* comm, int* code, ...) {
  ++g_handler_calls;
  g_handler_comm = *comm;
  g_handler_code = *code;
}

int main(int argc, char** argv) {
  int fatal = argc > 1 && strcmp(argv[1], "fatal") == 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  char buf[64];

  if (fatal) {
    printf("rank %d calls MPIX_Barrier_init under MPI_ERRORS_ARE_FATAL\n", g_rank);
    MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL);
    printf("FAIL %d MPIX_Barrier_init returned under MPI_ERRORS_ARE_FATAL\n", g_rank);
    MPI_Finalize();
    return 1;
  }

  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) == MPI_SUCCESS,
        "set-errors-return", "failed");

  /* A call without its request: its class, and MPI_Error_string says which function. */
  int rc = MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL);
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = -1;
  int src = MPI_Error_string(rc, text, &len);
  check_class(rc, MPI_ERR_REQUEST, "barrier_init-null-request");
  check(src == MPI_SUCCESS && strstr(text, "MPIX_Barrier_init") != NULL && len == (int)strlen(text),
        "barrier_init-error-string", "rc %d \"%s\" (len %d)", src, text, len);

  int value = 0, flag = 0;
  check_class(MPI_Comm_rank(MPI_COMM_NULL, &value), MPI_ERR_COMM, "comm_rank-comm_null");
  check_class(MPI_Comm_rank(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "comm_rank-null-out");
  check_class(MPI_Type_size(MPI_DATATYPE_NULL, &value), MPI_ERR_TYPE, "type_size-datatype_null");
  void* attr = NULL;
  check_class(MPI_Comm_get_attr(MPI_COMM_WORLD, 424242, &attr, &flag), MPI_ERR_KEYVAL,
              "comm_get_attr-bogus-keyval");
  check_class(MPI_Free_mem(buf), MPI_ERR_BASE, "free_mem-foreign-pointer");
  check_class(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ARG,
              "set_errhandler-null");
  /* After all that, the library still works. */
  int size = -1;
  check(MPI_Comm_size(MPI_COMM_WORLD, &size) == MPI_SUCCESS && size >= 1, "still-works", "size %d",
        size);

  /* A user handler on MPI_COMM_SELF sees the communicator and the code of each error. */
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  check(MPI_Comm_create_errhandler(user_handler, &handler) == MPI_SUCCESS, "create_errhandler",
        "failed");
  check(MPI_Comm_set_errhandler(MPI_COMM_SELF, handler) == MPI_SUCCESS, "set-user-handler",
        "failed");
  rc = MPI_Comm_rank(MPI_COMM_SELF, NULL);
  check(g_handler_calls == 1 && g_handler_code == MPI_ERR_ARG && g_handler_comm == MPI_COMM_SELF &&
            rc == MPI_ERR_ARG,
        "user-handler-arg", "calls %d code %d same comm %d rc %d", g_handler_calls, g_handler_code,
        g_handler_comm == MPI_COMM_SELF, rc);
  rc = MPIX_Barrier_init(MPI_COMM_SELF, MPI_INFO_NULL, NULL);
  check(g_handler_calls == 2 && g_handler_code == MPI_ERR_REQUEST, "user-handler-request",
        "calls %d code %d rc %d", g_handler_calls, g_handler_code, rc);
  check(MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER) == MPI_SUCCESS &&
            g_handler_calls == 3 && g_handler_code == MPI_ERR_OTHER,
        "call_errhandler", "calls %d code %d", g_handler_calls, g_handler_code);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  check(MPI_Errhandler_free(&handler) == MPI_SUCCESS && handler == MPI_ERRHANDLER_NULL,
        "errhandler_free", "failed");

  /* Files default to MPI_ERRORS_RETURN whatever the communicator's handler is. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_File file = MPI_FILE_NULL;
  check_class(MPI_File_open(MPI_COMM_WORLD, "/nonexistent/torusmpi-test", MPI_MODE_RDONLY,
                            MPI_INFO_NULL, &file),
              MPI_ERR_NO_SUCH_FILE, "file_open-returns");

  check(MPI_Finalize() == MPI_SUCCESS, "finalize", "failed");
  return check_done(-1);
}
