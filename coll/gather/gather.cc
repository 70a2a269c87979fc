// gather: every rank's block of count elements reaches the root, rank q's at block q of its
// recv; only the root has a receive buffer. MPI_IN_PLACE (the root's): its block is already at
// its place in recv. Size: one rank's block.
#include "coll/collective.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t recv_bytes(const Args& a) {
  return a.rank == a.root ? a.size * a.block_bytes() : kNoBuffer;
}
Region own_in_recv(const Args& a) { return a.rank == a.root ? own_block_if_in_place(a) : Region{}; }

}  // namespace

extern const Collective kGather = {Coll::kGather,
                                   "gather",
                                   /*traits=*/kRooted | kInPlace,
                                   /*send_bytes=*/count_unless_in_place,
                                   recv_bytes,
                                   /*selection_bytes=*/count_bytes,
                                   own_in_recv,
                                   /*expect=*/expect_rank_blocks,
                                   CallArrays::kNone,
                                   SizeIs::kRankBlock,
                                   /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
