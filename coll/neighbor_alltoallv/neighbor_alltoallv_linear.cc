// neighbor_alltoallv linear: scounts[j] elements at sdispls[j] to dests[j], rcounts[i] at
// rdispls[i] from sources[i], all in one step.
//
// Cost = a + max(indegree, outdegree) n b.
// Restrictions: none.
//
//   dests of 0: {1, 3}, scounts {4, 0}: 4 elements to 1, nothing to 3 (the message is skipped,
//   and 3 expects none)
#include "coll/algorithms.h"
#include "coll/patterns/neighbor.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
extern const Algorithm kNeighborAlltoallvLinear = {Coll::kNeighborAlltoallv,
                                                   "linear",
                                                   neighbor_alltoallv_linear,
                                                   0,
                                                   "Cost = a + max(indegree, outdegree) n b",
                                                   neighbor_exchange_cost,
                                                   "every neighbour's block at once, one step"};

void neighbor_alltoallv_linear(Builder& b, const Args& a) {
  const uint64_t e = a.elem;
  patterns::neighbor_exchange(
      b, a,
      [&](int j) {
        return std::pair<uint64_t, uint64_t>{a.sdispls[j] * e, a.scounts[j] * e};
      },
      [&](int i) {
        return std::pair<uint64_t, uint64_t>{a.rdispls[i] * e, a.rcounts[i] * e};
      });
}

}  // namespace torusmpi::coll
