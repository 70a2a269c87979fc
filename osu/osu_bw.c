/* osu_bw: bandwidth from rank 0 to rank 1, OSU Micro-Benchmarks compatible.
 *
 * One iteration: rank 0 starts a window (-W, default 64) of MPI_Isend and waits for them; rank 1
 * posts the window of MPI_Irecv, waits for them and answers with a 4-byte ack, which ends the
 * iteration at rank 0. Bandwidth = size * window * iterations / time, in MB/s (1e6 bytes/s).
 * Ranks 2 and up take no part and wait in MPI_Finalize.
 *
 *   rank 0  ==window x size==>  rank 1
 *   rank 0  <------ack 4-------  rank 1
 *
 * As in OSU, the window's sends share one buffer and its receives another (several receives
 * landing in one buffer at once: every message carries the same bytes, so any order leaves them).
 * -c: rank 0 fills the buffer for each iteration (seed: size, iteration) before its timed part;
 *     rank 1 checks after sending the ack.
 * -f: min and max over iterations of size * window / iteration time.
 */
#include <float.h>
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_bw",
    .title = "Bandwidth Test",
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

enum { kTag = 1, kAckTag = 2, kAckBytes = 4 };

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  long all_errors = 0;
  if (o.rank < 2) {
    const int peer = 1 - o.rank;
    char* buf = osu_alloc_buf(&o, o.max_size); /* rank 0 sends from it, rank 1 receives into it */
    char ack[kAckBytes] = {0};
    MPI_Request* reqs = malloc((size_t)o.window * sizeof *reqs);
    /* Not MPI_STATUSES_IGNORE: gcc 12 takes MPICH's (MPI_Status*)1 for an empty array. */
    MPI_Status* stats = malloc((size_t)o.window * sizeof *stats);
    osu_print_header(&kBench, &o);

    for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
      const int count = osu_count(&o, size);
      if (count < 0) continue;
      const int iters = osu_iters(&kBench, &o, size);
      const int warmup = osu_warmup(&kBench, &o, size);
      double total = 0, tmin = DBL_MAX, tmax = 0;
      long errors = 0;

      if (o.rank == 0)
        osu_fill(buf, count, &o, osu_seed(size, 0, 0));
      else
        osu_poison(buf, size);
      osu_sync(2, MPI_COMM_WORLD);
      for (int i = 0; i < warmup + iters; i++) {
        if (o.rank == 0) {
          if (o.validate) osu_fill(buf, count, &o, osu_seed(size, i, 0));
          double t0 = MPI_Wtime();
          for (int w = 0; w < o.window; w++)
            MPI_Isend(buf, count, o.type, peer, kTag, MPI_COMM_WORLD, &reqs[w]);
          MPI_Waitall(o.window, reqs, stats);
          MPI_Recv(ack, kAckBytes, MPI_CHAR, peer, kAckTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          double t = MPI_Wtime() - t0;
          if (i >= warmup) {
            total += t;
            if (t < tmin) tmin = t;
            if (t > tmax) tmax = t;
          }
        } else {
          for (int w = 0; w < o.window; w++)
            MPI_Irecv(buf, count, o.type, peer, kTag, MPI_COMM_WORLD, &reqs[w]);
          MPI_Waitall(o.window, reqs, stats);
          MPI_Send(ack, kAckBytes, MPI_CHAR, peer, kAckTag, MPI_COMM_WORLD);
          if (o.validate) errors += osu_check(buf, count, &o, osu_seed(size, i, 0));
        }
      }

      errors = osu_sum_errors(errors, 2, MPI_COMM_WORLD);
      all_errors += errors;
      const double bytes = (double)size * o.window;
      osu_print_row(&o, size, bytes * iters / total / 1e6, bytes / tmax / 1e6, bytes / tmin / 1e6,
                    iters, errors);
    }
    free(stats);
    free(reqs);
    osu_free_buf(&o, buf);
  }
  return osu_finish(all_errors);
}
