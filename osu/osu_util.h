/* osu_util: what torusmpi's OSU-compatible benchmarks share.
 *
 * A benchmark describes itself once (struct osu_bench: name, title, metric, defaults), then
 *   osu_start             MPI_Init, options (the OSU Micro-Benchmarks' names, defaults), rank count
 *   osu_alloc             page-aligned buffers
 *   osu_fill, osu_check   a data pattern that depends on a seed (size, iteration, rank), for -c
 *   osu_fill_sum, osu_check_sum   the same for MPI_SUM reductions: the expected sum is computed
 *                         locally, exact in every -T type
 *   osu_print_header/row  the OSU layout: "%-10d" size, then "%18.2f" columns; rank 0 prints
 *   osu_sync, osu_gather  point-to-point barrier and fan-in over ranks 0..n-1
 *   osu_coll_run          a blocking collective benchmark's whole size loop (timing, statistics
 *                         over ranks, OSU's collective layout plus algbw and busbw)
 * The point-to-point benchmarks use nothing but point-to-point calls (osu_sync, osu_gather), so
 * they run on a library whose collectives are not there yet. Collective benchmarks use the rest as
 * is and their own MPI_Barrier; their statistics still travel by osu_gather, so a broken
 * collective cannot garble its own report. C99, builds with any mpicc.
 */
#ifndef TORUSMPI_OSU_UTIL_H
#define TORUSMPI_OSU_UTIL_H

#include <mpi.h>
#include <stddef.h>

enum osu_metric { OSU_LATENCY, OSU_BANDWIDTH };

/* Collective benchmarks: busbw = algbw * factor (nccl-tests' definitions, README.md). */
enum osu_bus {
  OSU_BUS_NONE,     /* no algbw and busbw columns (barrier) */
  OSU_BUS_ONE,      /* 1: bcast, reduce */
  OSU_BUS_TWO_N1_N, /* 2(n-1)/n: allreduce */
  OSU_BUS_N1_N,     /* (n-1)/n: reduce_scatter, allgather, alltoall, gather, scatter */
};

/* Options a benchmark takes beyond the common ones (-m -i -x -T -c -f -d -a -h). */
#define OSU_OPT_WINDOW 0x1 /* -W window */
#define OSU_OPT_BUFFERS                                                      \
  0x2 /* point-to-point: two positional H|D, the buffers' places on even and \
         odd ranks (rank 0 and rank 1), as the OSU benchmarks' "D D" */
#define OSU_OPT_THREADS                                                       \
  0x4 /* -t threads: threads per rank; MPI is started at MPI_THREAD_MULTIPLE, \
         and a library that does not provide it stops the benchmark */

#define OSU_OPT_SLEEP                                                           \
  0x8 /* -S: the overlap's compute phase yields the host core instead of        \
         spinning on it: the work of an accelerator, which leaves the core free \
         (OSU's dummy compute burns the core a library's progress thread or     \
         device engine would use) */

#define OSU_OPT_RMA                                                   \
  0x10 /* one-sided: -w create|allocate|dynamic, -s SYNC (the bench's \
          syncs); exactly 2 ranks; origin buffers take -d neuron's places */

/* One-sided window creation (-w) and synchronization (-s), OSU's names. */
enum osu_win { OSU_WIN_CREATE, OSU_WIN_ALLOCATE, OSU_WIN_DYNAMIC };
enum osu_sync {
  OSU_SYNC_PSCW,
  OSU_SYNC_FENCE,
  OSU_SYNC_LOCK,
  OSU_SYNC_FLUSH,
  OSU_SYNC_FLUSH_LOCAL,
  OSU_SYNC_LOCK_ALL,
};
#define OSU_SYNC_BIT(s) (1u << (s))
#define OSU_SYNC_ALL 0x3fu

