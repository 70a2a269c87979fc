/* osu_latency_mt: one-way latency between ranks 0 and 1 with several threads on each side, in the
 * shape of the OSU Micro-Benchmarks' osu_latency_mt (MPI_THREAD_MULTIPLE).
 *
 * Thread i of rank 0 ping-pongs with thread i of rank 1 on tag i of MPI_COMM_WORLD (MPI_Send,
 * MPI_Recv), all pairs at once; latency = round-trip time / 2, averaged over the iterations and
 * then over the pairs. Every pair competes for the same library, so the figure shows what the
 * library's thread safety costs: a library that serializes its calls gives each pair a share.
 *
 *   rank 0 thread i  --size, tag i-->  rank 1 thread i      T pairs at once (-t T, default 2)
 *   rank 0 thread i  <--size, tag i--  rank 1 thread i
 *
 * -c: every iteration sends new data (seed: size, iteration, sender, thread); each side checks
 *     what it received, outside the timed part.
 * -f: min and max over the pairs of the pair's mean.
 * Ranks 2 and up take no part and wait in MPI_Finalize.
 */
#include <float.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    .name = "osu_latency_mt",
    .title = "Multi-threaded Latency Test",
    .metric = OSU_LATENCY,
    .extra_opts = OSU_OPT_THREADS | OSU_OPT_BUFFERS,
    .min_ranks = 2,
    .min_size = 0,
    .max_size = 1 << 22,
    .iters = 10000,
    .warmup = 1000,
    .iters_large = 1000,
    .warmup_large = 100,
    .large_size = 8192,
    .full_what = "over thread pairs",
};

struct pair {
  const struct osu_options* o;
  int thread;
  char* sbuf;
  char* rbuf;
  size_t size;
  double mean; /* out: one-way latency, seconds */
  long errors; /* out */
};

static unsigned pair_seed(size_t size, int iteration, int rank, int thread) {
  return osu_seed(size, iteration, rank) ^ (0x9e3779b9u * (unsigned)(thread + 1));
}

static void* run_pair(void* arg) {
  struct pair* p = arg;
  const struct osu_options* o = p->o;
  const int peer = 1 - o->rank, tag = p->thread;
  const int count = osu_count(o, p->size);
  const int iters = osu_iters(&kBench, o, p->size), warmup = osu_warmup(&kBench, o, p->size);
  double t0 = 0;
  osu_fill(p->sbuf, count, o, pair_seed(p->size, 0, o->rank, p->thread));
  for (int i = 0; i < warmup + iters; i++) {
    if (i == warmup) t0 = MPI_Wtime();
    if (o->validate) osu_fill(p->sbuf, count, o, pair_seed(p->size, i, o->rank, p->thread));
    if (o->rank == 0) {
      MPI_Send(p->sbuf, count, o->type, peer, tag, MPI_COMM_WORLD);
      MPI_Recv(p->rbuf, count, o->type, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(p->rbuf, count, o->type, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(p->sbuf, count, o->type, peer, tag, MPI_COMM_WORLD);
    }
    if (o->validate)
      p->errors += osu_check(p->rbuf, count, o, pair_seed(p->size, i, peer, p->thread));
  }
  p->mean = iters > 0 ? (MPI_Wtime() - t0) / iters / 2 : 0;
  osu_release_stage();
  return NULL;
}

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  long all_errors = 0;
  if (o.rank < 2) {
    const int n = o.threads;
    struct pair* pairs = calloc((size_t)n, sizeof *pairs);
    pthread_t* tids = calloc((size_t)n, sizeof *tids);
    for (int t = 0; t < n; t++) {
      pairs[t].o = &o;
      pairs[t].thread = t;
      pairs[t].sbuf = osu_alloc_buf(&o, o.max_size);
      pairs[t].rbuf = osu_alloc_buf(&o, o.max_size);
    }
    osu_print_header(&kBench, &o);
    for (size_t size = o.min_size; size <= o.max_size; size = osu_next_size(size)) {
      if (osu_count(&o, size) < 0) continue;
      osu_sync(2, MPI_COMM_WORLD);
      for (int t = 0; t < n; t++) {
        pairs[t].size = size;
        pairs[t].errors = 0;
        pthread_create(&tids[t], NULL, run_pair, &pairs[t]);
      }
      double sum = 0, tmin = DBL_MAX, tmax = 0;
      long errors = 0;
      for (int t = 0; t < n; t++) {
        pthread_join(tids[t], NULL);
        sum += pairs[t].mean;
        if (pairs[t].mean < tmin) tmin = pairs[t].mean;
        if (pairs[t].mean > tmax) tmax = pairs[t].mean;
        errors += pairs[t].errors;
      }
      errors = osu_sum_errors(errors, 2, MPI_COMM_WORLD);
      all_errors += errors;
      if (o.rank == 0)
        osu_print_row(&o, size, sum / n * 1e6, tmin * 1e6, tmax * 1e6, osu_iters(&kBench, &o, size),
                      errors);
    }
    for (int t = 0; t < n; t++) {
      osu_free_buf(&o, pairs[t].sbuf);
      osu_free_buf(&o, pairs[t].rbuf);
    }
    free(tids);
    free(pairs);
  }
  return osu_finish(all_errors);
}
