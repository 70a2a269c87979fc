/* coll_errors: collective calls with bad arguments under MPI_ERRORS_RETURN, each with its error
 * class (and, on torusmpi, a message naming the call and the argument), after which the program
 * goes on: a correct collective right after each error still gives the right result, so an error
 * neither hangs nor puts the ranks out of step.
 *
 *   coll_errors      any number of ranks, 1 included
 *
 * Every rank makes the same bad call (an error found on one rank only would leave the others in
 * the collective). Checked, one "ok/FAIL <rank> <check>" line per case, then "done <rank> ...":
 * MPI_COMM_NULL (MPI_ERR_COMM); a negative count, sendcount, recvcount or recvcounts[i]
 * (MPI_ERR_COUNT); MPI_DATATYPE_NULL as datatype, sendtype or recvtype (MPI_ERR_TYPE); a root out
 * of range (MPI_ERR_ROOT); MPI_OP_NULL, and an op on a datatype it is not defined on: MPI_BAND on
 * MPI_DOUBLE, MPI_SUM on MPI_2INT (MPI_ERR_OP); a NULL buffer with data to move (MPI_ERR_BUFFER);
 * a NULL request for a nonblocking collective (MPI_ERR_REQUEST or MPI_ERR_ARG); MPI_Request_free
 * and MPI_Cancel of an active nonblocking collective's request (MPI_ERR_REQUEST; the request then
 * completes normally); sendcount * sendtype differing from recvcount * recvtype in MPI_Allgather
 * (MPI_ERR_TRUNCATE). Open MPI 4.1 checks neither NULL buffers or requests, negative recvcounts,
 * the mismatch nor freeing a collective's request (it crashes on some): those run on torusmpi
 * only.
 * Only the class is checked (MPICH returns codes that are not classes). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int g_size;
static int g_torusmpi;

static int error_class(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

/* The call returned one of the classes `a` or `b` (b: -1 for none); on torusmpi the message names
 * the function. */
static void expect(int rc, int a, int b, const char* what, const char* fn) {
  int cls = error_class(rc);
  int ok = cls == a || (b >= 0 && cls == b);
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
  if (ok && g_torusmpi && strstr(text, fn) == NULL) {
    check(0, what, "class right, but the message does not name %s: \"%s\"", fn, text);
    return;
  }
  check(ok, what, "returned class %d (%s), expected %d", cls, text, a);
}

/* Cases the reference libraries do not check (Open MPI 4.1 crashes on some): run on torusmpi
 * only, with a "skip" line elsewhere. */
static int torusmpi_only(const char* what) {
  if (g_torusmpi) return 1;
  printf("skip %d %s: not checked by the reference libraries\n", g_rank, what);
  return 0;
}

