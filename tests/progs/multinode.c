/* multinode: what the other programs do not check about a job spread over real nodes (the
 * namespaces of scripts/cluster, tests/integration/multinode.sh).
 *
 *   multinode layout PPN   ranks fill nodes node1, node2, ... PPN at a time (mpirun's default
 *                          mapping by slot): each rank's MPI_Get_processor_name is its node's
 *                          name, MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups exactly the
 *                          ranks of one node, in rank order, and node names differ between
 *                          nodes; then MPI_ANY_SOURCE receives on rank 0 of messages from every
 *                          other rank (the same node's through shared memory, the others' through
 *                          the network) at eager and rendezvous sizes, each sender's in order.
 *   multinode loop         MPI_Allreduce of 4096 ints over and over, each result checked; rank 0
 *                          prints "# looping" after 20 rounds, so that a script can kill a node
 *                          in the middle; FAIL after 60 s (the job should have ended before).
 *
 * Output: "ok/FAIL <rank> <check>" lines, then "done <rank> of <size>: N checks, N failed". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int g_size;

/* The sizes each sender sends to rank 0, in this order: empty, eager, and above the 64 KiB
 * eager limit (rendezvous). */
static const int kSizes[] = {0, 1, 1000, 65536, 65537, 1 << 20, 7, (1 << 20) + 3};
enum { kMessages = sizeof kSizes / sizeof kSizes[0] };

static unsigned char pattern(int sender, int msg, int i) {
  return (unsigned char)(sender * 29 + msg * 11 + i * 7 + (i >> 8));
}

static void layout(int ppn) {
  char name[MPI_MAX_PROCESSOR_NAME], want[32], what[64];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  snprintf(want, sizeof want, "node%d", 1 + g_rank / ppn);
  check(strcmp(name, want) == 0, "layout: processor name", "'%s', expected '%s'", name, want);

  MPI_Comm node;
  check_rc(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
           "layout: split_type shared");
  int nrank = -1, nsize = 0;
  MPI_Comm_rank(node, &nrank);
  MPI_Comm_size(node, &nsize);
  const int first = g_rank / ppn * ppn;
  const int expect = g_size - first < ppn ? g_size - first : ppn;
  check(nsize == expect && nrank == g_rank - first, "layout: shared communicator",
        "rank %d of %d, expected %d of %d", nrank, nsize, g_rank - first, expect);
  /* Its members, as world ranks: exactly this node's, in order. */
  int* members = malloc(sizeof(int) * (size_t)(nsize > 0 ? nsize : 1));
  MPI_Allgather(&g_rank, 1, MPI_INT, members, 1, MPI_INT, node);
  int bad = 0;
  for (int i = 0; i < nsize; ++i) bad += members[i] != first + i;
  check(bad == 0, "layout: shared communicator members", "%d not ranks %d.. of this node", bad,
        first);
  free(members);
  MPI_Comm_free(&node);

  /* Every rank's processor name, everywhere: equal within a node, different between nodes. */
  char* all = malloc((size_t)g_size * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                MPI_COMM_WORLD);
  bad = 0;
  for (int r = 0; r < g_size; ++r) {
    const int same = strcmp(all + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0;
    bad += same != (r / ppn == g_rank / ppn);
  }
  check(bad == 0, "layout: node names", "%d rank(s) disagree with the layout", bad);
  free(all);

  /* MPI_ANY_SOURCE at rank 0: shared-memory and network senders mixed, each in its order. */
  const int max = (1 << 20) + 3;
  unsigned char* buf = malloc(max);
  if (g_rank == 0) {
    int* next = calloc((size_t)g_size, sizeof(int));
    int wrong = 0, order = 0;
    for (int k = 0; k < (g_size - 1) * kMessages; ++k) {
      MPI_Status st;
      int count = -1;
      MPI_Recv(buf, max, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_BYTE, &count);
      const int s = st.MPI_SOURCE, m = st.MPI_TAG;
      if (s <= 0 || s >= g_size || m != next[s]) {
        ++order;
        continue;
      }
      ++next[s];
      if (count != kSizes[m]) {
        ++wrong;
        continue;
      }
      for (int i = 0; i < count; ++i) {
        if (buf[i] != pattern(s, m, i)) {
          ++wrong;
          break;
        }
      }
    }
    snprintf(what, sizeof what, "any_source: %d senders x %d messages", g_size - 1, kMessages);
    check(order == 0 && wrong == 0, what, "%d out of order, %d wrong", order, wrong);
    free(next);
  } else {
    for (int m = 0; m < kMessages; ++m) {
      for (int i = 0; i < kSizes[m]; ++i) buf[i] = pattern(g_rank, m, i);
      check_rc(MPI_Send(buf, kSizes[m], MPI_BYTE, 0, m, MPI_COMM_WORLD), "any_source: send");
    }
  }
  free(buf);
}

static void loop(void) {
  enum { kInts = 4096 };
  int* in = malloc(sizeof(int) * kInts);
  int* out = malloc(sizeof(int) * kInts);
  const double t0 = MPI_Wtime();
  int wrong = 0;
  for (int round = 0; MPI_Wtime() - t0 < 60; ++round) {
    for (int i = 0; i < kInts; ++i) in[i] = g_rank + i + round;
    MPI_Allreduce(in, out, kInts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const long ranks = (long)g_size * (g_size - 1) / 2;
    for (int i = 0; i < kInts; ++i) wrong += out[i] != (int)(ranks + (long)g_size * (i + round));
    if (round == 20 && g_rank == 0) {
      printf("# looping\n");
      fflush(stdout);
    }
  }
  check(0, "loop", "still running after 60 s (%d wrong results)", wrong);
  free(in);
  free(out);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "layout") == 0 && argc > 2 && atoi(argv[2]) > 0) {
    layout(atoi(argv[2]));
  } else if (strcmp(mode, "loop") == 0) {
    loop();
  } else {
    printf("FAIL %d usage: multinode layout PPN | multinode loop\n", g_rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return check_done(g_size);
}
