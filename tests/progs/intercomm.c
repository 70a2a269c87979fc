/* intercomm: intercommunicators.
 *
 *   intercomm      2 ranks or more (1 rank: every case prints a skip line and passes)
 *
 * The even ranks of MPI_COMM_WORLD form group A, the odd ranks group B (ranked in reverse, so
 * that local and world orders differ); MPI_Intercomm_create joins them (leaders A0 and B0,
 * MPI_COMM_WORLD as the peer communicator). Checked: MPI_Comm_test_inter, MPI_Comm_size and
 * MPI_Comm_remote_size, MPI_Comm_remote_group (its members, in the remote group's order);
 * point-to-point (ranks name the remote group, a receive's status the remote sender, with
 * MPI_ANY_SOURCE too); the collectives with MPI's intercommunicator semantics (MPI_ROOT at the
 * root, MPI_PROC_NULL at its group's other ranks): Barrier, Bcast, Reduce, Allreduce, Allgather,
 * Alltoall, Gather, Scatter, with roots in either group; MPI_Intercomm_merge (high = 0 in A:
 * A first; and both groups high = 1, still one order everyone agrees on); MPI_Comm_dup,
 * MPI_Comm_split and MPI_Comm_create of an intercommunicator; many made and freed in a loop.
 * Bad arguments under MPI_ERRORS_RETURN, every rank making the same bad call: a root that is none
 * of MPI_ROOT, MPI_PROC_NULL or a remote rank (MPI_ERR_ROOT), a remote rank out of range
 * (MPI_ERR_RANK), MPI_Intercomm_merge and MPI_Comm_remote_size of an intracommunicator
 * (MPI_ERR_COMM), a local leader out of range (MPI_ERR_RANK). Then an empty MPI_Allgatherv (the
 * v forms and the nonblocking ones are intercoll.c's). */
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

/* The world ranks of group A (evens, in order) and B (odds, reversed): members[g][i]. */
static int g_na, g_nb;
static int* g_members[2];
static int g_group; /* 0: A, 1: B */
static int g_local; /* rank in the local group */

static void make_groups(void) {
  g_na = (g_size + 1) / 2;
  g_nb = g_size / 2;
  g_members[0] = malloc(sizeof(int) * (size_t)g_na);
  g_members[1] = malloc(sizeof(int) * (size_t)(g_nb > 0 ? g_nb : 1));
  for (int i = 0; i < g_na; ++i) g_members[0][i] = 2 * i;
  for (int i = 0; i < g_nb; ++i) g_members[1][i] = 2 * (g_nb - 1 - i) + 1;
  g_group = g_rank % 2;
  g_local = g_group == 0 ? g_rank / 2 : g_nb - 1 - g_rank / 2;
}

static int remote_n(void) { return g_group == 0 ? g_nb : g_na; }
static int remote_member(int r) { return g_members[1 - g_group][r]; }

/* Collectives with a root: at the root MPI_ROOT, at its group's others MPI_PROC_NULL, in the
 * other group the root's rank. root_group/root_rank name the root. */
static int root_arg(int root_group, int root_rank) {
  if (g_group == root_group) return g_local == root_rank ? MPI_ROOT : MPI_PROC_NULL;
  return root_rank;
}

static void p2p(MPI_Comm inter, const char* name) {
  char what[128];
  const int q = remote_n();
  /* Every rank sends its world rank to every remote rank, and receives from each. */
  int* got = malloc(sizeof(int) * (size_t)q);
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)q * 2);
  for (int j = 0; j < q; ++j) {
    got[j] = -1;
    MPI_Irecv(&got[j], 1, MPI_INT, j, 3, inter, &reqs[2 * j]);
    MPI_Isend(&g_rank, 1, MPI_INT, j, 3, inter, &reqs[2 * j + 1]);
  }
  int rc = MPI_Waitall(2 * q, reqs, MPI_STATUSES_IGNORE);
  int good = rc == MPI_SUCCESS;
  for (int j = 0; j < q; ++j) good = good && got[j] == remote_member(j);
  snprintf(what, sizeof what, "%s-p2p-all-pairs", name);
  check(good, what, "rc %d", rc);
  /* Local rank 0 of each group gets one message from each remote rank via MPI_ANY_SOURCE. */
  MPI_Request req;
  MPI_Isend(&g_rank, 1, MPI_INT, 0, 4, inter, &req);
  good = 1;
  if (g_local == 0) {
    for (int j = 0; j < q; ++j) {
      int x = -1;
      MPI_Status st;
      MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 4, inter, &st);
      good = good && st.MPI_SOURCE >= 0 && st.MPI_SOURCE < q && x == remote_member(st.MPI_SOURCE);
    }
  }
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  snprintf(what, sizeof what, "%s-p2p-any-source", name);
  check(good, what, "a status named the wrong remote rank");
  free(got);
  free(reqs);
}

