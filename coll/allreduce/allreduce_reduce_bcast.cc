// allreduce reduce_bcast: reduce binomial to rank 0, then bcast binomial from it; the two
// builders run one after the other on the same buffers (coll/reduce/reduce_binomial.cc,
// coll/bcast/bcast_binomial.cc).
//
// Cost = 2 lg(p) (a + n b) + lg(p) n g. Twice the rounds of recursive doubling, but each rank
// sends the vector about twice in all, not lg(p) times: for short vectors on links that are
// shared or slow.
// Restrictions: none (the reduce combines in rank order when the op is not commutative).
//
//   p = 5:  reduce  round 0: 1->0 3->2   round 1: 2->0   round 2: 4->0
//           bcast   0->4 0->2 0->1 (one step, one after another on 0's link), then 2->3
#include "coll/algorithms.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return 2 * lg(p) * (m.alpha + n * m.beta) + lg(p) * n * m.gamma;
}

}  // namespace

extern const Algorithm kAllreduceReduceBcast = {Coll::kAllreduce,
                                                "reduce_bcast",
                                                allreduce_reduce_bcast,
                                                0,
                                                "Cost = 2 lg(p) (a + n b) + lg(p) n g",
                                                cost,
                                                "binomial reduce to rank 0, then binomial bcast"};

void allreduce_reduce_bcast(Builder& b, const Args& a) {
  // The reduce sees allreduce's in-place contribution where MPI_Reduce would: in recv at the
  // root, as its send buffer elsewhere (which it only reads).
  Args reduce = a;
  reduce.coll = Coll::kReduce;
  reduce.root = 0;
  reduce.in_place = a.in_place && a.rank == 0;
  if (a.in_place && a.rank != 0) reduce.send = a.recv;
  reduce_binomial(b, reduce);
  b.step();

  Args bcast = a;
  bcast.coll = Coll::kBcast;
  bcast.root = 0;
  bcast.in_place = false;
  bcast_binomial(b, bcast);
  b.step();
}

}  // namespace torusmpi::coll
