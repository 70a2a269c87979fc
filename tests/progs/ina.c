/* ina: collectives through the in-network aggregation switch (tests/integration/ina.sh starts
 * torusmpi_switch and forces the ina algorithms; the program itself works on any MPI).
 *
 *   ina [host|device]       allreduce of every op and type the switch aggregates, counts 0, 1,
 *                           p-1, p, p+1 and a large prime, in place and not; reduce_scatter,
 *                           reduce_scatter_block and allgather of ints; float sums of
 *                           non-integers within the bound; barriers with a late rank
 *   ina straggler MS        one allreduce for which the last rank comes MS ms late
 *   ina loop N [COUNT]      N allreduces of COUNT ints (default 64 Ki) in a row, each checked
 *   ina rsloop N PER        N reduce_scatter_blocks of PER ints per rank, each checked
 *   ina comms N             N duplicated communicators, an MPI_Iallreduce on each at once
 *
 * Integer data: exact results whatever the order. Float sums: |got - exact| must be within
 * (p - 1) u sum |x| (u = 2^-24), the bound of adding p numbers in any order, which the switch's
 * float adds (in arrival order) and the instances' own stages together keep to. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

extern int torusmpi_device_malloc(void** ptr, size_t bytes) __attribute__((weak));
extern int torusmpi_device_free(void* ptr) __attribute__((weak));
extern int torusmpi_memcpy(void* dst, const void* src, size_t bytes) __attribute__((weak));

static int g_size, g_device;

static void* mem(size_t bytes) {
  void* p = NULL;
  if (g_device) {
    if (torusmpi_device_malloc(&p, bytes > 0 ? bytes : 1) != MPI_SUCCESS) p = NULL;
  } else {
    p = malloc(bytes > 0 ? bytes : 1);
  }
  if (p == NULL) {
    printf("FAIL %d memory: no %zu bytes\n", g_rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}
static void mem_free(void* p) {
  if (g_device) {
    torusmpi_device_free(p);
  } else {
    free(p);
  }
}
static void put(void* dst, const void* src, size_t n) {
  if (g_device) {
    torusmpi_memcpy(dst, src, n);
  } else {
    memcpy(dst, src, n);
  }
}

/* Rank r's element i for op: values whose result is exact and differs per element. */
static long long value(int op, int r, size_t i) {
  switch (op) {
    case 0: /* sum */
      return (long long)((i * 7 + (size_t)r * 13) % 1000) - 500;
    case 1: /* min, max */
      return (long long)((i * 31 + (size_t)r * 17) % 997);
    default: /* bitwise */
      return (long long)(((i + 1) * 2654435761u) >> (r % 7)) ^ (long long)r << 3;
  }
}

typedef struct {
  MPI_Datatype type;
  const char* name;
  size_t size;
  int kind; /* 0 int32, 1 uint32, 2 int64, 3 uint64, 4 double */
} Type;

static void store(const Type* t, void* buf, size_t i, long long v) {
  switch (t->kind) {
    case 0:
      ((int32_t*)buf)[i] = (int32_t)v;
      break;
    case 1:
      ((uint32_t*)buf)[i] = (uint32_t)v;
      break;
    case 2:
      ((int64_t*)buf)[i] = v;
      break;
    case 3:
      ((uint64_t*)buf)[i] = (uint64_t)v;
      break;
    default:
      ((double*)buf)[i] = (double)v;
  }
}

static int same(const Type* t, const void* buf, size_t i, long long v) {
  switch (t->kind) {
    case 0:
      return ((const int32_t*)buf)[i] == (int32_t)v;
    case 1:
      return ((const uint32_t*)buf)[i] == (uint32_t)v;
    case 2:
      return ((const int64_t*)buf)[i] == v;
    case 3:
      return ((const uint64_t*)buf)[i] == (uint64_t)v;
    default:
      return ((const double*)buf)[i] == (double)v;
  }
}

static long long combine(MPI_Op op, long long a, long long b) {
  if (op == MPI_SUM) return a + b;
  if (op == MPI_MIN) return a < b ? a : b;
  if (op == MPI_MAX) return a > b ? a : b;
  if (op == MPI_BAND) return a & b;
  if (op == MPI_BOR) return a | b;
  return a ^ b;
}

