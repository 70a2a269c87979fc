/* pcoll: persistent collectives (Open MPI 4.1's MPIX_<coll>_init, mpi-ext.h). Each request is
 * made once and started three times, with new data before each start, and every result is checked
 * against integers every rank can compute: every collective and neighbourhood collective, rooted
 * ones at the first and the last rank, in place where MPI allows it; MPI_Startall over several
 * requests; a derived datatype freed right after its init; inactive requests in waits and tests;
 * errors with MPI_ERRORS_RETURN (bad arguments at the init, starting or freeing an active
 * request). One "ok"/"FAIL" line per check (check.h); "skip" for what Open MPI (the reference,
 * run first) leaves to the implementation. */
#include <mpi.h>
/* mpi-ext.h (the MPIX_ persistent collectives) needs mpi.h first. */
#include <mpi-ext.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { kStarts = 3 };

static int g_size;
static int g_torusmpi;

/* The value rank r contributes at element i of start k. */
static int v(int r, int k, int i) { return r * 1000 + k * 100 + i; }

/* Sum over ranks lo..hi-1 of v(r, k, i). */
static int vsum(int lo, int hi, int k, int i) {
  int s = 0;
  for (int r = lo; r < hi; ++r) s += v(r, k, i);
  return s;
}

/* n zeroed ints (the init calls read the send buffers' addresses before any data is there). */
static int* ints(size_t n) { return calloc(n > 0 ? n : 1, sizeof(int)); }

/* Starts req, waits for it, and says whether both went well. */
static int run(MPI_Request* req) {
  MPI_Request before = *req;
  int rc = MPI_Start(req);
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_Wait(req, MPI_STATUS_IGNORE);
  /* A persistent request survives its completion. */
  if (rc == MPI_SUCCESS && *req != before) rc = MPI_ERR_REQUEST;
  return rc;
}

static void free_req(MPI_Request* req, const char* what) {
  int rc = MPI_Request_free(req);
  check(rc == MPI_SUCCESS && *req == MPI_REQUEST_NULL, what, "rc %d", rc);
}

/* Compares n ints with want(i); reports the first difference. */
#define EXPECT_INTS(what, k, got, n, want_expr)                               \
  do {                                                                        \
    int bad_ = -1, want_ = 0;                                                 \
    for (int i = 0; i < (n) && bad_ < 0; ++i) {                               \
      want_ = (want_expr);                                                    \
      if ((got)[i] != want_) bad_ = i;                                        \
    }                                                                         \
    check(bad_ < 0, what, "start %d: element %d is %d, expected %d", k, bad_, \
          bad_ >= 0 ? (got)[bad_] : 0, want_);                                \
  } while (0)

static void test_allreduce(int in_place) {
  const int n = g_size + 1;
  int* s = ints(n);
  int* r = ints(n);
  MPI_Request req = MPI_REQUEST_NULL;
  check_rc(MPIX_Allreduce_init(in_place ? MPI_IN_PLACE : s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &req),
           in_place ? "allreduce_init in place" : "allreduce_init");
  for (int k = 0; k < kStarts; ++k) {
    for (int i = 0; i < n; ++i) (in_place ? r : s)[i] = v(g_rank, k, i);
    check_rc(run(&req), "allreduce start");
    EXPECT_INTS(in_place ? "allreduce in place" : "allreduce", k, r, n, vsum(0, g_size, k, i));
  }
  free_req(&req, "allreduce free");
  free(s);
  free(r);
}

static void test_reduce_bcast(int root) {
  const int n = g_size + 2;
  int* s = ints(n);
  int* r = ints(n);
  int* b = ints(n);
  MPI_Request red, bc;
  check_rc(MPIX_Reduce_init(s, r, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, MPI_INFO_NULL, &red),
           "reduce_init");
  check_rc(MPIX_Bcast_init(b, n, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &bc), "bcast_init");
  for (int k = 0; k < kStarts; ++k) {
    for (int i = 0; i < n; ++i) {
      s[i] = v(g_rank, k, i);
      b[i] = g_rank == root ? v(root, k, i) : -1;
    }
    check_rc(run(&red), "reduce start");
    if (g_rank == root) EXPECT_INTS("reduce at the root", k, r, n, vsum(0, g_size, k, i));
    check_rc(run(&bc), "bcast start");
    EXPECT_INTS("bcast", k, b, n, v(root, k, i));
  }
  free_req(&red, "reduce free");
  free_req(&bc, "bcast free");
  free(s);
  free(r);
  free(b);
}

