// reduce_scatter_block chip_ring: a reduce-scatter among the cores of each chip, then rings of
// same-core ranks along the chips (the Hamiltonian cycle on 4x4 and 4x4x4 tori, else the snake) on
// what each core kept (p blocks of count elements). The reduce-scatter half of allreduce chip_ring.
// A communicator that does not fill its torus but holds as many ranks on every chip it touches runs
// the same stages over the chips as they are; any other is one ring in snake order.
//
// Cost = (c-1) a_c + ((c-1)/c) n b_c + (C-1) a + ((C-1)/C) n b + ((p-1)/p) n g, c cores per
// chip, C chips, n the whole vector (the chip stage's c rings share each link).
// Restrictions: commutative ops (ring order).
//
//   2x2 torus, 2 cores per chip (ranks 2x+4y, +1): in each chip core 0 keeps the even ranks'
//   blocks, core 1 the odd ones'; then ring 0 2 6 4 reduces the even blocks, ring 1 3 7 5 the
//   odd ones, each rank ending with its own
#include "coll/algorithms.h"
#include "coll/patterns/staged.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return kReduceScatterChipRing.cost(m, p, n); }

}  // namespace

extern const Algorithm kReduceScatterBlockChipRing = {
    Coll::kReduceScatterBlock,
    "chip_ring",
    reduce_scatter_block_chip_ring,
    kNeedsCommutative,
    "Cost = (c-1) a_c + ((c-1)/c) n b_c + (C-1) a + ((C-1)/C) n b + ((p-1)/p) n g",
    cost,
    "reduce-scatter in each chip, then rings of same-core ranks across the chips"};

void reduce_scatter_block_chip_ring(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  auto at = [&](int q) { return q * n; };
  auto len = [&](int) { return n; };
  const uint64_t total = n * a.size;
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  patterns::staged_reduce_scatter(b, a, {patterns::chip_stages(g, a.topo)}, at, len, total);
}

}  // namespace torusmpi::coll
