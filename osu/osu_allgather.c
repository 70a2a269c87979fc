/* osu_allgather: latency of MPI_Allgather, OSU Micro-Benchmarks compatible.
 *
 * Size: one rank's block, in bytes (count = size / sizeof type); every rank gets p blocks,
 * p * size bytes. Every rank times each of its calls, an untimed MPI_Barrier between them
 * (osu_coll_run); Avg Latency is the average over ranks of each rank's mean time per call, -f
 * adds the min and max over ranks of those means and the iterations.
 *
 *   before   r0: a          r1: b          r2: c          r3: d
 *   after    r0..r3: a b c d
 *
 * algbw = p * size / Avg Latency (the whole result, as nccl-tests counts it), busbw = algbw *
 * (p-1)/p, in GB/s (README.md).
 * -c: rank r sends new data in each iteration (seed: size, iteration, r); every rank starts from a
 *     poisoned receive buffer and checks all p blocks afterwards, outside the timed part.
 */
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    OSU_COLL_DEFAULTS,
    .name = "osu_allgather",
    .title = "Allgather Latency Test",
    .bus = OSU_BUS_N1_N,
};

struct state {
  const struct osu_options* o;
  char *sbuf, *rbuf; /* rbuf: p blocks */
  int count;
};

static double prepare(void* sv, size_t size) {
  struct state* s = sv;
  s->count = osu_count(s->o, size);
  return (double)size * s->o->nranks;
}

static void fill(void* sv, size_t size, int i) {
  struct state* s = sv;
  osu_fill(s->sbuf, s->count, s->o, osu_seed(size, i, s->o->rank));
  osu_poison(s->rbuf, size * (size_t)s->o->nranks);
}

static void call(void* sv) {
  struct state* s = sv;
  MPI_Allgather(s->sbuf, s->count, s->o->type, s->rbuf, s->count, s->o->type, MPI_COMM_WORLD);
}

static long check(void* sv, size_t size, int i) {
  struct state* s = sv;
  long errors = 0;
  for (int r = 0; r < s->o->nranks; r++)
    errors += osu_check(osu_elem(s->rbuf, s->o, (size_t)r * s->count), s->count, s->o,
                        osu_seed(size, i, r));
  return errors;
}

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  struct state s = {.o = &o,
                    .sbuf = osu_alloc_buf(&o, o.max_size),
                    .rbuf = osu_alloc_buf(&o, o.max_size * o.nranks)};
  const struct osu_coll_ops ops = {prepare, fill, call, check};
  long errors = osu_coll_run(&kBench, &o, &ops, &s);
  osu_free_buf(&o, s.sbuf);
  osu_free_buf(&o, s.rbuf);
  return osu_finish(errors);
}