static void test_scans(void) {
  const int n = 3;
  int s[3] = {0}, r[3] = {0}, x[3] = {0};
  MPI_Request scan, exscan;
  check_rc(MPIX_Scan_init(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &scan),
           "scan_init");
  check_rc(MPIX_Exscan_init(s, x, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &exscan),
           "exscan_init");
  for (int k = 0; k < kStarts; ++k) {
    for (int i = 0; i < n; ++i) s[i] = v(g_rank, k, i);
    check_rc(run(&scan), "scan start");
    EXPECT_INTS("scan", k, r, n, vsum(0, g_rank + 1, k, i));
    check_rc(run(&exscan), "exscan start");
    if (g_rank > 0) EXPECT_INTS("exscan", k, x, n, vsum(0, g_rank, k, i));
  }
  free_req(&scan, "scan free");
  free_req(&exscan, "exscan free");
}

static void test_allgather_alltoall(void) {
  const int n = 2, p = g_size;
  int* s = ints(n * p);
  int* g = ints(n * p);
  int* a = ints(n * p);
  MPI_Request ag, aa;
  check_rc(MPIX_Allgather_init(s, n, MPI_INT, g, n, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &ag),
           "allgather_init");
  check_rc(MPIX_Alltoall_init(s, n, MPI_INT, a, n, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &aa),
           "alltoall_init");
  for (int k = 0; k < kStarts; ++k) {
    /* Alltoall's block j goes to rank j; allgather sends block 0. */
    for (int i = 0; i < n * p; ++i) s[i] = v(g_rank, k, i);
    check_rc(run(&ag), "allgather start");
    EXPECT_INTS("allgather", k, g, n * p, v(i / n, k, i % n));
    check_rc(run(&aa), "alltoall start");
    EXPECT_INTS("alltoall", k, a, n * p, v(i / n, k, g_rank * n + i % n));
  }
  free_req(&ag, "allgather free");
  free_req(&aa, "alltoall free");
  free(s);
  free(g);
  free(a);
}

/* Rank j's count in the v collectives, and a pair's in alltoallv (the same both ways). */
static int vcount(int j) { return j % 3 + 1; }
static int pair_count(int a, int b) { return (a + b) % 3 + 1; }

static void test_v_collectives(void) {
  const int p = g_size;
  int *counts = ints(p), *displs = ints(p);
  int *sc = ints(p), *sd = ints(p);
  int *sdb = ints(p), *rdb = ints(p);
  int total = 0, stotal = 0;
  for (int j = 0; j < p; ++j) {
    counts[j] = vcount(j);
    displs[j] = total;
    total += counts[j];
    sc[j] = pair_count(g_rank, j);
    sd[j] = stotal;
    sdb[j] = stotal * (int)sizeof(int);
    stotal += sc[j];
  }
  MPI_Datatype types[64];
  for (int j = 0; j < p && j < 64; ++j) types[j] = MPI_INT;
  for (int j = 0; j < p; ++j) rdb[j] = sdb[j];
  int* s = ints(stotal);
  int sg[3] = {0};
  int* g = ints(total);
  int* a = ints(stotal);
  int* w = ints(stotal);
  MPI_Request agv, aav, aaw;
  check_rc(MPIX_Allgatherv_init(sg, vcount(g_rank), MPI_INT, g, counts, displs, MPI_INT,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &agv),
           "allgatherv_init");
  check_rc(MPIX_Alltoallv_init(s, sc, sd, MPI_INT, a, sc, sd, MPI_INT, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &aav),
           "alltoallv_init");
  check_rc(MPIX_Alltoallw_init(s, sc, sdb, types, w, sc, rdb, types, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &aaw),
           "alltoallw_init");
  for (int k = 0; k < kStarts; ++k) {
    for (int e = 0; e < vcount(g_rank); ++e) sg[e] = v(g_rank, k, e);
    check_rc(run(&agv), "allgatherv start");
    int bad = -1;
    for (int j = 0; j < p && bad < 0; ++j) {
      for (int e = 0; e < counts[j]; ++e) {
        if (g[displs[j] + e] != v(j, k, e)) bad = j;
      }
    }
    check(bad < 0, "allgatherv", "start %d: rank %d's block is wrong", k, bad);
    /* Element e of the block for rank j: v(me, k, 10 * j + e). */
    for (int j = 0; j < p; ++j) {
      for (int e = 0; e < sc[j]; ++e) s[sd[j] + e] = v(g_rank, k, 10 * j + e);
    }
    check_rc(run(&aav), "alltoallv start");
    check_rc(run(&aaw), "alltoallw start");
    int badv = -1, badw = -1;
    for (int j = 0; j < p; ++j) {
      for (int e = 0; e < sc[j]; ++e) {
        if (a[sd[j] + e] != v(j, k, 10 * g_rank + e)) badv = j;
        if (w[sd[j] + e] != v(j, k, 10 * g_rank + e)) badw = j;
      }
    }
    check(badv < 0, "alltoallv", "start %d: the block from rank %d is wrong", k, badv);
    check(badw < 0, "alltoallw", "start %d: the block from rank %d is wrong", k, badw);
  }
  free_req(&agv, "allgatherv free");
  free_req(&aav, "alltoallv free");
  free_req(&aaw, "alltoallw free");
  free(counts);
  free(displs);
  free(sc);
  free(sd);
  free(sdb);
  free(rdb);
  free(s);
  free(g);
  free(a);
  free(w);
}

