/* osu_alltoallv: latency of MPI_Alltoallv, OSU Micro-Benchmarks compatible ("All-to-Allv
 * Personalized Exchange").
 *
 * As osu_alltoall, through the v interface: every block has the same size, so all counts are
 * count and the displacements d * count (as OSU's osu_alltoallv), and the figure shows what the v
 * path costs over MPI_Alltoall. Size: the block, in bytes, that each rank sends to each rank
 * (count = size / sizeof type); a rank sends and gets p * size bytes. Every rank times each of
 * its calls, an untimed MPI_Barrier between them (osu_coll_run); Avg Latency is the average over
 * ranks of each rank's mean time per call, -f adds the min and max over ranks of those means and
 * the iterations.
 *
 *   before   r0: a0 a1 a2 a3    r1: b0 b1 b2 b3    r2: c0 c1 c2 c3    r3: d0 d1 d2 d3
 *   after    r0: a0 b0 c0 d0    r1: a1 b1 c1 d1    r2: a2 b2 c2 d2    r3: a3 b3 c3 d3
 *
 * algbw = p * size / Avg Latency (a rank's whole send buffer, as nccl-tests counts an alltoall),
 * busbw = algbw * (p-1)/p, in GB/s (README.md).
 * -c: in each iteration rank s sends new data, block d seeded by (size, iteration, s, d); every
 *     rank starts from a poisoned receive buffer and checks all p blocks afterwards, outside the
 *     timed part.
 */
#include <stdlib.h>

#include "osu_util.h"

static const struct osu_bench kBench = {
    OSU_COLL_DEFAULTS,
    .name = "osu_alltoallv",
    .title = "All-to-Allv Personalized Exchange Latency Test",
    .bus = OSU_BUS_N1_N,
};

struct state {
  const struct osu_options* o;
  char *sbuf, *rbuf;    /* p blocks each */
  int *counts, *displs; /* the same for sending and receiving */
  int count;
};

static double prepare(void* sv, size_t size) {
  struct state* s = sv;
  s->count = osu_count(s->o, size);
  for (int r = 0; r < s->o->nranks; r++) {
    s->counts[r] = s->count;
    s->displs[r] = r * s->count;
  }
  return (double)size * s->o->nranks;
}

static void fill(void* sv, size_t size, int i) {
  struct state* s = sv;
  for (int d = 0; d < s->o->nranks; d++)
    osu_fill(osu_elem(s->sbuf, s->o, (size_t)s->displs[d]), s->count, s->o,
             osu_seed_to(size, i, s->o->rank, d));
  osu_poison(s->rbuf, size * (size_t)s->o->nranks);
}

static void call(void* sv) {
  struct state* s = sv;
  MPI_Alltoallv(s->sbuf, s->counts, s->displs, s->o->type, s->rbuf, s->counts, s->displs,
                s->o->type, MPI_COMM_WORLD);
}

static long check(void* sv, size_t size, int i) {
  struct state* s = sv;
  long errors = 0;
  for (int from = 0; from < s->o->nranks; from++)
    errors += osu_check(osu_elem(s->rbuf, s->o, (size_t)s->displs[from]), s->count, s->o,
                        osu_seed_to(size, i, from, s->o->rank));
  return errors;
}

int main(int argc, char** argv) {
  struct osu_options o;
  int rc = osu_start(&kBench, &argc, &argv, &o);
  if (rc >= 0) return rc;

  struct state s = {.o = &o,
                    .sbuf = osu_alloc_buf(&o, o.max_size * (size_t)o.nranks),
                    .rbuf = osu_alloc_buf(&o, o.max_size * (size_t)o.nranks),
                    .counts = osu_alloc((size_t)o.nranks * sizeof(int)),
                    .displs = osu_alloc((size_t)o.nranks * sizeof(int))};
  const struct osu_coll_ops ops = {prepare, fill, call, check};
  long errors = osu_coll_run(&kBench, &o, &ops, &s);
  osu_free_buf(&o, s.sbuf);
  osu_free_buf(&o, s.rbuf);
  free(s.counts);
  free(s.displs);
  return osu_finish(errors);
}
