#include "coll/select/registry.h"

#include <cmath>

#include "coll/algorithms.h"

namespace torusmpi::coll {
namespace {

// Cost helpers: lg is log2 rounded up; f is 1 when p is not a power of two (a fold before and
// after); frac is (p-1)/p.
double lg(int p) { return p <= 1 ? 0 : std::ceil(std::log2(p)); }
double lg_floor(int p) { return p <= 1 ? 0 : std::floor(std::log2(p)); }
double f(int p) { return (p & (p - 1)) == 0 ? 0 : 1; }
double frac(int p) { return (p - 1.0) / p; }

const std::vector<Algorithm> kAlgorithms = {
    // barrier
    {Coll::kBarrier, "dissemination", barrier_dissemination, 0, "Cost = lg(p) a",
     [](const Model& m, int p, double) { return lg(p) * m.alpha; },
     "round k: signal rank+2^k, hear from rank-2^k"},

    // bcast
    {Coll::kBcast, "binomial", bcast_binomial, 0, "Cost = lg(p) (a + n b)",
     [](const Model& m, int p, double n) { return lg(p) * (m.alpha + n * m.beta); },
     "binomial tree from the root"},
    {Coll::kBcast, "scatter_allgather", bcast_scatter_allgather, 0,
     "Cost = (lg(p) + p-1) a + 2((p-1)/p) n b",
     [](const Model& m, int p, double n) {
       return (lg(p) + p - 1) * m.alpha + 2 * frac(p) * n * m.beta;
     },
     "binomial scatter of p blocks, then a ring allgather (van de Geijn)"},

    // reduce
    {Coll::kReduce, "binomial", reduce_binomial, 0, "Cost = lg(p) (a + n b + n g)",
     [](const Model& m, int p, double n) { return lg(p) * (m.alpha + n * m.beta + n * m.gamma); },
     "binomial tree to the root (non-commutative ops: trees laid over rank order)"},
    {Coll::kReduce, "rabenseifner", reduce_rabenseifner, kNeedsCommutative,
     "Cost = 2 lg(p2) a + (2((p-1)/p) + f) n b + ((p-1)/p + f) n g",
     [](const Model& m, int p, double n) {
       return 2 * lg_floor(p) * m.alpha + (2 * frac(p) + f(p)) * n * m.beta +
              (frac(p) + f(p)) * n * m.gamma;
     },
     "recursive-halving reduce-scatter, then a binomial gather of the blocks to the root"},

    // allreduce
    {Coll::kAllreduce, "recursive_doubling", allreduce_recursive_doubling, 0,
     "Cost = (lg(p2) + 2f) a + n (lg(p2) + 2f) b + n (lg(p2) + f) g",
     [](const Model& m, int p, double n) {
       double steps = lg_floor(p) + 2 * f(p);
       return steps * (m.alpha + n * m.beta) + (lg_floor(p) + f(p)) * n * m.gamma;
     },
     "swap whole vectors with rank^2^k, lg(p) rounds"},
    {Coll::kAllreduce, "ring", allreduce_ring, kNeedsCommutative,
     "Cost = 2(p-1) a + 2((p-1)/p) n b + ((p-1)/p) n g",
     [](const Model& m, int p, double n) {
       return 2 * (p - 1) * m.alpha + 2 * frac(p) * n * m.beta + frac(p) * n * m.gamma;
     },
     "ring reduce-scatter, then ring allgather"},
    {Coll::kAllreduce, "rabenseifner", allreduce_rabenseifner, kNeedsCommutative,
     "Cost = 2 lg(p2) a + (2((p-1)/p) + f) n b + ((p-1)/p + f) n g",
     [](const Model& m, int p, double n) {
       return 2 * lg_floor(p) * m.alpha + (2 * frac(p) + f(p)) * n * m.beta +
              (frac(p) + f(p)) * n * m.gamma;
     },
     "recursive-halving reduce-scatter, then recursive-doubling allgather; extra ranks fold "
     "into the first and last rounds"},
    {Coll::kAllreduce, "reduce_bcast", allreduce_reduce_bcast, 0,
     "Cost = 2 lg(p) (a + n b) + lg(p) n g",
     [](const Model& m, int p, double n) {
       return 2 * lg(p) * (m.alpha + n * m.beta) + lg(p) * n * m.gamma;
     },
     "binomial reduce to rank 0, then binomial bcast"},

    // allgather (n: one rank's block)
    {Coll::kAllgather, "ring", allgather_ring, 0, "Cost = (p-1) a + (p-1) n b",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "pass blocks around the ring, p-1 steps"},
    {Coll::kAllgather, "recursive_doubling", allgather_recursive_doubling, 0,
     "Cost = (lg(p2) + 2f) a + (p-1) n b (+ f p n b)",
     [](const Model& m, int p, double n) {
       return (lg_floor(p) + 2 * f(p)) * m.alpha + (p - 1 + f(p) * p) * n * m.beta;
     },
     "swap all blocks gathered so far with rank^2^k"},
    {Coll::kAllgather, "bruck", allgather_bruck, 0, "Cost = lg(p) a + (p-1) n b",
     [](const Model& m, int p, double n) { return lg(p) * m.alpha + (p - 1) * n * m.beta; },
     "Bruck: round k sends the 2^k blocks gathered so far to rank-2^k, in place (no rotation)"},
    {Coll::kAllgatherv, "ring", allgatherv_ring, 0, "Cost = (p-1) a + (p-1) n b",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "pass blocks around the ring, p-1 steps"},

    // reduce_scatter (n: the whole vector)
    {Coll::kReduceScatter, "pairwise", reduce_scatter_pairwise, 0,
     "Cost = (p-1) a + ((p-1)/p) n b + (n/p) g",
     [](const Model& m, int p, double n) {
       return (p - 1) * m.alpha + frac(p) * n * m.beta + n / p * m.gamma;
     },
     "step k: send rank+k its block, get ours from rank-k; folded in rank order as they come"},
    {Coll::kReduceScatter, "ring", reduce_scatter_ring, kNeedsCommutative,
     "Cost = 2(p-1) a + ((p-1)/p) n b + ((p-1)/p) n g",
     [](const Model& m, int p, double n) {
       return 2 * (p - 1) * m.alpha + frac(p) * n * (m.beta + m.gamma);
     },
     "pass partial blocks around the ring, p-1 steps"},
    {Coll::kReduceScatter, "recursive_halving", reduce_scatter_recursive_halving,
     kNeedsCommutative, "Cost = lg(p2) a + ((p-1)/p + f) n (b + g)",
     [](const Model& m, int p, double n) {
       return lg_floor(p) * m.alpha + (frac(p) + f(p)) * n * (m.beta + m.gamma);
     },
     "halve the vector with rank^2^k each round"},
    {Coll::kReduceScatterBlock, "pairwise", reduce_scatter_block_pairwise, 0,
     "Cost = (p-1) a + ((p-1)/p) n b + (n/p) g",
     [](const Model& m, int p, double n) {
       return (p - 1) * m.alpha + frac(p) * n * m.beta + n / p * m.gamma;
     },
     "step k: send rank+k its block, get ours from rank-k; folded in rank order as they come"},
    {Coll::kReduceScatterBlock, "ring", reduce_scatter_block_ring, kNeedsCommutative,
     "Cost = 2(p-1) a + ((p-1)/p) n b + ((p-1)/p) n g",
     [](const Model& m, int p, double n) {
       return 2 * (p - 1) * m.alpha + frac(p) * n * (m.beta + m.gamma);
     },
     "pass partial blocks around the ring, p-1 steps"},
    {Coll::kReduceScatterBlock, "recursive_halving", reduce_scatter_block_recursive_halving,
     kNeedsCommutative, "Cost = lg(p2) a + ((p-1)/p + f) n (b + g)",
     [](const Model& m, int p, double n) {
       return lg_floor(p) * m.alpha + (frac(p) + f(p)) * n * (m.beta + m.gamma);
     },
     "halve the vector with rank^2^k each round"},

    // alltoall (n: one block)
    {Coll::kAlltoall, "pairwise", alltoall_pairwise, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "step k: send to rank+k, receive from rank-k"},
    {Coll::kAlltoall, "bruck", alltoall_bruck, 0,
     "Cost = lg(p) a + lg(p) (p/2) n b + (lg(p)/2 + 1) p n c",
     [](const Model& m, int p, double n) {
       return lg(p) * (m.alpha + p / 2.0 * n * m.beta) + (lg(p) / 2 + 1) * p * n * m.copy;
     },
     "Bruck: lg(p) rounds of half the blocks each; for small blocks"},
    {Coll::kAlltoall, "linear", alltoall_linear, 0, "Cost = a + (p-1) n b",
     [](const Model& m, int p, double n) { return m.alpha * std::sqrt(p) + (p - 1) * n * m.beta; },
     "every send and receive at once"},
    {Coll::kAlltoallv, "pairwise", alltoallv_pairwise, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "step k: send to rank+k, receive from rank-k"},
    {Coll::kAlltoallw, "pairwise", alltoallw_pairwise, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "step k: send to rank+k, receive from rank-k"},

    // gather, scatter (n: one block)
    {Coll::kGather, "binomial", gather_binomial, 0, "Cost = lg(p) a + (p-1) n b",
     [](const Model& m, int p, double n) { return lg(p) * m.alpha + (p - 1) * n * m.beta; },
     "binomial tree: subtrees gather, then pass up"},
    {Coll::kGather, "linear", gather_linear, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "the root receives from every rank at once"},
    {Coll::kGatherv, "linear", gatherv_linear, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "the root receives from every rank at once"},
    {Coll::kScatter, "binomial", scatter_binomial, 0, "Cost = lg(p) a + (p-1) n b",
     [](const Model& m, int p, double n) { return lg(p) * m.alpha + (p - 1) * n * m.beta; },
     "binomial tree: each rank passes on its subtree's blocks"},
    {Coll::kScatter, "linear", scatter_linear, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "the root sends to every rank at once"},
    {Coll::kScatterv, "linear", scatterv_linear, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "the root sends to every rank at once"},

    // scan, exscan
    {Coll::kScan, "recursive_doubling", scan_recursive_doubling, 0,
     "Cost = lg(p) (a + n b + n g)",
     [](const Model& m, int p, double n) { return lg(p) * (m.alpha + n * m.beta + n * m.gamma); },
     "round k: pass the partial prefix to rank+2^k"},
    {Coll::kExscan, "recursive_doubling", exscan_recursive_doubling, 0,
     "Cost = lg(p) (a + n b + 2 n g)",
     [](const Model& m, int p, double n) { return lg(p) * (m.alpha + n * m.beta + 2 * n * m.gamma); },
     "round k: pass the partial prefix to rank+2^k"},

    // neighbourhood collectives (n: one block; the cost model does not know the degree, so it
    // takes p as its bound)
    {Coll::kNeighborAllgather, "linear", neighbor_allgather_linear, 0,
     "Cost = a + max(indegree, outdegree) n b",
     [](const Model& m, int, double n) { return m.alpha + n * m.beta; },
     "every neighbour's block at once, one step"},
    {Coll::kNeighborAllgatherv, "linear", neighbor_allgatherv_linear, 0,
     "Cost = a + max(indegree, outdegree) n b",
     [](const Model& m, int, double n) { return m.alpha + n * m.beta; },
     "every neighbour's block at once, one step"},
    {Coll::kNeighborAlltoall, "linear", neighbor_alltoall_linear, 0,
     "Cost = a + max(indegree, outdegree) n b",
     [](const Model& m, int, double n) { return m.alpha + n * m.beta; },
     "every neighbour's block at once, one step"},
    {Coll::kNeighborAlltoallv, "linear", neighbor_alltoallv_linear, 0,
     "Cost = a + max(indegree, outdegree) n b",
     [](const Model& m, int, double n) { return m.alpha + n * m.beta; },
     "every neighbour's block at once, one step"},
    {Coll::kNeighborAlltoallw, "linear", neighbor_alltoallw_linear, 0,
     "Cost = a + max(indegree, outdegree) n b",
     [](const Model& m, int, double n) { return m.alpha + n * m.beta; },
     "every neighbour's block at once, one step"},
};

}  // namespace

const std::vector<Algorithm>& algorithms() { return kAlgorithms; }

const Algorithm* find_algorithm(Coll c, const std::string& token) {
  for (const Algorithm& a : kAlgorithms) {
    if (a.coll == c && token == a.token) return &a;
  }
  return nullptr;
}

const Algorithm& fallback(Coll c) {
  for (const Algorithm& a : kAlgorithms) {
    if (a.coll == c) return a;
  }
  return kAlgorithms.front();  // unreachable: every collective has algorithms (tested)
}

bool supports(const Algorithm& alg, const Args& a, std::string* why) {
  if ((alg.restrictions & kNeedsCommutative) && !a.commutative) {
    *why = "needs a commutative op";
    return false;
  }
  return true;
}

size_t selection_bytes(const Args& a) {
  size_t e = a.elem;
  auto total = [&](const size_t* v) {
    size_t s = 0;
    for (int i = 0; i < a.size; ++i) s += v[i];
    return s;
  };
  switch (a.coll) {
    case Coll::kAllgatherv:
      return total(a.counts) * e / a.size;
    case Coll::kReduceScatter:
      return total(a.counts) * e;
    case Coll::kReduceScatterBlock:
      return a.count * e * a.size;
    case Coll::kGatherv:
    case Coll::kScatterv:
    case Coll::kAlltoallv:
    case Coll::kAlltoallw:
    case Coll::kNeighborAllgatherv:
    case Coll::kNeighborAlltoallv:
    case Coll::kNeighborAlltoallw:
      return 0;  // no size every rank knows alike
    default:
      return a.count * e;
  }
}

}  // namespace torusmpi::coll
