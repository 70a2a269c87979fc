// reduce_scatter pairwise: in step k rank r sends its contribution to block r+k to rank r+k and
// receives rank r-k's contribution to block r. Contributions arrive from r-1 down to 0, then from
// p-1 down to r+1; each folds in (one step behind, while the next exchange is in flight) on the
// left of what came before it, so rank order holds without keeping the blocks: a commutative op
// needs one accumulator, a non-commutative one two (ranks 0..r and r+1..p-1), joined at the end
// (patterns/reduce_scatter.h, shared with reduce_scatter_block pairwise).
//
// Cost = (p-1) a + ((p-1)/p) n b + (n/p) g, n the whole vector; p-1 exchanges, each fold but the
// last hidden behind the next exchange, and at most three local steps after them.
// Restrictions: none (the fallback: non-commutative ops combine in rank order).
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
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return (p - 1) * m.alpha + frac(p) * n * m.beta + n / p * m.gamma;
}

}  // namespace

extern const Algorithm kReduceScatterPairwise = {
    Coll::kReduceScatter,
    "pairwise",
    reduce_scatter_pairwise,
    0,
    "Cost = (p-1) a + ((p-1)/p) n b + (n/p) g",
    cost,
    "step k: send rank+k its block, get ours from rank-k; folded in rank order as they come"};

void reduce_scatter_pairwise(Builder& b, const Args& a) {
  patterns::pairwise_reduce_scatter(b, a,
                                    patterns::VectorBlocks::of_counts(a.counts, a.size, a.elem));
}

}  // namespace torusmpi::coll