static void test_rooted(int root) {
  const int n = 2, p = g_size;
  int *counts = ints(p), *displs = ints(p);
  int total = 0;
  for (int j = 0; j < p; ++j) {
    counts[j] = vcount(j);
    displs[j] = total;
    total += counts[j];
  }
  int* s = ints(n * p + total);
  int* all = ints(n * p + total);
  int* mine = ints(n + 3);
  int* minev = ints(n + 3);
  MPI_Request ga, sc, gv, sv;
  check_rc(
      MPIX_Gather_init(s, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &ga),
      "gather_init");
  check_rc(
      MPIX_Scatter_init(s, n, MPI_INT, mine, n, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &sc),
      "scatter_init");
  check_rc(MPIX_Gatherv_init(s, vcount(g_rank), MPI_INT, all, counts, displs, MPI_INT, root,
                             MPI_COMM_WORLD, MPI_INFO_NULL, &gv),
           "gatherv_init");
  check_rc(MPIX_Scatterv_init(s, counts, displs, MPI_INT, minev, vcount(g_rank), MPI_INT, root,
                              MPI_COMM_WORLD, MPI_INFO_NULL, &sv),
           "scatterv_init");
  for (int k = 0; k < kStarts; ++k) {
    for (int i = 0; i < n; ++i) s[i] = v(g_rank, k, i);
    check_rc(run(&ga), "gather start");
    if (g_rank == root) EXPECT_INTS("gather at the root", k, all, n * p, v(i / n, k, i % n));
    for (int i = 0; i < n * p; ++i) s[i] = v(root, k, i);
    check_rc(run(&sc), "scatter start");
    EXPECT_INTS("scatter", k, mine, n, v(root, k, g_rank * n + i));
    for (int i = 0; i < vcount(g_rank); ++i) s[i] = v(g_rank, k, 50 + i);
    check_rc(run(&gv), "gatherv start");
    if (g_rank == root) {
      int bad = -1;
      for (int j = 0; j < p; ++j) {
        for (int e = 0; e < counts[j]; ++e) {
          if (all[displs[j] + e] != v(j, k, 50 + e)) bad = j;
        }
      }
      check(bad < 0, "gatherv at the root", "start %d: rank %d's block is wrong", k, bad);
    }
    for (int i = 0; i < total; ++i) s[i] = v(root, k, 70 + i);
    check_rc(run(&sv), "scatterv start");
    EXPECT_INTS("scatterv", k, minev, vcount(g_rank), v(root, k, 70 + displs[g_rank] + i));
  }
  free_req(&ga, "gather free");
  free_req(&sc, "scatter free");
  free_req(&gv, "gatherv free");
  free_req(&sv, "scatterv free");
  free(counts);
  free(displs);
  free(s);
  free(all);
  free(mine);
  free(minev);
}

