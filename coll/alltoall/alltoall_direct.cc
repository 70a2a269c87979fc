// alltoall direct, all at once: in one step every rank sends block j of its send buffer to
// rank j and receives block i from each rank i straight into place. In place, the blocks to send
// are first copied aside, as they are overwritten by what arrives.
//
// Cost = (p-1) a + (p-1) n b with the p-1 messages overlapping (a + (p-1) n b on a machine
// whose ports take them at once), n one block; in place also p n c.
// Restrictions: none.
//
//   p = 3, one step: rank 0 sends b01 to 1, b02 to 2 and receives b10, b20; ranks 1, 2 alike
#include <algorithm>

#include "coll/algorithms.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  if (torus_shaped(m)) return direct_cost(m, (p - 1) * n);
  // Ports that take the messages one after the other (pairwise), or all at once (linear).
  return std::max(kAlltoallPairwise.cost(m, p, n), kAlltoallLinear.cost(m, p, n));
}

}  // namespace

extern const Algorithm kAlltoallDirect = {
    Coll::kAlltoall,
    "direct",
    alltoall_direct,
    0,
    "Cost = (p-1) a + (p-1) n b with the p-1 messages overlapping",
    cost,
    "direct: every block to its rank in one step"};

void alltoall_direct(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  const int p = a.size, r = a.rank;
  if (n == 0) return;
  BufRef from = a.send;
  if (a.in_place) {
    if (p == 1) return;
    from = b.scratch(n * p);
    b.copy(from, a.recv, n * p);
    b.step();
  }
  for (int q = 0; q < p; ++q) {
    if (q == r) continue;
    b.send(q, from + q * n, n);
    b.recv(q, a.recv + q * n, n);
  }
  b.copy(a.recv + r * n, from + r * n, n);
  b.step();
}

}  // namespace torusmpi::coll
