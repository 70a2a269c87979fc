/* links.c: traffic of known shape for the NeuronLink emulation tests (tests/integration/links.sh),
 * which read the torusmpi-stats lines printed at MPI_Finalize and compare them with the bytes
 * they work out from the routes. The program checks its data; the script checks the counts.
 *
 *   links p2p SRC DST BYTES COUNT   rank SRC sends COUNT messages of BYTES to rank DST, nothing
 *                                   else moves (no barrier: only these payloads may be counted)
 *   links allreduce INTS CALLS      CALLS MPI_Allreduce of INTS ints (sum) on MPI_COMM_WORLD
 *   links coll NAME INTS            one call of collective NAME (allgather, reduce_scatter_block,
 *                                   alltoall, bcast from rank 0) of INTS ints a block (allgather,
 *                                   alltoall, reduce_scatter_block) or a vector (bcast), checked
 *   links pace BYTES S D [S D...]   after a barrier, each sender S sends BYTES to its D, which
 *                                   answers with an empty message; rank 0 prints
 *                                   "span <seconds>": from the first sender's start to the last
 *                                   sender's answer (CLOCK_MONOTONIC, shared by the host's ranks)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned char pattern(long i, int salt) { return (unsigned char)((i * 131 + salt) & 0xff); }

static void p2p(int rank, int src, int dst, long bytes, int count) {
  unsigned char* buf = malloc(bytes > 0 ? (size_t)bytes : 1);
  for (int k = 0; k < count; ++k) {
    if (rank == src) {
      for (long i = 0; i < bytes; ++i) buf[i] = pattern(i, k);
      check_rc(MPI_Send(buf, (int)bytes, MPI_BYTE, dst, k, MPI_COMM_WORLD), "p2p send");
    } else if (rank == dst) {
      memset(buf, 0, (size_t)bytes);
      MPI_Status st;
      check_rc(MPI_Recv(buf, (int)bytes, MPI_BYTE, src, k, MPI_COMM_WORLD, &st), "p2p recv");
      int got = -1;
      MPI_Get_count(&st, MPI_BYTE, &got);
      long bad = -1;
      for (long i = 0; i < bytes && bad < 0; ++i) {
        if (buf[i] != pattern(i, k)) bad = i;
      }
      check(got == bytes && bad < 0, "p2p data", "message %d: %d B, first bad byte %ld", k, got,
            bad);
    }
  }
  free(buf);
}

static void allreduce(int rank, int size, int ints, int calls) {
  int* in = malloc(sizeof(int) * (size_t)ints);
  int* out = malloc(sizeof(int) * (size_t)ints);
  for (int c = 0; c < calls; ++c) {
    for (int i = 0; i < ints; ++i) in[i] = rank + i % 7 + c;
    check_rc(MPI_Allreduce(in, out, ints, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "allreduce");
    int bad = -1;
    for (int i = 0; i < ints && bad < 0; ++i) {
      /* sum over ranks of (rank + i%7 + c) */
      if (out[i] != size * (size - 1) / 2 + size * (i % 7 + c)) bad = i;
    }
    check(bad < 0, "allreduce result", "call %d: first bad element %d", c, bad);
  }
  free(in);
  free(out);
}

/* Rank r's element i of block b (a function of all three, so a misplaced block shows). */
static int value(int r, int b, int i) { return r * 1000003 + b * 1009 + i; }

