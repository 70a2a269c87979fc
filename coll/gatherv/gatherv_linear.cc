// gatherv linear: the root receives every other rank's block at once, each straight into its
// place (displs) in recv, and copies its own (patterns/linear.h). Zero-size blocks are not sent.
//
// Cost = (p-1) (a + n b), with n the mean block: one step, but the root's port takes the p-1
// messages one after the other.
// Restrictions: none.
//
//   p = 4, root 1, counts 2 0 1 3:   step 0: 0->1 (b0)  2->1 (b2)  3->1 (b3)    (b1: a copy)
#include "coll/algorithms.h"
#include "coll/patterns/linear.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); }

}  // namespace

extern const Algorithm kGathervLinear = {Coll::kGatherv,
                                         "linear",
                                         gatherv_linear,
                                         0,
                                         "Cost = (p-1) (a + n b)",
                                         cost,
                                         "the root receives from every rank at once"};

void gatherv_linear(Builder& b, const Args& a) {
  const uint64_t e = a.elem;
  patterns::linear_gather(
      b, a, [&](int q) { return a.displs[q] * e; }, [&](int q) { return a.counts[q] * e; });
}

}  // namespace torusmpi::coll
