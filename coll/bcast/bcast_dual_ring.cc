// bcast dual_ring: half the vector down each of two Hamiltonian cycles of the chips that share no
// link (4x4 and 4x4x4 tori), each cycle cut at the root into one chain of all p ranks and
// pipelined in chunks (patterns/chain.h); elsewhere the halves go round the snake ring from the
// root in opposite directions. Every rank passes on two half-chunks per step, on different links
// (or the two directions of one).
//
// Cost = (k + p - 2)(a + (n/2k) b), k chunks per half: near (n/2) b per link for large vectors.
// Restrictions: none.
//
//   ring 0 1 3 2 (2x2 torus), root 0: first half 0->1->3->2, second half 0->2->3->1 (2x2 has no
//   disjoint pair), in chunks
#include <algorithm>

#include "coll/algorithms.h"
#include "coll/patterns/chain.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  if (torus_shaped(m)) return chain_cost(m.torus->hop_alpha, m.torus->link_beta, p, n / 2);
  // The snake ring, a link's two directions standing in for the two cycles, priced no better
  // than the tree algorithms.
  return std::max(chain_cost(m.alpha, m.beta, p, n / 2),
                  std::min(kBcastBinomial.cost(m, p, n), kBcastScatterAllgather.cost(m, p, n)));
}

}  // namespace

extern const Algorithm kBcastDualRing = {
    Coll::kBcast,
    "dual_ring",
    bcast_dual_ring,
    0,
    "Cost = (k + p - 2)(a + (n/2k) b)",
    cost,
    "half the vector pipelined down each of two link-disjoint Hamiltonian cycles"};

void bcast_dual_ring(Builder& b, const Args& a) {
  if (a.count == 0 || a.size == 1) return;
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  const auto rings = patterns::dual_cycles(g, a.topo);
  const std::vector<int> one = patterns::rotate_from(rings.first.owner, a.root, true);
  const std::vector<int> two = patterns::rotate_from(rings.second.owner, a.root, true);
  const size_t half = a.count / 2;
  patterns::StepList s[2];
  patterns::chain_bcast(s[0], one, a.rank, a.recv, 0, half, a.elem);
  patterns::chain_bcast(s[1], two, a.rank, a.recv, half, a.count - half, a.elem);
  patterns::StepList::emit(b, {&s[0], &s[1]});
}

}  // namespace torusmpi::coll
