// neighbor_alltoallw linear: the schedule of neighbor_alltoallv linear. The per-neighbour
// datatypes of the w form reach the engine as bytes (elem 1), so the v form's spans serve.
//
// Cost = a + max(indegree, outdegree) n b.
// Restrictions: none.
#include "coll/algorithms.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int, double n) {
  // The degree is not the cost model's to know: it prices one neighbour, and weighs this
  // algorithm against none (the only one of its collective).
  return m.alpha + n * m.beta;
}

}  // namespace

extern const Algorithm kNeighborAlltoallwLinear = {Coll::kNeighborAlltoallw,
                                                   "linear",
                                                   neighbor_alltoallw_linear,
                                                   0,
                                                   "Cost = a + max(indegree, outdegree) n b",
                                                   cost,
                                                   "every neighbour's block at once, one step"};

void neighbor_alltoallw_linear(Builder& b, const Args& a) { neighbor_alltoallv_linear(b, a); }

}  // namespace torusmpi::coll
