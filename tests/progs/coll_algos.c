/* coll_algos: every collective through one correctness sweep, with each algorithm of torusmpi's
 * registry forced in turn through the MPI tools interface.
 *
 *   coll_algos [collective/token ...]     any number of ranks, on one host
 *
 * For each argument (e.g. allreduce/ring) every rank writes the token to the control variable
 * TORUSMPI_<COLLECTIVE>_ALGORITHM (MPI_T_cvar_write; all ranks write the same value), reads it
 * back, runs that collective's sweep and writes "" (automatic selection again). The token "auto"
 * forces nothing: the sweep of torusmpi's own choices. While arguments run,
 * TORUSMPI_COLL_FALLBACK is "error": a forced algorithm that cannot run a call fails the call
 * instead of handing it to another algorithm. With no argument, or on a library that is not
 * torusmpi (no "torusmpi" in MPI_Get_library_version, or no such control variable: a reference
 * library), every collective's sweep runs once with the library's own choices; arguments given to
 * such a library get "skip <rank> <argument>: ..." lines, which a script running torusmpi takes
 * for a failure. Known deviations of Open MPI (4.1) from the standard are skipped on it alone,
 * with a "skip" line too.
 *
 * A sweep, on MPI_COMM_WORLD of p ranks: counts 0, 1, p-1, p, p+1 and kLarge (a prime, 24 KB a
 * block: under the default 64 KiB eager limit its messages go eagerly, and coll_algorithms.sh runs
 * a job with TORUSMPI_EAGER_LIMIT=4096 so that they go by rendezvous), each once; at each count
 * every root of the rooted collectives, MPI_IN_PLACE and not (wherever MPI allows it), the blocking
 * call and its MPI_I form by turns (completed by MPI_Wait, or by polling MPI_Test), so that each
 * count sees both forms in place and not. Data are integers that name their sender, receiver and
 * position, mixed with a salt that changes with every case (reductions: -10000..10000, so sums
 * stay exact and far from overflow); MPI_INT always, and the reductions also as MPI_DOUBLE with
 * MPI_SUM and as MPI_INT with MPI_MAX, by turns. Each result is checked element by element against
 * a reference computed here from the known inputs. Vector collectives get uneven counts (a third
 * of the ranks or pairs 0) and displacements that are neither in rank order nor packed: blocks in
 * reverse, rotated order, with gaps between them; Allgatherv's and Gatherv's layouts differ from
 * rank to rank, as MPI allows. Alltoallw mixes MPI_INT and MPI_DOUBLE blocks, by pair of ranks.
 * Receive buffers sit between guard bytes: nothing may be written before or after them, into the
 * gaps between blocks, or anywhere into a send buffer (the part of an MPI_IN_PLACE buffer that the
 * result leaves undefined is not checked). Arguments that are not significant are NULL: receive
 * buffers off the root of Reduce, Gather and Gatherv (and Gatherv's counts and displacements),
 * send buffers off the root of Scatter and Scatterv (and Scatterv's counts and displacements).
 * Barrier: each rank in turn enters late (after a sleep) and no rank may leave before it entered
 * (CLOCK_MONOTONIC, shared by the processes of one host; the time comes by point-to-point), with
 * MPI_Barrier, MPI_Ibarrier + MPI_Wait and MPI_Ibarrier + MPI_Test polling; then many in a row.
 *
 * Output: one "ok/FAIL <rank> <collective>/<token>/count=<n>" line per (argument, count) (barrier:
 * .../late-rank and .../many; token "auto" for the library's own choice), with the first problem
 * and the number of problems on FAIL; "<collective>/<token>/forced" and ".../unforced" for the
 * MPI_T writes; "# <collective>/<token>: N cases, X s" from rank 0 after each sweep; "done <rank>
 * of <p>: ..." last. In the environment, COLL_ALGOS_EVERY_FORM=1 runs every case in both forms
 * and with every (type, op) pair (two to six times the calls), COLL_ALGOS_VERBOSE=1 prints every
 * problem on a "# problem" line and the time of each count. COLL_ALGOS_DEVICE=all gives every call
 * torusmpi's emulated device memory (torusmpi.h) for its buffers, =mixed gives it to even ranks
 * only (odd ranks keep host memory: one call mixes both); the checks are the same.
 * COLL_ALGOS_TYPES=float16 gives the reductions torusmpi's 16-bit floats instead (MPIX_BFLOAT16
 * and MPIX_C_FLOAT16, each with MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN): every such pair at every
 * count, in place and not, on integers and powers of two that both formats hold, so that every
 * result is exact whatever the order (up to 16 ranks); the other collectives are as without it. */
#define _GNU_SOURCE /* clock_gettime, nanosleep, dlsym's RTLD_DEFAULT under -std=c99 */

#include <dlfcn.h>
#include <mpi.h>
/* torusmpi's mpicc has torusmpi.h (MPIX_BFLOAT16, MPIX_C_FLOAT16); Open MPI's has not. */
#if defined(__has_include)
#if __has_include(<torusmpi.h>)
#include <torusmpi.h>
#endif
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

enum { kLarge = 6007 };
static int g_size;

/* --- Collectives -------------------------------------------------------------------------- */
enum Coll {
  kBarrier,
  kBcast,
  kReduce,
  kAllreduce,
  kAllgather,
  kAllgatherv,
  kReduceScatter,
  kReduceScatterBlock,
  kAlltoall,
  kAlltoallv,
  kAlltoallw,
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kScan,
  kExscan,
  kColls
};
static const char* const kCollName[kColls] = {
    "barrier",   "bcast",      "reduce",         "allreduce",
    "allgather", "allgatherv", "reduce_scatter", "reduce_scatter_block",
    "alltoall",  "alltoallv",  "alltoallw",      "gather",
    "gatherv",   "scatter",    "scatterv",       "scan",
    "exscan"};

/* --- Known deviations of the reference library from the standard ------------------------------
 * Such a case is skipped on that library, with one "skip <rank> <what>: ..." line per process, and
 * run everywhere else, torusmpi included. */
static int g_open_mpi; /* MPI_Get_library_version starts with "Open MPI" */
static int deviation(int* said, const char* what, const char* text) {
  if (!g_open_mpi) return 0;
  if (!*said) printf("skip %d %s: known Open MPI deviation: %s\n", g_rank, what, text);
  *said = 1;
  return 1;
}

/* --- Reporting: the first problem of a check, with the case it came from ------------------ */
static char g_label[128]; /* "allreduce/ring" */
static char g_ctx[160];   /* the case being run: "root 2, in place, Ireduce, int-sum" */
static int g_bad;
static char g_first[512];
static long g_cases;
static unsigned g_salt; /* changes with every case: data of one case differ from the last's */