static void test_reduce_scatter(void) {
  const int p = g_size, block = 2;
  int* counts = ints(p);
  int total = 0, before = 0;
  for (int j = 0; j < p; ++j) {
    counts[j] = vcount(j);
    if (j < g_rank) before += counts[j];
    total += counts[j];
  }
  int* s = ints(total + block * p);
  int* r = ints(total + block);
  MPI_Request rs, rsb;
  check_rc(
      MPIX_Reduce_scatter_init(s, r, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rs),
      "reduce_scatter_init");
  check_rc(MPIX_Reduce_scatter_block_init(s, r, block, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                          MPI_INFO_NULL, &rsb),
           "reduce_scatter_block_init");
  for (int k = 0; k < kStarts; ++k) {
    for (int i = 0; i < total; ++i) s[i] = v(g_rank, k, i);
    check_rc(run(&rs), "reduce_scatter start");
    EXPECT_INTS("reduce_scatter", k, r, counts[g_rank], vsum(0, p, k, before + i));
    for (int i = 0; i < block * p; ++i) s[i] = v(g_rank, k, i);
    check_rc(run(&rsb), "reduce_scatter_block start");
    EXPECT_INTS("reduce_scatter_block", k, r, block, vsum(0, p, k, g_rank * block + i));
  }
  free_req(&rs, "reduce_scatter free");
  free_req(&rsb, "reduce_scatter_block free");
  free(counts);
  free(s);
  free(r);
}

/* The neighbourhood collectives on a periodic ring: neighbours left (block 0) and right (1). */
static void test_neighbors(void) {
  int dims[1] = {g_size}, periods[1] = {1};
  MPI_Comm ring;
  check_rc(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring), "cart_create");
  int left, right;
  MPI_Cart_shift(ring, 0, 1, &left, &right);
  int s[4] = {0}, ag[4] = {0}, aa[4] = {0}, av[4] = {0}, aw[4] = {0}, agv[4] = {0};
  int ones[2] = {1, 1}, twos[2] = {2, 2}, displs[2] = {0, 1}, displs2[2] = {0, 2};
  MPI_Aint bytes[2] = {0, sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  MPI_Request r[5];
  check_rc(MPIX_Neighbor_allgather_init(s, 2, MPI_INT, ag, 2, MPI_INT, ring, MPI_INFO_NULL, &r[0]),
           "neighbor_allgather_init");
  check_rc(MPIX_Neighbor_allgatherv_init(s, 2, MPI_INT, agv, twos, displs2, MPI_INT, ring,
                                         MPI_INFO_NULL, &r[1]),
           "neighbor_allgatherv_init");
  check_rc(MPIX_Neighbor_alltoall_init(s, 1, MPI_INT, aa, 1, MPI_INT, ring, MPI_INFO_NULL, &r[2]),
           "neighbor_alltoall_init");
  check_rc(MPIX_Neighbor_alltoallv_init(s, ones, displs, MPI_INT, av, ones, displs, MPI_INT, ring,
                                        MPI_INFO_NULL, &r[3]),
           "neighbor_alltoallv_init");
  check_rc(MPIX_Neighbor_alltoallw_init(s, ones, bytes, types, aw, ones, bytes, types, ring,
                                        MPI_INFO_NULL, &r[4]),
           "neighbor_alltoallw_init");
  for (int k = 0; k < kStarts; ++k) {
    for (int i = 0; i < 2; ++i) s[i] = v(g_rank, k, i);
    /* All five at once: none shares a buffer it writes. */
    check_rc(MPI_Startall(5, r), "neighbor startall");
    check_rc(MPI_Waitall(5, r, MPI_STATUSES_IGNORE), "neighbor waitall");
    const int from[2] = {left, right};
    /* Alltoall: my block 0 came from my left's block 1 (sent right), block 1 from my right's 0. */
    EXPECT_INTS("neighbor_allgather", k, ag, 4, v(from[i / 2], k, i % 2));
    EXPECT_INTS("neighbor_allgatherv", k, agv, 4, v(from[i / 2], k, i % 2));
    /* With one or two ranks the left and right neighbours are one rank, and which of its two
     * blocks lands where was settled only by MPI 4.0 (Open MPI 4.1 differs): checked from 3. */
    if (left != right) {
      EXPECT_INTS("neighbor_alltoall", k, aa, 2, v(from[i], k, 1 - i));
      EXPECT_INTS("neighbor_alltoallv", k, av, 2, v(from[i], k, 1 - i));
      EXPECT_INTS("neighbor_alltoallw", k, aw, 2, v(from[i], k, 1 - i));
    }
  }
  for (int i = 0; i < 5; ++i) free_req(&r[i], "neighbor free");
  MPI_Comm_free(&ring);
}

