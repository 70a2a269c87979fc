// scatter binomial: down a binomial tree rooted at the root (patterns/binomial.h), the mirror of
// gather binomial. The root sends each child its subtree's blocks straight from the send buffer
// (in one piece, or two when the subtree passes rank p-1: patterns/cyclic.h), all at once; an
// inner rank receives its subtree's blocks in scratch, in the order of ranks relative to the
// root, keeps its own and passes each child its part. Leaves receive straight into recv.
//
// Cost = lg(p) a + (p-1) n b, with n one rank's block (an inner rank copies its own block out of
// what it received while it sends on the rest: the copy hides behind the sends).
// Latency-optimal: for small blocks.
// Restrictions: none.
//
//   p = 6, root 2 (relative ranks v: real 2 3 4 5 0 1 are v 0 1 2 3 4 5):
//     step 0: 2->4 (b4 b5)   2->0 (b0 b1)   2->3 (b3)
//     step 1: 4->5 (b5)      0->1 (b1)
#include "coll/algorithms.h"
#include "coll/patterns/binomial.h"
#include "coll/patterns/cyclic.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return lg(p) * m.alpha + (p - 1) * n * m.beta; }

}  // namespace

extern const Algorithm kScatterBinomial = {
    Coll::kScatter,
    "binomial",
    scatter_binomial,
    0,
    "Cost = lg(p) a + (p-1) n b",
    cost,
    "binomial tree: each rank passes on its subtree's blocks"};

void scatter_binomial(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  if (n == 0) return;
  const int p = a.size;
  const patterns::Binomial tree(a.rank, p, a.root);

  if (tree.parent < 0) {
    for (const auto& c : tree.children) {
      const patterns::CyclicRuns runs = patterns::cyclic_runs(c.rank, c.subtree, p);
      for (int i = 0; i < runs.count; ++i) {
        b.send(c.rank, a.send + runs.run[i].start * n, runs.run[i].len * n);
      }
    }
    if (!a.in_place) b.copy(a.recv, a.send + a.rank * n, n);
    return;
  }

  const int subtree = tree.subtree();
  const BufRef to = tree.children.empty() ? a.recv : b.scratch(subtree * n);
  if (tree.parent == a.root) {
    // The root sends the subtree from rank order: split where it passes rank p-1.
    const patterns::CyclicRuns runs = patterns::cyclic_runs(a.rank, subtree, p);
    for (int i = 0; i < runs.count; ++i) {
      b.recv(a.root, to + runs.run[i].pos * n, runs.run[i].len * n);
    }
  } else {
    b.recv(tree.parent, to, subtree * n);
  }
  if (tree.children.empty()) return;
  b.step();
  for (const auto& c : tree.children) {
    b.send(c.rank, to + (c.vrank - tree.vrank) * n, c.subtree * n);
  }
  b.copy(a.recv, to, n);
}

}  // namespace torusmpi::coll
