/* Every collective on an intercommunicator, blocking and nonblocking, checked exactly.
 *
 * MPI_COMM_WORLD splits into two groups of unequal sizes (argv[1]: the first group's size;
 * default: half, rounded down, and 1 of 4) joined by MPI_Intercomm_create. Then, with integer data
 * whose every element names the rank it came from (and, for alltoall, the rank it goes to):
 * barrier; bcast, reduce, gather, scatter, gatherv and scatterv from every root of both groups
 * (MPI_ROOT at the root, MPI_PROC_NULL at its group's other ranks, the root's rank in the other
 * group); allreduce, allgather(v), alltoall(v,w), reduce_scatter(_block); counts 0, 1, 7 and 1031;
 * v and w forms with different counts per rank and reversed displacements; derived datatypes (a
 * strided vector on bcast, allgather and gather; pairs of ints on allreduce and reduce, torusmpi
 * only); blocks of different sizes in the two directions of allgather and alltoall; and bad
 * arguments under MPI_ERRORS_RETURN: MPI_IN_PLACE, a root out of range, a scan. Each check is one
 * "ok"/"FAIL" line (check.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int g_world, g_first; /* world size; size of the first group (world ranks 0..g_first-1) */
static int g_group, g_lrank, g_lsize, g_rsize;
static MPI_Comm g_inter;
static int g_nb;       /* 1: the MPI_I forms, completed by MPI_Wait */
static int g_torusmpi; /* the library is torusmpi (not the reference) */

/* World rank of rank r of the remote (or own) group. */
static int remote_world(int r) { return g_group == 0 ? g_first + r : r; }
static int own_world(int r) { return g_group == 0 ? r : g_first + r; }

static int my_world(void) { return own_world(g_lrank); }
static int val(int w, int i) { return w * 10000 + i; }
/* The sum over the remote group of val(w, i). */
static int sum_remote(int i) {
  int s = 0;
  for (int r = 0; r < g_rsize; ++r) s += val(remote_world(r), i);
  return s;
}
static int pair_val(int from, int to, int i) { return (from * 16 + to) * 2000 + i; }

/* A per-rank count for the v forms: differs between ranks, 0 for some. */
static int vcount(int w, int count) { return count == 0 ? 0 : (count + w * 3) % (count + 2); }

static int finish(int rc, MPI_Request* req) {
  if (!g_nb || rc != MPI_SUCCESS) return rc;
  return MPI_Wait(req, MPI_STATUS_IGNORE);
}
#define CALL(blocking, nonblocking) (g_nb ? finish(nonblocking, &req) : (blocking))

static char g_what[200];
static const char* what(const char* fmt, int a, int b) {
  snprintf(g_what, sizeof g_what, "%s%s", g_nb ? "I" : "", fmt);
  char tmp[200];
  snprintf(tmp, sizeof tmp, g_what, a, b);
  snprintf(g_what, sizeof g_what, "%s", tmp);
  return g_what;
}

/* Reports the first mismatch of got[0..n) against want(i). */
#define EXPECT_ARRAY(label, got, n, want_expr)                                                     \
  do {                                                                                             \
    int bad_ = -1, w_ = 0;                                                                         \
    for (int i = 0; i < (n); ++i) {                                                                \
      w_ = (want_expr);                                                                            \
      if ((got)[i] != w_) {                                                                        \
        bad_ = i;                                                                                  \
        break;                                                                                     \
      }                                                                                            \
    }                                                                                              \
    check(bad_ < 0, label, "element %d is %d, expected %d", bad_, bad_ < 0 ? 0 : (got)[bad_], w_); \
  } while (0)

static const int kCounts[] = {0, 1, 7, 1031};
#define NCOUNTS 4

static void test_barrier(void) {
  MPI_Request req;
  check_rc(CALL(MPI_Barrier(g_inter), MPI_Ibarrier(g_inter, &req)), what("barrier", 0, 0));
}

/* The root argument this rank passes when root rank `r` of group `rg` is the root. */
static int root_arg(int rg, int r) {
  if (rg != g_group) return r;
  return r == g_lrank ? MPI_ROOT : MPI_PROC_NULL;
}

