// barrier linear: every rank signals rank 0 and waits for its answer in one step; rank 0 hears
// from all, then answers all (a fan-in and a fan-out).
//
// Cost = 2a - s + 2(p-2)o, s the part of a that waits for a peer's process to get a core (more
// ranks than cores), o a message more in a step: two hops, but each rank waits once (rank 0's
// answers wait for nothing), and rank 0 posts 2(p-1) messages.
// Restrictions: none.
//
// With more ranks than cores a wait is a context switch, and the waits a rank makes are what
// the barrier costs the call after it: 4 ranks on 2 cores, osu_* at 16 B (an MPI_Barrier before
// each timed call), medians of 5 alternating runs against recursive_doubling: alltoall 2.33 us
// against 2.91, allgather 2.71 against 3.10, reduce_scatter 2.84 against 3.05, allreduce 2.66
// against 2.85. Open MPI's barrier at this size is linear too.
//
//   p = 4:  step 1: 1, 2, 3 -> 0 (and 1, 2, 3 wait)    step 2 (rank 0): 0 -> 1, 2, 3
#include "coll/algorithms.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double) {
  return 2 * m.alpha - one_wait_saving(m, 2, 0) + 2 * (p - 2) * m.overhead;
}

}  // namespace

extern const Algorithm kBarrierLinear = {Coll::kBarrier,
                                         "linear",
                                         barrier_linear,
                                         0,
                                         "Cost = 2a - s + 2(p-2)o",
                                         cost,
                                         "all signal rank 0, rank 0 answers all"};

void barrier_linear(Builder& b, const Args& a) {
  const int p = a.size;
  // A barrier has no buffers: the messages name an empty scratch area.
  const BufRef none = b.scratch(0);
  if (a.rank != 0) {
    b.send(0, none, 0);
    b.recv(0, none, 0);
    b.step();
    return;
  }
  for (int r = 1; r < p; ++r) b.recv(r, none, 0);
  b.step();
  for (int r = 1; r < p; ++r) b.send(r, none, 0);
  b.step();
}

}  // namespace torusmpi::coll