struct osu_bench {
  const char* name;  /* "osu_latency": usage */
  const char* title; /* "Latency Test": header "# torusmpi OSU-compatible MPI Latency Test" */
  enum osu_metric metric;
  unsigned extra_opts; /* OSU_OPT_* */
  int min_ranks;       /* fewer ranks: error */
  int even_ranks;      /* 1: the rank count must be even */
  size_t min_size, max_size;
  int iters, warmup;             /* sizes <= large_size */
  int iters_large, warmup_large; /* sizes > large_size */
  size_t large_size;
  int window;             /* default -W */
  const char* column;     /* main column heading; NULL: "Latency (us)" or "Bandwidth (MB/s)" */
  const char* full_what;  /* -f in the usage: "over iterations", "over pairs", ... */
  const char* full_usage; /* -f in the usage if not "add min and max (full_what) and iterations" */
  enum osu_bus bus;       /* collectives only */
  int sizeless;           /* 1: no message size (barrier): no -m, -T, -c, no size column */
  /* One-sided (OSU_OPT_RMA): the -s values taken (OSU_SYNC_BIT mask) and the default. */
  unsigned syncs;
  enum osu_sync sync;
  /* Nonzero: the only size, in bytes of a fixed datatype (fetch_and_op, compare_and_swap: 8, a
   * long long): no -m, no -T. */
  size_t fixed_size;
};

/* What the OSU Micro-Benchmarks' collective benchmarks default to: sizes 1 B to 1 MiB, 1000
 * iterations and 100 warm-up up to 8 KiB, 100 and 10 above; -f figures over ranks. A benchmark's
 * struct osu_bench starts with it: { OSU_COLL_DEFAULTS, .name = ..., .title = ..., .bus = ... }. */
#define OSU_COLL_DEFAULTS                                                                   \
  .metric = OSU_LATENCY, .min_ranks = 1, .min_size = 1, .max_size = 1 << 20, .iters = 1000, \
  .warmup = 100, .iters_large = 100, .warmup_large = 10, .large_size = 8192,                \
  .full_what = "over ranks"

/* The one-sided benchmarks' descriptors start with these (osu_put_latency.c, osu_put_bw.c):
 * latency from min to max bytes, bandwidth over a window; each names its syncs after them. */
#define OSU_RMA_LATENCY_DEFAULTS(min, max)                                                  \
  .metric = OSU_LATENCY, .extra_opts = OSU_OPT_RMA | OSU_OPT_BUFFERS, .min_ranks = 2,       \
  .min_size = (min), .max_size = (max), .iters = 10000, .warmup = 100, .iters_large = 1000, \
  .warmup_large = 10, .large_size = 8192, .full_what = "over iterations"
#define OSU_RMA_BANDWIDTH_DEFAULTS                                                       \
  .metric = OSU_BANDWIDTH, .extra_opts = OSU_OPT_RMA | OSU_OPT_BUFFERS | OSU_OPT_WINDOW, \
  .min_ranks = 2, .min_size = 1, .max_size = 1 << 20, .iters = 100, .warmup = 10,        \
  .iters_large = 20, .warmup_large = 2, .large_size = 8192, .window = 32,                \
  .full_what = "over iterations"

struct osu_options {
  size_t min_size, max_size;
  int iters, warmup; /* -1: the benchmark's defaults, by size */
  int window;
  MPI_Datatype type;
  const char* type_name; /* "MPI_CHAR" */
  int type_size;
  int validate; /* -c */
  int full;     /* -f */
  int rank, nranks;
  /* -d neuron: data buffers in torusmpi's emulated device memory (torusmpi.h), for every rank of
   * a collective, or by the positional "H|D H|D" of a point-to-point benchmark (even ranks take
   * the first, odd ranks the second; without them "D D"). Other MPI libraries have no device
   * memory: -d neuron then fails with a message. */
  int device;         /* -d neuron given */
  char where[2];      /* 'H' or 'D' for even and odd ranks */
  int show_algorithm; /* -a: collectives add an Algorithm column (torusmpi only) */
  int threads;        /* -t: threads per rank (OSU_OPT_THREADS), 1 otherwise */
  int sleep_compute;  /* -S (OSU_OPT_SLEEP) */
  enum osu_win win;   /* -w (OSU_OPT_RMA), default allocate */
  enum osu_sync sync; /* -s (OSU_OPT_RMA), default the bench's */
};

/* MPI_Init (MPI_Init_thread at MPI_THREAD_MULTIPLE with OSU_OPT_THREADS), parse argv, check the
 * rank count. Returns -1 to go on, or the exit status (0 after -h,
 * 1 after a bad option or rank count) once MPI_Finalize has run; rank 0 has said why. */