static void test_rooted(int count) {
  MPI_Request req;
  const int big = count * (g_rsize > g_lsize ? g_rsize : g_lsize) + 1;
  int* buf = malloc(sizeof(int) * big);
  int* all = malloc(sizeof(int) * big);
  for (int rg = 0; rg < 2; ++rg) {
    const int rsize = rg == 0 ? g_first : g_world - g_first;
    for (int r = 0; r < rsize; ++r) {
      const int root = root_arg(rg, r);
      const int rw = rg == 0 ? r : g_first + r; /* the root's world rank */
      /* bcast */
      for (int i = 0; i < count; ++i) buf[i] = root == MPI_ROOT ? val(rw, i) : -1;
      int rc = CALL(MPI_Bcast(buf, count, MPI_INT, root, g_inter),
                    MPI_Ibcast(buf, count, MPI_INT, root, g_inter, &req));
      check_rc(rc, what("bcast rc root %d count %d", rw, count));
      if (root >= 0)
        EXPECT_ARRAY(what("bcast root %d count %d", rw, count), buf, count, val(rw, i));
      if (root == MPI_PROC_NULL)
        EXPECT_ARRAY(what("bcast leaves PROC_NULL root %d count %d", rw, count), buf, count, -1);
      /* reduce: the root gets the sum over the other group */
      for (int i = 0; i < count; ++i) {
        buf[i] = val(my_world(), i);
        all[i] = -1;
      }
      rc = CALL(MPI_Reduce(buf, all, count, MPI_INT, MPI_SUM, root, g_inter),
                MPI_Ireduce(buf, all, count, MPI_INT, MPI_SUM, root, g_inter, &req));
      check_rc(rc, what("reduce rc root %d count %d", rw, count));
      if (root == MPI_ROOT) {
        EXPECT_ARRAY(what("reduce root %d count %d", rw, count), all, count, sum_remote(i));
      }
      /* gather: block j at the root is remote rank j's */
      const int nblocks = root == MPI_ROOT ? g_rsize : 1;
      for (int i = 0; i < count * nblocks; ++i) all[i] = -1;
      for (int i = 0; i < count; ++i) buf[i] = val(my_world(), i);
      rc = CALL(MPI_Gather(buf, count, MPI_INT, all, count, MPI_INT, root, g_inter),
                MPI_Igather(buf, count, MPI_INT, all, count, MPI_INT, root, g_inter, &req));
      check_rc(rc, what("gather rc root %d count %d", rw, count));
      if (root == MPI_ROOT) {
        EXPECT_ARRAY(what("gather root %d count %d", rw, count), all, count * g_rsize,
                     val(remote_world(i / count), i % count));
      }
      /* scatter: remote rank j gets block j */
      for (int i = 0; i < count * nblocks; ++i)
        all[i] = root == MPI_ROOT ? pair_val(rw, remote_world(i / count), i % count) : -1;
      for (int i = 0; i < count; ++i) buf[i] = -1;
      rc = CALL(MPI_Scatter(all, count, MPI_INT, buf, count, MPI_INT, root, g_inter),
                MPI_Iscatter(all, count, MPI_INT, buf, count, MPI_INT, root, g_inter, &req));
      check_rc(rc, what("scatter rc root %d count %d", rw, count));
      if (root >= 0) {
        EXPECT_ARRAY(what("scatter root %d count %d", rw, count), buf, count,
                     pair_val(rw, my_world(), i));
      }
    }
  }
  free(buf);
  free(all);
}

