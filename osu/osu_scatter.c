/* osu_scatter: latency of MPI_Scatter (root 0), OSU Micro-Benchmarks compatible.
 *
 * Size: one rank's block, in bytes (count = size / sizeof type); the root sends p blocks, p * size
 * bytes. Every rank times each of its calls, an untimed MPI_Barrier between them (osu_coll_run);
 * Avg Latency is the average over ranks of each rank's mean time per call, -f adds the min and
 * max over ranks of those means and the iterations.
 *
 *   before   r0: a b c d
 *   after    r0: a          r1: b          r2: c          r3: d
 *
 * algbw = p * size / Avg Latency (the whole send buffer, as nccl-tests counts a scatter), busbw =
 * algbw * (p-1)/p, in GB/s (README.md).
 * -c: in each iteration the root sends new data, block d seeded by (size, iteration, root, d);
 *     every rank, the root too, starts from a poisoned receive buffer and checks its block
 *     afterwards, outside the timed part.
 */
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    OSU_COLL_DEFAULTS,
    .name = "osu_scatter",
    .title = "Scatter Latency Test",
    .bus = OSU_BUS_N1_N,
};

enum { kRoot = 0 };

struct state {
  const struct osu_options* o;
  char *sbuf, *rbuf; /* sbuf: p blocks, the root's only */
  int count;
};

static double prepare(void* sv, size_t size) {
  struct state* s = sv;
  s->count = osu_count(s->o, size);
  return (double)size * s->o->nranks;
}

static void fill(void* sv, size_t size, int i) {
  struct state* s = sv;
  if (s->o->rank == kRoot)
    for (int d = 0; d < s->o->nranks; d++)
      osu_fill(osu_elem(s->sbuf, s->o, (size_t)d * s->count), s->count, s->o,
               osu_seed_to(size, i, kRoot, d));
  osu_poison(s->rbuf, size);
}

static void call(void* sv) {
  struct state* s = sv;
  MPI_Scatter(s->sbuf, s->count, s->o->type, s->rbuf, s->count, s->o->type, kRoot, MPI_COMM_WORLD);
}

static long check(void* sv, size_t size, int i) {
  struct state* s = sv;
  return osu_check(s->rbuf, s->count, s->o, osu_seed_to(size, i, kRoot, s->o->rank));
}

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  struct state s = {.o = &o,
                    .sbuf = osu_alloc_buf(&o, o.rank == kRoot ? o.max_size * o.nranks : 0),
                    .rbuf = osu_alloc_buf(&o, o.max_size)};
  const struct osu_coll_ops ops = {prepare, fill, call, check};
  long errors = osu_coll_run(&kBench, &o, &ops, &s);
  osu_free_buf(&o, s.sbuf);
  osu_free_buf(&o, s.rbuf);
  return osu_finish(errors);
}
