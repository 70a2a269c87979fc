/* osu_reduce_scatter: latency of MPI_Reduce_scatter (MPI_SUM), OSU Micro-Benchmarks compatible.
 *
 * Size: the whole vector, in bytes, that every rank gives (count = size / sizeof type elements),
 * as OSU's osu_reduce_scatter: rank r gets its part of the sum, recvcounts[r] = count / p, plus
 * one for r < count % p (so a vector of fewer than p elements leaves some ranks with nothing).
 * Every rank times each of its calls, an untimed MPI_Barrier between them (osu_coll_run); Avg
 * Latency is the average over ranks of each rank's mean time per call, -f adds the min and max
 * over ranks of those means and the iterations.
 *
 *   before   r0: a0 a1 a2 a3    r1: b0 b1 b2 b3    r2: c0 c1 c2 c3    r3: d0 d1 d2 d3
 *   after    r0: a0+b0+c0+d0    r1: a1+b1+c1+d1    r2: a2+...         r3: a3+...
 *
 * algbw = size / Avg Latency (the whole vector, as nccl-tests counts a reduce_scatter), busbw =
 * algbw * (p-1)/p, in GB/s (README.md).
 * -c: rank r gives osu_fill_sum(size, iteration, r) in each iteration: small integers whose sum
 *     over the ranks stays in the type (MPI_CHAR: at most 127/p each, since Open MPI 4.1 saturates
 *     char sums), so every -T type is exact in any order; each rank checks its part against the
 *     sum computed locally, outside the timed part.
 */
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    OSU_COLL_DEFAULTS,
    .name = "osu_reduce_scatter",
    .title = "Reduce_scatter Latency Test",
    .bus = OSU_BUS_N1_N,
};

struct state {
  const struct osu_options* o;
  char *sbuf, *rbuf; /* sbuf: the whole vector; rbuf: this rank's part */
  int* recvcounts;
  int count; /* the whole vector */
  int first; /* this rank's part starts at element first of the vector */
};

static double prepare(void* sv, size_t size) {
  struct state* s = sv;
  const int p = s->o->nranks;
  s->count = osu_count(s->o, size);
  s->first = 0;
  for (int r = 0; r < p; r++) {
    s->recvcounts[r] = s->count / p + (r < s->count % p);
    if (r < s->o->rank) s->first += s->recvcounts[r];
  }
  return (double)size;
}

static void fill(void* sv, size_t size, int i) {
  struct state* s = sv;
  osu_fill_sum(s->sbuf, s->count, s->o, size, i, s->o->rank);
  osu_poison(s->rbuf, (size_t)s->recvcounts[s->o->rank] * (size_t)s->o->type_size);
}

static void call(void* sv) {
  struct state* s = sv;
  MPI_Reduce_scatter(s->sbuf, s->rbuf, s->recvcounts, s->o->type, MPI_SUM, MPI_COMM_WORLD);
}

static long check(void* sv, size_t size, int i) {
  struct state* s = sv;
  return osu_check_sum(s->rbuf, (size_t)s->first, s->recvcounts[s->o->rank], s->o, size, i);
}

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  /* The largest part, ceil(count / p) elements of the largest size, is at most that many bytes. */
  const size_t part = o.max_size / (size_t)o.nranks + (size_t)o.type_size;
  struct state s = {.o = &o,
                    .sbuf = osu_alloc_buf(&o, o.max_size),
                    .rbuf = osu_alloc_buf(&o, part),
                    .recvcounts = osu_alloc((size_t)o.nranks * sizeof(int))};
  const struct osu_coll_ops ops = {prepare, fill, call, check};
  long errors = osu_coll_run(&kBench, &o, &ops, &s);
  osu_free_buf(&o, s.sbuf);
  osu_free_buf(&o, s.rbuf);
  free(s.recvcounts);
  return osu_finish(errors);
}
