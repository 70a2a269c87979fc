// reduce: the root gets the reduction over all ranks of the vector of count elements; only the
// root has a receive buffer. MPI_IN_PLACE (the root's): its vector is taken from recv and the
// result replaces it. Size: the vector.
#include "coll/collective.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t recv_bytes(const Args& a) { return a.rank == a.root ? a.block_bytes() : kNoBuffer; }
Region own_in_recv(const Args& a) { return whole_if_in_place(a, recv_bytes(a)); }

}  // namespace

extern const Collective kReduce = {Coll::kReduce,
                                   "reduce",
                                   /*traits=*/kReduces | kRooted | kInPlace,
                                   /*send_bytes=*/count_unless_in_place,
                                   recv_bytes,
                                   /*selection_bytes=*/count_bytes,
                                   own_in_recv,
                                   /*expect=*/expect_reduction_of_all,
                                   CallArrays::kNone,
                                   SizeIs::kCount,
                                   /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
