/* osu_bibw: bandwidth between ranks 0 and 1 in both directions at once, OSU Micro-Benchmarks
 * compatible.
 *
 * One iteration, on both ranks: post a window (-W, default 64) of MPI_Irecv from the peer, start a
 * window of MPI_Isend to it, wait for all. Bandwidth = 2 * size * window * iterations / time, in
 * MB/s (1e6 bytes/s), the two directions together; rank 0 times. Ranks 2 and up take no part and
 * wait in MPI_Finalize.
 *
 *   rank 0  ==window x size==>  rank 1
 *   rank 0  <==window x size==  rank 1      at the same time
 *
 * As in OSU, a window's sends share one buffer and its receives another.
 * -c: each rank fills its send buffer for each iteration (seed: size, iteration, rank) before the
 *     timed part and checks its receive buffer after.
 * -f: min and max over iterations of 2 * size * window / iteration time.
 */
#include <float.h>
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_bibw",
    .title = "Bi-Directional Bandwidth Test",
    .metric = OSU_BANDWIDTH,
    .extra_opts = OSU_OPT_WINDOW | OSU_OPT_BUFFERS,
    .min_ranks = 2,
    .min_size = 1,
    .max_size = 1 << 22,
    .iters = 100,
    .warmup = 10,
    .iters_large = 20,
    .warmup_large = 2,
    .large_size = 8192,
    .window = 64,
    .full_what = "over iterations",
};

enum { kTag = 1 };

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  long all_errors = 0;
  if (o.rank < 2) {
    const int peer = 1 - o.rank;
    char* sbuf = osu_alloc_buf(&o, o.max_size);
    char* rbuf = osu_alloc_buf(&o, o.max_size);
    MPI_Request* reqs = malloc(2 * (size_t)o.window * sizeof *reqs);
    /* Not MPI_STATUSES_IGNORE: gcc 12 takes MPICH's (MPI_Status*)1 for an empty array. */
    MPI_Status* stats = malloc(2 * (size_t)o.window * sizeof *stats);
    osu_print_header(&kBench, &o);

    for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
      const int count = osu_count(&o, size);
      if (count < 0) continue;
      const int iters = osu_iters(&kBench, &o, size);
      const int warmup = osu_warmup(&kBench, &o, size);
      double total = 0, tmin = DBL_MAX, tmax = 0;
      long errors = 0;

      osu_fill(sbuf, count, &o, osu_seed(size, 0, o.rank));
      osu_poison(rbuf, size);
      osu_sync(2, MPI_COMM_WORLD);
      for (int i = 0; i < warmup + iters; i++) {
        if (o.validate) osu_fill(sbuf, count, &o, osu_seed(size, i, o.rank));
        double t0 = MPI_Wtime();
        for (int w = 0; w < o.window; w++)
          MPI_Irecv(rbuf, count, o.type, peer, kTag, MPI_COMM_WORLD, &reqs[w]);
        for (int w = 0; w < o.window; w++)
          MPI_Isend(sbuf, count, o.type, peer, kTag, MPI_COMM_WORLD, &reqs[o.window + w]);
        MPI_Waitall(2 * o.window, reqs, stats);
        double t = MPI_Wtime() - t0;
        if (i >= warmup) {
          total += t;
          if (t < tmin) tmin = t;
          if (t > tmax) tmax = t;
        }
        if (o.validate) errors += osu_check(rbuf, count, &o, osu_seed(size, i, peer));
      }

      errors = osu_sum_errors(errors, 2, MPI_COMM_WORLD);
      all_errors += errors;
      const double bytes = 2.0 * (double)size * o.window;
      osu_print_row(&o, size, bytes * iters / total / 1e6, bytes / tmax / 1e6, bytes / tmin / 1e6,
                    iters, errors);
    }
    free(stats);
    free(reqs);
    osu_free_buf(&o, sbuf);
    osu_free_buf(&o, rbuf);
  }
  return osu_finish(all_errors);
}
