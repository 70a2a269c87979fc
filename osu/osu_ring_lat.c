/* osu_ring_lat: latency per hop of a token passed around all ranks (torusmpi's own benchmark, in
 * the options and layout of osu_latency).
 *
 * One iteration: rank 0 sends the token (a message of the given size) to rank 1, rank 1 passes it
 * to 2, ..., rank p-1 back to 0 (MPI_Recv then MPI_Send). Latency per hop = total time /
 * (iterations * p); with p = 2 it is osu_latency's figure.
 *
 *   0 --> 1 --> 2 --> 3
 *   ^                 |
 *   +-----------------+        one rank holds the token at a time
 *
 * Only one rank has work at any moment: with more ranks than cores, a library whose waiting ranks
 * keep the CPU makes the token wait for a core, and the figure shows it.
 * -c: every hop carries new data (seed: size, iteration, sender); each rank fills its next token
 *     before it waits and checks the one it got after passing it on.
 * -f: min and max over iterations of the iteration's time / p.
 */
#include <float.h>
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_ring_lat",
    .title = "Ring Latency Test",
    .metric = OSU_LATENCY,
    .extra_opts = OSU_OPT_BUFFERS,
    .min_ranks = 2,
    .min_size = 0,
    .max_size = 1 << 22,
    .iters = 10000,
    .warmup = 1000,
    .iters_large = 1000,
    .warmup_large = 100,
    .large_size = 8192,
    .full_what = "over iterations",
};

enum { kTag = 1 };

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  const int p = o.nranks;
  const int next = (o.rank + 1) % p, prev = (o.rank + p - 1) % p;
  char* sbuf = osu_alloc_buf(&o, o.max_size);
  char* rbuf = osu_alloc_buf(&o, o.max_size);
  long all_errors = 0;
  osu_print_header(&kBench, &o);

  for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
    const int count = osu_count(&o, size);
    if (count < 0) continue;
    const int iters = osu_iters(&kBench, &o, size);
    const int warmup = osu_warmup(&kBench, &o, size);
    const int per_iter = o.validate || o.full;
    double t0 = 0, total = 0, tmin = DBL_MAX, tmax = 0;
    long errors = 0;

    osu_fill(sbuf, count, &o, osu_seed(size, 0, o.rank));
    osu_poison(rbuf, size);
    osu_sync(p, MPI_COMM_WORLD);
    for (int i = 0; i < warmup + iters; i++) {
      const int timed = i >= warmup;
      if (o.validate) osu_fill(sbuf, count, &o, osu_seed(size, i, o.rank));
      if (o.rank == 0) {
        if (timed && (per_iter || i == warmup)) t0 = MPI_Wtime();
        MPI_Send(sbuf, count, o.type, next, kTag, MPI_COMM_WORLD);
        MPI_Recv(rbuf, count, o.type, prev, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (timed && per_iter) {
          double t = MPI_Wtime() - t0;
          total += t;
          if (t < tmin) tmin = t;
          if (t > tmax) tmax = t;
        }
      } else {
        MPI_Recv(rbuf, count, o.type, prev, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, count, o.type, next, kTag, MPI_COMM_WORLD);
      }
      if (o.validate) errors += osu_check(rbuf, count, &o, osu_seed(size, i, prev));
    }
    if (o.rank == 0 && !per_iter) total = MPI_Wtime() - t0;

    errors = osu_sum_errors(errors, p, MPI_COMM_WORLD);
    all_errors += errors;
    osu_print_row(&o, size, total * 1e6 / ((double)iters * p), tmin * 1e6 / p, tmax * 1e6 / p,
                  iters, errors);
  }
  osu_free_buf(&o, sbuf);
  osu_free_buf(&o, rbuf);
  return osu_finish(all_errors);
}
