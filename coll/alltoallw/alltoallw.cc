// alltoallw: alltoallv with a datatype per peer. The engine sees its counts and displacements in
// bytes (elem 1, each peer's datatype folded in), so it moves what alltoallv moves and shares its
// descriptor's functions.
#include "coll/collective.h"

namespace torusmpi::coll::collectives {

extern const Collective kAlltoallw = {Coll::kAlltoallw,
                                      "alltoallw",
                                      /*traits=*/kVector | kInPlace,
                                      /*send_bytes=*/alltoallv_send_bytes,
                                      /*recv_bytes=*/alltoallv_recv_bytes,
                                      /*selection_bytes=*/no_common_size,
                                      /*own_in_recv=*/alltoallv_own_in_recv,
                                      /*expect=*/alltoallv_expect,
                                      CallArrays::kMatrix,
                                      SizeIs::kRankBlock,
                                      /*bus_factor=*/bus_factor_ring};

}  // namespace torusmpi::coll::collectives
