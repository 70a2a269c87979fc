// scan: rank r gets the reduction over ranks 0..r of the vector of count elements (inclusive
// prefix). MPI_IN_PLACE: a rank's vector is taken from recv and the result replaces it. Size:
// the vector.
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {
namespace {

void expect(const Args& a, sim::Expect& out) { out.reduction(0, a.block_bytes(), 0, a.rank, 0); }

}  // namespace

extern const Collective kScan = {Coll::kScan,
                                 "scan",
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
