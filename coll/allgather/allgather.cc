// allgather: every rank's block of count elements reaches every rank, rank q's at block q of
// recv. MPI_IN_PLACE: a rank's block is already at its place in recv. Size: one rank's block.
#include "coll/collective.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t recv_bytes(const Args& a) { return a.size * a.block_bytes(); }

}  // namespace

extern const Collective kAllgather = {Coll::kAllgather,
                                      "allgather",
                                      /*traits=*/kInPlace,
                                      /*send_bytes=*/count_unless_in_place,
                                      recv_bytes,
                                      /*selection_bytes=*/count_bytes,
                                      /*own_in_recv=*/own_block_if_in_place,
                                      /*expect=*/expect_rank_blocks,
                                      CallArrays::kNone,
                                      SizeIs::kRankBlock,
                                      /*bus_factor=*/bus_factor_ring};

}  // namespace torusmpi::coll::collectives
