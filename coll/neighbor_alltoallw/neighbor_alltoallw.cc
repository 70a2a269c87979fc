// neighbor_alltoallw: neighbor_alltoallv with a datatype per neighbour. The engine sees its
// counts and displacements in bytes (elem 1, each neighbour's datatype folded in), so it moves
// what neighbor_alltoallv moves and shares its descriptor's functions.
#include "coll/collective.h"

namespace torusmpi::coll::collectives {

extern const Collective kNeighborAlltoallw = {Coll::kNeighborAlltoallw,
                                              "neighbor_alltoallw",
                                              /*traits=*/kVector | kNeighbor,
                                              /*send_bytes=*/neighbor_alltoallv_send_bytes,
                                              /*recv_bytes=*/neighbor_alltoallv_recv_bytes,
                                              /*selection_bytes=*/no_common_size,
                                              /*own_in_recv=*/nothing_in_recv,
                                              /*expect=*/neighbor_alltoallv_expect,
                                              CallArrays::kGraphLayouts,
                                              SizeIs::kCount,
                                              /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
