/* osu_barrier: latency of MPI_Barrier, OSU Micro-Benchmarks compatible.
 *
 * No message size: OSU's layout without the size column ("# Avg Latency(us)", then one row), and
 * no -m, -T or -c. Every rank times each of its MPI_Barrier calls, an untimed MPI_Barrier between
 * them (osu_coll_run, as OSU does); Avg Latency is the average over ranks of each rank's mean time
 * per call, -f adds the min and max over ranks of those means and the iterations. No algbw or
 * busbw: a barrier moves no data.
 *
 *   r0 --+         +--> r0
 *   r1 --+ all in  +--> r1      nobody leaves before everybody has entered
 *   r2 --+         +--> r2
 */
#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_barrier",
    .title = "Barrier Latency Test",
    .metric = OSU_LATENCY,
    .min_ranks = 1,
    .iters = 1000,
    .warmup = 100,
    .iters_large = 1000,
    .warmup_large = 100,
    .full_what = "over ranks",
    .bus = OSU_BUS_NONE,
    .sizeless = 1,
};

static void call(void* state) {
  (void)state;
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  const struct osu_coll_ops ops = {.call = call};
  return osu_finish(osu_coll_run(&kBench, &o, &ops, NULL));
}