/* After each error: an allreduce that must still be right. */
static void still_works(const char* after) {
  int in = g_rank + 1, out = 0;
  char what[96];
  snprintf(what, sizeof what, "allreduce-after-%s", after);
  int rc = MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  check(rc == MPI_SUCCESS && out == g_size * (g_size + 1) / 2, what, "rc %d, sum %d", rc, out);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(version, &len);
  g_torusmpi = strncmp(version, "torusmpi", 8) == 0;

  const int p = g_size;
  int* a = calloc((size_t)p * 4 + 8, sizeof(int));
  int* b = calloc((size_t)p * 4 + 8, sizeof(int));
  int* counts = calloc((size_t)p, sizeof(int));
  int* displs = calloc((size_t)p, sizeof(int));
  for (int i = 0; i < p; ++i) counts[i] = 1, displs[i] = i;
  MPI_Request req;

  expect(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, -1, "barrier-comm-null", "MPI_Barrier");
  still_works("comm-null");
  expect(MPI_Bcast(a, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, -1, "bcast-negative-count",
         "MPI_Bcast");
  expect(MPI_Bcast(a, 1, MPI_INT, p, MPI_COMM_WORLD), MPI_ERR_ROOT, -1, "bcast-root-too-big",
         "MPI_Bcast");
  expect(MPI_Bcast(a, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT, -1, "bcast-root-negative",
         "MPI_Bcast");
  expect(MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, -1,
         "bcast-datatype-null", "MPI_Bcast");
  if (torusmpi_only("bcast-null-buffer")) {
    expect(MPI_Bcast(NULL, 4, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, -1, "bcast-null-buffer",
           "MPI_Bcast");
  }
  still_works("bcast-errors");

  expect(MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP, -1,
         "allreduce-op-null", "MPI_Allreduce");
  double d = 1, e = 0;
  expect(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP, -1,
         "allreduce-band-on-double", "MPI_Allreduce");
  expect(MPI_Allreduce(a, b, 1, MPI_2INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP, -1,
         "allreduce-sum-on-2int", "MPI_Allreduce");
  expect(MPI_Reduce(a, b, -3, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, -1,
         "reduce-negative-count", "MPI_Reduce");
  expect(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, p + 2, MPI_COMM_WORLD), MPI_ERR_ROOT, -1,
         "reduce-bad-root", "MPI_Reduce");
  expect(MPI_Scan(a, b, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP, -1,
         "scan-maxloc-on-int", "MPI_Scan");
  still_works("reduction-errors");

  expect(MPI_Allgather(a, -1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT, -1,
         "allgather-negative-sendcount", "MPI_Allgather");
  expect(MPI_Allgather(a, 1, MPI_INT, b, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD), MPI_ERR_TYPE, -1,
         "allgather-recvtype-null", "MPI_Allgather");
  if (torusmpi_only("allgather-send-recv-mismatch")) {
    expect(MPI_Allgather(a, 2, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE, -1,
           "allgather-send-recv-mismatch", "MPI_Allgather");
  }
  expect(MPI_Alltoall(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TYPE, -1,
         "alltoall-sendtype-null", "MPI_Alltoall");
  counts[p - 1] = -1;
  if (torusmpi_only("allgatherv-negative-recvcount")) {
    expect(MPI_Allgatherv(a, 1, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
           p == 1 ? MPI_ERR_TRUNCATE : -1, "allgatherv-negative-recvcount", "MPI_Allgatherv");
  }
  if (torusmpi_only("reduce-scatter-negative-recvcount")) {
    expect(MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT, -1,
           "reduce-scatter-negative-recvcount", "MPI_Reduce_scatter");
  }
  counts[p - 1] = 1;
  expect(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, -2, MPI_COMM_WORLD), MPI_ERR_ROOT, -1,
         "gather-bad-root", "MPI_Gather");
  expect(MPI_Scatter(a, 1, MPI_INT, b, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, -1,
         "scatter-negative-recvcount", "MPI_Scatter");
  still_works("block-errors");

  if (torusmpi_only("iallreduce-null-request")) {
    expect(MPI_Iallreduce(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL), MPI_ERR_REQUEST,
           MPI_ERR_ARG, "iallreduce-null-request", "MPI_Iallreduce");
  }
  expect(MPI_Ibcast(a, 1, MPI_INT, p, MPI_COMM_WORLD, &req), MPI_ERR_ROOT, -1, "ibcast-bad-root",
         "MPI_Ibcast");
  still_works("nonblocking-errors");

  /* An active nonblocking collective's request may not be freed or cancelled; it still completes.
   */
  int in = g_rank + 1, out = 0;
  int rc = MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  check(rc == MPI_SUCCESS, "iallreduce-start", "rc %d", rc);
  if (torusmpi_only("request-free-of-collective")) {
    MPI_Request keep = req;
    expect(MPI_Request_free(&req), MPI_ERR_REQUEST, -1, "request-free-of-collective",
           "MPI_Request_free");
    req = keep;
    expect(MPI_Cancel(&req), MPI_ERR_REQUEST, -1, "cancel-of-collective", "MPI_Cancel");
  }
  rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  check(rc == MPI_SUCCESS && out == p * (p + 1) / 2 && req == MPI_REQUEST_NULL,
        "iallreduce-completes", "rc %d sum %d", rc, out);
  still_works("request-errors");

  free(a);
  free(b);
  free(counts);
  free(displs);
  MPI_Finalize();
  return check_done(p);
}
