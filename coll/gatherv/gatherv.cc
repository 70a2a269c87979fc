// gatherv: rank q's counts[q] elements reach the root, at displs[q] of its recv; only the root
// has a receive buffer, and only the root knows every count (a rank off it, its own).
// MPI_IN_PLACE (the root's): its block is already at its place in recv. Size: none every rank
// knows alike (0).
#include "coll/collective.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t recv_bytes(const Args& a) {
  return a.rank == a.root ? span_of(a.counts, a.displs, a.size) * a.elem : kNoBuffer;
}
Region own_in_recv(const Args& a) {
  return a.rank == a.root ? own_vblock_if_in_place(a) : Region{};
}

}  // namespace

extern const Collective kGatherv = {Coll::kGatherv,
                                    "gatherv",
                                    /*traits=*/kRooted | kVector | kInPlace,
                                    /*send_bytes=*/own_count_unless_in_place,
                                    recv_bytes,
                                    /*selection_bytes=*/no_common_size,
                                    own_in_recv,
                                    /*expect=*/expect_rank_vblocks,
                                    CallArrays::kPerRankAtRoot,
                                    SizeIs::kRankBlock,
                                    /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
