// neighbor_allgather linear: this rank's block to every out-neighbour and one block from every
// in-neighbour, all in one step; block i of recv comes from sources[i].
//
// Cost = a + max(indegree, outdegree) n b (the messages of a rank share its ports).
// Restrictions: none.
//
//   sources of 0: {3, 1}   dests of 0: {1, 3}       step 0: 0->1, 0->3; 1->0 into block 1,
//                                                           3->0 into block 0
#include "coll/algorithms.h"
#include "coll/patterns/neighbor.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
extern const Algorithm kNeighborAllgatherLinear = {Coll::kNeighborAllgather,
                                                   "linear",
                                                   neighbor_allgather_linear,
                                                   0,
                                                   "Cost = a + max(indegree, outdegree) n b",
                                                   neighbor_exchange_cost,
                                                   "every neighbour's block at once, one step"};

void neighbor_allgather_linear(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  patterns::neighbor_exchange(
      b, a,
      [&](int) {
        return std::pair<uint64_t, uint64_t>{0, n};
      },
      [&](int i) {
        return std::pair<uint64_t, uint64_t>{i * n, n};
      });
}

}  // namespace torusmpi::coll
