/* osu_iallreduce: latency and overlap of MPI_Iallreduce (MPI_SUM), OSU Micro-Benchmarks
 * compatible.
 *
 * Size: the vector, in bytes, that every rank gives and gets back summed (count = size / sizeof
 * type), as osu_allreduce. Per size, two timed loops, an untimed MPI_Barrier before every
 * iteration of each:
 *   1. pure communication: MPI_Iallreduce, then MPI_Wait at once; a rank's comm time is its mean
 *      time per call;
 *   2. overlap: MPI_Iallreduce, a dummy compute as long as this rank's comm time from loop 1, then
 *      MPI_Wait. MPI_Test is not called during the compute (OSU's default), so a library that
 *      only progresses inside MPI calls shows no overlap.
 *
 *   rank r:  |Iallreduce| compute (about comm time) |Wait|
 *            |<---------------- overall --------------->|
 *
 * Columns, each the average over ranks of the ranks' means per call: Overall (loop 2, init to the
 * end of MPI_Wait), Compute, with -f Coll. Init (the MPI_Iallreduce call), MPI_Test (always 0, no
 * MPI_Test is made) and MPI_Wait, then Pure Comm. (loop 1) and Overlap(%) = max(0, 100 - 100 *
 * (overall - compute) / pure comm), OSU's definition: 100 when the whole communication hid behind
 * the compute, 0 when none of it did.
 * algbw = size / Pure Comm., busbw = algbw * 2(p-1)/p, in GB/s (nccl-tests' allreduce, README.md).
 * -c: as osu_allreduce, in both loops: rank r gives osu_fill_sum(size, iteration, r) data
 * (MPI_CHAR: at most 127/p each, since Open MPI 4.1 saturates char sums) and checks the result
 * after MPI_Wait against the sum computed locally, outside the timed part.
 */
#include <sched.h>
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_iallreduce",
    .title = "Non-blocking Allreduce Latency Test",
    .metric = OSU_LATENCY,
    .min_ranks = 1,
    .min_size = 1,
    .max_size = 1 << 20,
    .iters = 1000,
    .warmup = 100,
    .iters_large = 100,
    .warmup_large = 10,
    .large_size = 8192,
    .full_usage = "add Coll. Init, MPI_Test and MPI_Wait columns",
    .bus = OSU_BUS_TWO_N1_N,
    .extra_opts = OSU_OPT_SLEEP,
};

/* Keeps the dummy compute's result alive. */
static volatile double sink;

/* Busy arithmetic for `seconds` of wall time, in bursts of well under a microsecond between clock
 * reads, so the target is overshot by one burst at most. */
static void dummy_compute(const struct osu_options* o, double seconds) {
  const double t0 = MPI_Wtime();
  if (o->sleep_compute) {
    /* -S: an accelerator computes and the host thread waits for it as CUDA's yield scheduling
     * does: it reads the clock and gives its core to any thread that wants it (the device engine).
     * Not nanosleep: on a virtual machine a short sleep holds its core in the kernel until the
     * hypervisor delivers the timer (measured on a 2-vCPU guest: 5 us asked, 50-60 us taken, all
     * of it system time, and another thread on that core ran none of it), which both stretches
     * the compute phase far past its length and takes the core from the engine. */
    while (MPI_Wtime() - t0 < seconds) sched_yield();
    return;
  }
  double x = sink;
  do {
    for (int k = 0; k < 64; k++) x = x * 0.999999 + 1e-6;
  } while (MPI_Wtime() - t0 < seconds);
  sink = x;
}

struct state {
  const struct osu_options* o;
  char *sbuf, *rbuf;
  int count;
};

static void fill(struct state* s, size_t size, int i) {
  osu_fill_sum(s->sbuf, s->count, s->o, size, i, s->o->rank);
  osu_poison(s->rbuf, size);
}

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  struct state s = {
      .o = &o, .sbuf = osu_alloc_buf(&o, o.max_size), .rbuf = osu_alloc_buf(&o, o.max_size)};
  long all_errors = 0;
  osu_print_nbc_header(&kBench, &o);

  for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
    s.count = osu_count(&o, size);
    if (s.count < 0) continue;
    const int iters = osu_iters(&kBench, &o, size);
    const int warmup = osu_warmup(&kBench, &o, size);
    const int n = warmup + iters;
    double comm = 0, overall = 0, compute = 0, init = 0, wait = 0; /* seconds, summed */
    long errors = 0;
    MPI_Request req;

    /* 1. Pure communication. Iterations 0..n-1 of the data seeds. */
    fill(&s, size, 0);
    for (int i = 0; i < n; i++) {
      if (o.validate && i > 0) fill(&s, size, i);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Iallreduce(s.sbuf, s.rbuf, s.count, o.type, MPI_SUM, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      const double t = MPI_Wtime() - t0;
      if (i >= warmup) comm += t;
      if (o.validate) errors += osu_check_sum(s.rbuf, 0, s.count, &o, size, i);
    }
    const double target = comm / iters; /* this rank's pure comm time per call */

    /* 2. Overlap with a compute of that length. Iterations n..2n-1 of the data seeds, so a result
     * left from loop 1 fails too. */
    for (int i = 0; i < n; i++) {
      if (o.validate) fill(&s, size, n + i);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Iallreduce(s.sbuf, s.rbuf, s.count, o.type, MPI_SUM, MPI_COMM_WORLD, &req);
      const double t1 = MPI_Wtime();
      dummy_compute(&o, target);
      const double t2 = MPI_Wtime();
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      const double t3 = MPI_Wtime();
      if (i >= warmup) {
        overall += t3 - t0;
        init += t1 - t0;
        compute += t2 - t1;
        wait += t3 - t2;
      }
      if (o.validate) errors += osu_check_sum(s.rbuf, 0, s.count, &o, size, n + i);
    }

    /* Means per call in us, then their averages over ranks. */
    const double us = 1e6 / iters;
    struct osu_nbc_times t;
    double min, max;
    osu_over_ranks(overall * us, &o, &t.overall, &min, &max);
    osu_over_ranks(compute * us, &o, &t.compute, &min, &max);
    osu_over_ranks(init * us, &o, &t.init, &min, &max);
    osu_over_ranks(wait * us, &o, &t.wait, &min, &max);
    osu_over_ranks(comm * us, &o, &t.comm, &min, &max);
    t.test = 0;
    errors = osu_sum_errors(errors, o.nranks, MPI_COMM_WORLD);
    all_errors += errors;
    osu_print_nbc_row(&kBench, &o, size, &t, errors, (double)size);
  }
  osu_free_buf(&o, s.sbuf);
  osu_free_buf(&o, s.rbuf);
  return osu_finish(all_errors);
}