/* MPI_Startall over persistent collectives and a barrier; inactive requests in tests and waits. */
static void test_startall_inactive(void) {
  int s = 0, r = 0, b = 0;
  MPI_Request req[3];
  check_rc(MPIX_Allreduce_init(&s, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]),
           "startall allreduce_init");
  check_rc(MPIX_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]), "barrier_init");
  check_rc(MPIX_Bcast_init(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req[2]),
           "startall bcast_init");
  int flag = 0;
  MPI_Status st;
  check(MPI_Test(&req[0], &flag, &st) == MPI_SUCCESS && flag, "test of an inactive request",
        "flag %d", flag);
  check_rc(MPI_Wait(&req[1], MPI_STATUS_IGNORE), "wait on an inactive request");
  for (int k = 0; k < kStarts; ++k) {
    s = v(g_rank, k, 0);
    b = g_rank == 0 ? v(0, k, 1) : -1;
    check_rc(MPI_Startall(3, req), "startall");
    check_rc(MPI_Waitall(3, req, MPI_STATUSES_IGNORE), "waitall");
    check(r == vsum(0, g_size, k, 0) && b == v(0, k, 1), "startall results",
          "start %d: allreduce %d bcast %d", k, r, b);
  }
  for (int i = 0; i < 3; ++i) free_req(&req[i], "startall free");
}

/* A user op: a sum, in rank order when told it does not commute. */
static void user_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((const int*)in)[i];
}

/* A user op freed right after the init, commuting or not: the request keeps it. */
static void test_freed_op(int commute) {
  MPI_Op op;
  MPI_Op_create(user_sum, commute, &op);
  const int n = 5;
  int s[5] = {0}, r[5] = {0};
  MPI_Request req;
  check_rc(MPIX_Allreduce_init(s, r, n, MPI_INT, op, MPI_COMM_WORLD, MPI_INFO_NULL, &req),
           "allreduce_init of a user op");
  check(MPI_Op_free(&op) == MPI_SUCCESS && op == MPI_OP_NULL, "op_free after the init", "failed");
  for (int k = 0; k < kStarts; ++k) {
    for (int i = 0; i < n; ++i) s[i] = v(g_rank, k, i);
    check_rc(run(&req), "start with the freed op");
    EXPECT_INTS(commute ? "allreduce of the freed op" : "allreduce of the freed noncommutative op",
                k, r, n, vsum(0, g_size, k, i));
  }
  free_req(&req, "freed op free");
}

/* A derived datatype freed right after the init: the request keeps it. */
static void test_freed_type(void) {
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  int s[2] = {0};
  int* g = ints(2 * g_size);
  MPI_Request req;
  check_rc(MPIX_Allgather_init(s, 1, pair, g, 1, pair, MPI_COMM_WORLD, MPI_INFO_NULL, &req),
           "allgather_init of a derived type");
  check_rc(MPI_Type_free(&pair), "type_free after the init");
  for (int k = 0; k < kStarts; ++k) {
    s[0] = v(g_rank, k, 0);
    s[1] = v(g_rank, k, 1);
    check_rc(run(&req), "start with the freed type");
    EXPECT_INTS("allgather of the freed type", k, g, 2 * g_size, v(i / 2, k, i % 2));
  }
  free_req(&req, "freed type free");
  free(g);
}

/* A communicator freed while persistent requests on it remain: they keep it until they go, and
 * still run on it (a collective, and a send and receive to oneself). */
