// alltoall linear: one step posts every send and every receive (rank+k's block out, rank-k's in,
// k = 1..p-1, so the first messages of all ranks go to different ranks). In place, the blocks
// leave from recv while the replies land in scratch, and a second step copies them home.
//
// Cost = sqrt(p) a + (p-1) n b, with n one block: every message in flight at once, so latency is
// paid once, but p-1 messages meet at each rank (sqrt(p) a prices that contention).
// In place also (p-1) n c and (p-1) n of scratch.
// Restrictions: none.
//
//   p = 4, rank 1:  step 0: send b2->2 b3->3 b0->0, recv 0 3 2 (own block copied)
//                   in place: recv into scratch, then step 1 copies them to recv
#include <cmath>

#include "coll/algorithms.h"
#include "coll/patterns/ring.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return m.alpha * std::sqrt(p) + (p - 1) * n * m.beta;
}

}  // namespace

extern const Algorithm kAlltoallLinear = {Coll::kAlltoall,
                                          "linear",
                                          alltoall_linear,
                                          0,
                                          "Cost = sqrt(p) a + (p-1) n b",
                                          cost,
                                          "every send and receive at once"};

using patterns::mod;

void alltoall_linear(Builder& b, const Args& a) {
  const int p = a.size, r = a.rank;
  const uint64_t n = a.block_bytes();
  if (n == 0) return;
  if (!a.in_place) {
    b.copy(a.recv + r * n, a.send + r * n, n);
    for (int k = 1; k < p; ++k) {
      b.send(mod(r + k, p), a.send + mod(r + k, p) * n, n);
      b.recv(mod(r - k, p), a.recv + mod(r - k, p) * n, n);
    }
    return;
  }
  if (p == 1) return;
  // Scratch holds the p-1 other blocks in recv's order, the own one left out, so two copies
  // (before and after it) take them home.
  const BufRef tmp = b.scratch((p - 1) * n);
  auto slot = [&](int j) { return tmp + (j < r ? j : j - 1) * n; };
  for (int k = 1; k < p; ++k) {
    b.send(mod(r + k, p), a.recv + mod(r + k, p) * n, n);
    b.recv(mod(r - k, p), slot(mod(r - k, p)), n);
  }
  b.step();
  b.copy(a.recv, tmp, r * n);
  b.copy(a.recv + (r + 1) * n, tmp + r * n, (p - 1 - r) * n);
}

}  // namespace torusmpi::coll