static void collectives(MPI_Comm inter, const char* name) {
  char what[128];
  const int p = g_local, q = remote_n(), n_local = g_group == 0 ? g_na : g_nb;
  int rc, good;
  snprintf(what, sizeof what, "%s-barrier", name);
  check_rc(MPI_Barrier(inter), what);

  /* Bcast from each group's last rank. */
  for (int rg = 0; rg < 2; ++rg) {
    int rn = rg == 0 ? g_na : g_nb, rr = rn - 1;
    int v = (g_group == rg && g_local == rr) ? 500 + g_rank : -1;
    rc = MPI_Bcast(&v, 1, MPI_INT, root_arg(rg, rr), inter);
    int want = g_group == rg ? (g_local == rr ? 500 + g_rank : -1) : 500 + g_members[rg][rr];
    snprintf(what, sizeof what, "%s-bcast-from-%c", name, 'A' + rg);
    check(rc == MPI_SUCCESS && v == want, what, "rc %d, got %d, expected %d", rc, v, want);
  }

  /* Allreduce: each group gets the other's sum (and max, two elements). */
  long long in[2] = {g_rank + 1, g_rank}, out[2] = {0, 0}, sum = 0, max = -1;
  for (int j = 0; j < q; ++j) {
    sum += remote_member(j) + 1;
    if (remote_member(j) > max) max = remote_member(j);
  }
  rc = MPI_Allreduce(in, out, 1, MPI_LONG_LONG, MPI_SUM, inter);
  snprintf(what, sizeof what, "%s-allreduce", name);
  check(rc == MPI_SUCCESS && out[0] == sum, what, "rc %d, sum %lld, expected %lld", rc, out[0],
        sum);
  rc = MPI_Allreduce(&in[1], &out[1], 1, MPI_LONG_LONG, MPI_MAX, inter);
  snprintf(what, sizeof what, "%s-allreduce-max", name);
  check(rc == MPI_SUCCESS && out[1] == max, what, "rc %d, max %lld", rc, out[1]);

  /* Reduce to A's rank 0: B's sum. */
  long long r = -1, bsum = 0;
  for (int j = 0; j < g_nb; ++j) bsum += g_members[1][j] + 1;
  rc = MPI_Reduce(in, &r, 1, MPI_LONG_LONG, MPI_SUM, root_arg(0, 0), inter);
  snprintf(what, sizeof what, "%s-reduce-to-A0", name);
  check(rc == MPI_SUCCESS && (g_group != 0 || g_local != 0 || r == bsum), what, "rc %d, got %lld",
        rc, r);

  /* Allgather: the other group's world ranks, in its rank order. */
  int* all = malloc(sizeof(int) * (size_t)(q + n_local + 2));
  rc = MPI_Allgather(&g_rank, 1, MPI_INT, all, 1, MPI_INT, inter);
  good = rc == MPI_SUCCESS;
  for (int j = 0; j < q; ++j) good = good && all[j] == remote_member(j);
  snprintf(what, sizeof what, "%s-allgather", name);
  check(good, what, "rc %d", rc);

  /* Alltoall: block j to remote rank j. */
  int* blocks = malloc(sizeof(int) * (size_t)(q + 1));
  for (int j = 0; j < q; ++j) blocks[j] = g_rank * 100 + j;
  rc = MPI_Alltoall(blocks, 1, MPI_INT, all, 1, MPI_INT, inter);
  good = rc == MPI_SUCCESS;
  for (int j = 0; j < q; ++j) good = good && all[j] == remote_member(j) * 100 + p;
  snprintf(what, sizeof what, "%s-alltoall", name);
  check(good, what, "rc %d", rc);

  /* Gather to B's last rank: A's world ranks. */
  for (int j = 0; j < g_na + 1; ++j) all[j] = -1;
  rc = MPI_Gather(&g_rank, 1, MPI_INT, all, 1, MPI_INT, root_arg(1, g_nb - 1), inter);
  good = rc == MPI_SUCCESS;
  if (g_group == 1 && g_local == g_nb - 1) {
    for (int j = 0; j < g_na; ++j) good = good && all[j] == g_members[0][j];
  }
  snprintf(what, sizeof what, "%s-gather-to-B", name);
  check(good, what, "rc %d", rc);

  /* Scatter from A's last rank: B's rank j gets 3j + 1. */
  int* src = malloc(sizeof(int) * (size_t)(g_nb + 1));
  for (int j = 0; j < g_nb; ++j) src[j] = 3 * j + 1;
  int mine = -1;
  rc = MPI_Scatter(src, 1, MPI_INT, &mine, 1, MPI_INT, root_arg(0, g_na - 1), inter);
  snprintf(what, sizeof what, "%s-scatter-from-A", name);
  check(rc == MPI_SUCCESS && (g_group == 0 || mine == 3 * p + 1), what, "rc %d, got %d", rc, mine);
  free(all);
  free(blocks);
  free(src);

  /* Large messages (past the eager limit): bcast and allgather of 40000 ints per rank. */
  enum { kBig = 40000 };
  int* big = malloc(sizeof(int) * (size_t)kBig * (size_t)(q > 0 ? q : 1));
  int* mine_big = malloc(sizeof(int) * kBig);
  for (int i = 0; i < kBig; ++i) mine_big[i] = g_rank * 7 + i;
  rc = MPI_Allgather(mine_big, kBig, MPI_INT, big, kBig, MPI_INT, inter);
  good = rc == MPI_SUCCESS;
  for (int j = 0; j < q && good; ++j) {
    for (int i = 0; i < kBig; ++i)
      good = good && big[(size_t)j * kBig + i] == remote_member(j) * 7 + i;
  }
  snprintf(what, sizeof what, "%s-allgather-large", name);
  check(good, what, "rc %d", rc);
  for (int i = 0; i < kBig; ++i) big[i] = (g_group == 1 && g_local == 0) ? 3 * i : -1;
  rc = MPI_Bcast(big, kBig, MPI_INT, root_arg(1, 0), inter);
  good = rc == MPI_SUCCESS;
  for (int i = 0; i < kBig && g_group == 0; ++i) good = good && big[i] == 3 * i;
  snprintf(what, sizeof what, "%s-bcast-large", name);
  check(good, what, "rc %d", rc);
  free(big);
  free(mine_big);

  /* MAXLOC on MPI_DOUBLE_INT (a type with padding): the other group's largest world rank. */
  struct {
    double v;
    int i;
  } pin = {(double)g_rank, g_rank}, pout = {-1, -1};
  rc = MPI_Allreduce(&pin, &pout, 1, MPI_DOUBLE_INT, MPI_MAXLOC, inter);
  snprintf(what, sizeof what, "%s-allreduce-maxloc", name);
  check(rc == MPI_SUCCESS && pout.v == (double)max && pout.i == (int)max, what,
        "rc %d, got %g at %d", rc, pout.v, pout.i);
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
  if (g_size < 2) {
    printf("skip %d intercomm: an intercommunicator needs 2 ranks or more\n", g_rank);
    int rc = check_done(g_size);
    MPI_Finalize();
    return rc;
  }
  make_groups();
  int rc, flag = -1, size = -1, cmp = -1;

  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, g_group, g_group == 0 ? g_rank : -g_rank, &local);
  MPI_Comm_rank(local, &size);
  check(size == g_local, "local-rank", "rank %d, expected %d", size, g_local);
  /* Leaders: A0 is world rank 0, B0 the highest odd rank. */
  int remote_leader = g_group == 0 ? g_members[1][0] : 0;
  check_rc(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 42, &inter), "create");
  MPI_Comm_test_inter(inter, &flag);
  check(flag == 1, "test-inter", "flag %d", flag);
  MPI_Comm_size(inter, &size);
  check(size == (g_group == 0 ? g_na : g_nb), "size-local", "size %d", size);
  MPI_Comm_remote_size(inter, &size);
  check(size == remote_n(), "remote-size", "size %d", size);
  MPI_Comm_rank(inter, &size);
  check(size == g_local, "rank-local", "rank %d", size);

  MPI_Group remote, world_group;
  MPI_Comm_remote_group(inter, &remote);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int q = remote_n();
  int* idx = malloc(sizeof(int) * (size_t)q);
  int* wr = malloc(sizeof(int) * (size_t)q);
  for (int j = 0; j < q; ++j) idx[j] = j;
  MPI_Group_translate_ranks(remote, q, idx, world_group, wr);
  int good = 1;
  for (int j = 0; j < q; ++j) good = good && wr[j] == remote_member(j);
  check(good, "remote-group", "members differ");
  MPI_Group_free(&remote);

  p2p(inter, "inter");
  collectives(inter, "inter");

  /* Merge: A says low, B high: A's ranks first. */
  MPI_Comm merged;
  check_rc(MPI_Intercomm_merge(inter, g_group, &merged), "merge");
  MPI_Comm_size(merged, &size);
  int mrank = -1;
  MPI_Comm_rank(merged, &mrank);
  int want = g_group == 0 ? g_local : g_na + g_local;
  check(size == g_size && mrank == want, "merge-order", "size %d rank %d, expected %d", size, mrank,
        want);
  long long one = 1, total = 0;
  rc = MPI_Allreduce(&one, &total, 1, MPI_LONG_LONG, MPI_SUM, merged);
  check(rc == MPI_SUCCESS && total == g_size, "merge-allreduce", "rc %d, total %lld", rc, total);
  MPI_Comm_test_inter(merged, &flag);
  check(flag == 0, "merge-intra", "flag %d", flag);
  MPI_Comm_free(&merged);
  /* Both high: some order, each rank once, and each group contiguous. */
  check_rc(MPI_Intercomm_merge(inter, 1, &merged), "merge-tie");
  int* ranks = malloc(sizeof(int) * (size_t)g_size);
  MPI_Comm_rank(merged, &mrank);
  MPI_Allgather(&mrank, 1, MPI_INT, ranks, 1, MPI_INT, MPI_COMM_WORLD);
  int seen = 0;
  for (int i = 0; i < g_size; ++i) seen |= 1 << ranks[i];
  check(seen == (1 << g_size) - 1, "merge-tie-ranks", "ranks are not a permutation");
  MPI_Comm_free(&merged);
  free(ranks);

  /* dup: an intercommunicator again, congruent, with its own messages. */
  MPI_Comm dup;
  check_rc(MPI_Comm_dup(inter, &dup), "dup");
  MPI_Comm_test_inter(dup, &flag);
  MPI_Comm_compare(inter, dup, &cmp);
  check(flag == 1 && cmp == MPI_CONGRUENT, "dup-congruent", "flag %d compare %d", flag, cmp);
  p2p(dup, "dup");
  collectives(dup, "dup");

  /* split: by local parity; a color with no one on the other side gives MPI_COMM_NULL. */
  MPI_Comm half;
  int color = g_local % 2;
  check_rc(MPI_Comm_split(inter, color, g_local, &half), "split");
  int other = 0;
  for (int j = 0; j < q; ++j) other += j % 2 == color;
  check((other == 0) == (half == MPI_COMM_NULL), "split-null", "%s with %d remote of color",
        half == MPI_COMM_NULL ? "null" : "a communicator", other);
  if (half != MPI_COMM_NULL) {
    MPI_Comm_remote_size(half, &size);
    check(size == other, "split-remote-size", "size %d, expected %d", size, other);
    int rs = -1, x = g_local, y = -1;
    MPI_Comm_rank(half, &rs);
    /* Everyone of a color sends to remote rank 0 of it; rank 0 receives from each. */
    MPI_Request req;
    MPI_Isend(&x, 1, MPI_INT, 0, 1, half, &req);
    good = 1;
    if (rs == 0) {
      for (int j = 0; j < other; ++j) {
        MPI_Recv(&y, 1, MPI_INT, j, 1, half, MPI_STATUS_IGNORE);
        good = good && y % 2 == color;
      }
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(good, "split-p2p", "a message from another color");
    MPI_Comm_free(&half);
  }

  /* split with MPI_UNDEFINED at each group's rank 0. */
  check_rc(MPI_Comm_split(inter, g_local == 0 ? MPI_UNDEFINED : 0, -g_local, &half),
           "split-undefined");
  int want_comm = g_local != 0 && q > 1;
  check(want_comm == (half != MPI_COMM_NULL), "split-undefined-null", "%s",
        half == MPI_COMM_NULL ? "null" : "a communicator");
  if (half != MPI_COMM_NULL) {
    MPI_Comm_remote_size(half, &size);
    check(size == q - 1, "split-undefined-remote-size", "size %d", size);
    long long in = g_rank + 1, sum = 0, want_sum = 0;
    for (int j = 1; j < q; ++j) want_sum += remote_member(j) + 1;
    rc = MPI_Allreduce(&in, &sum, 1, MPI_LONG_LONG, MPI_SUM, half);
    check(rc == MPI_SUCCESS && sum == want_sum, "split-undefined-allreduce",
          "rc %d, sum %lld, expected %lld", rc, sum, want_sum);
    MPI_Comm_free(&half);
  }

  /* create with the whole local group: like a dup. */
  MPI_Group lg;
  MPI_Comm_group(inter, &lg);
  MPI_Comm made;
  check_rc(MPI_Comm_create(inter, lg, &made), "create-inter");
  if (made != MPI_COMM_NULL) {
    MPI_Comm_remote_size(made, &size);
    check(size == q, "create-inter-remote-size", "size %d", size);
    collectives(made, "created");
    MPI_Comm_free(&made);
  }
  MPI_Group_free(&lg);

  /* Leaders that are each group's last rank, over a peer communicator other than the world. */
  {
    MPI_Comm peer, other, idup;
    MPI_Request req;
    MPI_Comm_dup(MPI_COMM_WORLD, &peer);
    int n_local = g_group == 0 ? g_na : g_nb;
    int rl = g_group == 0 ? g_members[1][g_nb - 1] : g_members[0][g_na - 1];
    check_rc(MPI_Intercomm_create(local, n_local - 1, peer, rl, 5, &other), "create-last-leaders");
    MPI_Comm_remote_size(other, &size);
    check(size == q, "create-last-leaders-remote-size", "size %d", size);
    collectives(other, "last-leaders");
    /* idup of an intercommunicator. */
    check_rc(MPI_Comm_idup(other, &idup, &req), "idup-inter");
    check_rc(MPI_Wait(&req, MPI_STATUS_IGNORE), "idup-inter-wait");
    MPI_Comm_test_inter(idup, &flag);
    check(flag == 1, "idup-inter-is-inter", "flag %d", flag);
    p2p(idup, "idup");
    MPI_Comm_free(&idup);
    MPI_Comm_free(&other);
    MPI_Comm_free(&peer);
  }

  /* Many made and freed. */
  int ok = 1;
  for (int i = 0; i < 300 && ok; ++i) {
    MPI_Comm a;
    ok = MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 7, &a) == MPI_SUCCESS;
    if (ok && i % 100 == 0) {
      ok = MPI_Allreduce(&one, &total, 1, MPI_LONG_LONG, MPI_SUM, a) == MPI_SUCCESS && total == q;
    }
    if (ok) ok = MPI_Comm_free(&a) == MPI_SUCCESS;
  }
  check(ok, "create-free-loop", "failed");

  /* Bad arguments. */
  int v = 0;
  expect(MPI_Bcast(&v, 1, MPI_INT, q + 3, inter), MPI_ERR_ROOT, -1, "bad-bcast-root", "MPI_Bcast");
  expect(MPI_Send(&v, 1, MPI_INT, q, 0, inter), MPI_ERR_RANK, -1, "bad-send-remote-rank",
         "MPI_Send");
  MPI_Comm bad;
  expect(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &bad), MPI_ERR_COMM, MPI_ERR_ARG, "bad-merge-intra",
         "MPI_Intercomm_merge");
  expect(MPI_Intercomm_create(local, g_size + 5, MPI_COMM_WORLD, remote_leader, 9, &bad),
         MPI_ERR_RANK, MPI_ERR_ARG, "bad-create-leader", "MPI_Intercomm_create");
  {
    /* The v forms work on intercommunicators too (intercoll.c checks every collective). */
    int* counts = calloc((size_t)q, sizeof(int));
    int* displs = calloc((size_t)q, sizeof(int));
    check_rc(MPI_Allgatherv(&v, 0, MPI_INT, &v, counts, displs, MPI_INT, inter),
             "empty-allgatherv");
    free(counts);
    free(displs);
  }
  /* Still in step. */
  collectives(inter, "after-errors");

  MPI_Comm_free(&dup);
  MPI_Comm_free(&inter);
  check(inter == MPI_COMM_NULL, "free-null", "not MPI_COMM_NULL");
  MPI_Comm_free(&local);
  MPI_Group_free(&world_group);
  free(idx);
  free(wr);
  free(g_members[0]);
  free(g_members[1]);
  rc = check_done(g_size);
  MPI_Finalize();
  return rc;
}