/* One allreduce of n elements, checked on every element. */
static void one_allreduce(MPI_Comm comm, const Type* t, MPI_Op op, const char* opname, int kind,
                          size_t n, int in_place) {
  const size_t bytes = n * t->size;
  void* h = malloc(bytes > 0 ? bytes : 1);
  void* s = mem(bytes);
  void* r = mem(bytes);
  for (size_t i = 0; i < n; ++i) store(t, h, i, value(kind, g_rank, i));
  put(in_place ? r : s, h, bytes);
  int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : s, r, (int)n, t->type, op, comm);
  put(h, r, bytes);
  size_t bad = n;
  for (size_t i = 0; i < n && rc == MPI_SUCCESS; ++i) {
    long long want = value(kind, 0, i);
    for (int q = 1; q < g_size; ++q) want = combine(op, want, value(kind, q, i));
    if (!same(t, h, i, want)) {
      bad = i;
      break;
    }
  }
  char what[128];
  snprintf(what, sizeof what, "allreduce %s %s n=%zu%s", opname, t->name, n,
           in_place ? " in place" : "");
  check(rc == MPI_SUCCESS && (bad == n || n == 0), what, "rc %d, first wrong element %zu", rc, bad);
  free(h);
  mem_free(s);
  mem_free(r);
}

static void test_exact(void) {
  const Type types[] = {{MPI_INT, "MPI_INT", 4, 0},
                        {MPI_UNSIGNED, "MPI_UNSIGNED", 4, 1},
                        {MPI_LONG_LONG, "MPI_LONG_LONG", 8, 2},
                        {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 8, 3},
                        {MPI_DOUBLE, "MPI_DOUBLE", 8, 4}};
  const size_t p = (size_t)g_size;
  const size_t counts[] = {0, 1, p - 1, p, p + 1, 100003};
  for (size_t c = 0; c < sizeof counts / sizeof *counts; ++c) {
    for (int in_place = 0; in_place < 2; ++in_place) {
      one_allreduce(MPI_COMM_WORLD, &types[0], MPI_SUM, "SUM", 0, counts[c], in_place);
    }
  }
  for (size_t t = 0; t < sizeof types / sizeof *types; ++t) {
    one_allreduce(MPI_COMM_WORLD, &types[t], MPI_SUM, "SUM", 0, 4099, 0);
    one_allreduce(MPI_COMM_WORLD, &types[t], MPI_MIN, "MIN", 1, 4099, 1);
    one_allreduce(MPI_COMM_WORLD, &types[t], MPI_MAX, "MAX", 1, 4099, 0);
    if (types[t].kind == 4) continue;
    one_allreduce(MPI_COMM_WORLD, &types[t], MPI_BAND, "BAND", 2, 2053, 0);
    one_allreduce(MPI_COMM_WORLD, &types[t], MPI_BOR, "BOR", 2, 2053, 1);
    one_allreduce(MPI_COMM_WORLD, &types[t], MPI_BXOR, "BXOR", 2, 2053, 0);
  }
}

