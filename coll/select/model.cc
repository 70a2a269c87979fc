// The cost model's figures: one table, each with where it comes from. Selection evaluates every
// registered algorithm's cost (registry.cc) with them and takes the cheapest.
#include "coll/select/select.h"

namespace torusmpi::coll {
namespace {

// Ranks of one node talking through shared memory (pml/shm), measured on a 2-core x86 VM:
//   alpha  per message of a collective step: osu_latency gives 0.18 us one way for 8 B; a step
//          adds posting, matching and the schedule walk, about as much again.
//   beta   per byte: the pipelined shared-memory copy moves 1 MiB in 41 us one way (~25 GB/s),
//          but a collective's copies compete for the same memory bus: 10 GB/s.
//   gamma  per byte reduced: a float sum runs at ~5 GB/s out of cache on one core.
//   copy   per byte copied within a rank: memcpy out of cache, ~12 GB/s.
constexpr Model kSharedMemory = {0.35e-6, 1.0 / 10e9, 1.0 / 5e9, 1.0 / 12e9};

// More ranks than cores: a step whose peer is not running waits for a context switch (measured
// here: 2 us to hand a core from one process to another by sched_yield), so steps cost more and
// algorithms with fewer of them win.
constexpr double kOversubscribedStep = 2e-6;

}  // namespace

Model host_model(bool oversubscribed) {
  Model m = kSharedMemory;
  if (oversubscribed) m.alpha += kOversubscribedStep;
  return m;
}

}  // namespace torusmpi::coll
