// reduce_scatter_block recursive_halving: reduce_scatter recursive_halving with p equal blocks
// (patterns/halving.h): in the round of mask m = p2/2, ..., 1 every rank sends half of the blocks
// it still holds partial results of to the rank m away (in folded ranks) and adds in the half it
// gets back; ranks beyond a power of two join their fold partner in the first and last rounds.
//
// Cost = lg(p2) a + ((p-1)/p + f) n b + ((p-1)/p + f) n g, n the whole vector (p blocks), p2 the
// largest power of two <= p, f = 1 when p is not one. For short and medium vectors.
// Restrictions: commutative ops.
//
//   p = 4, blocks A B C D (rank r keeps block r)
//     round m=2: 0:CD->2  1:CD->3  2:AB->0  3:AB->1
//     round m=1: 0:B->1   1:A->0   2:D->3   3:C->2
//   p = 3: teams {0,1} {2}; one round: 0:B->1 C->2  1:A->0 C->2  2:A->0 B->1
#include "coll/algorithms.h"
#include "coll/patterns/halving.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return kReduceScatterRecursiveHalving.cost(m, p, n);
}

}  // namespace

extern const Algorithm kReduceScatterBlockRecursiveHalving = {
    Coll::kReduceScatterBlock,
    "recursive_halving",
    reduce_scatter_block_recursive_halving,
    kNeedsCommutative,
    "Cost = lg(p2) a + ((p-1)/p + f) n b + ((p-1)/p + f) n g",
    cost,
    "halve the vector with rank^2^k each round"};

void reduce_scatter_block_recursive_halving(Builder& b, const Args& a) {
  patterns::halving_reduce_scatter(b, a, patterns::VectorBlocks::equal(a.count, a.size, a.elem));
}

}  // namespace torusmpi::coll
