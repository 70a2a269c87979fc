/* osu_bcast: latency of MPI_Bcast (root 0), OSU Micro-Benchmarks compatible.
 *
 * Size: the message, in bytes, that the root sends and every rank gets (count = size / sizeof
 * type). Every rank times each of its calls, an untimed MPI_Barrier between them (osu_coll_run);
 * Avg Latency is the average over ranks of each rank's mean time per call, -f adds the min and
 * max over ranks of those means and the iterations.
 *
 *   before   r0: a    r1: -    r2: -    r3: -
 *   after    r0..r3: a
 *
 * algbw = size / Avg Latency, busbw = algbw * 1, in GB/s (nccl-tests, README.md).
 * -c: in each iteration the root sends new data (seed: size, iteration, root) and the others
 *     start from a poisoned buffer; every rank, the root too, checks its buffer afterwards,
 *     outside the timed part.
 */
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    OSU_COLL_DEFAULTS,
    .name = "osu_bcast",
    .title = "Broadcast Latency Test",
    .bus = OSU_BUS_ONE,
};

enum { kRoot = 0 };

struct state {
  const struct osu_options* o;
  char* buf;
  int count;
};

static double prepare(void* sv, size_t size) {
  struct state* s = sv;
  s->count = osu_count(s->o, size);
  return (double)size;
}

static void fill(void* sv, size_t size, int i) {
  struct state* s = sv;
  if (s->o->rank == kRoot)
    osu_fill(s->buf, s->count, s->o, osu_seed(size, i, kRoot));
  else
    osu_poison(s->buf, size);
}

static void call(void* sv) {
  struct state* s = sv;
  MPI_Bcast(s->buf, s->count, s->o->type, kRoot, MPI_COMM_WORLD);
}

static long check(void* sv, size_t size, int i) {
  struct state* s = sv;
  return osu_check(s->buf, s->count, s->o, osu_seed(size, i, kRoot));
}

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  struct state s = {.o = &o, .buf = osu_alloc_buf(&o, o.max_size)};
  const struct osu_coll_ops ops = {prepare, fill, call, check};
  long errors = osu_coll_run(&kBench, &o, &ops, &s);
  osu_free_buf(&o, s.buf);
  return osu_finish(errors);
}
