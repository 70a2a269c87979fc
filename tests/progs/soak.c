/* soak: randomly shaped collectives and point-to-point for a while, every result checked, with
 * this process's resident memory, open descriptors, mappings and malloc heap measured once
 * warmed up (half the time) and at the end (tests/integration/soak.sh checks they stay flat).
 *
 *   soak SECONDS [device]
 *
 * Every rank draws the same sequence from one seed, so all agree on each operation: the
 * collective (allreduce, reduce, bcast, allgather, alltoall, reduce_scatter_block, gather,
 * scatter, barrier, iallreduce), the communicator (world, a split, a dup made and freed in the
 * loop), the count (0, 1, p-1, p, p+1, a large prime, random ones past the eager limit), the
 * datatype, and, with "device", whether the buffers are device memory (torusmpi.h). Point-to-point
 * rounds mix eager and rendezvous sizes, MPI_ANY_SOURCE and a strided derived datatype.
 * Data are integers, so every result is exact. Prints "stats <rank> <phase> rss_kb=N fds=N
 * maps=N" for phases start and end, then the check.h "done" line. */
#include <dirent.h>
#include <malloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

extern int torusmpi_device_malloc(void** ptr, size_t bytes) __attribute__((weak));
extern int torusmpi_device_free(void* ptr) __attribute__((weak));
extern int torusmpi_memcpy(void* dst, const void* src, size_t bytes) __attribute__((weak));

static uint64_t g_seed = 0x9e3779b97f4a7c15ull;
static uint64_t draw(void) { /* xorshift64*: the same on every rank */
  g_seed ^= g_seed >> 12;
  g_seed ^= g_seed << 25;
  g_seed ^= g_seed >> 27;
  return g_seed * 2685821657736338717ull;
}
static int below(int n) { return n > 0 ? (int)(draw() % (uint64_t)n) : 0; }

/* Open descriptors, sockets apart: a network provider may open a connection to a peer late
 * (libfabric's tcp connects on first use, per direction), which is not a leak. */
