/* osu_allreduce: latency of MPI_Allreduce (MPI_SUM), OSU Micro-Benchmarks compatible.
 *
 * Size: the vector, in bytes, that every rank gives and gets back summed (count = size / sizeof
 * type). Every rank times each of its calls, an untimed MPI_Barrier between them (osu_coll_run);
 * Avg Latency is the average over ranks of each rank's mean time per call, -f adds the min and
 * max over ranks of those means and the iterations.
 *
 *   before   r0: a    r1: b    r2: c    r3: d
 *   after    r0..r3: a + b + c + d                  (element by element)
 *
 * algbw = size / Avg Latency, busbw = algbw * 2(p-1)/p, in GB/s (nccl-tests, README.md).
 * -c: rank r gives osu_fill_sum(size, iteration, r) in each iteration: small integers whose sum
 *     over the ranks stays in the type (MPI_CHAR: at most 127/p each, since Open MPI 4.1 saturates
 *     char sums), so every -T type is exact in any order; each rank checks the whole result
 *     against the sum computed locally, outside the timed part.
 */
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    OSU_COLL_DEFAULTS,
    .name = "osu_allreduce",
    .title = "Allreduce Latency Test",
    .bus = OSU_BUS_TWO_N1_N,
};

struct state {
  const struct osu_options* o;
  char *sbuf, *rbuf;
  int count;
};

static double prepare(void* sv, size_t size) {
  struct state* s = sv;
  s->count = osu_count(s->o, size);
  return (double)size;
}

static void fill(void* sv, size_t size, int i) {
  struct state* s = sv;
  osu_fill_sum(s->sbuf, s->count, s->o, size, i, s->o->rank);
  osu_poison(s->rbuf, size);
}

static void call(void* sv) {
  struct state* s = sv;
  MPI_Allreduce(s->sbuf, s->rbuf, s->count, s->o->type, MPI_SUM, MPI_COMM_WORLD);
}

static long check(void* sv, size_t size, int i) {
  struct state* s = sv;
  return osu_check_sum(s->rbuf, 0, s->count, s->o, size, i);
}

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  struct state s = {
      .o = &o, .sbuf = osu_alloc_buf(&o, o.max_size), .rbuf = osu_alloc_buf(&o, o.max_size)};
  const struct osu_coll_ops ops = {prepare, fill, call, check};
  long errors = osu_coll_run(&kBench, &o, &ops, &s);
  osu_free_buf(&o, s.sbuf);
  osu_free_buf(&o, s.rbuf);
  return osu_finish(errors);
}
