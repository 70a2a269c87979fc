/* osu_latency: one-way latency between ranks 0 and 1, OSU Micro-Benchmarks compatible.
 *
 * Rank 0 sends a message to rank 1 and waits for one of the same size back (MPI_Send, MPI_Recv);
 * latency = round-trip time / 2, averaged over the iterations. Ranks 2 and up take no part and
 * wait in MPI_Finalize.
 *
 *   rank 0  --size-->  rank 1
 *   rank 0  <--size--  rank 1      one iteration; rank 0 times the iterations after the warmup
 *
 * -c: every iteration sends new data (seed: size, iteration, sender); each side checks what it
 *     received after the iteration, outside the timed part.
 * -f: min and max over iterations of the iteration's round trip / 2; timing each iteration adds
 *     one clock read per iteration, so -c and -f time each iteration and plain runs the loop.
 */
#include <float.h>
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_latency",
    .title = "Latency Test",
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

  long all_errors = 0;
  if (o.rank < 2) {
    const int peer = 1 - o.rank;
    char* sbuf = osu_alloc_buf(&o, o.max_size);
    char* rbuf = osu_alloc_buf(&o, o.max_size);
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
      osu_sync(2, MPI_COMM_WORLD);
      for (int i = 0; i < warmup + iters; i++) {
        const int timed = i >= warmup;
        if (o.validate) osu_fill(sbuf, count, &o, osu_seed(size, i, o.rank));
        if (timed && (per_iter || i == warmup)) t0 = MPI_Wtime();
        if (o.rank == 0) {
          MPI_Send(sbuf, count, o.type, peer, kTag, MPI_COMM_WORLD);
          MPI_Recv(rbuf, count, o.type, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(rbuf, count, o.type, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(sbuf, count, o.type, peer, kTag, MPI_COMM_WORLD);
        }
        if (timed && per_iter) {
          double t = MPI_Wtime() - t0;
          total += t;
          if (t < tmin) tmin = t;
          if (t > tmax) tmax = t;
        }
        if (o.validate) errors += osu_check(rbuf, count, &o, osu_seed(size, i, peer));
      }
      if (!per_iter) total = MPI_Wtime() - t0;

      errors = osu_sum_errors(errors, 2, MPI_COMM_WORLD);
      all_errors += errors;
      osu_print_row(&o, size, total * 1e6 / (2.0 * iters), tmin * 1e6 / 2, tmax * 1e6 / 2, iters,
                    errors);
    }
    osu_free_buf(&o, sbuf);
    osu_free_buf(&o, rbuf);
  }
  return osu_finish(all_errors);
}