static void count_fds(long* files, long* sockets) {
  DIR* d = opendir("/proc/self/fd");
  *files = *sockets = 0;
  if (d == NULL) {
    *files = -1;
    return;
  }
  struct dirent* e;
  char path[300], target[64];
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(path, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    if (strncmp(target, "socket:", 7) == 0) {
      ++*sockets;
    } else {
      ++*files;
    }
  }
  closedir(d);
  --*files; /* the directory's own descriptor */
}
static long count_lines(const char* path) {
  FILE* f = fopen(path, "r");
  long n = 0;
  int c;
  if (f == NULL) return -1;
  while ((c = fgetc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}
static void print_stats(const char* phase) {
  long pages = 0, resident = 0;
  FILE* f = fopen("/proc/self/statm", "r");
  if (f != NULL) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
  }
  struct mallinfo2 heap = mallinfo2();
  long files, sockets;
  count_fds(&files, &sockets);
  printf("stats %d %s rss_kb=%ld fds=%ld maps=%ld heap_kb=%zu sockets=%ld\n", g_rank, phase,
         resident * 4, files, count_lines("/proc/self/maps"), heap.uordblks / 1024, sockets);
  fflush(stdout);
}

/* Buffers of either kind: host ones are written directly, device ones through torusmpi_memcpy. */
static int g_device;
static void* buf_new(size_t bytes, int dev) {
  void* p = NULL;
  if (dev) {
    if (torusmpi_device_malloc(&p, bytes > 0 ? bytes : 1) != MPI_SUCCESS) p = NULL;
  } else {
    p = malloc(bytes > 0 ? bytes : 1);
  }
  if (p == NULL) {
    printf("FAIL %d cannot allocate %zu B\n", g_rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}
static void buf_free(void* p, int dev) {
  if (dev) {
    torusmpi_device_free(p);
  } else {
    free(p);
  }
}
static void buf_put(void* dst, const void* src, size_t bytes, int dev) {
  if (dev) {
    torusmpi_memcpy(dst, src, bytes);
  } else {
    memcpy(dst, src, bytes);
  }
}

/* Element i of rank r's contribution in iteration it: small enough that sums stay exact. */
static long long value(int r, long i, long it) { return (r + 1) * 7 + (i % 1013) + it % 97; }

static MPI_Comm pick_comm(MPI_Comm* split, MPI_Comm* made) {
  switch (below(3)) {
    case 0:
      return MPI_COMM_WORLD;
    case 1:
      return *split;
    default:
      MPI_Comm_dup(MPI_COMM_WORLD, made);
      return *made;
  }
}

/* The warm-up pass forces these (every rank alike): each collective at the largest size first,
 * from every root, so that buffers kept at their high-water mark (scratch of the runs, staging,
 * pools; a root's are the largest) reach it before the measured part. -1: drawn. */
static int g_force_kind = -1, g_force_count = -1, g_force_root = -1;
enum { kKinds = 10, kLargest = 39999 };

static int pick_count(int p) {
  static const int fixed[] = {0, 1, 7919};
  switch (below(6)) {
    case 0:
      return fixed[below(3)];
    case 1:
      return p - 1;
    case 2:
      return p;
    case 3:
      return p + 1;
    default: { /* a menu, not any size: the engine caches each call shape, and a soak that
                * kept making new ones would measure that cache rather than leaks */
      static const int sizes[] = {2,    3,    5,    17,   64,    100,   257,   1000,  1023,
                                  4096, 8191, 8192, 8193, 12000, 16384, 20011, 32768, 39999};
      return sizes[below((int)(sizeof sizes / sizeof sizes[0]))];
    }
  }
}

/* One collective on comm, checked. */
static void one_collective(MPI_Comm comm, long it, int dev) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  const int kind = g_force_kind >= 0 ? g_force_kind : below(kKinds);
  const int count = g_force_count >= 0 ? g_force_count : pick_count(p);
  const int root = g_force_root >= 0 ? g_force_root % p : below(p);
  const size_t n = (size_t)count * (size_t)p; /* room for the gathered forms */
  long long* in = malloc((n + 1) * sizeof(long long));
  long long* out = malloc((n + 1) * sizeof(long long));
  long long* want = malloc((n + 1) * sizeof(long long));
  void* din = buf_new((n + 1) * sizeof(long long), dev);
  void* dout = buf_new((n + 1) * sizeof(long long), dev);
  size_t out_n = 0; /* elements of out to compare */
  int compare = 1;
  for (size_t i = 0; i < n; ++i) in[i] = value(r, (long)i, it);
  buf_put(din, in, n * sizeof(long long), dev);
  char what[64];
  switch (kind) {
    case 0:
    case 1: {
      const int is_reduce = kind == 1;
      snprintf(what, sizeof what, "%s count %d", is_reduce ? "reduce" : "allreduce", count);
      if (is_reduce) {
        MPI_Reduce(din, dout, count, MPI_LONG_LONG, MPI_SUM, root, comm);
        compare = r == root;
      } else {
        MPI_Allreduce(din, dout, count, MPI_LONG_LONG, MPI_SUM, comm);
      }
      for (int i = 0; i < count; ++i) {
        want[i] = 0;
        for (int q = 0; q < p; ++q) want[i] += value(q, i, it);
      }
      out_n = (size_t)count;
      break;
    }
    case 2:
      snprintf(what, sizeof what, "bcast count %d root %d", count, root);
      MPI_Bcast(din, count, MPI_LONG_LONG, root, comm);
      for (int i = 0; i < count; ++i) want[i] = value(root, i, it);
      buf_put(dout, din, (size_t)count * sizeof(long long), dev);
      out_n = (size_t)count;
      break;
    case 3:
      snprintf(what, sizeof what, "allgather count %d", count);
      MPI_Allgather(din, count, MPI_LONG_LONG, dout, count, MPI_LONG_LONG, comm);
      for (int q = 0; q < p; ++q)
        for (int i = 0; i < count; ++i) want[(size_t)q * count + i] = value(q, i, it);
      out_n = n;
      break;
    case 4:
      snprintf(what, sizeof what, "alltoall count %d", count / p);
      MPI_Alltoall(din, count / p, MPI_LONG_LONG, dout, count / p, MPI_LONG_LONG, comm);
      for (int q = 0; q < p; ++q)
        for (int i = 0; i < count / p; ++i)
          want[(size_t)q * (count / p) + i] = value(q, (long)r * (count / p) + i, it);
      out_n = (size_t)(count / p) * p;
      break;
    case 5:
      snprintf(what, sizeof what, "reduce_scatter_block count %d", count / p);
      MPI_Reduce_scatter_block(din, dout, count / p, MPI_LONG_LONG, MPI_SUM, comm);
      for (int i = 0; i < count / p; ++i) {
        want[i] = 0;
        for (int q = 0; q < p; ++q) want[i] += value(q, (long)r * (count / p) + i, it);
      }
      out_n = (size_t)(count / p);
      break;
    case 6:
      snprintf(what, sizeof what, "gather count %d root %d", count, root);
      MPI_Gather(din, count, MPI_LONG_LONG, dout, count, MPI_LONG_LONG, root, comm);
      for (int q = 0; q < p; ++q)
        for (int i = 0; i < count; ++i) want[(size_t)q * count + i] = value(q, i, it);
      out_n = n;
      compare = r == root;
      break;
    case 7:
      snprintf(what, sizeof what, "scatter count %d root %d", count / p, root);
      MPI_Scatter(din, count / p, MPI_LONG_LONG, dout, count / p, MPI_LONG_LONG, root, comm);
      for (int i = 0; i < count / p; ++i) want[i] = value(root, (long)r * (count / p) + i, it);
      out_n = (size_t)(count / p);
      break;
    case 8:
      snprintf(what, sizeof what, "barrier");
      MPI_Barrier(comm);
      break;
    default: {
      MPI_Request req;
      snprintf(what, sizeof what, "iallreduce count %d", count);
      MPI_Iallreduce(din, dout, count, MPI_LONG_LONG, MPI_SUM, comm, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      for (int i = 0; i < count; ++i) {
        want[i] = 0;
        for (int q = 0; q < p; ++q) want[i] += value(q, i, it);
      }
      out_n = (size_t)count;
      break;
    }
  }
  if (compare && out_n > 0) {
    if (dev) {
      torusmpi_memcpy(out, dout, out_n * sizeof(long long));
    } else {
      memcpy(out, dout, out_n * sizeof(long long));
    }
    size_t bad = 0;
    while (bad < out_n && out[bad] == want[bad]) ++bad;
    if (bad < out_n) {
      check(0, what, "iteration %ld%s: element %zu is %lld, expected %lld", it,
            dev ? " (device)" : "", bad, out[bad], want[bad]);
    }
  }
  buf_free(din, dev);
  buf_free(dout, dev);
  free(in);
  free(out);
  free(want);
}

/* A point-to-point round: each rank sends to every other, receiving with MPI_ANY_SOURCE; sizes
 * differ per sender, some through a strided derived datatype. The warm-up round is it -1: its tag
 * must differ from iteration 0's, or a fast rank's iteration-0 message can match a warm-up receive.
 */
static void one_p2p(long it) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int base = g_force_count >= 0 ? g_force_count : pick_count(p), strided = below(2);
  MPI_Datatype type = MPI_INT;
  if (strided) { /* every other int */
    MPI_Type_vector(2, 1, 2, MPI_INT, &type);
    MPI_Type_commit(&type);
  }
  const int per = strided ? 2 : 1, span = strided ? 3 : 1;
  const int tag = it < 0 ? 30000 : (int)(it % 30000); /* no round matches another's receives */
  int** bufs = calloc((size_t)p, sizeof(int*));
  MPI_Request* reqs = calloc((size_t)(2 * p), sizeof(MPI_Request));
  int nreq = 0;
  for (int q = 0; q < p; ++q) {
    if (q == r) continue;
    const int count = base + r; /* this sender's size */
    bufs[q] = calloc((size_t)count * span + 1, sizeof(int));
    for (int i = 0; i < count * span; ++i) bufs[q][i] = (int)value(r, i, it);
    MPI_Isend(bufs[q], count, type, q, tag, MPI_COMM_WORLD, &reqs[nreq++]);
  }
  const size_t cap = (size_t)(base + p) * span * per + 1;
  int* in = malloc(cap * sizeof(int));
  for (int k = 0; k < p - 1; ++k) {
    MPI_Status st;
    int got = 0;
    MPI_Recv(in, (int)cap, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &got);
    const int q = st.MPI_SOURCE, count = base + q;
    int ok = got == count * per;
    for (int i = 0, j = 0; ok && i < count; ++i) {
      for (int e = 0; e < per; ++e, ++j) {
        const int at = strided ? i * span + 2 * e : i;
        ok = in[j] == (int)value(q, at, it);
      }
    }
    if (!ok) check(0, "p2p round", "iteration %ld: wrong message from rank %d", it, q);
  }
  MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
  for (int q = 0; q < p; ++q) free(bufs[q]);
  free(bufs);
  free(reqs);
  free(in);
  if (strided) MPI_Type_free(&type);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  const double seconds = argc > 1 ? atof(argv[1]) : 10;
  g_device = argc > 2 && strcmp(argv[2], "device") == 0 && torusmpi_device_malloc != NULL;
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, -g_rank, &split);
  /* Warm-up: every collective at the largest size on each communicator, host and device, and a
   * point-to-point round of that size. */
  MPI_Comm comms[2] = {MPI_COMM_WORLD, split};
  int world;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  g_force_count = kLargest;
  for (g_force_kind = 0; g_force_kind < kKinds; ++g_force_kind) {
    for (int c = 0; c < 2; ++c) {
      for (g_force_root = 0; g_force_root < world; ++g_force_root) {
        one_collective(comms[c], 0, 0);
        if (g_device) one_collective(comms[c], 0, 1);
      }
    }
  }
  one_p2p(-1);
  g_force_kind = g_force_count = g_force_root = -1;
  const double t0 = MPI_Wtime();
  long it = 0;
  int measured = 0, stop = 0;
  while (!stop) {
    MPI_Comm made = MPI_COMM_NULL;
    if (below(4) == 0) {
      one_p2p(it);
    } else {
      const int dev = g_device && below(3) == 0;
      one_collective(pick_comm(&split, &made), it, dev);
    }
    if (made != MPI_COMM_NULL) MPI_Comm_free(&made);
    ++it;
    /* Rank 0's clock decides for everyone, every 16 iterations. */
    if (it % 16 == 0) {
      double elapsed = MPI_Wtime() - t0;
      MPI_Bcast(&elapsed, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (!measured && elapsed >= seconds / 2) { /* warmed up: pools and caches are full */
        print_stats("start");
        measured = 1;
      }
      stop = elapsed >= seconds;
    }
  }
  if (!measured) print_stats("start");
  print_stats("end");
  check(1, "soak", "");
  printf("iterations %d %ld\n", g_rank, it);
  MPI_Comm_free(&split);
  int rc = check_done(-1);
  MPI_Finalize();
  return rc;
}
