// reduce_scatter_block pairwise: reduce_scatter pairwise with p blocks of `count` elements. In
// step k rank r sends its contribution to block r+k to rank r+k and receives rank r-k's to block
// r, folding each in on the left of what came before it, one step behind, while the next exchange
// is in flight (patterns/reduce_scatter.h).
//
// Cost = (p-1) a + ((p-1)/p) n b + (n/p) g, n the whole vector (p blocks); p-1 exchanges, each
// fold but the last hidden behind the next exchange, and at most three local steps after them.
// Restrictions: none (the fallback: non-commutative ops combine in rank order, in two
// accumulators, ranks 0..r and r+1..p-1, joined at the end).
//
//   p = 4, rank 1 keeps block 1; x_j = rank j's contribution to it
//              exchange                commutative         non-commutative
//     step 1:  block 2 -> 2, x0 <- 0   acc = x0            low = x0
//     step 2:  block 3 -> 3, x3 <- 3   acc = x1 op acc     high = x3
//     step 3:  block 0 -> 0, x2 <- 2   acc = x3 op acc
//     step 4:                          acc = x2 op acc     high = x2 op high
//     step 5:                                              high = x1 op high
//     step 6:                                              high = low op high
#include "coll/algorithms.h"
#include "coll/patterns/reduce_scatter.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return kReduceScatterPairwise.cost(m, p, n); }

}  // namespace

extern const Algorithm kReduceScatterBlockPairwise = {
    Coll::kReduceScatterBlock,
    "pairwise",
    reduce_scatter_block_pairwise,
    0,
    "Cost = (p-1) a + ((p-1)/p) n b + (n/p) g",
    cost,
    "step k: send rank+k its block, get ours from rank-k; folded in rank order as they come"};

void reduce_scatter_block_pairwise(Builder& b, const Args& a) {
  patterns::pairwise_reduce_scatter(b, a, patterns::VectorBlocks::equal(a.count, a.size, a.elem));
}

}  // namespace torusmpi::coll