static void test_all(int count) {
  MPI_Request req;
  const int nmax = count * (g_rsize > g_lsize ? g_rsize : g_lsize) + 1;
  int* sbuf = malloc(sizeof(int) * nmax);
  int* rbuf = malloc(sizeof(int) * nmax);
  const int me = my_world();
  /* allreduce: the sum over the other group */
  for (int i = 0; i < count; ++i) {
    sbuf[i] = val(me, i);
    rbuf[i] = -1;
  }
  int rc = CALL(MPI_Allreduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, g_inter),
                MPI_Iallreduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, g_inter, &req));
  check_rc(rc, what("allreduce rc count %d", count, 0));
  EXPECT_ARRAY(what("allreduce count %d", count, 0), rbuf, count, sum_remote(i));
  /* allgather: the other group's blocks */
  for (int i = 0; i < count * g_rsize; ++i) rbuf[i] = -1;
  rc = CALL(MPI_Allgather(sbuf, count, MPI_INT, rbuf, count, MPI_INT, g_inter),
            MPI_Iallgather(sbuf, count, MPI_INT, rbuf, count, MPI_INT, g_inter, &req));
  check_rc(rc, what("allgather rc count %d", count, 0));
  EXPECT_ARRAY(what("allgather count %d", count, 0), rbuf, count * g_rsize,
               val(remote_world(i / count), i % count));
  /* alltoall: block j to remote rank j */
  for (int i = 0; i < count * g_rsize; ++i) {
    sbuf[i] = pair_val(me, remote_world(i / count), i % count);
    rbuf[i] = -1;
  }
  rc = CALL(MPI_Alltoall(sbuf, count, MPI_INT, rbuf, count, MPI_INT, g_inter),
            MPI_Ialltoall(sbuf, count, MPI_INT, rbuf, count, MPI_INT, g_inter, &req));
  check_rc(rc, what("alltoall rc count %d", count, 0));
  EXPECT_ARRAY(what("alltoall count %d", count, 0), rbuf, count * g_rsize,
               pair_val(remote_world(i / count), me, i % count));
  /* reduce_scatter_block: each rank's vector is own size * recvcount, recvcount = count * the
   * remote size, so both groups' vectors are count * (product of the sizes) long. */
  {
    const int rcount = count * g_rsize, total = rcount * g_lsize;
    int* v = malloc(sizeof(int) * (total + 1));
    int* out = malloc(sizeof(int) * (rcount + 1));
    for (int i = 0; i < total; ++i) v[i] = val(me, i);
    for (int i = 0; i < rcount; ++i) out[i] = -1;
    rc = CALL(MPI_Reduce_scatter_block(v, out, rcount, MPI_INT, MPI_SUM, g_inter),
              MPI_Ireduce_scatter_block(v, out, rcount, MPI_INT, MPI_SUM, g_inter, &req));
    check_rc(rc, what("reduce_scatter_block rc count %d", count, 0));
    EXPECT_ARRAY(what("reduce_scatter_block count %d", count, 0), out, rcount,
                 sum_remote(g_lrank * rcount + i));
    free(v);
    free(out);
  }
  /* reduce_scatter: the own group's counts add up to 2 * count (both groups alike); rank 0
   * keeps nothing when the group has more than one rank, the last the remainder. */
  {
    const int total = 2 * count;
    int* counts = malloc(sizeof(int) * g_lsize);
    int left = total, off = 0;
    for (int i = 0; i < g_lsize; ++i) counts[i] = 0;
    for (int i = g_lsize > 1 ? 1 : 0; i < g_lsize - 1; ++i) {
      counts[i] = total / g_lsize;
      left -= counts[i];
    }
    counts[g_lsize - 1] = left;
    for (int i = 0; i < g_lrank; ++i) off += counts[i];
    int* v = malloc(sizeof(int) * (total + 1));
    int* out = malloc(sizeof(int) * (total + 1));
    for (int i = 0; i < total; ++i) v[i] = val(me, i);
    for (int i = 0; i < total; ++i) out[i] = -1;
    rc = CALL(MPI_Reduce_scatter(v, out, counts, MPI_INT, MPI_SUM, g_inter),
              MPI_Ireduce_scatter(v, out, counts, MPI_INT, MPI_SUM, g_inter, &req));
    check_rc(rc, what("reduce_scatter rc count %d", count, 0));
    EXPECT_ARRAY(what("reduce_scatter count %d", count, 0), out, counts[g_lrank],
                 sum_remote(off + i));
    free(counts);
    free(v);
    free(out);
  }
  free(sbuf);
  free(rbuf);
}

/* The v and w forms: remote rank j's block has vcount(its world rank) elements, laid out in
 * reverse order with a gap of 2 after each. */