static void coll(int rank, int size, const char* name, int ints) {
  const size_t block = (size_t)ints, all = block * (size_t)size;
  int* in = malloc(sizeof(int) * (all > 0 ? all : 1));
  int* out = malloc(sizeof(int) * (all > 0 ? all : 1));
  long bad = -1;
  int rc = MPI_ERR_OTHER;
  if (strcmp(name, "allgather") == 0) {
    for (int i = 0; i < ints; ++i) in[i] = value(rank, 0, i);
    rc = MPI_Allgather(in, ints, MPI_INT, out, ints, MPI_INT, MPI_COMM_WORLD);
    for (size_t k = 0; k < all && bad < 0; ++k)
      if (out[k] != value((int)(k / block), 0, (int)(k % block))) bad = (long)k;
  } else if (strcmp(name, "alltoall") == 0) {
    for (size_t k = 0; k < all; ++k) in[k] = value(rank, (int)(k / block), (int)(k % block));
    rc = MPI_Alltoall(in, ints, MPI_INT, out, ints, MPI_INT, MPI_COMM_WORLD);
    for (size_t k = 0; k < all && bad < 0; ++k)
      if (out[k] != value((int)(k / block), rank, (int)(k % block))) bad = (long)k;
  } else if (strcmp(name, "reduce_scatter_block") == 0) {
    for (size_t k = 0; k < all; ++k) in[k] = (int)(k % 13) + rank;
    rc = MPI_Reduce_scatter_block(in, out, ints, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < block && bad < 0; ++i) {
      size_t k = (size_t)rank * block + i;
      if (out[i] != size * (int)(k % 13) + size * (size - 1) / 2) bad = (long)i;
    }
  } else if (strcmp(name, "bcast") == 0) {
    for (int i = 0; i < ints; ++i) in[i] = rank == 0 ? value(0, 0, i) : -1;
    rc = MPI_Bcast(in, ints, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < ints && bad < 0; ++i)
      if (in[i] != value(0, 0, i)) bad = i;
  }
  check_rc(rc, name);
  check(bad < 0, "coll result", "%s: first bad element %ld", name, bad);
  free(in);
  free(out);
}

static void pace(int rank, int size, long bytes, int npairs, const int* pairs) {
  unsigned char* buf = calloc((size_t)bytes, 1);
  double start = 0, end = 0;
  int sender = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int p = 0; p < npairs; ++p) {
    int s = pairs[2 * p], d = pairs[2 * p + 1];
    if (rank == s) {
      sender = 1;
      start = now_s();
      check_rc(MPI_Send(buf, (int)bytes, MPI_BYTE, d, 1, MPI_COMM_WORLD), "pace send");
      check_rc(MPI_Recv(NULL, 0, MPI_BYTE, d, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "pace ack");
      end = now_s();
    } else if (rank == d) {
      check_rc(MPI_Recv(buf, (int)bytes, MPI_BYTE, s, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
               "pace recv");
      check_rc(MPI_Send(NULL, 0, MPI_BYTE, s, 2, MPI_COMM_WORLD), "pace answer");
    }
  }
  double mine[3] = {sender, start, end};
  double* all = malloc(sizeof(double) * 3 * (size_t)size);
  MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    double first = 0, last = 0;
    int n = 0;
    for (int r = 0; r < size; ++r) {
      if (all[3 * r] == 0) continue;
      if (n == 0 || all[3 * r + 1] < first) first = all[3 * r + 1];
      if (n == 0 || all[3 * r + 2] > last) last = all[3 * r + 2];
      ++n;
    }
    check(n == npairs, "pace senders", "%d senders reported, %d expected", n, npairs);
    printf("span %.6f\n", last - first);
  }
  free(all);
  free(buf);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "p2p") == 0 && argc == 6) {
    p2p(g_rank, atoi(argv[2]), atoi(argv[3]), atol(argv[4]), atoi(argv[5]));
  } else if (strcmp(mode, "allreduce") == 0 && argc == 4) {
    allreduce(g_rank, size, atoi(argv[2]), atoi(argv[3]));
  } else if (strcmp(mode, "coll") == 0 && argc == 4) {
    coll(g_rank, size, argv[2], atoi(argv[3]));
  } else if (strcmp(mode, "pace") == 0 && argc >= 5 && argc <= 67 && argc % 2 == 1) {
    int npairs = (argc - 3) / 2;
    int pairs[64];
    for (int i = 0; i < 2 * npairs && i < 64; ++i) pairs[i] = atoi(argv[3 + i]);
    pace(g_rank, size, atol(argv[2]), npairs, pairs);
  } else {
    check(0, "arguments",
          "usage: links p2p SRC DST BYTES COUNT | allreduce INTS CALLS | coll NAME INTS | "
          "pace BYTES S D [S D...]");
  }
  MPI_Finalize();
  return check_done(size);
}
