// reduce_scatter_block ina: reduce_scatter ina (coll/reduce_scatter/reduce_scatter_ina.cc) on p
// blocks of count elements.
//
// Cost = T_rs(q) + 2 a_e + a_s + (n/q) c max(b_e, b_s)
// Restrictions: two or more instances with as many ranks in each; commutative ops; a switch that
// can do the op and type. Forced elsewhere, every rank is an instance of its own.
#include "coll/algorithms.h"
#include "coll/patterns/ina.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

// The vector: p blocks of n bytes.
double cost(const Model& m, int p, double n) { return ina_rs_cost(m, p, n * p); }

}  // namespace

extern const Algorithm kReduceScatterBlockIna = {
    Coll::kReduceScatterBlock,
    "ina",
    reduce_scatter_block_ina,
    kNeedsCommutative | kNeedsInstances | kNeedsSwitch,
    "Cost = T_rs(q) + 2 a_e + a_s + (n/q) c max(b_e, b_s)",
    cost,
    "reduce_scatter ina on equal blocks"};

void reduce_scatter_block_ina(Builder& b, const Args& a) {
  const patterns::InaShape s = patterns::ina_shape(a);
  if (!patterns::ina_fits(s)) return reduce_scatter_block_instance_ring(b, a);
  patterns::ina_reduce_scatter(b, a, s, patterns::VectorBlocks::equal(a.count, a.size, a.elem));
}

}  // namespace torusmpi::coll