static int g_verbose; /* COLL_ALGOS_VERBOSE=1: every problem on a "# problem" line */
static void problem(const char* fmt, ...) {
  if (g_bad++ > 0 && !g_verbose) return;
  char text[sizeof g_first];
  int n = snprintf(text, sizeof text, "%s: ", g_ctx);
  if (n < 0 || (size_t)n >= sizeof text) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
  va_end(ap);
  if (g_bad == 1) memcpy(g_first, text, sizeof text);
  if (g_verbose) printf("# problem %d %s/%s\n", g_rank, g_label, text);
}
static void report(const char* fmt, ...) {
  char what[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  check(g_bad == 0, what, "%d problems, the first: %s", g_bad, g_first);
  g_bad = 0;
  g_first[0] = '\0';
}
static void set_ctx(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_ctx, sizeof g_ctx, fmt, ap);
  va_end(ap);
  ++g_cases;
  ++g_salt;
}

/* --- Elements ------------------------------------------------------------------------------
 * MPI_INT and MPI_DOUBLE; in float16 mode torusmpi's MPIX_BFLOAT16 and MPIX_C_FLOAT16 too, whose
 * handles come from torusmpi.h where the compiler has it (torusmpi's mpicc), else from the
 * library at run time (dlsym of the objects behind them), so that the program still builds with
 * Open MPI's mpicc and runs on reference libraries. Their values are small integers and powers of
 * two, which both formats hold exactly: written and read here with bit operations. */
enum Kind { kInt, kDouble, kBf16, kHalf };
static MPI_Datatype g_bf16 = MPI_DATATYPE_NULL, g_half = MPI_DATATYPE_NULL;
static int float16_setup(void) {
#ifdef MPIX_BFLOAT16
  g_bf16 = MPIX_BFLOAT16;
  g_half = MPIX_C_FLOAT16;
#else
  void* bf16 = dlsym(RTLD_DEFAULT, "torusmpi_mpix_bfloat16");
  void* half = dlsym(RTLD_DEFAULT, "torusmpi_mpix_c_float16");
  if (bf16 != NULL) g_bf16 = (MPI_Datatype)bf16;
  if (half != NULL) g_half = (MPI_Datatype)half;
#endif
  return g_bf16 != MPI_DATATYPE_NULL && g_half != MPI_DATATYPE_NULL;
}
static size_t esize(int kind) {
  return kind == kInt ? sizeof(int) : kind == kDouble ? sizeof(double) : sizeof(uint16_t);
}
static MPI_Datatype mpi_type(int kind) {
  return kind == kInt ? MPI_INT : kind == kDouble ? MPI_DOUBLE : kind == kBf16 ? g_bf16 : g_half;
}
/* v (exact in the format) as its bits: bfloat16 is a float's upper half; binary16 has a 5-bit
 * exponent biased by 15 and 10 mantissa bits. */
