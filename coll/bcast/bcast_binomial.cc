// bcast binomial: every rank but the root receives the whole vector from its parent, then sends
// it to all its children at once, largest subtree first (patterns/binomial.h), so the vector
// reaches all p ranks in ceil(lg p) rounds.
//
// Cost = lg(p) (a + n b). Latency-optimal: for short vectors.
// Restrictions: none.
//
//   p = 5, root 0:  round 0: 0->4    round 1: 0->2    round 2: 0->1 2->3
//   (rank 0 sends to 4, 2 and 1 in one step, one after another on its link)
#include "coll/algorithms.h"
#include "coll/patterns/binomial.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return lg(p) * (m.alpha + n * m.beta); }

}  // namespace

extern const Algorithm kBcastBinomial = {Coll::kBcast,
                                         "binomial",
                                         bcast_binomial,
                                         0,
                                         "Cost = lg(p) (a + n b)",
                                         cost,
                                         "binomial tree from the root"};

void bcast_binomial(Builder& b, const Args& a) {
  const uint64_t n = a.count * a.elem;
  if (n == 0 || a.size == 1) return;
  const patterns::Binomial tree(a.rank, a.size, a.root);
  if (tree.parent >= 0) {
    b.recv(tree.parent, a.recv, n);
    b.step();
  }
  for (const patterns::Binomial::Child& c : tree.children) b.send(c.rank, a.recv, n);
}

}  // namespace torusmpi::coll
