/* osu_put_bibw: OSU Micro-Benchmarks compatible one-sided benchmark, 2 ranks.
 *
 * MPI_Put both ways: per synchronization each rank puts -W messages of `size` bytes into the
 * other's window; bandwidth = bytes both ways / time, MB/s (1e6 B/s).
 * -w picks the window's creation, -s the synchronization; osu_rma_run (osu_util.c) has the loop
 * and README.md ("One-sided") what each synchronization times.
 */
#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_put_bibw",
    .title = "MPI_Put Bi-directional Bandwidth Test",
    OSU_RMA_BANDWIDTH_DEFAULTS,
    .syncs = OSU_SYNC_BIT(OSU_SYNC_PSCW) | OSU_SYNC_BIT(OSU_SYNC_FENCE),
    .sync = OSU_SYNC_PSCW,
};

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;
  return osu_finish(osu_rma_run(&kBench, &o, OSU_RMA_PUT, 1));
}