static void test_freed_comm(void) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int s = 0, r = 0, out = 0, in = -1;
  MPI_Request req[3];
  check_rc(MPIX_Allreduce_init(&s, &r, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req[0]),
           "allreduce_init on a duplicate");
  check_rc(MPI_Send_init(&out, 1, MPI_INT, g_rank, 5, comm, &req[1]), "send_init on it");
  check_rc(MPI_Recv_init(&in, 1, MPI_INT, g_rank, 5, comm, &req[2]), "recv_init on it");
  check(MPI_Comm_free(&comm) == MPI_SUCCESS && comm == MPI_COMM_NULL,
        "comm_free with persistent requests on it", "failed");
  for (int k = 0; k < kStarts; ++k) {
    s = v(g_rank, k, 0);
    out = v(g_rank, k, 1);
    check_rc(MPI_Startall(3, req), "start on the freed communicator");
    check_rc(MPI_Waitall(3, req, MPI_STATUSES_IGNORE), "waitall on the freed communicator");
    check(r == vsum(0, g_size, k, 0) && in == v(g_rank, k, 1), "runs on the freed communicator",
          "start %d: allreduce %d, message %d", k, r, in);
  }
  for (int i = 0; i < 3; ++i) free_req(&req[i], "free on the freed communicator");
}

static int class_of(int rc) {
  int cls = rc;
  MPI_Error_class(rc, &cls);
  return cls;
}

/* Errors, on a duplicate of MPI_COMM_WORLD that returns them. */
static void test_errors(void) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int x = 1, y = 0;
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = MPIX_Allreduce_init(&x, &y, -1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req);
  check(class_of(rc) == MPI_ERR_COUNT && req == MPI_REQUEST_NULL, "init with count -1",
        "rc %d (class %d), request %s", rc, class_of(rc), req == MPI_REQUEST_NULL ? "null" : "set");
  rc = MPIX_Bcast_init(&x, 1, MPI_INT, g_size, comm, MPI_INFO_NULL, &req);
  check(class_of(rc) == MPI_ERR_ROOT, "bcast_init with a root out of range", "rc %d (class %d)", rc,
        class_of(rc));
  /* Open MPI checks the op against the type first: MPI_ERR_OP. */
  rc = MPIX_Allreduce_init(&x, &y, 1, MPI_DATATYPE_NULL, MPI_SUM, comm, MPI_INFO_NULL, &req);
  check(class_of(rc) == MPI_ERR_TYPE || (!g_torusmpi && class_of(rc) == MPI_ERR_OP),
        "init with MPI_DATATYPE_NULL", "rc %d (class %d)", rc, class_of(rc));
  check_rc(MPIX_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req),
           "allreduce_init on the duplicate");
  check_rc(MPI_Start(&req), "start");
  if (g_torusmpi) {
    /* MPI leaves these erroneous; torusmpi says so and goes on. */
    rc = MPI_Start(&req);
    check(class_of(rc) == MPI_ERR_REQUEST, "start of an active request", "rc %d", rc);
    rc = MPI_Request_free(&req);
    check(class_of(rc) == MPI_ERR_REQUEST && req != MPI_REQUEST_NULL,
          "request_free of an active request", "rc %d", rc);
  } else {
    printf("skip %d active request errors: left to the implementation\n", g_rank);
  }
  check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
  check(y == g_size, "allreduce after the errors", "got %d", y);
  free_req(&req, "free after the errors");
  MPI_Comm_free(&comm);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  g_torusmpi = strstr(version, "torusmpi") != NULL;

  test_allreduce(0);
  test_allreduce(1);
  test_reduce_bcast(0);
  test_reduce_bcast(g_size - 1);
  test_scans();
  test_allgather_alltoall();
  test_v_collectives();
  test_rooted(0);
  test_rooted(g_size - 1);
  test_reduce_scatter();
  test_neighbors();
  test_startall_inactive();
  test_freed_type();
  test_freed_comm();
  if (g_torusmpi) {
    test_freed_op(1);
    test_freed_op(0);
  } else {
    /* Open MPI 4.1 does not keep it: its runs crash from 3 ranks. */
    printf("skip %d a user op freed after the init: not kept by this library\n", g_rank);
  }
  test_errors();

  MPI_Finalize();
  return check_done(g_size);
}
