// reduce_scatter_block ring: reduce_scatter ring with p blocks of `count` elements; partial sums
// travel around the ring, rank r adding its own contribution to each before passing it on, and
// the partial that arrives in the last step is block r, complete (patterns/reduce_scatter.h).
//
// Cost = (p-1) a + ((p-1)/p) n b + ((p-1)/p) n g, n the whole vector (p blocks).
// Bandwidth-optimal, one message per step: for large vectors.
// Restrictions: commutative ops (a block's contributions combine in ring order, not rank order).
//
//   p = 4, blocks A B C D (rank r keeps block r); ' = two contributions, " = three
//     step 0: 0:D->1   1:A->2   2:B->3   3:C->0
//     step 1: 0:C'->1  1:D'->2  2:A'->3  3:B'->0
//     step 2: 0:B"->1  1:C"->2  2:D"->3  3:A"->0     rank r adds its own to block r: done
#include "coll/algorithms.h"
#include "coll/patterns/reduce_scatter.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return kReduceScatterRing.cost(m, p, n); }

}  // namespace

extern const Algorithm kReduceScatterBlockRing = {Coll::kReduceScatterBlock,
                                                  "ring",
                                                  reduce_scatter_block_ring,
                                                  kNeedsCommutative,
                                                  "Cost = (p-1) a + ((p-1)/p) n b + ((p-1)/p) n g",
                                                  cost,
                                                  "pass partial blocks around the ring, p-1 steps"};

void reduce_scatter_block_ring(Builder& b, const Args& a) {
  patterns::ring_reduce_scatter(b, a, patterns::VectorBlocks::equal(a.count, a.size, a.elem));
}

}  // namespace torusmpi::coll
