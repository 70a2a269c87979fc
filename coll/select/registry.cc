#include "coll/select/registry.h"

#include "coll/algorithms.h"
#include "coll/patterns/hier.h"

namespace torusmpi::coll {
namespace {

// Every algorithm, grouped by collective in Coll order; the first of each collective is its
// fallback, and among equal costs the earlier wins. Each entry is defined in its algorithm's file
// (coll/algorithms.h), its cost function beside its `Cost =` comment.
const Algorithm* const kAlgorithms[] = {
    // barrier (recursive_doubling first: it wins the tie at powers of two, see its file)
    &kBarrierRecursiveDoubling,
    &kBarrierDissemination,
    &kBarrierIna,
    &kBarrierLinear,
    // bcast
    &kBcastBinomial,
    &kBcastScatterAllgather,
    &kBcastTorusRing,
    &kBcastDualRing,
    // reduce
    &kReduceBinomial,
    &kReduceRabenseifner,
    // allreduce
    &kAllreduceRecursiveDoubling,
    &kAllreduceRing,
    &kAllreduceRabenseifner,
    &kAllreduceReduceBcast,
    &kAllreduceTorusRing,
    &kAllreduceDualRing,
    &kAllreduceRdh,
    &kAllreduceDirect,
    &kAllreduceChipRing,
    &kAllreduceInstanceRing,
    &kAllreduceInstanceRdh,
    &kAllreduceInstanceDirect,
    &kAllreduceIna,
    // allgather
    &kAllgatherRing,
    &kAllgatherRecursiveDoubling,
    &kAllgatherBruck,
    &kAllgatherTorusRing,
    &kAllgatherDualRing,
    &kAllgatherRdh,
    &kAllgatherDirect,
    &kAllgatherChipRing,
    &kAllgatherInstanceRing,
    &kAllgatherInstanceRdh,
    &kAllgatherInstanceDirect,
    &kAllgatherIna,
    // allgatherv
    &kAllgathervRing,
    // reduce_scatter
    &kReduceScatterPairwise,
    &kReduceScatterRing,
    &kReduceScatterRecursiveHalving,
    &kReduceScatterTorusRing,
    &kReduceScatterDualRing,
    &kReduceScatterRdh,
    &kReduceScatterDirect,
    &kReduceScatterChipRing,
    &kReduceScatterInstanceRing,
    &kReduceScatterInstanceRdh,
    &kReduceScatterInstanceDirect,
    &kReduceScatterIna,
    // reduce_scatter_block
    &kReduceScatterBlockPairwise,
    &kReduceScatterBlockRing,
    &kReduceScatterBlockRecursiveHalving,
    &kReduceScatterBlockTorusRing,
    &kReduceScatterBlockDualRing,
    &kReduceScatterBlockRdh,
    &kReduceScatterBlockDirect,
    &kReduceScatterBlockChipRing,
    &kReduceScatterBlockInstanceRing,
    &kReduceScatterBlockInstanceRdh,
    &kReduceScatterBlockInstanceDirect,
    &kReduceScatterBlockIna,
    // alltoall
    &kAlltoallPairwise,
    &kAlltoallBruck,
    &kAlltoallLinear,
    &kAlltoallDirect,
    &kAlltoallTorusRing,
    // alltoallv
    &kAlltoallvPairwise,
    // alltoallw
    &kAlltoallwPairwise,
    // gather
    &kGatherBinomial,
    &kGatherLinear,
    // gatherv
    &kGathervLinear,
    // scatter
    &kScatterBinomial,
    &kScatterLinear,
    // scatterv
    &kScattervLinear,
    // scan
    &kScanRecursiveDoubling,
    // exscan
    &kExscanRecursiveDoubling,
    // neighbor_allgather
    &kNeighborAllgatherLinear,
    // neighbor_allgatherv
    &kNeighborAllgathervLinear,
    // neighbor_alltoall
    &kNeighborAlltoallLinear,
    // neighbor_alltoallv
    &kNeighborAlltoallvLinear,
    // neighbor_alltoallw
    &kNeighborAlltoallwLinear,
};

}  // namespace

// Copies of the entries, made on first use (the entries are constants of other files); callers
// compare algorithms by these copies' addresses.
const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> all = [] {
    std::vector<Algorithm> v;
    for (const Algorithm* a : kAlgorithms) v.push_back(*a);
    return v;
  }();
  return all;
}

// Tokens renamed since they were published: environment values and rule files that use the old
// ones keep working (torusmpi(7) lists them). "mesh" read as a topology in a torus library.
constexpr struct {
  const char* old_token;
  const char* token;
} kAliases[] = {
    {"mesh", "direct"},           {"chip_hier", "chip_ring"},       {"hier_ring", "instance_ring"},
    {"hier_rdh", "instance_rdh"}, {"hier_mesh", "instance_direct"},
};

const Algorithm* find_algorithm(Coll c, const std::string& token) {
  std::string name = token;
  for (const auto& alias : kAliases) {
    if (name == alias.old_token) name = alias.token;
  }
  for (const Algorithm& a : algorithms()) {
    if (a.coll == c && name == a.token) return &a;
  }
  return nullptr;
}

const Algorithm& fallback(Coll c) {
  for (const Algorithm& a : algorithms()) {
    if (a.coll == c) return a;
  }
  return algorithms().front();  // unreachable: every collective has algorithms (tested)
}

bool supports(const Algorithm& alg, const Args& a, std::string* why) {
  if ((alg.restrictions & kNeedsCommutative) && !a.commutative) {
    *why = "needs a commutative op";
    return false;
  }
  if ((alg.restrictions & kNeedsInstances) && patterns::instance_groups(a.topo, a.size).empty()) {
    *why = "needs two or more instances with as many ranks in each";
    return false;
  }
  if ((alg.restrictions & kNeedsSwitch) && !a.in_network) {
    *why =
        "needs an in-network aggregation switch (TORUSMPI_SWITCH) that can do the call's op and "
        "type";
    return false;
  }
  return true;
}

bool runs_forced(const Algorithm& alg, const Args& a, std::string* why) {
  Algorithm anywhere = alg;
  anywhere.restrictions &= ~(kNeedsInstances | kNeedsSwitch);
  return supports(anywhere, a, why);
}

}  // namespace torusmpi::coll
