/* osu_put_latency: OSU Micro-Benchmarks compatible one-sided benchmark, 2 ranks.
 *
 * MPI_Put: rank 0 puts `size` bytes into rank 1's window and completes them by the
 * synchronization; latency = time per operation.
 * -w picks the window's creation, -s the synchronization; osu_rma_run (osu_util.c) has the loop
 * and README.md ("One-sided") what each synchronization times.
 */
#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_put_latency",
    .title = "MPI_Put Latency Test",
    OSU_RMA_LATENCY_DEFAULTS(1, 1 << 22),
    .syncs = OSU_SYNC_ALL,
    .sync = OSU_SYNC_FLUSH,
};

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;
  return osu_finish(osu_rma_run(&kBench, &o, OSU_RMA_PUT, 0));
}
