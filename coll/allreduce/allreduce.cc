// allreduce: every rank gets the reduction over all ranks of the vector of count elements.
// MPI_IN_PLACE: a rank's vector is taken from recv and the result replaces it. Size: the vector.
#include "coll/collective.h"

namespace torusmpi::coll::collectives {
namespace {

// nccl-tests: a ring reduce-scatter and a ring allgather each cross (p-1)/p of the vector.
double bus_factor(int p) {
  double n = p;
  return 2 * (n - 1) / n;
}

}  // namespace

extern const Collective kAllreduce = {Coll::kAllreduce,
                                      "allreduce",
                                      /*traits=*/kReduces | kInPlace,
                                      /*send_bytes=*/count_unless_in_place,
                                      /*recv_bytes=*/count_bytes,
                                      /*selection_bytes=*/count_bytes,
                                      /*own_in_recv=*/count_if_in_place,
                                      /*expect=*/expect_reduction_of_all,
                                      CallArrays::kNone,
                                      SizeIs::kCount,
                                      bus_factor};

}  // namespace torusmpi::coll::collectives
