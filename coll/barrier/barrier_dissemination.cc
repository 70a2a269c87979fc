// barrier dissemination: in round k every rank sends a zero-byte message to rank+2^k and waits
// for one from rank-2^k (mod p). After round k a rank has heard, directly or not, from the 2^(k+1)
// ranks before it, so ceil(lg p) rounds cover all (Hensgen, Finkel and Manber).
//
// Cost = lg(p) a.
// Restrictions: none.
//
//   p = 5:  k = 0: r -> r+1    k = 1: r -> r+2    k = 2: r -> r+4      (all ranks, mod 5)
#include "coll/algorithms.h"
#include "coll/patterns/ring.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double) { return lg(p) * m.alpha; }

}  // namespace

extern const Algorithm kBarrierDissemination = {Coll::kBarrier,
                                                "dissemination",
                                                barrier_dissemination,
                                                0,
                                                "Cost = lg(p) a",
                                                cost,
                                                "round k: signal rank+2^k, hear from rank-2^k"};

void barrier_dissemination(Builder& b, const Args& a) {
  const int p = a.size, r = a.rank;
  // A barrier has no buffers: the messages name an empty scratch area.
  const BufRef none = b.scratch(0);
  for (int d = 1; d < p; d *= 2) {
    b.send(patterns::mod(r + d, p), none, 0);
    b.recv(patterns::mod(r - d, p), none, 0);
    b.step();
  }
}

}  // namespace torusmpi::coll
