// The table of every collective's descriptor (coll/collective.h), indexed by Coll: each is
// defined in its own directory, coll/<name>/<name>.cc.
#include "coll/collective.h"
#include "coll/select/registry.h"

namespace torusmpi::coll {
namespace collectives {

extern const Collective kBarrier, kBcast, kReduce, kAllreduce, kAllgather, kAllgatherv,
    kReduceScatter, kReduceScatterBlock, kAlltoall, kAlltoallv, kAlltoallw, kGather, kGatherv,
    kScatter, kScatterv, kScan, kExscan, kNeighborAllgather, kNeighborAllgatherv, kNeighborAlltoall,
    kNeighborAlltoallv, kNeighborAlltoallw;

}  // namespace collectives
namespace {

// In the order of enum Coll.
const Collective* const kTable[] = {
    &collectives::kBarrier,
    &collectives::kBcast,
    &collectives::kReduce,
    &collectives::kAllreduce,
    &collectives::kAllgather,
    &collectives::kAllgatherv,
    &collectives::kReduceScatter,
    &collectives::kReduceScatterBlock,
    &collectives::kAlltoall,
    &collectives::kAlltoallv,
    &collectives::kAlltoallw,
    &collectives::kGather,
    &collectives::kGatherv,
    &collectives::kScatter,
    &collectives::kScatterv,
    &collectives::kScan,
    &collectives::kExscan,
    &collectives::kNeighborAllgather,
    &collectives::kNeighborAllgatherv,
    &collectives::kNeighborAlltoall,
    &collectives::kNeighborAlltoallv,
    &collectives::kNeighborAlltoallw,
};
static_assert(sizeof kTable / sizeof kTable[0] == kCollCount, "one descriptor per Coll");

}  // namespace

// A line out of order would give a collective another's behaviour: coll_select_test checks the
// order, so the lookup on every call stays one load.
const Collective& collective(Coll c) { return *kTable[static_cast<int>(c)]; }

// Declared in coll/select/registry.h, where selection's callers look for it.
size_t selection_bytes(const Args& a) { return collective(a.coll).selection_bytes(a); }

}  // namespace torusmpi::coll
