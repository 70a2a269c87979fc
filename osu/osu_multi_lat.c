/* osu_multi_lat: latency of many pairs at once, OSU Micro-Benchmarks compatible.
 *
 * With p ranks (p even), rank i < p/2 ping-pongs with rank i + p/2 as osu_latency does, all pairs
 * at the same time. Each pair's latency is its round-trip time / 2 averaged over the iterations;
 * rank 0 prints the average over the pairs.
 *
 *   p = 6:   0 <--> 3     1 <--> 4     2 <--> 5     (all at once, in each iteration)
 *
 * -c: every iteration sends new data (seed: size, iteration, sender); each rank checks what it
 *     received after the iteration, outside the timed part.
 * -f: min and max over the pairs of the pair's latency.
 */
#include <float.h>
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_multi_lat",
    .title = "Multi Latency Test",
    .metric = OSU_LATENCY,
    .extra_opts = OSU_OPT_BUFFERS,
    .min_ranks = 2,
    .even_ranks = 1,
    .min_size = 0,
    .max_size = 1 << 22,
    .iters = 10000,
    .warmup = 1000,
    .iters_large = 1000,
    .warmup_large = 100,
    .large_size = 8192,
    .full_what = "over pairs",
};

enum { kTag = 1 };

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  const int half = o.nranks / 2;
  const int sender = o.rank < half; /* the pair's rank that times */
  const int peer = sender ? o.rank + half : o.rank - half;
  char* sbuf = osu_alloc_buf(&o, o.max_size);
  char* rbuf = osu_alloc_buf(&o, o.max_size);
  double* lat = malloc((size_t)o.nranks * sizeof *lat); /* rank 0: every rank's latency */
  long all_errors = 0;
  osu_print_header(&kBench, &o);

  for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
    const int count = osu_count(&o, size);
    if (count < 0) continue;
    const int iters = osu_iters(&kBench, &o, size);
    const int warmup = osu_warmup(&kBench, &o, size);
    double t0 = 0, total = 0;
    long errors = 0;

    osu_fill(sbuf, count, &o, osu_seed(size, 0, o.rank));
    osu_poison(rbuf, size);
    osu_sync(o.nranks, MPI_COMM_WORLD);
    for (int i = 0; i < warmup + iters; i++) {
      if (o.validate) osu_fill(sbuf, count, &o, osu_seed(size, i, o.rank));
      if (i >= warmup && (o.validate || i == warmup)) t0 = MPI_Wtime();
      if (sender) {
        MPI_Send(sbuf, count, o.type, peer, kTag, MPI_COMM_WORLD);
        MPI_Recv(rbuf, count, o.type, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(rbuf, count, o.type, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, count, o.type, peer, kTag, MPI_COMM_WORLD);
      }
      if (i >= warmup && o.validate) total += MPI_Wtime() - t0;
      if (o.validate) errors += osu_check(rbuf, count, &o, osu_seed(size, i, peer));
    }
    if (!o.validate) total = MPI_Wtime() - t0;
    const double mine = total * 1e6 / (2.0 * iters);

    osu_gather(&mine, 1, lat, o.nranks, MPI_COMM_WORLD);
    errors = osu_sum_errors(errors, o.nranks, MPI_COMM_WORLD);
    all_errors += errors;
    if (o.rank == 0) {
      double sum = 0, min = DBL_MAX, max = 0;
      for (int r = 0; r < half; r++) {
        sum += lat[r];
        if (lat[r] < min) min = lat[r];
        if (lat[r] > max) max = lat[r];
      }
      osu_print_row(&o, size, sum / half, min, max, iters, errors);
    }
  }
  free(lat);
  osu_free_buf(&o, sbuf);
  osu_free_buf(&o, rbuf);
  return osu_finish(all_errors);
}
