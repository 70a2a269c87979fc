// scatter linear: the root sends every other rank its block at once, straight from the send
// buffer, and copies its own (patterns/linear.h).
//
// Cost = (p-1) (a + n b), with n one rank's block: one step, but the root's port sends the p-1
// messages one after the other. For few ranks, or large blocks.
// Restrictions: none.
//
//   p = 4, root 1:   step 0: 1->0 (b0)  1->2 (b2)  1->3 (b3)
#include "coll/algorithms.h"
#include "coll/patterns/linear.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); }

}  // namespace

extern const Algorithm kScatterLinear = {Coll::kScatter,
                                         "linear",
                                         scatter_linear,
                                         0,
                                         "Cost = (p-1) (a + n b)",
                                         cost,
                                         "the root sends to every rank at once"};

void scatter_linear(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  patterns::linear_scatter(
      b, a, [&](int q) { return q * n; }, [&](int) { return n; });
}

}  // namespace torusmpi::coll