int osu_start(const struct osu_bench* b, int* argc, char*** argv, struct osu_options* o);

/* Message sizes: for (s = o->min_size; s <= o->max_size; s = osu_next_size(s)). Sizes are bytes;
 * one that is not a multiple of the datatype's size is skipped (osu_count() < 0). */
size_t osu_next_size(size_t size);
int osu_count(const struct osu_options* o, size_t size);
int osu_iters(const struct osu_bench* b, const struct osu_options* o, size_t size);
int osu_warmup(const struct osu_bench* b, const struct osu_options* o, size_t size);

/* Page-aligned and touched; exits with a message if memory is short. */
void* osu_alloc(size_t bytes);
/* A data buffer of this rank: device memory under -d neuron where this rank's place is D, else
 * osu_alloc's; osu_free_buf gives it back. The fill, check and poison functions below take either
 * kind (device data is staged through host memory, outside the timed part). */
void* osu_alloc_buf(const struct osu_options* o, size_t bytes);
void osu_free_buf(const struct osu_options* o, void* buf);

/* Element i of a buffer is a small integer of (seed, i), exact in every -T type. */
unsigned osu_seed(size_t size, int iteration, int rank);
/* The seed of the block rank `from` sends rank `to` (alltoall, scatter): blocks to different
 * destinations differ. */
unsigned osu_seed_to(size_t size, int iteration, int from, int to);
void osu_fill(void* buf, int count, const struct osu_options* o, unsigned seed);
/* Number of elements that differ from osu_fill(seed). */
long osu_check(const void* buf, int count, const struct osu_options* o, unsigned seed);
/* Frees the calling thread's host copy of device data, made by the fill and check functions; a
 * thread that used them calls it before it ends. */
void osu_release_stage(void);
/* Element k of a buffer of o->type: (char*)buf + k * type size. */
void* osu_elem(void* buf, const struct osu_options* o, size_t k);

/* MPI_SUM data. Rank r's vector (osu_fill_sum(..., r)) holds small non-negative integers of
 * (size, iteration, r, element), small enough that the sum over all p ranks stays in the type's
 * range: Open MPI 4.1 saturates MPI_CHAR sums instead of wrapping, so with -T mpi_char an element
 * is at most 127 / p (0..63 with 2 ranks, 0..1 from 64 to 127 ranks, all zero above) and a sum at
 * most 127; int and float elements are 0..100 (sums exact in a float up to 160000 ranks).
 * osu_check_sum counts the wrong elements among first..first+count-1 of the sum over ranks
 * 0..p-1, computed locally (O(p) once, then O(count)). */
void osu_fill_sum(void* buf, int count, const struct osu_options* o, size_t size, int iteration,
                  int rank);
long osu_check_sum(const void* buf, size_t first, int count, const struct osu_options* o,
                   size_t size, int iteration);
/* Bytes that are no osu_fill() value and no sum: a stale receive buffer fails the check. */
void osu_poison(void* buf, size_t bytes);

/* Rank 0 only (the others return): title, datatype and column headings; one row per size.
 * A row has the main value (latency in us, bandwidth in MB/s), with -f min, max and iterations,
 * with -c "Pass" when errors == 0. Every row is flushed, so a crash leaves the rows so far. */
void osu_print_header(const struct osu_bench* b, const struct osu_options* o);
void osu_print_row(const struct osu_options* o, size_t size, double value, double min, double max,
                   int iters, long errors);

/* Barrier over ranks 0..n-1 of comm (dissemination, 0-byte messages). */
void osu_sync(int n, MPI_Comm comm);
/* Ranks 0..n-1 each give k doubles; rank 0 gets them in all[rank * k + j] (others may pass
 * NULL). */
void osu_gather(const double* mine, int k, double* all, int n, MPI_Comm comm);
/* Sum of the ranks' error counts at rank 0 (others get their own back). */
long osu_sum_errors(long errors, int n, MPI_Comm comm);

