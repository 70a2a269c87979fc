/* osu_util: what torusmpi's OSU-compatible benchmarks share.
 *
 * A benchmark describes itself once (struct osu_bench: name, title, metric, defaults), then
 *   osu_start             MPI_Init, options (the OSU Micro-Benchmarks' names, defaults), rank count
 *   osu_alloc             page-aligned buffers
 *   osu_fill, osu_check   a data pattern that depends on a seed (size, iteration, rank), for -c
 *   osu_print_header/row  the OSU layout: "%-10d" size, then "%18.2f" columns; rank 0 prints
 *   osu_sync, osu_gather  point-to-point barrier and fan-in over ranks 0..n-1
 * The point-to-point benchmarks use nothing but point-to-point calls (osu_sync, osu_gather), so
 * they run on a library whose collectives are not there yet. Collective benchmarks use the rest as
 * is and their own MPI_Barrier. C99, builds with any mpicc.
 */
#ifndef TORUSMPI_OSU_UTIL_H
#define TORUSMPI_OSU_UTIL_H

#include <mpi.h>
#include <stddef.h>

enum osu_metric { OSU_LATENCY, OSU_BANDWIDTH };

/* Options a benchmark takes beyond the common ones (-m -i -x -T -c -f -h). */
#define OSU_OPT_WINDOW 0x1 /* -W window */

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
  int window;            /* default -W */
  const char* column;    /* main column heading; NULL: "Latency (us)" or "Bandwidth (MB/s)" */
  const char* full_what; /* -f in the usage: "over iterations", "over pairs", ... */
};

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
};

/* MPI_Init, parse argv, check the rank count. Returns -1 to go on, or the exit status (0 after -h,
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

/* Element i of a buffer is a small integer of (seed, i), exact in every -T type. */
unsigned osu_seed(size_t size, int iteration, int rank);
void osu_fill(void* buf, int count, const struct osu_options* o, unsigned seed);
/* Number of elements that differ from osu_fill(seed). */
long osu_check(const void* buf, int count, const struct osu_options* o, unsigned seed);
/* Bytes no osu_fill() writes: a stale receive buffer fails the check. */
void osu_poison(void* buf, size_t bytes);

/* Rank 0 only (the others return): title, datatype and column headings; one row per size.
 * A row has the main value (latency in us, bandwidth in MB/s), with -f min, max and iterations,
 * with -c "Pass" when errors == 0. Every row is flushed, so a crash leaves the rows so far. */
void osu_print_header(const struct osu_bench* b, const struct osu_options* o);
void osu_print_row(const struct osu_options* o, size_t size, double value, double min, double max,
                   int iters, long errors);

/* Barrier over ranks 0..n-1 of comm (dissemination, 0-byte messages). */
void osu_sync(int n, MPI_Comm comm);
/* Ranks 0..n-1 each give k doubles; rank 0 gets them in all[rank * k + j]. */
void osu_gather(const double* mine, int k, double* all, int n, MPI_Comm comm);
/* Sum of the ranks' error counts at rank 0 (others get their own back). */
long osu_sum_errors(long errors, int n, MPI_Comm comm);

/* MPI_Finalize, then the exit status: 1 if this rank saw errors (rank 0: any rank's, summed by
 * osu_sum_errors). */
int osu_finish(long errors);

#endif
