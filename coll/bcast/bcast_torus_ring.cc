// bcast torus_ring: pipelined down a spanning path of links. The vector is cut into chunks of
// about 32 KiB (patterns/chain.h) that follow each other down two chains from the root, so the
// links of a chain all carry a chunk at once. On a 4x4 or 4x4x4 torus the path is a Hamiltonian
// cycle of the chips (each chip's ranks in a row) split at the root: one chain runs forward
// half way round, the other backward; elsewhere it is the snake ring, one chain from the root to
// its end and one to its start, so no message crosses from the snake's end to its start.
//
// Cost = (k + L - 2)(a + (n/k) b), k chunks, L the longer chain (about p/2 on a cycle): near
// n b for large vectors, (p/2)(a + n b) for small ones.
// Restrictions: none.
//
//   ring 0 1 3 2 (2x2 torus), root 0, chunks x y: forward chain 0 1 3, backward 0 2
//     step 0: 0:x->1 0:x->2   step 1: 0:y->1 0:y->2 1:x->3   step 2: 1:y->3
#include <algorithm>

#include "coll/algorithms.h"
#include "coll/patterns/chain.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  if (torus_shaped(m)) return chain_cost(m.torus->hop_alpha, m.torus->link_beta, p / 2 + 1, n);
  // The snake ring: one chain of up to p, priced no better than the tree algorithms.
  return std::max(chain_cost(m.alpha, m.beta, p, n),
                  std::min(kBcastBinomial.cost(m, p, n), kBcastScatterAllgather.cost(m, p, n)));
}

}  // namespace

extern const Algorithm kBcastTorusRing = {
    Coll::kBcast,
    "torus_ring",
    bcast_torus_ring,
    0,
    "Cost = (k + L - 2)(a + (n/k) b)",
    cost,
    "chunks pipelined down two chains of links from the root"};

void bcast_torus_ring(Builder& b, const Args& a) {
  if (a.count == 0 || a.size == 1) return;
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  const patterns::ChipCycles* cycles =
      g.shaped ? patterns::disjoint_cycles(a.topo->ndims, a.topo->dims) : nullptr;
  std::vector<int> fwd, back;
  if (cycles != nullptr) {
    const std::vector<int> ring = patterns::ranks_along(g, cycles->a);
    const std::vector<int> f = patterns::rotate_from(ring, a.root, true);
    const int half = a.size / 2;  // forward takes positions 0..half, backward the rest
    fwd.assign(f.begin(), f.begin() + half + 1);
    back.push_back(a.root);
    for (int j = a.size - 1; j > half; --j) back.push_back(f[j]);
  } else {
    const std::vector<int> ring = patterns::snake_ring(g, a.topo);
    const int i = static_cast<int>(std::find(ring.begin(), ring.end(), a.root) - ring.begin());
    fwd.assign(ring.begin() + i, ring.end());
    for (int j = i; j >= 0; --j) back.push_back(ring[j]);
  }
  patterns::StepList s[2];
  patterns::chain_bcast(s[0], fwd, a.rank, a.recv, 0, a.count, a.elem);
  patterns::chain_bcast(s[1], back, a.rank, a.recv, 0, a.count, a.elem);
  patterns::StepList::emit(b, {&s[0], &s[1]});
}

}  // namespace torusmpi::coll
