// exscan: rank r gets the reduction over ranks 0..r-1 of the vector of count elements
// (exclusive prefix); rank 0's receive buffer is left undefined by MPI. MPI_IN_PLACE: a rank's
// vector is taken from recv and the result replaces it. Size: the vector.
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {
namespace {

void expect(const Args& a, sim::Expect& out) {
  if (a.rank == 0) {
    out.skip(0, a.block_bytes());
  } else {
    out.reduction(0, a.block_bytes(), 0, a.rank - 1, 0);
  }
}

}  // namespace

extern const Collective kExscan = {Coll::kExscan,
                                   "exscan",
                                   /*traits=*/kReduces | kInPlace,
                                   /*send_bytes=*/count_unless_in_place,
                                   /*recv_bytes=*/count_bytes,
                                   /*selection_bytes=*/count_bytes,
                                   /*own_in_recv=*/count_if_in_place,
                                   expect,
                                   CallArrays::kNone,
                                   SizeIs::kCount,
                                   /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
