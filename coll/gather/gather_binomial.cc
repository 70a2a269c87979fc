// gather binomial: up a binomial tree rooted at the root (patterns/binomial.h). A rank receives
// its children's subtrees (all at once), puts them after its own block in scratch, in the order
// of ranks relative to the root, and sends the lot to its parent in one message. The root
// receives straight into recv: a child subtree's ranks are consecutive mod p, so each lands in
// one piece, or in two when it passes rank p-1 (patterns/cyclic.h; at most one child's does).
// Leaves send from the send buffer.
//
// Cost = lg(p) a + (p-1) n b, with n one rank's block (an inner rank copies its own block next
// to its children's while they arrive: the copy hides behind them).
// Latency-optimal: for small blocks.
// Restrictions: none.
//
//   p = 6, root 2 (relative ranks v: real 2 3 4 5 0 1 are v 0 1 2 3 4 5):
//     step 0: 3->2 (b3)   5->4 (b5)   1->0 (b1)    leaves
//     step 1: 4->2 (b4 b5)             0->2 (b0 b1)
//     the root's recv: b0 b1 from 0, b2 its own, b3 from 3, b4 b5 from 4
#include "coll/algorithms.h"
#include "coll/patterns/binomial.h"
#include "coll/patterns/cyclic.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return lg(p) * m.alpha + (p - 1) * n * m.beta; }

}  // namespace

extern const Algorithm kGatherBinomial = {Coll::kGather,
                                          "binomial",
                                          gather_binomial,
                                          0,
                                          "Cost = lg(p) a + (p-1) n b",
                                          cost,
                                          "binomial tree: subtrees gather, then pass up"};

void gather_binomial(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  if (n == 0) return;
  const int p = a.size;
  const patterns::Binomial tree(a.rank, p, a.root);

  if (tree.parent < 0) {
    for (const auto& c : tree.children) {
      const patterns::CyclicRuns runs = patterns::cyclic_runs(c.rank, c.subtree, p);
      for (int i = 0; i < runs.count; ++i) {
        b.recv(c.rank, a.recv + runs.run[i].start * n, runs.run[i].len * n);
      }
    }
    if (!a.in_place) b.copy(a.recv + a.rank * n, a.send, n);
    return;
  }

  const int subtree = tree.subtree();
  BufRef from = a.send;
  if (!tree.children.empty()) {
    from = b.scratch(subtree * n);
    b.copy(from, a.send, n);
    for (const auto& c : tree.children) {
      b.recv(c.rank, from + (c.vrank - tree.vrank) * n, c.subtree * n);
    }
    b.step();
  }
  if (tree.parent == a.root) {
    // The root takes the subtree into rank order: split where it passes rank p-1.
    const patterns::CyclicRuns runs = patterns::cyclic_runs(a.rank, subtree, p);
    for (int i = 0; i < runs.count; ++i) {
      b.send(a.root, from + runs.run[i].pos * n, runs.run[i].len * n);
    }
  } else {
    b.send(tree.parent, from, subtree * n);
  }
}

}  // namespace torusmpi::coll