static uint16_t float16_bits(int kind, long long v) {
  if (kind == kBf16) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
  }
  if (v == 0) return 0;
  const uint16_t sign = v < 0 ? 0x8000u : 0;
  const unsigned long long a = (unsigned long long)(v < 0 ? -v : v);
  const int e = 63 - __builtin_clzll(a); /* 2^e <= a < 2^(e+1) */
  const unsigned long long m = e <= 10 ? a << (10 - e) : a >> (e - 10);
  return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | (uint16_t)(m & 0x3ffu));
}
static float float16_value(int kind, uint16_t h) {
  uint32_t u;
  if (kind == kBf16) {
    u = (uint32_t)h << 16;
  } else {
    const uint32_t e = (h >> 10) & 31u, m = h & 0x3ffu;
    if (e == 0) return (h & 0x8000u ? -1.0f : 1.0f) * (float)m / 16777216.0f; /* m 2^-24 */
    u = (uint32_t)(h & 0x8000u) << 16 | (e == 31 ? 0x7f800000u : (e + 112u) << 23) | m << 13;
  }
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static void put(int kind, unsigned char* at, long long v) {
  if (kind == kInt) {
    int x = (int)v;
    memcpy(at, &x, sizeof x);
  } else if (kind == kDouble) {
    double x = (double)v;
    memcpy(at, &x, sizeof x);
  } else {
    uint16_t x = float16_bits(kind, v);
    memcpy(at, &x, sizeof x);
  }
}
/* The element at `at` as text, for messages. */
static const char* show(int kind, const unsigned char* at, char* text, size_t size) {
  if (kind == kInt) {
    int x;
    memcpy(&x, at, sizeof x);
    snprintf(text, size, "%d", x);
  } else if (kind == kDouble) {
    double x;
    memcpy(&x, at, sizeof x);
    snprintf(text, size, "%.17g", x);
  } else {
    uint16_t x;
    memcpy(&x, at, sizeof x);
    snprintf(text, size, "%g (0x%04x)", (double)float16_value(kind, x), x);
  }
  return text;
}

/* The reductions tested: (type, op) pairs. By default MPI_INT and MPI_DOUBLE; in float16 mode
 * (COLL_ALGOS_TYPES=float16) each op MPI defines on floats for each 16-bit type instead. */
enum Op { kSum, kProd, kMax, kMin };
typedef struct {
  const char* name;
  int kind, op;
} Combo;
enum { kIntSum, kDoubleSum, kIntMax };
static const Combo kDefaultCombos[] = {
    {"int-sum", kInt, kSum}, {"double-sum", kDouble, kSum}, {"int-max", kInt, kMax}};
static const Combo kFloat16Combos[] = {{"bf16-sum", kBf16, kSum},   {"half-sum", kHalf, kSum},
                                       {"bf16-prod", kBf16, kProd}, {"half-prod", kHalf, kProd},
                                       {"bf16-max", kBf16, kMax},   {"half-max", kHalf, kMax},
                                       {"bf16-min", kBf16, kMin},   {"half-min", kHalf, kMin}};
static const Combo* g_combos = kDefaultCombos;
static int g_ncombos = sizeof kDefaultCombos / sizeof *kDefaultCombos;
static int g_float16; /* float16 mode */
static int combo_kind(int combo) { return g_combos[combo].kind; }
static MPI_Op combo_op(int combo) {
  switch (g_combos[combo].op) {
    case kProd:
      return MPI_PROD;
    case kMax:
      return MPI_MAX;
    case kMin:
      return MPI_MIN;
    default:
      return MPI_SUM;
  }
}

/* --- Data ---------------------------------------------------------------------------------- */
static uint32_t hash4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  const uint32_t v[4] = {a, b, c, d};
  for (int k = 0; k < 4; ++k) {
    h ^= v[k] + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  return (uint32_t)(h >> 17);
}
/* Element i that rank src sends to rank dst in this case: a 30-bit value naming all three. */
static long long moved(int src, int dst, size_t i) {
  return (long long)(hash4((uint32_t)src, (uint32_t)dst, (uint32_t)i, g_salt) & 0x3fffffffu);
}
/* Element i of rank r's input to a reduction, so that any p of them (p <= 16) combine exactly in
 * any order: -10000..10000 for MPI_INT and MPI_DOUBLE; -16..16 for bfloat16 (sums within 256,
 * where it holds every integer), -120..120 for binary16 (within 2048); for products 1 or -1, or 2
 * or -2 from even ranks (within 2^8). */
static long long operand(int combo, int r, size_t i) {
  const uint32_t h = hash4((uint32_t)r, 0x5EEDu, (uint32_t)i, g_salt);
  const Combo* c = &g_combos[combo];
  if (c->op == kProd) {
    const long long v = r % 2 == 0 && (h & 2u) ? 2 : 1;
    return h & 1u ? -v : v;
  }
  const uint32_t range = c->kind == kBf16 ? 16 : c->kind == kHalf ? 120 : 10000;
  return (long long)(h % (2 * range + 1)) - (long long)range;
}
/* The reduction of element i over ranks lo..hi-1 (hi > lo). */
static long long fold(int combo, int lo, int hi, size_t i) {
  long long acc = operand(combo, lo, i);
  for (int r = lo + 1; r < hi; ++r) {
    long long x = operand(combo, r, i);
    switch (g_combos[combo].op) {
      case kMax:
        acc = x > acc ? x : acc;
        break;
      case kMin:
        acc = x < acc ? x : acc;
        break;
      case kProd:
        acc *= x;
        break;
      default:
        acc += x;
    }
  }
  return acc;
}

/* Uneven counts from a base count c: ranks 1, 4, 7, ... get 0. */
static int vcount(int c, int r) {
  if (c == 0) return 0;
  switch (r % 3) {
    case 0:
      return c + r / 3;
    case 1:
      return 0;
    default:
      return c / 2 + 1;
  }
}
/* What rank s sends rank d in Alltoallv/w: uneven, zeros among them; symmetric (s to d as much
 * as d to s) for MPI_IN_PLACE, where one set of counts serves both ways. */
static int pcount(int c, int s, int d, int sym) {
  if (c == 0) return 0;
  switch ((sym ? s + d : s + 2 * d) % 3) {
    case 0:
      return c + (s + d) % 2;
    case 1:
      return 0;
    default:
      return c / 2 + 1;
  }
}
/* Alltoallw's type between ranks s and d (the same both ways). */
static int wkind(int s, int d) { return (s + d) % 2 ? kDouble : kInt; }

/* Block j goes at displs[j], in elements: blocks in reverse order rotated by shift, a gap of 1
 * or 2 elements before each. Returns the elements spanned. */
static size_t layout(const int* counts, int shift, int* displs) {
  const int p = g_size;
  size_t at = 0;
  for (int k = 0; k < p; ++k) {
    int j = ((p - 1 - k + shift) % p + p) % p;
    at += 1 + (size_t)(j % 2);
    displs[j] = (int)at;
    at += (size_t)counts[j];
  }
  return at + 1;
}
/* The same in bytes, for Alltoallw: block j of counts[j] elements of kinds[j]. */
static size_t layout_bytes(const int* counts, const int* kinds, int shift, int* displs) {
  const int p = g_size;
  size_t at = 0;
  for (int k = 0; k < p; ++k) {
    int j = ((p - 1 - k + shift) % p + p) % p;
    at += 8 * (1 + (size_t)(j % 2));
    displs[j] = (int)at;
    at += (size_t)counts[j] * esize(kinds[j]);
    at = (at + 7) & ~(size_t)7;
  }
  return at + 8;
}

/* --- Buffers between guards ----------------------------------------------------------------
 * An arena is kGuard bytes, the buffer, kGuard bytes; all of it starts as a known pattern.
 * The send arena's bytes are kept before the call and must come back unchanged. For the receive
 * arena the program builds an image of what every byte must hold afterwards (g_want) and whether
 * it matters (g_care: 0 undefined, 1 pattern, 2 inside a result element, 4 + kind its start). */
enum { kGuard = 64 };
typedef struct {
  unsigned char* raw;
  size_t cap, used;
  unsigned char* dev; /* device mode: the mirror the call is given (dev_cap bytes) */
  size_t dev_cap;
  int mirrored; /* the mirror holds the arena for the current call */
} Arena;
static Arena g_send, g_recv;
static unsigned char *g_snap, *g_want, *g_care;
static size_t g_img_cap;
static int g_recv_checked;

static unsigned char pattern(size_t k) { return (unsigned char)(0xA5 ^ (k * 29)); }

static void* xrealloc(void* p, size_t n) {
  void* q = realloc(p, n);
  if (q == NULL) {
    fprintf(stderr, "coll_algos: out of memory (%zu bytes)\n", n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return q;
}
static void grow_images(size_t total) {
  if (total <= g_img_cap) return;
  g_snap = xrealloc(g_snap, total);
  g_want = xrealloc(g_want, total);
  g_care = xrealloc(g_care, total);
  g_img_cap = total;
}
/* The arena ready for a buffer of `bytes`, every byte the pattern; returns the buffer. */
static unsigned char* arena(Arena* a, size_t bytes) {
  size_t total = bytes + 2 * kGuard;
  if (total > a->cap) {
    a->raw = xrealloc(a->raw, total);
    a->cap = total;
  }
  grow_images(total);
  a->used = bytes;
  for (size_t k = 0; k < total; ++k) a->raw[k] = pattern(k);
  return a->raw + kGuard;
}
/* Call once the send buffer holds its input. */
static void snap_send(void) { memcpy(g_snap, g_send.raw, g_send.used + 2 * kGuard); }
/* Call once the receive buffer holds its MPI_IN_PLACE input, if any: from now on every byte must
 * stay as it is, except where want() or undefined() say otherwise. */
static void recv_image(void) {
  memcpy(g_want, g_recv.raw, g_recv.used + 2 * kGuard);
  memset(g_care, 1, g_recv.used + 2 * kGuard);
  g_recv_checked = 1;
}
/* The result element at byte offset `at` of the receive buffer must be v. */
static void want(int kind, size_t at, long long v) {
  size_t es = esize(kind);
  put(kind, g_want + kGuard + at, v);
  memset(g_care + kGuard + at, 2, es);
  g_care[kGuard + at] = (unsigned char)(4 + kind);
}
static void undefined(size_t at, size_t bytes) { memset(g_care + kGuard + at, 0, bytes); }

static void check_recv(void) {
  if (!g_recv_checked) return;
  g_recv_checked = 0;
  const size_t total = g_recv.used + 2 * kGuard;
  for (size_t k = 0; k < total; ++k) {
    if (g_care[k] == 0 || g_recv.raw[k] == g_want[k]) continue;
    if (g_care[k] == 1) {
      if (k < kGuard)
        problem("byte %zu before the receive buffer written", kGuard - k);
      else if (k >= kGuard + g_recv.used)
        problem("byte %zu after the receive buffer written", k - kGuard - g_recv.used);
      else
        problem("receive buffer byte %zu, outside every block, written", k - kGuard);
      return;
    }
    size_t start = k;
    while (g_care[start] < 4) --start;
    int kind = g_care[start] - 4;
    char got[40], wanted[40];
    problem("receive buffer element %zu (byte %zu) is %s, expected %s",
            (start - kGuard) / esize(kind), start - kGuard,
            show(kind, g_recv.raw + start, got, sizeof got),
            show(kind, g_want + start, wanted, sizeof wanted));
    return;
  }
}
static void check_send(void) {
  const size_t total = g_send.used + 2 * kGuard;
  for (size_t k = 0; k < total; ++k) {
    if (g_send.raw[k] == g_snap[k]) continue;
    if (k < kGuard)
      problem("byte %zu before the send buffer written", kGuard - k);
    else if (k >= kGuard + g_send.used)
      problem("byte %zu after the send buffer written", k - kGuard - g_send.used);
    else
      problem("send buffer byte %zu changed", k - kGuard);
    return;
  }
}

/* --- Device buffers ------------------------------------------------------------------------
 * The arenas stay in host memory, where the program writes inputs and checks results. In device
 * mode each has a mirror in device memory: dev() copies the arena there (guards included) and
 * gives the call the mirror's address; after() copies the mirrors back before checking, so a
 * write outside a buffer shows just as it does in host memory. torusmpi's calls are looked up at
 * run time: the program still runs on reference libraries (without COLL_ALGOS_DEVICE). */
static int g_device; /* this rank's buffers are device memory */
static struct {
  int (*malloc)(void** ptr, size_t bytes);
  int (*free)(void* ptr);
  int (*memcpy)(void* dst, const void* src, size_t bytes);
} g_dev;

static int device_setup(const char* mode) {
  if (mode == NULL || strcmp(mode, "") == 0 || strcmp(mode, "none") == 0) return 1;
  *(void**)&g_dev.malloc = dlsym(RTLD_DEFAULT, "torusmpi_device_malloc");
  *(void**)&g_dev.free = dlsym(RTLD_DEFAULT, "torusmpi_device_free");
  *(void**)&g_dev.memcpy = dlsym(RTLD_DEFAULT, "torusmpi_memcpy");
  if (g_dev.malloc == NULL || g_dev.free == NULL || g_dev.memcpy == NULL) return 0;
  if (strcmp(mode, "all") == 0)
    g_device = 1;
  else if (strcmp(mode, "mixed") == 0)
    g_device = g_rank % 2 == 0;
  else
    return 0;
  return 1;
}

static void* dev_in(Arena* a, const void* p) {
  const unsigned char* b = p;
  if (!g_device || b == NULL || b < a->raw || b >= a->raw + a->cap) return NULL;
  const size_t total = a->used + 2 * kGuard;
  if (a->dev_cap < a->cap) {
    if (a->dev != NULL) g_dev.free(a->dev);
    if (g_dev.malloc((void**)&a->dev, a->cap) != MPI_SUCCESS) {
      fprintf(stderr, "coll_algos: out of device memory (%zu bytes)\n", a->cap);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    a->dev_cap = a->cap;
  }
  if (!a->mirrored) g_dev.memcpy(a->dev, a->raw, total);
  a->mirrored = 1;
  return a->dev + (b - a->raw);
}
/* The address a call gets for buffer p: p itself, or its device mirror. */
static void* dev(const void* p) {
  void* d = dev_in(&g_send, p);
  if (d == NULL) d = dev_in(&g_recv, p);
  return d != NULL ? d : (void*)p;
}
static void dev_back(Arena* a) {
  if (a->mirrored) g_dev.memcpy(a->raw, a->dev, a->used + 2 * kGuard);
  a->mirrored = 0;
}

/* Completes a nonblocking call: by MPI_Wait and by MPI_Test polling, in turns. */
static int complete(int rc, MPI_Request* req) {
  static unsigned calls;
  if (rc != MPI_SUCCESS) return rc;
  if (calls++ % 2) return MPI_Wait(req, MPI_STATUS_IGNORE);
  int flag = 0;
  while (!flag) {
    rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}
/* The checks after a call. */
static void after(int rc) {
  dev_back(&g_send);
  dev_back(&g_recv);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    problem("returned %d (%s)", rc, text);
    g_recv_checked = 0;
    return;
  }
  check_recv();
  check_send();
}

static const char* form(int nb) { return nb ? "nonblocking" : "blocking"; }
static const char* place(int in_place) { return in_place ? "in place" : "not in place"; }

/* --- Barrier ------------------------------------------------------------------------------- */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Every rank in turn enters late; told by point-to-point when it entered, no rank may have left
 * before. Ways: 0 MPI_Barrier, 1 MPI_Ibarrier + MPI_Wait, 2 MPI_Ibarrier + MPI_Test polling. */
static void sweep_barrier(void) {
  static const char* const kWay[3] = {"MPI_Barrier", "MPI_Ibarrier+MPI_Wait",
                                      "MPI_Ibarrier+MPI_Test"};
  for (int way = 0; way < 3; ++way) {
    for (int late = 0; late < g_size; ++late) {
      set_ctx("%s, rank %d late", kWay[way], late);
      if (g_rank == late) {
        const struct timespec nap = {0, 20 * 1000 * 1000};
        nanosleep(&nap, NULL);
      }
      double entered = now();
      MPI_Request req;
      int rc, flag = 0;
      if (way == 0) {
        rc = MPI_Barrier(MPI_COMM_WORLD);
      } else {
        rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
        if (rc == MPI_SUCCESS && way == 1) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        while (rc == MPI_SUCCESS && way == 2 && !flag)
          rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      }
      double left = now();
      if (rc != MPI_SUCCESS) problem("returned %d", rc);
      double late_entered = entered;
      if (g_rank == late) {
        for (int r = 0; r < g_size; ++r)
          if (r != late) MPI_Send(&entered, 1, MPI_DOUBLE, r, 77, MPI_COMM_WORLD);
      } else {
        MPI_Recv(&late_entered, 1, MPI_DOUBLE, late, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      if (left < late_entered)
        problem("left %.6f s before rank %d entered", late_entered - left, late);
    }
  }
  report("%s/late-rank", g_label);

  for (int k = 0; k < 50; ++k) {
    set_ctx("barrier %d of 50 in a row", k);
    MPI_Request req;
    int rc =
        k % 2 ? MPI_Barrier(MPI_COMM_WORLD) : complete(MPI_Ibarrier(MPI_COMM_WORLD, &req), &req);
    if (rc != MPI_SUCCESS) problem("returned %d", rc);
  }
  report("%s/many", g_label);
}

/* --- Bcast --------------------------------------------------------------------------------- */
static void one_bcast(int c, int root, int nb) {
  set_ctx("root %d, %s", root, form(nb));
  unsigned char* buf = arena(&g_recv, (size_t)c * sizeof(int));
  if (g_rank == root)
    for (int i = 0; i < c; ++i) put(kInt, buf + i * sizeof(int), moved(root, 0, (size_t)i));
  arena(&g_send, 0);
  snap_send();
  recv_image();
  for (int i = 0; i < c; ++i) want(kInt, i * sizeof(int), moved(root, 0, (size_t)i));
  MPI_Request req;
  buf = dev(buf);
  after(nb ? complete(MPI_Ibcast(buf, c, MPI_INT, root, MPI_COMM_WORLD, &req), &req)
           : MPI_Bcast(buf, c, MPI_INT, root, MPI_COMM_WORLD));
}

/* --- Reduce, Allreduce, Scan, Exscan: count elements each --------------------------------- */
static void one_reduce(int coll, int c, int root, int in_place, int nb, int combo) {
  const int me = g_rank, kind = combo_kind(combo);
  const size_t es = esize(kind);
  const int has_result = coll != kReduce || me == root;
  const int ip = in_place && has_result; /* Reduce: MPI_IN_PLACE at the root only */
  if (coll == kReduce)
    set_ctx("root %d, %s, %s, %s", root, place(in_place), form(nb), g_combos[combo].name);
  else
    set_ctx("%s, %s, %s", place(in_place), form(nb), g_combos[combo].name);
  unsigned char* s = arena(&g_send, ip ? 0 : (size_t)c * es);
  unsigned char* r = has_result ? arena(&g_recv, (size_t)c * es) : NULL;
  unsigned char* input = ip ? r : s;
  for (int i = 0; i < c; ++i) put(kind, input + (size_t)i * es, operand(combo, me, (size_t)i));
  snap_send();
  if (has_result) {
    recv_image();
    for (int i = 0; i < c; ++i) {
      size_t at = (size_t)i * es;
      if (coll == kExscan && me == 0)
        undefined(at, es);
      else if (coll == kExscan)
        want(kind, at, fold(combo, 0, me, (size_t)i));
      else if (coll == kScan)
        want(kind, at, fold(combo, 0, me + 1, (size_t)i));
      else
        want(kind, at, fold(combo, 0, g_size, (size_t)i));
    }
  }
  const void* sb = ip ? MPI_IN_PLACE : dev(s);
  MPI_Datatype t = mpi_type(kind);
  MPI_Op op = combo_op(combo);
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Request q;
  int rc;
  r = dev(r);
  switch (coll) {
    case kReduce:
      rc = nb ? complete(MPI_Ireduce(sb, r, c, t, op, root, w, &q), &q)
              : MPI_Reduce(sb, r, c, t, op, root, w);
      break;
    case kAllreduce:
      rc = nb ? complete(MPI_Iallreduce(sb, r, c, t, op, w, &q), &q)
              : MPI_Allreduce(sb, r, c, t, op, w);
      break;
    case kScan:
      rc = nb ? complete(MPI_Iscan(sb, r, c, t, op, w, &q), &q) : MPI_Scan(sb, r, c, t, op, w);
      break;
    default:
      rc = nb ? complete(MPI_Iexscan(sb, r, c, t, op, w, &q), &q) : MPI_Exscan(sb, r, c, t, op, w);
  }
  after(rc);
}

/* --- Reduce_scatter_block (c each) and Reduce_scatter (vcount(c, r) to rank r) ------------- */
static void one_reduce_scatter(int coll, int c, int in_place, int nb, int combo) {
  const int me = g_rank, p = g_size, kind = combo_kind(combo);
  const size_t es = esize(kind);
  set_ctx("%s, %s, %s", place(in_place), form(nb), g_combos[combo].name);
  int* counts = malloc(sizeof(int) * (size_t)p);
  size_t total = 0, mine = 0;
  for (int r = 0; r < p; ++r) {
    counts[r] = coll == kReduceScatterBlock ? c : vcount(c, r);
    if (r < me) mine += (size_t)counts[r];
    total += (size_t)counts[r];
  }
  const size_t n = (size_t)counts[me];
  unsigned char* s = arena(&g_send, in_place ? 0 : total * es);
  unsigned char* r = arena(&g_recv, (in_place ? total : n) * es);
  unsigned char* input = in_place ? r : s;
  for (size_t i = 0; i < total; ++i) put(kind, input + i * es, operand(combo, me, i));
  snap_send();
  recv_image();
  for (size_t i = 0; i < n; ++i) want(kind, i * es, fold(combo, 0, p, mine + i));
  if (in_place) undefined(n * es, (total - n) * es);
  const void* sb = in_place ? MPI_IN_PLACE : dev(s);
  MPI_Datatype t = mpi_type(kind);
  MPI_Op op = combo_op(combo);
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Request q;
  int rc;
  r = dev(r);
  if (coll == kReduceScatterBlock)
    rc = nb ? complete(MPI_Ireduce_scatter_block(sb, r, c, t, op, w, &q), &q)
            : MPI_Reduce_scatter_block(sb, r, c, t, op, w);
  else
    rc = nb ? complete(MPI_Ireduce_scatter(sb, r, counts, t, op, w, &q), &q)
            : MPI_Reduce_scatter(sb, r, counts, t, op, w);
  after(rc);
  free(counts);
}

/* --- Allgather, Gather (c from each), Allgatherv, Gatherv (vcount(c, r) from rank r) --------- */
static void one_gather(int coll, int c, int root, int in_place, int nb) {
  const int me = g_rank, p = g_size;
  const int vector = coll == kAllgatherv || coll == kGatherv;
  const int all = coll == kAllgather || coll == kAllgatherv;
  const int has_result = all || me == root;
  const int ip = in_place && has_result;
  if (all)
    set_ctx("%s, %s", place(in_place), form(nb));
  else
    set_ctx("root %d, %s, %s", root, place(in_place), form(nb));
  int* counts = malloc(sizeof(int) * (size_t)p);
  int* displs = malloc(sizeof(int) * (size_t)p);
  for (int r = 0; r < p; ++r) counts[r] = vector ? vcount(c, r) : c;
  size_t span = (size_t)c * (size_t)p;
  if (vector) {
    span = layout(counts, me % 2 ? me : 0, displs);
  } else {
    for (int r = 0; r < p; ++r) displs[r] = r * c;
  }
  /* The root's layout is what matters for Gatherv; each rank computes its own all the same. */
  const int sendcount = counts[me];
  unsigned char* s = arena(&g_send, ip ? 0 : (size_t)sendcount * sizeof(int));
  unsigned char* r = has_result ? arena(&g_recv, span * sizeof(int)) : NULL;
  for (int i = 0; i < sendcount; ++i) {
    unsigned char* at =
        ip ? r + ((size_t)displs[me] + (size_t)i) * sizeof(int) : s + (size_t)i * sizeof(int);
    put(kInt, at, moved(me, 0, (size_t)i));
  }
  snap_send();
  if (has_result) {
    recv_image();
    for (int src = 0; src < p; ++src)
      for (int i = 0; i < counts[src]; ++i)
        want(kInt, ((size_t)displs[src] + (size_t)i) * sizeof(int), moved(src, 0, (size_t)i));
  }
  const void* sb = ip ? MPI_IN_PLACE : dev(s);
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Request q;
  int rc;
  r = dev(r);
  /* Counts and displacements are significant at the root only: NULL elsewhere. */
  const int* rc_arg = has_result ? counts : NULL;
  const int* rd_arg = has_result ? displs : NULL;
  switch (coll) {
    case kAllgather:
      rc = nb ? complete(MPI_Iallgather(sb, c, MPI_INT, r, c, MPI_INT, w, &q), &q)
              : MPI_Allgather(sb, c, MPI_INT, r, c, MPI_INT, w);
      break;
    case kAllgatherv:
      rc = nb ? complete(MPI_Iallgatherv(sb, sendcount, MPI_INT, r, counts, displs, MPI_INT, w, &q),
                         &q)
              : MPI_Allgatherv(sb, sendcount, MPI_INT, r, counts, displs, MPI_INT, w);
      break;
    case kGather:
      rc = nb ? complete(MPI_Igather(sb, c, MPI_INT, r, c, MPI_INT, root, w, &q), &q)
              : MPI_Gather(sb, c, MPI_INT, r, c, MPI_INT, root, w);
      break;
    default:
      rc = nb ? complete(
                    MPI_Igatherv(sb, sendcount, MPI_INT, r, rc_arg, rd_arg, MPI_INT, root, w, &q),
                    &q)
              : MPI_Gatherv(sb, sendcount, MPI_INT, r, rc_arg, rd_arg, MPI_INT, root, w);
  }
  after(rc);
  free(counts);
  free(displs);
}

/* --- Scatter (c to each), Scatterv (vcount(c, r) to rank r) -------------------------------- */
static void one_scatter(int coll, int c, int root, int in_place, int nb) {
  const int me = g_rank, p = g_size, vector = coll == kScatterv, is_root = me == root;
  const int ip = in_place && is_root;
  set_ctx("root %d, %s, %s", root, place(in_place), form(nb));
  int* counts = malloc(sizeof(int) * (size_t)p);
  int* displs = malloc(sizeof(int) * (size_t)p);
  for (int r = 0; r < p; ++r) counts[r] = vector ? vcount(c, r) : c;
  size_t span = (size_t)c * (size_t)p;
  if (vector) {
    span = layout(counts, root + 1, displs);
  } else {
    for (int r = 0; r < p; ++r) displs[r] = r * c;
  }
  unsigned char* s = arena(&g_send, is_root ? span * sizeof(int) : 0);
  if (!is_root) s = NULL; /* not significant off the root */
  if (is_root)
    for (int dst = 0; dst < p; ++dst)
      for (int i = 0; i < counts[dst]; ++i)
        put(kInt, s + ((size_t)displs[dst] + (size_t)i) * sizeof(int), moved(root, dst, (size_t)i));
  snap_send();
  const int n = counts[me];
  unsigned char* r = ip ? NULL : arena(&g_recv, (size_t)n * sizeof(int));
  if (!ip) {
    recv_image();
    for (int i = 0; i < n; ++i) want(kInt, (size_t)i * sizeof(int), moved(root, me, (size_t)i));
  }
  void* rb = ip ? MPI_IN_PLACE : dev(r);
  s = dev(s);
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Request q;
  int rc;
  const int* sc_arg = is_root ? counts : NULL;
  const int* sd_arg = is_root ? displs : NULL;
  if (vector)
    rc = nb ? complete(MPI_Iscatterv(s, sc_arg, sd_arg, MPI_INT, rb, n, MPI_INT, root, w, &q), &q)
            : MPI_Scatterv(s, sc_arg, sd_arg, MPI_INT, rb, n, MPI_INT, root, w);
  else
    rc = nb ? complete(MPI_Iscatter(s, c, MPI_INT, rb, c, MPI_INT, root, w, &q), &q)
            : MPI_Scatter(s, c, MPI_INT, rb, c, MPI_INT, root, w);
  after(rc);
  free(counts);
  free(displs);
}

/* --- Alltoall (c each way), Alltoallv and Alltoallw (pcount(c, s, d) from s to d) ----------- */
static void one_alltoall(int coll, int c, int in_place, int nb) {
  const int me = g_rank, p = g_size;
  static int said_inplace, said_self;
  if (coll != kAlltoall && in_place && nb && c > 0 && p > 1 &&
      deviation(&said_inplace, "ialltoallv/w-in_place-zero-counts",
                "libnbc's in-place Ialltoallv and Ialltoallw skip a round's barrier where a count "
                "is 0, and blocks from one peer land in the wrong place (4.1.4)"))
    return;
  if (coll == kAlltoallw && !in_place && !nb && p == 1 &&
      deviation(&said_self, "alltoallw-one-rank",
                "coll/self's Alltoallw multiplies the byte displacements by the extent (4.1.4)"))
    return;
  set_ctx("%s, %s", place(in_place), form(nb));
  int* sc = malloc(sizeof(int) * (size_t)p);
  int* sd = malloc(sizeof(int) * (size_t)p);
  int* rcn = malloc(sizeof(int) * (size_t)p);
  int* rd = malloc(sizeof(int) * (size_t)p);
  int* sk = malloc(sizeof(int) * (size_t)p); /* kinds, Alltoallw */
  int* rk = malloc(sizeof(int) * (size_t)p);
  MPI_Datatype* st = malloc(sizeof(MPI_Datatype) * (size_t)p);
  MPI_Datatype* rt = malloc(sizeof(MPI_Datatype) * (size_t)p);
  size_t sspan, rspan; /* bytes */
  for (int k = 0; k < p; ++k) {
    sc[k] = coll == kAlltoall ? c : pcount(c, me, k, in_place);
    rcn[k] = coll == kAlltoall ? c : pcount(c, k, me, in_place);
    sk[k] = rk[k] = coll == kAlltoallw ? wkind(me, k) : kInt;
    st[k] = mpi_type(sk[k]);
    rt[k] = mpi_type(rk[k]);
  }
  if (coll == kAlltoall) {
    for (int k = 0; k < p; ++k) sd[k] = rd[k] = k * c * (int)sizeof(int);
    sspan = rspan = (size_t)c * (size_t)p * sizeof(int);
  } else if (coll == kAlltoallv) {
    sspan = layout(sc, me, sd) * sizeof(int);
    rspan = layout(rcn, 0, rd) * sizeof(int);
  } else {
    sspan = layout_bytes(sc, sk, me, sd);
    rspan = layout_bytes(rcn, rk, 0, rd);
  }
  /* Byte offset of block k: Alltoallv's displacements count elements, the others' bytes. */
#define SOFF(k) ((size_t)sd[k] * (coll == kAlltoallv ? sizeof(int) : 1))
#define ROFF(k) ((size_t)rd[k] * (coll == kAlltoallv ? sizeof(int) : 1))
  unsigned char* s = arena(&g_send, in_place ? 0 : sspan);
  unsigned char* r = arena(&g_recv, rspan);
  for (int d = 0; d < p; ++d) {
    /* In place the outgoing block to d sits where the block from d will arrive. */
    unsigned char* at = in_place ? r + ROFF(d) : s + SOFF(d);
    size_t es = esize(sk[d]);
    for (int i = 0; i < sc[d]; ++i) put(sk[d], at + (size_t)i * es, moved(me, d, (size_t)i));
  }
  snap_send();
  recv_image();
  for (int src = 0; src < p; ++src) {
    size_t es = esize(rk[src]);
    for (int i = 0; i < rcn[src]; ++i)
      want(rk[src], ROFF(src) + (size_t)i * es, moved(src, me, (size_t)i));
  }
#undef SOFF
#undef ROFF
  const void* sb = in_place ? MPI_IN_PLACE : dev(s);
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Request q;
  int rc;
  r = dev(r);
  switch (coll) {
    case kAlltoall:
      rc = nb ? complete(MPI_Ialltoall(sb, c, MPI_INT, r, c, MPI_INT, w, &q), &q)
              : MPI_Alltoall(sb, c, MPI_INT, r, c, MPI_INT, w);
      break;
    case kAlltoallv:
      rc = nb ? complete(MPI_Ialltoallv(sb, sc, sd, MPI_INT, r, rcn, rd, MPI_INT, w, &q), &q)
              : MPI_Alltoallv(sb, sc, sd, MPI_INT, r, rcn, rd, MPI_INT, w);
      break;
    default:
      rc = nb ? complete(MPI_Ialltoallw(sb, sc, sd, st, r, rcn, rd, rt, w, &q), &q)
              : MPI_Alltoallw(sb, sc, sd, st, r, rcn, rd, rt, w);
  }
  after(rc);
  free(sc);
  free(sd);
  free(rcn);
  free(rd);
  free(sk);
  free(rk);
  free(st);
  free(rt);
}

/* --- Sweeps -------------------------------------------------------------------------------- */
static int g_counts[6], g_ncounts;

static int rooted(int coll) {
  return coll == kBcast || coll == kReduce || coll == kGather || coll == kGatherv ||
         coll == kScatter || coll == kScatterv;
}
static int reduction(int coll) {
  return coll == kReduce || coll == kAllreduce || coll == kScan || coll == kExscan ||
         coll == kReduceScatter || coll == kReduceScatterBlock;
}

/* Every case of one collective at count g_counts[k]: every root, in place and not. The (type, op)
 * pairs of a reduction by turns: MPI_Reduce one per root, the others int-sum and one of the other
 * two, which swap between in place and not from one count to the next. Each case either blocking
 * or nonblocking, by turns, so that every count sees both forms in place and not. With
 * COLL_ALGOS_EVERY_FORM=1, every (type, op) pair, each in both forms. */
static int g_every_form;
static void sweep_count(int coll, int k) {
  const int c = g_counts[k];
  const int roots = rooted(coll) ? g_size : 1;
  const int places = coll == kBcast ? 1 : 2;
  const int combos = reduction(coll) ? g_ncombos : 1;
  for (int root = 0; root < roots; ++root) {
    for (int ip = 0; ip < places; ++ip) {
      for (int combo = 0; combo < combos; ++combo) {
        for (int nb = 0; nb < 2; ++nb) {
          if (!g_every_form && g_float16) {
            /* Two pairs a count (MPI_Reduce: one a root), by turns from the largest count down,
             * so that four counts take every pair once in place and once not, and the largest
             * count takes the sums; blocking or not by turns. */
            const int turn = 2 * (g_ncounts - 1 - k) + 4 * ip + (coll == kReduce ? root : 0);
            if (combo != turn % combos && (coll == kReduce || combo != (turn + 1) % combos))
              continue;
            if (nb != (k + root + ip + combo) % 2) continue;
          } else if (!g_every_form) {
            if (coll == kReduce && combo != (k + root) % combos) continue;
            if (combos > 1 && coll != kReduce && combo != kIntSum && combo != 1 + (k + ip) % 2)
              continue;
            if (nb != (k + root + ip + (combo != kIntSum)) % 2) continue;
          }
          switch (coll) {
            case kBcast:
              one_bcast(c, root, nb);
              break;
            case kReduce:
            case kAllreduce:
            case kScan:
            case kExscan:
              one_reduce(coll, c, root, ip, nb, combo);
              break;
            case kReduceScatter:
            case kReduceScatterBlock:
              one_reduce_scatter(coll, c, ip, nb, combo);
              break;
            case kAllgather:
            case kAllgatherv:
            case kGather:
            case kGatherv:
              one_gather(coll, c, root, ip, nb);
              break;
            case kScatter:
            case kScatterv:
              one_scatter(coll, c, root, ip, nb);
              break;
            default:
              one_alltoall(coll, c, ip, nb);
          }
        }
      }
    }
  }
}

/* The sweep of one collective, reported under g_label. */
static void sweep(int coll) {
  long cases0 = g_cases;
  double t0 = MPI_Wtime();
  if (coll == kBarrier) {
    sweep_barrier();
  } else {
    for (int k = 0; k < g_ncounts; ++k) {
      double tc = MPI_Wtime();
      sweep_count(coll, k);
      if (g_verbose && g_rank == 0)
        printf("# %s/count=%d: %.3f s\n", g_label, g_counts[k], MPI_Wtime() - tc);
      report("%s/count=%d", g_label, g_counts[k]);
    }
  }
  if (g_rank == 0) printf("# %s: %ld cases, %.2f s\n", g_label, g_cases - cases0, MPI_Wtime() - t0);
}

/* --- Forcing an algorithm through MPI_T ---------------------------------------------------- */
static int cvar_index(const char* name) {
  int index = -1;
  return MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS ? index : -1;
}
static void cvar_name(int coll, char* name, size_t size) {
  snprintf(name, size, "TORUSMPI_%s_ALGORITHM", kCollName[coll]);
  for (char* q = name; *q; ++q)
    if (*q >= 'a' && *q <= 'z') *q = (char)(*q - 'a' + 'A');
}
/* Writes text to the string variable called name; reads it back. Returns an MPI_T error or 0;
 * *back gets what was read (or ""). */
static int cvar_write_string(const char* name, const char* text, char* back, size_t back_size) {
  back[0] = '\0';
  int index = cvar_index(name);
  if (index < 0) return MPI_T_ERR_INVALID_NAME;
  MPI_T_cvar_handle handle;
  int count = 0;
  int rc = MPI_T_cvar_handle_alloc(index, NULL, &handle, &count);
  if (rc != MPI_SUCCESS) return rc;
  rc = MPI_T_cvar_write(handle, text);
  if (rc == MPI_SUCCESS && count > 0) {
    char* buf = calloc((size_t)count + 1, 1);
    if (MPI_T_cvar_read(handle, buf) == MPI_SUCCESS) snprintf(back, back_size, "%s", buf);
    free(buf);
  }
  MPI_T_cvar_handle_free(&handle);
  return rc;
}

/* Can this library have its algorithms forced? torusmpi, with the variables. */
static int forcing_possible(char* why, size_t size) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(version, &len);
  char* nl = strchr(version, '\n');
  if (nl != NULL) *nl = '\0';
  if (strstr(version, "torusmpi") == NULL) {
    snprintf(why, size, "the library (%.60s) is not torusmpi", version);
    return 0;
  }
  for (int coll = 0; coll < kColls; ++coll) {
    char name[64];
    cvar_name(coll, name, sizeof name);
    if (cvar_index(name) < 0) {
      snprintf(why, size, "torusmpi has no control variable %s", name);
      return 0;
    }
  }
  if (cvar_index("TORUSMPI_COLL_FALLBACK") < 0) {
    snprintf(why, size, "torusmpi has no control variable TORUSMPI_COLL_FALLBACK");
    return 0;
  }
  return 1;
}

/* One "collective/token" argument: forced, swept, back to automatic selection. The token
 * "auto" forces nothing: the sweep of the library's own choices, under the same checks. */
static void run_forced(const char* arg) {
  char coll_text[64];
  const char* slash = strchr(arg, '/');
  int coll = -1;
  if (slash != NULL && (size_t)(slash - arg) < sizeof coll_text) {
    memcpy(coll_text, arg, (size_t)(slash - arg));
    coll_text[slash - arg] = '\0';
    for (int k = 0; k < kColls; ++k)
      if (strcmp(coll_text, kCollName[k]) == 0) coll = k;
  }
  snprintf(g_label, sizeof g_label, "%s", arg);
  if (coll < 0 || slash[1] == '\0') {
    check(0, g_label, "not collective/token with a known collective");
    return;
  }
  /* "auto" is torusmpi's own choice: "" written, as a check that the variable is there. */
  const char* token = strcmp(slash + 1, "auto") == 0 ? "" : slash + 1;
  char name[64], back[256];
  cvar_name(coll, name, sizeof name);
  int rc = cvar_write_string(name, token, back, sizeof back);
  int forced = rc == MPI_SUCCESS && strcmp(back, token) == 0;
  char what[200];
  snprintf(what, sizeof what, "%s/forced", g_label);
  check(forced, what, "MPI_T_cvar_write(%s, \"%s\") returned %d, reads back \"%s\"", name, token,
        rc, back);
  if (forced) sweep(coll);
  rc = cvar_write_string(name, "", back, sizeof back);
  snprintf(what, sizeof what, "%s/unforced", g_label);
  check(rc == MPI_SUCCESS && back[0] == '\0', what,
        "MPI_T_cvar_write(%s, \"\") returned %d, reads back \"%s\"", name, rc, back);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(version, &len);
  g_open_mpi = strncmp(version, "Open MPI", 8) == 0;
  int provided;
  check_rc(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), "MPI_T_init_thread");

  const int counts[6] = {0, 1, g_size - 1, g_size, g_size + 1, kLarge};
  for (int c = 0; c < 6; ++c) { /* each once (on one rank p-1 is 0) */
    int seen = 0;
    for (int d = 0; d < g_ncounts; ++d) seen |= g_counts[d] == counts[c];
    if (!seen) g_counts[g_ncounts++] = counts[c];
  }

  const char* every = getenv("COLL_ALGOS_EVERY_FORM");
  g_every_form = every != NULL && strcmp(every, "1") == 0;
  const char* verbose = getenv("COLL_ALGOS_VERBOSE");
  g_verbose = verbose != NULL && strcmp(verbose, "1") == 0;
  const char* types = getenv("COLL_ALGOS_TYPES");
  if (types != NULL && strcmp(types, "float16") == 0) {
    g_float16 = 1;
    g_combos = kFloat16Combos;
    g_ncombos = sizeof kFloat16Combos / sizeof *kFloat16Combos;
    check(float16_setup(), "float16 types",
          "COLL_ALGOS_TYPES=float16 needs torusmpi's MPIX_BFLOAT16 and MPIX_C_FLOAT16");
  } else if (types != NULL && types[0] != '\0') {
    check(0, "types", "COLL_ALGOS_TYPES=%s: expected float16, or nothing", types);
  }
  const char* device = getenv("COLL_ALGOS_DEVICE");
  check(device_setup(device), "device buffers",
        "COLL_ALGOS_DEVICE=%s: expected all, mixed or none, on a library with torusmpi's device "
        "memory",
        device);
  char why[200] = "";
  if (argc > 1 && forcing_possible(why, sizeof why)) {
    char back[64];
    int rc = cvar_write_string("TORUSMPI_COLL_FALLBACK", "error", back, sizeof back);
    check(rc == MPI_SUCCESS && strcmp(back, "error") == 0, "coll_fallback=error",
          "MPI_T_cvar_write(TORUSMPI_COLL_FALLBACK, \"error\") returned %d, reads back \"%s\"", rc,
          back);
    for (int a = 1; a < argc; ++a) run_forced(argv[a]);
  } else {
    for (int a = 1; a < argc; ++a)
      printf("skip %d %s: %s: the library's own choices are tested instead\n", g_rank, argv[a],
             why);
    for (int coll = 0; coll < kColls; ++coll) {
      snprintf(g_label, sizeof g_label, "%s/auto", kCollName[coll]);
      sweep(coll);
    }
  }

  if (g_send.dev != NULL) g_dev.free(g_send.dev);
  if (g_recv.dev != NULL) g_dev.free(g_recv.dev);
  free(g_send.raw);
  free(g_recv.raw);
  free(g_snap);
  free(g_want);
  free(g_care);
  check_rc(MPI_T_finalize(), "MPI_T_finalize");
  check_rc(MPI_Finalize(), "finalize");
  return check_done(g_size);
}
