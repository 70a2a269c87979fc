// scatterv linear: the root sends every other rank its block (counts, displs) at once, straight
// from the send buffer, and copies its own (patterns/linear.h). Zero-size blocks are not sent.
//
// Cost = (p-1) (a + n b), with n the mean block: one step, but the root's port sends the p-1
// messages one after the other.
// Restrictions: none.
//
//   p = 4, root 1, counts 2 0 1 3:   step 0: 1->0 (b0)  1->2 (b2)  1->3 (b3)    (b1: a copy)
#include "coll/algorithms.h"
#include "coll/patterns/linear.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); }

}  // namespace

extern const Algorithm kScattervLinear = {Coll::kScatterv,
                                          "linear",
                                          scatterv_linear,
                                          0,
                                          "Cost = (p-1) (a + n b)",
                                          cost,
                                          "the root sends to every rank at once"};

void scatterv_linear(Builder& b, const Args& a) {
  const uint64_t e = a.elem;
  patterns::linear_scatter(
      b, a, [&](int q) { return a.displs[q] * e; }, [&](int q) { return a.counts[q] * e; });
}

}  // namespace torusmpi::coll
