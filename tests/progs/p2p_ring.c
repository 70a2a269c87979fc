/* p2p_ring: rounds of ring traffic, meant for more ranks than cores (8 ranks on 2 cores), where a
 * library that spins without yielding, or whose progress depends on a peer being scheduled, gets
 * slow or stuck.
 *
 *   p2p_ring [rounds]     any number of ranks; rounds of each pattern, default 300
 *
 * Checked, one "ok/FAIL <rank> <check>" line per pattern, then "done <rank> ...":
 *  - a token passed around the ring (blocking Send/Recv; rank 0 with Isend): rank 0 starts round
 *    k with k * size, rank r > 0 receives k * size + r - 1 and passes on one more, so that rank 0
 *    gets (k + 1) * size - 1 back;
 *  - neighbour exchange with Sendrecv, to the right then to the left;
 *  - neighbour exchange with Irecv/Isend both ways and Waitall;
 * the exchanges at 1, 1024 and 16384 ints (the last above usual eager limits), every value checked.
 * Prints the time per round of each as "# ..." (a diagnostic, no threshold). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* MPICH's MPI_STATUSES_IGNORE is (MPI_Status*)1, which gcc takes for an array of size 0. */
#if defined(MPICH_VERSION) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

static int g_size, g_left, g_right;

/* Word i of what `sender` sends in `round` going `dir` (0 right, 1 left). */
static int value(int sender, int round, int dir, int i) {
  return sender * 1000003 + round * 7919 + dir * 104729 + i;
}
static void fill(int* p, int n, int sender, int round, int dir) {
  for (int i = 0; i < n; ++i) p[i] = value(sender, round, dir, i);
}
/* Index of the first wrong word, or -1. */
static int first_bad(const int* p, int n, int sender, int round, int dir) {
  for (int i = 0; i < n; ++i) {
    if (p[i] != value(sender, round, dir, i)) return i;
  }
  return -1;
}

/* Records the first problem of a pattern. */
static int g_bad;
static char g_first[300];
static void problem(int round, const char* fmt, ...) {
  if (g_bad++ > 0) return;
  int len = snprintf(g_first, sizeof g_first, "round %d: ", round);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_first + len, sizeof g_first - (size_t)len, fmt, ap);
  va_end(ap);
}
static void report(const char* what, int rounds, double seconds) {
  check(g_bad == 0, what, "%d bad rounds, the first: %s", g_bad, g_first);
  if (g_rank == 0)
    printf("# %s: %d rounds, %.1f us per round\n", what, rounds, seconds / rounds * 1e6);
  g_bad = 0;
  g_first[0] = '\0';
}

static void token(int rounds) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int round = 0; round < rounds; ++round) {
    int tok = -1, rc;
    MPI_Status st;
    if (g_rank == 0) {
      int start = round * g_size;
      MPI_Request req;
      rc = MPI_Isend(&start, 1, MPI_INT, g_right, 1, MPI_COMM_WORLD, &req);
      if (rc == MPI_SUCCESS) rc = MPI_Recv(&tok, 1, MPI_INT, g_left, 1, MPI_COMM_WORLD, &st);
      if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) problem(round, "call returned %d", rc);
      if (tok != (round + 1) * g_size - 1)
        problem(round, "token back %d, expected %d", tok, (round + 1) * g_size - 1);
    } else {
      rc = MPI_Recv(&tok, 1, MPI_INT, g_left, 1, MPI_COMM_WORLD, &st);
      if (rc != MPI_SUCCESS) problem(round, "Recv returned %d", rc);
      if (tok != round * g_size + g_rank - 1)
        problem(round, "token %d, expected %d", tok, round * g_size + g_rank - 1);
      ++tok;
      rc = MPI_Send(&tok, 1, MPI_INT, g_right, 1, MPI_COMM_WORLD);
      if (rc != MPI_SUCCESS) problem(round, "Send returned %d", rc);
    }
  }
  report("token", rounds, MPI_Wtime() - t0);
}

static void exchange(int rounds, int n, int nonblocking) {
  int* s[2];
  int* r[2];
  for (int d = 0; d < 2; ++d) {
    s[d] = malloc(sizeof(int) * (size_t)n);
    r[d] = malloc(sizeof(int) * (size_t)n);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int round = 0; round < rounds; ++round) {
    MPI_Status st[4];
    int rc;
    for (int d = 0; d < 2; ++d) {
      fill(s[d], n, g_rank, round, d);
      memset(r[d], 0xff, sizeof(int) * (size_t)n);
    }
    /* r[0] comes from the left (it went right), r[1] from the right. */
    if (nonblocking) {
      MPI_Request req[4];
      rc = MPI_Irecv(r[0], n, MPI_INT, g_left, 2, MPI_COMM_WORLD, &req[0]);
      if (rc == MPI_SUCCESS) rc = MPI_Irecv(r[1], n, MPI_INT, g_right, 3, MPI_COMM_WORLD, &req[1]);
      if (rc == MPI_SUCCESS) rc = MPI_Isend(s[0], n, MPI_INT, g_right, 2, MPI_COMM_WORLD, &req[2]);
      if (rc == MPI_SUCCESS) rc = MPI_Isend(s[1], n, MPI_INT, g_left, 3, MPI_COMM_WORLD, &req[3]);
      if (rc == MPI_SUCCESS) rc = MPI_Waitall(4, req, st);
    } else {
      rc = MPI_Sendrecv(s[0], n, MPI_INT, g_right, 2, r[0], n, MPI_INT, g_left, 2, MPI_COMM_WORLD,
                        &st[0]);
      if (rc == MPI_SUCCESS)
        rc = MPI_Sendrecv(s[1], n, MPI_INT, g_left, 3, r[1], n, MPI_INT, g_right, 3, MPI_COMM_WORLD,
                          &st[1]);
    }
    if (rc != MPI_SUCCESS) {
      problem(round, "call returned %d", rc);
      continue;
    }
    for (int d = 0; d < 2; ++d) {
      int from = d == 0 ? g_left : g_right, count = -1;
      MPI_Get_count(&st[d], MPI_INT, &count);
      if (st[d].MPI_SOURCE != from || count != n)
        problem(round, "status: source %d, count %d", st[d].MPI_SOURCE, count);
      int bad = first_bad(r[d], n, from, round, d);
      if (bad >= 0)
        problem(round, "word %d from the %s is %d", bad, d == 0 ? "left" : "right", r[d][bad]);
    }
  }
  char what[64];
  snprintf(what, sizeof what, "%s-%d-ints", nonblocking ? "isend-irecv" : "sendrecv", n);
  report(what, rounds, MPI_Wtime() - t0);
  for (int d = 0; d < 2; ++d) {
    free(s[d]);
    free(r[d]);
  }
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  g_left = (g_rank + g_size - 1) % g_size;
  g_right = (g_rank + 1) % g_size;
  int rounds = argc > 1 ? atoi(argv[1]) : 300;
  if (rounds < 1) rounds = 300;

  token(rounds);
  const int sizes[3] = {1, 1024, 16384};
  for (int k = 0; k < 3; ++k) {
    exchange(rounds, sizes[k], 0);
    exchange(rounds, sizes[k], 1);
  }
  check_rc(MPI_Finalize(), "finalize");
  return check_done(g_size);
}
