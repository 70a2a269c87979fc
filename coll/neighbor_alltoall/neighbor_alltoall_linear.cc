// neighbor_alltoall linear: block j of send to dests[j], block i of recv from sources[i], all in
// one step.
//
// Cost = a + max(indegree, outdegree) n b.
// Restrictions: none.
//
//   dests of 0: {1, 3}: send block 0 -> 1, block 1 -> 3; sources of 0: {3, 1}: 3's block lands
//   in block 0, 1's in block 1
#include "coll/algorithms.h"
#include "coll/patterns/neighbor.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
extern const Algorithm kNeighborAlltoallLinear = {Coll::kNeighborAlltoall,
                                                  "linear",
                                                  neighbor_alltoall_linear,
                                                  0,
                                                  "Cost = a + max(indegree, outdegree) n b",
                                                  neighbor_exchange_cost,
                                                  "every neighbour's block at once, one step"};

void neighbor_alltoall_linear(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  patterns::neighbor_exchange(
      b, a,
      [&](int j) {
        return std::pair<uint64_t, uint64_t>{j * n, n};
      },
      [&](int i) {
        return std::pair<uint64_t, uint64_t>{i * n, n};
      });
}

}  // namespace torusmpi::coll
