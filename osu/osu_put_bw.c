/* osu_put_bw: OSU Micro-Benchmarks compatible one-sided benchmark, 2 ranks.
 *
 * MPI_Put: per synchronization, rank 0 puts -W messages of `size` bytes to consecutive places of
 * rank 1's window; bandwidth = bytes / time, MB/s (1e6 B/s).
 * -w picks the window's creation, -s the synchronization; osu_rma_run (osu_util.c) has the loop
 * and README.md ("One-sided") what each synchronization times.
 */
#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_put_bw",
    .title = "MPI_Put Bandwidth Test",
    OSU_RMA_BANDWIDTH_DEFAULTS,
    .syncs = OSU_SYNC_ALL,
    .sync = OSU_SYNC_FLUSH,
};

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;
  return osu_finish(osu_rma_run(&kBench, &o, OSU_RMA_PUT, 0));
}