static void test_vector(int count) {
  MPI_Request req;
  const int me = my_world();
  int* rc_ = malloc(sizeof(int) * g_rsize);
  int* rd = malloc(sizeof(int) * g_rsize);
  int* sc = malloc(sizeof(int) * g_rsize);
  int* sd = malloc(sizeof(int) * g_rsize);
  int span = 0;
  for (int k = g_rsize - 1; k >= 0; --k) {
    rc_[k] = vcount(remote_world(k), count);
    rd[k] = span;
    span += rc_[k] + 2;
  }
  int* rbuf = malloc(sizeof(int) * (span + 1));
  int* sbuf = malloc(sizeof(int) * (span + count + 8));
  const int mine = vcount(me, count);
  /* allgatherv */
  for (int i = 0; i < mine; ++i) sbuf[i] = val(me, i);
  for (int i = 0; i < span; ++i) rbuf[i] = -1;
  int rc = CALL(MPI_Allgatherv(sbuf, mine, MPI_INT, rbuf, rc_, rd, MPI_INT, g_inter),
                MPI_Iallgatherv(sbuf, mine, MPI_INT, rbuf, rc_, rd, MPI_INT, g_inter, &req));
  check_rc(rc, what("allgatherv rc count %d", count, 0));
  {
    int bad = 0;
    for (int j = 0; j < g_rsize && !bad; ++j) {
      for (int i = 0; i < rc_[j]; ++i) bad |= rbuf[rd[j] + i] != val(remote_world(j), i);
      bad |= rbuf[rd[j] + rc_[j]] != -1; /* the gap stays */
    }
    check(!bad, what("allgatherv count %d", count, 0), "a block or a gap is wrong");
  }
  /* alltoallv and alltoallw: to remote j, pair count (me + j) % 4 + count / 2; displacements in
   * order with a gap of 1 (send) and reversed with a gap of 2 (recv). */
  {
    int ss = 0, rs = 0;
    for (int j = 0; j < g_rsize; ++j) {
      sc[j] = count == 0 ? 0 : (me + remote_world(j)) % 4 + count / 2;
      sd[j] = ss;
      ss += sc[j] + 1;
    }
    int* rcnt = malloc(sizeof(int) * g_rsize);
    int* rdsp = malloc(sizeof(int) * g_rsize);
    for (int k = g_rsize - 1; k >= 0; --k) {
      rcnt[k] = count == 0 ? 0 : (me + remote_world(k)) % 4 + count / 2;
      rdsp[k] = rs;
      rs += rcnt[k] + 2;
    }
    int* s2 = malloc(sizeof(int) * (ss + 1));
    int* r2 = malloc(sizeof(int) * (rs + 1));
    for (int j = 0; j < g_rsize; ++j)
      for (int i = 0; i < sc[j]; ++i) s2[sd[j] + i] = pair_val(me, remote_world(j), i);
    for (int form = 0; form < 2; ++form) {
      for (int i = 0; i < rs; ++i) r2[i] = -1;
      if (form == 0) {
        rc = CALL(MPI_Alltoallv(s2, sc, sd, MPI_INT, r2, rcnt, rdsp, MPI_INT, g_inter),
                  MPI_Ialltoallv(s2, sc, sd, MPI_INT, r2, rcnt, rdsp, MPI_INT, g_inter, &req));
      } else {
        MPI_Datatype* st = malloc(sizeof(MPI_Datatype) * g_rsize);
        MPI_Datatype* rt = malloc(sizeof(MPI_Datatype) * g_rsize);
        int* sdb = malloc(sizeof(int) * g_rsize);
        int* rdb = malloc(sizeof(int) * g_rsize);
        for (int j = 0; j < g_rsize; ++j) {
          st[j] = rt[j] = MPI_INT;
          sdb[j] = sd[j] * (int)sizeof(int);
          rdb[j] = rdsp[j] * (int)sizeof(int);
        }
        rc = CALL(MPI_Alltoallw(s2, sc, sdb, st, r2, rcnt, rdb, rt, g_inter),
                  MPI_Ialltoallw(s2, sc, sdb, st, r2, rcnt, rdb, rt, g_inter, &req));
        free(st);
        free(rt);
        free(sdb);
        free(rdb);
      }
      check_rc(rc, what(form == 0 ? "alltoallv rc count %d" : "alltoallw rc count %d", count, 0));
      int bad = 0;
      for (int j = 0; j < g_rsize; ++j) {
        for (int i = 0; i < rcnt[j]; ++i)
          bad |= r2[rdsp[j] + i] != pair_val(remote_world(j), me, i);
        bad |= r2[rdsp[j] + rcnt[j]] != -1;
      }
      check(!bad, what(form == 0 ? "alltoallv count %d" : "alltoallw count %d", count, 0),
            "a block or a gap is wrong");
    }
    free(rcnt);
    free(rdsp);
    free(s2);
    free(r2);
  }
  /* gatherv and scatterv from every root of both groups */
  for (int rg = 0; rg < 2; ++rg) {
    const int rsize = rg == 0 ? g_first : g_world - g_first;
    for (int r = 0; r < rsize; ++r) {
      const int root = root_arg(rg, r);
      const int rw = rg == 0 ? r : g_first + r;
      for (int i = 0; i < mine; ++i) sbuf[i] = val(me, i);
      for (int i = 0; i < span; ++i) rbuf[i] = -1;
      rc = CALL(MPI_Gatherv(sbuf, mine, MPI_INT, rbuf, rc_, rd, MPI_INT, root, g_inter),
                MPI_Igatherv(sbuf, mine, MPI_INT, rbuf, rc_, rd, MPI_INT, root, g_inter, &req));
      check_rc(rc, what("gatherv rc root %d count %d", rw, count));
      if (root == MPI_ROOT) {
        int bad = 0;
        for (int j = 0; j < g_rsize; ++j) {
          for (int i = 0; i < rc_[j]; ++i) bad |= rbuf[rd[j] + i] != val(remote_world(j), i);
          bad |= rbuf[rd[j] + rc_[j]] != -1;
        }
        check(!bad, what("gatherv root %d count %d", rw, count), "a block or a gap is wrong");
      }
      /* scatterv: the root's layout is the same as gatherv's */
      for (int i = 0; i < span; ++i) rbuf[i] = -1;
      if (root == MPI_ROOT) {
        for (int j = 0; j < g_rsize; ++j)
          for (int i = 0; i < rc_[j]; ++i) rbuf[rd[j] + i] = pair_val(rw, remote_world(j), i);
      }
      for (int i = 0; i < mine + 1; ++i) sbuf[i] = -1;
      rc = CALL(MPI_Scatterv(rbuf, rc_, rd, MPI_INT, sbuf, mine, MPI_INT, root, g_inter),
                MPI_Iscatterv(rbuf, rc_, rd, MPI_INT, sbuf, mine, MPI_INT, root, g_inter, &req));
      check_rc(rc, what("scatterv rc root %d count %d", rw, count));
      if (root >= 0) {
        EXPECT_ARRAY(what("scatterv root %d count %d", rw, count), sbuf, mine + 1,
                     i < mine ? pair_val(rw, me, i) : -1);
      }
    }
  }
  free(rc_);
  free(rd);
  free(sc);
  free(sd);
  free(rbuf);
  free(sbuf);
}