/* Collective benchmarks. A benchmark gives its part of each size and iteration; osu_coll_run does
 * the rest as OSU's collective benchmarks do: per size, fill (iteration 0), MPI_Barrier, then
 * warmup + iterations of { -c: fill; MPI_Barrier; time call(); -c: check }, so an MPI_Barrier
 * separates the iterations and is not timed. Each rank's figure is its mean time per call; the
 * row has their average over ranks (-f: min and max over ranks, iterations), -c Pass/Fail, then
 * algbw = bytes / average time and busbw = algbw * the bench's factor, in GB/s (1e9 B/s). */
struct osu_coll_ops {
  /* Before a size (untimed): set up counts for `size` bytes. Returns the bytes algbw counts, or
   * a negative number to skip the size. */
  double (*prepare)(void* state, size_t size);
  /* Iteration i's data (untimed): once per size with i = 0, and before every iteration with -c.
   * Receive buffers are poisoned here, so a result that is not written fails the check. */
  void (*fill)(void* state, size_t size, int i);
  /* The collective, timed. */
  void (*call)(void* state);
  /* -c, after iteration i (untimed): the number of wrong elements this rank holds. */
  long (*check)(void* state, size_t size, int i);
};
/* Header and rows at rank 0; returns the errors (rank 0: summed over ranks). */
long osu_coll_run(const struct osu_bench* b, const struct osu_options* o,
                  const struct osu_coll_ops* ops, void* state);

/* Statistics over ranks 0..p-1 of one double each rank gives (microseconds): at rank 0 the
 * average, min and max; the others get their own value in all three. */
void osu_over_ranks(double mine, const struct osu_options* o, double* avg, double* min,
                    double* max);
/* busbw's factor for p ranks. */
double osu_bus_factor(enum osu_bus bus, int p);

/* OSU's collective layout (rank 0 prints, rows are flushed):
 *   # Size       Avg Latency(us)   [Min Latency(us)   Max Latency(us)  Iterations]
 *     [Validation]   algbw(GB/s)   busbw(GB/s)
 * Iterations is 12 wide as OSU prints it, the rest 18. Sizeless (barrier): "# Avg Latency(us)"
 * and rows without a size, no Datatype line, no bandwidth. */
void osu_print_coll_header(const struct osu_bench* b, const struct osu_options* o);
void osu_print_coll_row(const struct osu_bench* b, const struct osu_options* o, size_t size,
                        double avg_us, double min_us, double max_us, int iters, long errors,
                        double bytes);

/* Non-blocking collectives, OSU's layout:
 *   # Size  Overall(us)  Compute(us)  [Coll. Init(us)  MPI_Test(us)  MPI_Wait(us)]
 *     Pure Comm.(us)  Overlap(%)  [Validation]  algbw(GB/s)  busbw(GB/s)
 * all averages over ranks of the ranks' means per call; overlap = max(0, 100 - 100 * (overall -
 * compute) / pure comm); algbw from the pure communication time. */
struct osu_nbc_times {
  double overall, compute, init, test, wait, comm; /* us */
};
void osu_print_nbc_header(const struct osu_bench* b, const struct osu_options* o);
void osu_print_nbc_row(const struct osu_bench* b, const struct osu_options* o, size_t size,
                       const struct osu_nbc_times* t, long errors, double bytes);

/* One-sided benchmarks: rank 0 is the origin (both ranks under osu_put_bibw and under fence and
 * pscw latency, which alternate as OSU's do), rank 1 the target. See README.md, "One-sided". */
enum osu_rma_op {
  OSU_RMA_PUT,
  OSU_RMA_GET,
  OSU_RMA_ACC,     /* MPI_Accumulate, MPI_SUM */
  OSU_RMA_GET_ACC, /* MPI_Get_accumulate, MPI_SUM */
  OSU_RMA_FOP,     /* MPI_Fetch_and_op, MPI_SUM on a long long */
  OSU_RMA_CAS,     /* MPI_Compare_and_swap on a long long */
};
/* Latency (b->metric OSU_LATENCY: one operation per synchronization) or bandwidth (-W operations
 * per synchronization; bidirectional when `bidir`). Returns the errors (rank 0: both ranks'). */
long osu_rma_run(const struct osu_bench* b, const struct osu_options* o, enum osu_rma_op op,
                 int bidir);

/* MPI_Finalize, then the exit status: 1 if this rank saw errors (rank 0: any rank's, summed by
 * osu_sum_errors). */
int osu_finish(long errors);

#endif
