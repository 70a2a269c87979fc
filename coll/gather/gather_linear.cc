// gather linear: the root receives every other rank's block at once, straight into its place in
// recv, and copies its own (patterns/linear.h).
//
// Cost = (p-1) (a + n b), with n one rank's block: one step, but the root's port takes the p-1
// messages one after the other. For few ranks, or large blocks.
// Restrictions: none.
//
//   p = 4, root 1:   step 0: 0->1 (b0)  2->1 (b2)  3->1 (b3)
#include "coll/algorithms.h"
#include "coll/patterns/linear.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); }

}  // namespace

extern const Algorithm kGatherLinear = {Coll::kGather,
                                        "linear",
                                        gather_linear,
                                        0,
                                        "Cost = (p-1) (a + n b)",
                                        cost,
                                        "the root receives from every rank at once"};

void gather_linear(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  patterns::linear_gather(
      b, a, [&](int q) { return q * n; }, [&](int) { return n; });
}

}  // namespace torusmpi::coll
