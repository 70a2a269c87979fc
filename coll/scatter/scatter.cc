// scatter: block r of the root's send (count elements each) reaches rank r; only the root has a
// send buffer. MPI_IN_PLACE (the root's) replaces its recv: its own block stays in its send.
// Size: one rank's block.
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t send_bytes(const Args& a) {
  return a.rank == a.root ? a.size * a.block_bytes() : kNoBuffer;
}
uint64_t recv_bytes(const Args& a) {
  return a.rank == a.root && a.in_place ? kNoBuffer : a.block_bytes();
}

void expect(const Args& a, sim::Expect& out) {
  out.data(0, a.block_bytes(), a.root, a.rank * a.block_bytes());
}

}  // namespace

extern const Collective kScatter = {Coll::kScatter,
                                    "scatter",
                                    /*traits=*/kRooted | kInPlace,
                                    send_bytes,
                                    recv_bytes,
                                    /*selection_bytes=*/count_bytes,
                                    /*own_in_recv=*/nothing_in_recv,
                                    expect,
                                    CallArrays::kNone,
                                    SizeIs::kRankBlock,
                                    /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
