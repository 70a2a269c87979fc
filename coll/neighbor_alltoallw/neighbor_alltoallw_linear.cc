// neighbor_alltoallw linear: the schedule of neighbor_alltoallv linear. The per-neighbour
// datatypes of the w form reach the engine as bytes (elem 1), so the v form's spans serve.
//
// Cost = a + max(indegree, outdegree) n b.
// Restrictions: none.
#include "coll/algorithms.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
extern const Algorithm kNeighborAlltoallwLinear = {Coll::kNeighborAlltoallw,
                                                   "linear",
                                                   neighbor_alltoallw_linear,
                                                   0,
                                                   "Cost = a + max(indegree, outdegree) n b",
                                                   neighbor_exchange_cost,
                                                   "every neighbour's block at once, one step"};

void neighbor_alltoallw_linear(Builder& b, const Args& a) { neighbor_alltoallv_linear(b, a); }

}  // namespace torusmpi::coll
