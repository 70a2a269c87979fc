// reduce_scatter_block direct (p blocks of count elements). In one step every rank sends
// block j of its vector to rank j, which folds what it gets in rank order (patterns/direct.h). One
// message step whatever p: for small vectors, at the price of p-1 messages in flight per port.
//
// Cost = (p-1) a + ((p-1)/p) n b + ((p-1)/p) n g, n the whole vector, the messages of the step
// overlapping: on the torus a + ((p-1)/p) n b_link + ((p-1)/p) n g.
// Restrictions: none (the fold keeps rank order).
//
//   p = 4, blocks A B C D: rank q sends A to 0, B to 1, C to 2, D to 3 at once; rank 0 folds
//   A0+A1 and A2+A3, then the two: its block, in rank order
#include "coll/algorithms.h"
#include "coll/patterns/direct.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return kReduceScatterDirect.cost(m, p, n); }

}  // namespace

extern const Algorithm kReduceScatterBlockDirect = {
    Coll::kReduceScatterBlock,
    "direct",
    reduce_scatter_block_direct,
    0,
    "Cost = (p-1) a + ((p-1)/p) n b + ((p-1)/p) n g",
    cost,
    "direct: block j to rank j in one step, folded in rank order"};

void reduce_scatter_block_direct(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  auto at = [&](int q) { return q * n; };
  auto len = [&](int) { return n; };
  const uint64_t total = n * a.size;
  if (total == 0) return;
  const BufRef mine = a.in_place ? a.recv : a.send;
  const BufRef done = patterns::direct_reduce(b, a.rank, a.size, mine, at, len);
  b.copy(a.recv, done, len(a.rank));
  b.step();
}

}  // namespace torusmpi::coll
