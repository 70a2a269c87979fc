/* osu_get_acc_latency: OSU Micro-Benchmarks compatible one-sided benchmark, 2 ranks.
 *
 * MPI_Get_accumulate (MPI_SUM): rank 0 adds `size` bytes of -T elements into rank 1's window and
 * fetches what was there; latency = time per operation.
 * -w picks the window's creation, -s the synchronization; osu_rma_run (osu_util.c) has the loop
 * and README.md ("One-sided") what each synchronization times.
 */
#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_get_acc_latency",
    .title = "MPI_Get_accumulate Latency Test",
    .metric = OSU_LATENCY,
    .extra_opts = OSU_OPT_RMA | OSU_OPT_BUFFERS,
    .min_ranks = 2,
    .min_size = 1,
    .max_size = 1 << 22,
    .iters = 10000,
    .warmup = 100,
    .iters_large = 1000,
    .warmup_large = 10,
    .large_size = 8192,
    .full_what = "over iterations",
    .syncs = OSU_SYNC_ALL,
    .sync = OSU_SYNC_FLUSH,
};

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;
  return osu_finish(osu_rma_run(&kBench, &o, OSU_RMA_GET_ACC, 0));
}