/* Reduce_scatter (uneven counts, some 0), reduce_scatter_block and allgather of ints. */
static void test_scatter_gather(void) {
  const int p = g_size;
  const int blocks[] = {0, 1, 7, 4099};
  for (size_t k = 0; k < sizeof blocks / sizeof *blocks; ++k) {
    const int per = blocks[k];
    int* counts = malloc((size_t)p * sizeof *counts);
    int total = 0;
    for (int q = 0; q < p; ++q) total += counts[q] = per == 0 ? 0 : per + (q % 3 == 1 ? 0 : q);
    const size_t all = (size_t)(total > 0 ? total : 1) * sizeof(int);
    int* h = malloc(all > (size_t)p * per * sizeof(int) ? all : (size_t)p * per * sizeof(int) + 4);
    void* s = mem(all + (size_t)p * per * sizeof(int));
    void* r = mem(all + (size_t)p * per * sizeof(int));
    /* reduce_scatter: element i of the vector from rank q is i + 3q. */
    for (int i = 0; i < total; ++i) h[i] = i + 3 * g_rank;
    put(s, h, (size_t)total * sizeof(int));
    int rc = MPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int first = 0;
    for (int q = 0; q < g_rank; ++q) first += counts[q];
    put(h, r, (size_t)counts[g_rank] * sizeof(int));
    int ok = rc == MPI_SUCCESS;
    for (int i = 0; i < counts[g_rank] && ok; ++i) {
      ok = h[i] == p * (first + i) + 3 * p * (p - 1) / 2;
    }
    char what[96];
    snprintf(what, sizeof what, "reduce_scatter SUM MPI_INT, blocks about %d", per);
    check(ok, what, "rc %d or a wrong element", rc);
    /* reduce_scatter_block: per elements each. */
    for (int i = 0; i < p * per; ++i) h[i] = i - 5 * g_rank;
    put(s, h, (size_t)p * per * sizeof(int));
    rc = MPI_Reduce_scatter_block(s, r, per, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    put(h, r, (size_t)per * sizeof(int));
    ok = rc == MPI_SUCCESS;
    for (int i = 0; i < per && ok; ++i) ok = h[i] == p * (g_rank * per + i) - 5 * p * (p - 1) / 2;
    snprintf(what, sizeof what, "reduce_scatter_block SUM MPI_INT, blocks of %d", per);
    check(ok, what, "rc %d or a wrong element", rc);
    /* allgather: rank q's element i is 7q + i. */
    for (int i = 0; i < per; ++i) h[i] = 7 * g_rank + i;
    put(s, h, (size_t)per * sizeof(int));
    rc = MPI_Allgather(s, per, MPI_INT, r, per, MPI_INT, MPI_COMM_WORLD);
    put(h, r, (size_t)p * per * sizeof(int));
    ok = rc == MPI_SUCCESS;
    for (int q = 0; q < p && ok; ++q) {
      for (int i = 0; i < per && ok; ++i) ok = h[q * per + i] == 7 * q + i;
    }
    snprintf(what, sizeof what, "allgather MPI_INT, blocks of %d", per);
    check(ok, what, "rc %d or a wrong element", rc);
    free(counts);
    free(h);
    mem_free(s);
    mem_free(r);
  }
}

/* 2^-24, float's unit roundoff. */
static const double kU = 5.9604644775390625e-08;
static double absd(double x) { return x < 0 ? -x : x; }
static const double kScale[7] = {1e-3, 1e-2, 1e-1, 1, 10, 100, 1000};

/* Float sums of non-integers: within the bound of adding p numbers in any order. */
static void test_float(void) {
  const size_t n = 30011;
  float* h = malloc(n * sizeof *h);
  void* s = mem(n * sizeof(float));
  void* r = mem(n * sizeof(float));
  srand(1234 + (unsigned)g_rank);
  for (size_t i = 0; i < n; ++i) {
    /* Mixed magnitudes and signs; every rank can recompute every other's with the same seed. */
    h[i] = (float)(((double)rand() / RAND_MAX - 0.5) * kScale[i % 7]);
  }
  put(s, h, n * sizeof(float));
  int rc = MPI_Allreduce(s, r, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  put(h, r, n * sizeof(float));
  double* exact = calloc(n, sizeof *exact);
  double* mag = calloc(n, sizeof *mag);
  for (int q = 0; q < g_size; ++q) {
    srand(1234 + (unsigned)q);
    for (size_t i = 0; i < n; ++i) {
      float x = (float)(((double)rand() / RAND_MAX - 0.5) * kScale[i % 7]);
      exact[i] += x;
      mag[i] += absd(x);
    }
  }
  size_t bad = n;
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double err = absd((double)h[i] - exact[i]);
    const double bound = (g_size - 1) * kU * mag[i] * 1.0001;
    if (mag[i] > 0 && err / mag[i] > worst) worst = err / mag[i];
    if (err > bound && bad == n) bad = i;
  }
  check(rc == MPI_SUCCESS && bad == n, "allreduce SUM MPI_FLOAT within (p-1) u sum|x|",
        "rc %d, element %zu: got %.9g, exact %.9g, bound %.3g", rc, bad,
        bad < n ? (double)h[bad] : 0.0, bad < n ? exact[bad] : 0.0,
        bad < n ? (g_size - 1) * kU * mag[bad] : 0.0);
  if (g_rank == 0) printf("float sum: worst relative error %.3g (u = %.3g)\n", worst, kU);
  free(h);
  free(exact);
  free(mag);
  mem_free(s);
  mem_free(r);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Each rank in turn enters 20 ms late: nobody may leave before it entered. */
static void test_barrier(void) {
  int ok = 1;
  for (int late = 0; late < g_size; ++late) {
    double entered = 0;
    if (g_rank == late) {
      usleep(20000);
      entered = now();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double left = now();
    MPI_Bcast(&entered, 1, MPI_DOUBLE, late, MPI_COMM_WORLD);
    if (left < entered) ok = 0;
  }
  for (int k = 0; k < 200; ++k) MPI_Barrier(MPI_COMM_WORLD);
  check(ok, "barrier waits for the late rank", "left before it entered");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const char* mode = argc > 1 ? argv[1] : "host";
  g_device = strcmp(mode, "device") == 0;
  const Type int32 = {MPI_INT, "MPI_INT", 4, 0};
  if (strcmp(mode, "host") == 0 || strcmp(mode, "device") == 0) {
    test_exact();
    test_scatter_gather();
    test_float();
    if (!g_device) test_barrier();
  } else if (strcmp(mode, "straggler") == 0) {
    const int ms = argc > 2 ? atoi(argv[2]) : 1000;
    one_allreduce(MPI_COMM_WORLD, &int32, MPI_SUM, "SUM", 0, 5003, 0);
    if (g_rank == g_size - 1) usleep((useconds_t)ms * 1000);
    one_allreduce(MPI_COMM_WORLD, &int32, MPI_SUM, "SUM (last rank late)", 0, 50021, 0);
    one_allreduce(MPI_COMM_WORLD, &int32, MPI_SUM, "SUM (after)", 0, 5003, 1);
  } else if (strcmp(mode, "loop") == 0) {
    const int n = argc > 2 ? atoi(argv[2]) : 100;
    const size_t count = argc > 3 ? (size_t)atol(argv[3]) : 65536;
    for (int k = 0; k < n; ++k)
      one_allreduce(MPI_COMM_WORLD, &int32, MPI_SUM, "SUM loop", 0, count, k % 2);
  } else if (strcmp(mode, "rsloop") == 0) {
    const int n = argc > 2 ? atoi(argv[2]) : 100;
    const int per = argc > 3 ? atoi(argv[3]) : 1000;
    int* h = malloc((size_t)g_size * per * sizeof *h);
    void* s = mem((size_t)g_size * per * sizeof(int));
    void* r = mem((size_t)per * sizeof(int));
    for (int k = 0; k < n; ++k) {
      /* element i from rank q is i + k - 5q */
      for (int i = 0; i < g_size * per; ++i) h[i] = i + k - 5 * g_rank;
      put(s, h, (size_t)g_size * per * sizeof(int));
      int rc = MPI_Reduce_scatter_block(s, r, per, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      put(h, r, (size_t)per * sizeof(int));
      int ok = rc == MPI_SUCCESS;
      for (int i = 0; i < per && ok; ++i)
        ok = h[i] == g_size * (g_rank * per + i + k) - 5 * g_size * (g_size - 1) / 2;
      check(ok, "reduce_scatter_block SUM loop", "call %d: rc %d or a wrong element", k, rc);
    }
    free(h);
    mem_free(s);
    mem_free(r);
  } else if (strcmp(mode, "comms") == 0) {
    const int n = argc > 2 ? atoi(argv[2]) : 8;
    MPI_Comm* comms = malloc((size_t)n * sizeof *comms);
    MPI_Request* reqs = malloc((size_t)n * sizeof *reqs);
    const int count = 20011;
    int* bufs = malloc((size_t)n * count * sizeof *bufs);
    for (int c = 0; c < n; ++c) MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]);
    for (int round = 0; round < 3; ++round) {
      for (int c = 0; c < n; ++c) {
        for (int i = 0; i < count; ++i) bufs[(size_t)c * count + i] = g_rank * 1000 + c + i % 97;
      }
      /* Started in a different order on different ranks: the switch must not deadlock. */
      for (int k = 0; k < n; ++k) {
        const int c = (g_rank % 2 == 0) ? k : n - 1 - k;
        MPI_Iallreduce(MPI_IN_PLACE, &bufs[(size_t)c * count], count, MPI_INT, MPI_SUM, comms[c],
                       &reqs[c]);
      }
      int rc = MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
      int ok = rc == MPI_SUCCESS;
      for (int c = 0; c < n && ok; ++c) {
        for (int i = 0; i < count && ok; ++i) {
          long long want = 0;
          for (int q = 0; q < g_size; ++q) want += q * 1000 + c + i % 97;
          ok = bufs[(size_t)c * count + i] == want;
        }
      }
      check(ok, "concurrent Iallreduce on many communicators", "rc %d or a wrong sum", rc);
    }
    for (int c = 0; c < n; ++c) MPI_Comm_free(&comms[c]);
    free(comms);
    free(reqs);
    free(bufs);
  }
  int status = check_done(g_size);
  MPI_Finalize();
  return status;
}
