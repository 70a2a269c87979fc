// alltoallv pairwise: p-1 exchanges, one partner each. Out of place, step k sends this rank's
// block for rank+k and receives rank-k's; in place, partners pair up in a round-robin tournament,
// so the block sent to a partner is the one its reply fills, through scratch
// (patterns/pairwise.h, one core with alltoall and alltoallw). Empty blocks are no messages: the
// receiver's rcounts say what the sender's scounts do.
//
// Cost = (p-1) (a + n b), with n the average block. In place also (p-1) n c for the copies home,
// all but the last one during the next exchange, and twice the largest block of scratch.
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

extern const Algorithm kAlltoallvPairwise = {Coll::kAlltoallv,
                                             "pairwise",
                                             alltoallv_pairwise,
                                             0,
                                             "Cost = (p-1) (a + n b)",
                                             cost,
                                             "step k: send to rank+k, receive from rank-k"};

void alltoallv_pairwise(Builder& b, const Args& a) { patterns::pairwise_alltoallv(b, a); }

}  // namespace torusmpi::coll
