/* osu_reduce_scatter_block: latency of MPI_Reduce_scatter_block (MPI_SUM), OSU Micro-Benchmarks
 * compatible.
 *
 * Size: the whole vector, in bytes, that every rank gives (count = size / sizeof type elements),
 * as in osu_reduce_scatter; every rank gets a block of recvcount = count / p elements of the sum.
 * When p does not divide count the last count % p elements take no part (the vector reduced is p *
 * recvcount elements, and algbw counts those), and a size with 0 < count < p is skipped. Every
 * rank times each of its calls, an untimed MPI_Barrier between them (osu_coll_run); Avg Latency is
 * the average over ranks of each rank's mean time per call, -f adds the min and max over ranks of
 * those means and the iterations.
 *
 *   before   r0: a0 a1 a2 a3    r1: b0 b1 b2 b3    r2: c0 c1 c2 c3    r3: d0 d1 d2 d3
 *   after    r0: a0+b0+c0+d0    r1: a1+b1+c1+d1    r2: a2+...         r3: a3+...
 *
 * algbw = p * recvcount * sizeof type / Avg Latency (the whole vector, as nccl-tests counts a
 * reduce_scatter), busbw = algbw * (p-1)/p, in GB/s (README.md).
 * -c: rank r gives osu_fill_sum(size, iteration, r) in each iteration: small integers whose sum
 *     over the ranks stays in the type (MPI_CHAR: at most 127/p each, since Open MPI 4.1 saturates
 *     char sums), so every -T type is exact in any order; each rank checks its block against the
 *     sum computed locally, outside the timed part.
 */
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    OSU_COLL_DEFAULTS,
    .name = "osu_reduce_scatter_block",
    .title = "Reduce_scatter_block Latency Test",
    .bus = OSU_BUS_N1_N,
};

struct state {
  const struct osu_options* o;
  char *sbuf, *rbuf; /* sbuf: the whole vector; rbuf: this rank's block */
  int block;         /* recvcount */
};

static double prepare(void* sv, size_t size) {
  struct state* s = sv;
  const int count = osu_count(s->o, size);
  s->block = count / s->o->nranks;
  if (count > 0 && s->block == 0) return -1.0;
  return (double)s->block * s->o->nranks * s->o->type_size;
}

static void fill(void* sv, size_t size, int i) {
  struct state* s = sv;
  osu_fill_sum(s->sbuf, s->block * s->o->nranks, s->o, size, i, s->o->rank);
  osu_poison(s->rbuf, (size_t)s->block * (size_t)s->o->type_size);
}

static void call(void* sv) {
  struct state* s = sv;
  MPI_Reduce_scatter_block(s->sbuf, s->rbuf, s->block, s->o->type, MPI_SUM, MPI_COMM_WORLD);
}

static long check(void* sv, size_t size, int i) {
  struct state* s = sv;
  return osu_check_sum(s->rbuf, (size_t)s->o->rank * s->block, s->block, s->o, size, i);
}

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  struct state s = {.o = &o,
                    .sbuf = osu_alloc_buf(&o, o.max_size),
                    .rbuf = osu_alloc_buf(&o, o.max_size / (size_t)o.nranks + sizeof(int))};
  const struct osu_coll_ops ops = {prepare, fill, call, check};
  long errors = osu_coll_run(&kBench, &o, &ops, &s);
  osu_free_buf(&o, s.sbuf);
  osu_free_buf(&o, s.rbuf);
  return osu_finish(errors);
}
