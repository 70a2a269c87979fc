// allgatherv: rank q's counts[q] elements reach every rank, at displs[q] of recv.
// MPI_IN_PLACE: a rank's block is already at its place in recv. Size: the average block, which
// every rank can compute alike from counts.
#include "coll/collective.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t recv_bytes(const Args& a) { return span_of(a.counts, a.displs, a.size) * a.elem; }
uint64_t selection_bytes(const Args& a) { return sum_of(a.counts, a.size) * a.elem / a.size; }

}  // namespace

extern const Collective kAllgatherv = {Coll::kAllgatherv,
                                       "allgatherv",
                                       /*traits=*/kVector | kInPlace,
                                       /*send_bytes=*/own_count_unless_in_place,
                                       recv_bytes,
                                       selection_bytes,
                                       /*own_in_recv=*/own_vblock_if_in_place,
                                       /*expect=*/expect_rank_vblocks,
                                       CallArrays::kPerRank,
                                       SizeIs::kRankBlock,
                                       /*bus_factor=*/bus_factor_ring};

}  // namespace torusmpi::coll::collectives
