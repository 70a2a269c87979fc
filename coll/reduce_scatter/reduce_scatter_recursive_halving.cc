// reduce_scatter recursive_halving: in the round of mask m = p2/2, ..., 1 every rank sends half of
// the blocks it still holds partial results of to the rank m away (in folded ranks) and adds in
// the half it gets back, so each round halves what is left; after lg(p2) rounds every rank has
// its block whole. Ranks beyond a power of two join their fold partner in the first and last
// rounds, at no round of their own (patterns/halving.h, shared with reduce_scatter_block and the
// rabenseifner algorithms).
//
// Cost = lg(p2) a + ((p-1)/p + f) n b + ((p-1)/p + f) n g, n the whole vector, p2 the largest
// power of two <= p, f = 1 when p is not one. Latency-optimal with near-optimal bytes: for short
// and medium vectors.
// Restrictions: commutative ops (halves combine in the order of the folded ranks).
//
//   p = 4, blocks A B C D (rank r keeps block r)
//     round m=2: 0:CD->2  1:CD->3  2:AB->0  3:AB->1     each adds in what arrives
//     round m=1: 0:B->1   1:A->0   2:D->3   3:C->2      each has its block whole
//   p = 5: rank 0 sends ABC to 1 and DE to 3 in round 1, and gets A from 1 and 2 in round 2
#include "coll/algorithms.h"
#include "coll/patterns/halving.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return lg_floor(p) * m.alpha + (frac(p) + folds(p)) * n * (m.beta + m.gamma);
}

}  // namespace

extern const Algorithm kReduceScatterRecursiveHalving = {
    Coll::kReduceScatter,
    "recursive_halving",
    reduce_scatter_recursive_halving,
    kNeedsCommutative,
    "Cost = lg(p2) a + ((p-1)/p + f) n b + ((p-1)/p + f) n g",
    cost,
    "halve the vector with rank^2^k each round"};

void reduce_scatter_recursive_halving(Builder& b, const Args& a) {
  patterns::halving_reduce_scatter(b, a,
                                   patterns::VectorBlocks::of_counts(a.counts, a.size, a.elem));
}

}  // namespace torusmpi::coll
