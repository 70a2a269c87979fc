// reduce_scatter ring: partial sums travel around the ring. In step s rank r sends its partial of
// block r-1-s to the right and receives the left's partial of block r-2-s, to which it adds its
// own contribution; after p-1 steps the partial that arrives is block r, complete
// (patterns/reduce_scatter.h, shared with reduce_scatter_block ring).
//
// Cost = (p-1) a + ((p-1)/p) n b + ((p-1)/p) n g, n the whole vector. Bandwidth-optimal, one
// message per step: for large vectors.
// Restrictions: commutative ops (a block's contributions combine in ring order, not rank order).
//
//   p = 4, blocks A B C D (rank r keeps block r); ' = two contributions, " = three
//     step 0: 0:D->1   1:A->2   2:B->3   3:C->0
//     step 1: 0:C'->1  1:D'->2  2:A'->3  3:B'->0
//     step 2: 0:B"->1  1:C"->2  2:D"->3  3:A"->0     rank r adds its own to block r: done
#include "coll/algorithms.h"
#include "coll/patterns/reduce_scatter.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return (p - 1) * m.alpha + frac(p) * n * (m.beta + m.gamma);
}

}  // namespace

extern const Algorithm kReduceScatterRing = {Coll::kReduceScatter,
                                             "ring",
                                             reduce_scatter_ring,
                                             kNeedsCommutative,
                                             "Cost = (p-1) a + ((p-1)/p) n b + ((p-1)/p) n g",
                                             cost,
                                             "pass partial blocks around the ring, p-1 steps"};

void reduce_scatter_ring(Builder& b, const Args& a) {
  patterns::ring_reduce_scatter(b, a, patterns::VectorBlocks::of_counts(a.counts, a.size, a.elem));
}

}  // namespace torusmpi::coll
