// allgather direct: in one step every rank sends its block to every other and receives
// theirs straight into place. One message step whatever p: for small blocks, with p-1 messages
// in flight per port.
//
// Cost = (p-1) a + (p-1) n b, the p-1 messages overlapping: on the torus a + (p-1) n b_link.
// With more ranks than cores, (p-2)s less for small blocks: a rank waits once (one_wait_saving).
// Restrictions: none.
//
//   p = 4, one step: rank q sends b_q to the three others, receives b_j from each j
#include "coll/algorithms.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  if (spans_instances(m)) return net_direct_cost(m, p, (p - 1) * n);
  if (torus_shaped(m)) return direct_cost(m, (p - 1) * n);
  return kAllgatherRing.cost(m, p, n) - one_wait_saving(m, p - 1, n);
}

}  // namespace

extern const Algorithm kAllgatherDirect = {
    Coll::kAllgather,
    "direct",
    allgather_direct,
    0,
    "Cost = (p-1) a + (p-1) n b, the p-1 messages overlapping",
    cost,
    "direct: every block to every rank in one step"};

void allgather_direct(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  if (n == 0) return;
  const BufRef own = a.in_place ? a.recv + a.rank * n : a.send;
  for (int q = 0; q < a.size; ++q) {
    if (q == a.rank) continue;
    b.send(q, own, n);
    b.recv(q, a.recv + q * n, n);
  }
  b.copy(a.recv + a.rank * n, own, n);
  b.step();
}

}  // namespace torusmpi::coll