/* Derived datatypes: every other int (MPI_Type_vector of count blocks of 1, stride 2), on bcast,
 * allgather and gather; pairs of ints on allreduce and reduce; and blocks that differ between the
 * two directions of allgather and alltoall (the first group sends 3 ints per block, the second
 * 5). */
static void test_types(void) {
  MPI_Request req;
  const int n = 7, me = my_world();
  MPI_Datatype strided;
  MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  int* buf = malloc(sizeof(int) * 2 * n * (g_rsize + 1));
  int* all = malloc(sizeof(int) * n * (g_rsize + 1));
  /* bcast from remote rank 0 / local rank 0 of the first group, strided at the root and the
   * receivers alike */
  int root = g_group == 0 ? (g_lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  for (int i = 0; i < 2 * n; ++i) buf[i] = root == MPI_ROOT ? val(0, i) : -1;
  int rc = CALL(MPI_Bcast(buf, 1, strided, root, g_inter),
                MPI_Ibcast(buf, 1, strided, root, g_inter, &req));
  check_rc(rc, what("bcast strided rc", 0, 0));
  if (g_group == 1) {
    EXPECT_ARRAY(what("bcast strided", 0, 0), buf, 2 * n, i % 2 == 0 ? val(0, i) : -1);
  }
  /* allgather: strided send, contiguous receive */
  for (int i = 0; i < 2 * n; ++i) buf[i] = i % 2 == 0 ? val(me, i / 2) : -7;
  for (int i = 0; i < n * g_rsize; ++i) all[i] = -1;
  rc = CALL(MPI_Allgather(buf, 1, strided, all, n, MPI_INT, g_inter),
            MPI_Iallgather(buf, 1, strided, all, n, MPI_INT, g_inter, &req));
  check_rc(rc, what("allgather strided rc", 0, 0));
  EXPECT_ARRAY(what("allgather strided", 0, 0), all, n * g_rsize, val(remote_world(i / n), i % n));
  /* gather to the second group's last rank: contiguous send, strided receive blocks */
  root = g_group == 1 ? (g_lrank == g_lsize - 1 ? MPI_ROOT : MPI_PROC_NULL) : g_rsize - 1;
  for (int i = 0; i < n; ++i) all[i] = val(me, i);
  for (int i = 0; i < 2 * n * g_rsize; ++i) buf[i] = -1;
  rc = CALL(MPI_Gather(all, n, MPI_INT, buf, 1, strided, root, g_inter),
            MPI_Igather(all, n, MPI_INT, buf, 1, strided, root, g_inter, &req));
  check_rc(rc, what("gather strided rc", 0, 0));
  if (root == MPI_ROOT) {
    /* block j starts at j * extent (2n - 1 ints) */
    int bad = 0;
    for (int j = 0; j < g_rsize; ++j)
      for (int i = 0; i < n; ++i) bad |= buf[j * (2 * n - 1) + 2 * i] != val(remote_world(j), i);
    check(!bad, what("gather strided", 0, 0), "a block is wrong");
  }
  MPI_Type_free(&strided);
  /* a reduction on a derived datatype: pairs of ints summed, allreduce and a reduce to the first
   * group's rank 0. Open MPI refuses predefined ops on derived datatypes (MPI_ERR_OP), so the
   * reference runs leave it out. */
  if (g_torusmpi) {
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int a2[2 * n], b2[2 * n];
    for (int i = 0; i < 2 * n; ++i) {
      a2[i] = val(me, i);
      b2[i] = -1;
    }
    rc = CALL(MPI_Allreduce(a2, b2, n, pair, MPI_SUM, g_inter),
              MPI_Iallreduce(a2, b2, n, pair, MPI_SUM, g_inter, &req));
    check_rc(rc, what("allreduce of int pairs rc", 0, 0));
    EXPECT_ARRAY(what("allreduce of int pairs", 0, 0), b2, 2 * n, sum_remote(i));
    root = g_group == 0 ? (g_lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (int i = 0; i < 2 * n; ++i) b2[i] = -1;
    rc = CALL(MPI_Reduce(a2, b2, n, pair, MPI_SUM, root, g_inter),
              MPI_Ireduce(a2, b2, n, pair, MPI_SUM, root, g_inter, &req));
    check_rc(rc, what("reduce of int pairs rc", 0, 0));
    if (root == MPI_ROOT) EXPECT_ARRAY(what("reduce of int pairs", 0, 0), b2, 2 * n, sum_remote(i));
    MPI_Type_free(&pair);
  }
  /* blocks of 3 ints one way, 5 the other */
  const int mine = g_group == 0 ? 3 : 5, theirs = g_group == 0 ? 5 : 3;
  int* s = malloc(sizeof(int) * mine * g_rsize);
  int* r = malloc(sizeof(int) * theirs * g_rsize);
  for (int i = 0; i < mine; ++i) s[i] = val(me, i);
  for (int i = 0; i < theirs * g_rsize; ++i) r[i] = -1;
  rc = CALL(MPI_Allgather(s, mine, MPI_INT, r, theirs, MPI_INT, g_inter),
            MPI_Iallgather(s, mine, MPI_INT, r, theirs, MPI_INT, g_inter, &req));
  check_rc(rc, what("allgather 3/5 rc", 0, 0));
  EXPECT_ARRAY(what("allgather 3/5", 0, 0), r, theirs * g_rsize,
               val(remote_world(i / theirs), i % theirs));
  for (int i = 0; i < mine * g_rsize; ++i) s[i] = pair_val(me, remote_world(i / mine), i % mine);
  for (int i = 0; i < theirs * g_rsize; ++i) r[i] = -1;
  rc = CALL(MPI_Alltoall(s, mine, MPI_INT, r, theirs, MPI_INT, g_inter),
            MPI_Ialltoall(s, mine, MPI_INT, r, theirs, MPI_INT, g_inter, &req));
  check_rc(rc, what("alltoall 3/5 rc", 0, 0));
  EXPECT_ARRAY(what("alltoall 3/5", 0, 0), r, theirs * g_rsize,
               pair_val(remote_world(i / theirs), me, i % theirs));
  free(s);
  free(r);
  free(buf);
  free(all);
}

/* Bad arguments, under MPI_ERRORS_RETURN: the error class Open MPI gives too. Every rank makes
 * each call, and none of them reaches the other group. */
static void test_errors(void) {
  int x[4] = {0, 0, 0, 0}, y[64];
  int cls = 0;
  int rc = MPI_Bcast(x, 1, MPI_INT, g_rsize + 3, g_inter);
  MPI_Error_class(rc, &cls);
  check(rc != MPI_SUCCESS && cls == MPI_ERR_ROOT, "bcast root out of range: MPI_ERR_ROOT",
        "returned %d (class %d)", rc, cls);
  rc = MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, -5, g_inter);
  MPI_Error_class(rc, &cls);
  check(rc != MPI_SUCCESS && cls == MPI_ERR_ROOT, "gather root -5: MPI_ERR_ROOT",
        "returned %d (class %d)", rc, cls);
  rc = MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, g_inter);
  MPI_Error_class(rc, &cls);
  check(rc != MPI_SUCCESS && cls == MPI_ERR_ARG, "allgather MPI_IN_PLACE: MPI_ERR_ARG",
        "returned %d (class %d)", rc, cls);
  rc = MPI_Scan(x, y, 1, MPI_INT, MPI_SUM, g_inter);
  MPI_Error_class(rc, &cls);
  check(rc != MPI_SUCCESS && cls == MPI_ERR_COMM, "scan on an intercommunicator: MPI_ERR_COMM",
        "returned %d (class %d)", rc, cls);
  rc = MPI_Allreduce(x, y, -1, MPI_INT, MPI_SUM, g_inter);
  MPI_Error_class(rc, &cls);
  check(rc != MPI_SUCCESS && cls == MPI_ERR_COUNT, "allreduce count -1: MPI_ERR_COUNT",
        "returned %d (class %d)", rc, cls);
}

