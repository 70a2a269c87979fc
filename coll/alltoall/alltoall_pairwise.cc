// alltoall pairwise: p-1 exchanges, one partner each. Out of place, step k sends the block for
// rank+k and receives rank-k's into its place; the own block is copied during the first step. In
// place, partners pair up in a round-robin tournament so that the block sent to a partner is the
// one its reply fills; the reply lands in scratch and is copied home during the next exchange
// (patterns/pairwise.h, shared with alltoallv and alltoallw).
//
// Cost = (p-1) (a + n b), with n one block. In place also (p-1) n c for the copies home, all but
// the last one during the next exchange, and 2 n of scratch.
// Restrictions: none.
//
//   p = 4, out of place:  step 1: 0->1 1->2 2->3 3->0     step 2: 0->2 1->3 2->0 3->1
//                         step 3: 0->3 1->0 2->1 3->2     (own block copied in step 1)
//   p = 4, in place:      round 0: 0-3 1-2   round 1: 0-1 2-3   round 2: 0-2 1-3   then a copy
#include "coll/algorithms.h"
#include "coll/patterns/pairwise.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); }

}  // namespace

extern const Algorithm kAlltoallPairwise = {Coll::kAlltoall,
                                            "pairwise",
                                            alltoall_pairwise,
                                            0,
                                            "Cost = (p-1) (a + n b)",
                                            cost,
                                            "step k: send to rank+k, receive from rank-k"};

void alltoall_pairwise(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  if (n == 0) return;
  auto block = [&](int j) { return patterns::Span{j * n, n}; };
  patterns::pairwise_exchange(b, a, block, block);
}

}  // namespace torusmpi::coll
