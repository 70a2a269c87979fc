// neighbor_allgatherv linear: this rank's block (count elements) to every out-neighbour, and
// counts[i] elements from sources[i] at displs[i], all in one step.
//
// Cost = a + max(indegree, outdegree) n b.
// Restrictions: none.
//
//   sources of 0: {3, 1}, counts {2, 5}, displs {5, 0}: 1's 5 elements land at 0, 3's 2 at 5
#include "coll/algorithms.h"
#include "coll/patterns/neighbor.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
extern const Algorithm kNeighborAllgathervLinear = {Coll::kNeighborAllgatherv,
                                                    "linear",
                                                    neighbor_allgatherv_linear,
                                                    0,
                                                    "Cost = a + max(indegree, outdegree) n b",
                                                    neighbor_exchange_cost,
                                                    "every neighbour's block at once, one step"};

void neighbor_allgatherv_linear(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes(), e = a.elem;
  patterns::neighbor_exchange(
      b, a,
      [&](int) {
        return std::pair<uint64_t, uint64_t>{0, n};
      },
      [&](int i) {
        return std::pair<uint64_t, uint64_t>{a.displs[i] * e, a.counts[i] * e};
      });
}

}  // namespace torusmpi::coll