int main(int argc, char** argv) {
  /* One write per line: the ranks' lines reach mpirun's output whole. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_world);
  if (g_world < 2) {
    printf("skip %d intercoll: one rank makes no intercommunicator\n", g_rank);
    int status = check_done(g_world);
    MPI_Finalize();
    return status;
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  g_torusmpi = strncmp(version, "torusmpi", 8) == 0;
  g_first = argc > 1 ? atoi(argv[1]) : (g_world == 4 ? 1 : g_world / 2);
  if (g_first < 1 || g_first >= g_world) g_first = 1;
  g_group = g_rank < g_first ? 0 : 1;
  MPI_Comm local;
  MPI_Comm_split(MPI_COMM_WORLD, g_group, g_rank, &local);
  check_rc(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g_group == 0 ? g_first : 0, 42, &g_inter),
           "intercomm_create");
  MPI_Comm_set_errhandler(g_inter, MPI_ERRORS_RETURN);
  MPI_Comm_rank(g_inter, &g_lrank);
  MPI_Comm_size(g_inter, &g_lsize);
  MPI_Comm_remote_size(g_inter, &g_rsize);
  for (g_nb = 0; g_nb < 2; ++g_nb) {
    test_barrier();
    for (int k = 0; k < NCOUNTS; ++k) {
      test_rooted(kCounts[k]);
      test_all(kCounts[k]);
      test_vector(kCounts[k]);
    }
    test_types();
    test_barrier();
  }
  test_errors();
  /* Nonblocking calls in flight together: two allreduces and a barrier, waited for at once. */
  {
    int a[3] = {1, 2, 3}, b[3], c2[3];
    MPI_Request reqs[3];
    int rc = MPI_Iallreduce(a, b, 3, MPI_INT, MPI_SUM, g_inter, &reqs[0]);
    rc |= MPI_Ibarrier(g_inter, &reqs[1]);
    rc |= MPI_Iallreduce(a, c2, 3, MPI_INT, MPI_MAX, g_inter, &reqs[2]);
    rc |= MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
    check(rc == MPI_SUCCESS && b[0] == g_rsize && b[2] == 3 * g_rsize && c2[1] == 2,
          "three nonblocking calls in flight", "rc %d, sum %d %d, max %d", rc, b[0], b[2], c2[1]);
  }
  MPI_Comm_free(&g_inter);
  MPI_Comm_free(&local);
  int status = check_done(g_world);
  MPI_Finalize();
  return status;
}
