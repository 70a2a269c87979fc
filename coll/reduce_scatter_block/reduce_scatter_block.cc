// reduce_scatter_block: the reduction over all ranks of a vector of p blocks of count elements;
// rank r gets block r. MPI_IN_PLACE: a rank's whole vector is taken from recv, its block of the
// result lands at the start of recv and MPI leaves the rest undefined. Size: the whole vector.
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t whole(const Args& a) { return a.size * a.block_bytes(); }
uint64_t send_bytes(const Args& a) { return a.in_place ? kNoBuffer : whole(a); }
uint64_t recv_bytes(const Args& a) { return a.in_place ? whole(a) : a.block_bytes(); }
uint64_t selection_bytes(const Args& a) { return a.block_bytes() * a.size; }
Region own_in_recv(const Args& a) { return whole_if_in_place(a, recv_bytes(a)); }

void expect(const Args& a, sim::Expect& out) {
  const uint64_t blk = a.block_bytes();
  out.reduction(0, blk, 0, a.size - 1, a.rank * blk);
  if (a.in_place) out.skip(blk, recv_bytes(a));
}

}  // namespace

extern const Collective kReduceScatterBlock = {Coll::kReduceScatterBlock,
                                               "reduce_scatter_block",
                                               /*traits=*/kReduces | kInPlace,
                                               send_bytes,
                                               recv_bytes,
                                               selection_bytes,
                                               own_in_recv,
                                               expect,
                                               CallArrays::kNone,
                                               SizeIs::kWhole,
                                               /*bus_factor=*/bus_factor_ring};

}  // namespace torusmpi::coll::collectives
