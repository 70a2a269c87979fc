// alltoall: block j of rank q's send (count elements each) reaches rank j, at block q of its
// recv. MPI_IN_PLACE: a rank's blocks are taken from recv and replaced there. Size: one block.
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t recv_bytes(const Args& a) { return a.size * a.block_bytes(); }
uint64_t send_bytes(const Args& a) { return a.in_place ? kNoBuffer : recv_bytes(a); }
Region own_in_recv(const Args& a) { return whole_if_in_place(a, recv_bytes(a)); }

void expect(const Args& a, sim::Expect& out) {
  const uint64_t blk = a.block_bytes();
  for (int q = 0; q < a.size; ++q) out.data(q * blk, blk, q, a.rank * blk);
}

}  // namespace

extern const Collective kAlltoall = {Coll::kAlltoall,
                                     "alltoall",
                                     /*traits=*/kInPlace,
                                     send_bytes,
                                     recv_bytes,
                                     /*selection_bytes=*/count_bytes,
                                     own_in_recv,
                                     expect,
                                     CallArrays::kNone,
                                     SizeIs::kRankBlock,
                                     /*bus_factor=*/bus_factor_ring};

}  // namespace torusmpi::coll::collectives
