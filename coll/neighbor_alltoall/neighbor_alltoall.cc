// neighbor_alltoall: block j of a rank's send (count elements each) goes to dests[j], and the
// block from sources[i] lands at block i of recv. No in-place form. Size: one block.
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t send_bytes(const Args& a) {
  return a.in_place ? kNoBuffer : a.outdegree * a.block_bytes();
}
uint64_t recv_bytes(const Args& a) { return a.indegree * a.block_bytes(); }

void expect(const Args& a, sim::Expect& out) {
  const uint64_t blk = a.block_bytes();
  for (int i = 0; i < a.indegree; ++i) {
    const int j = sending_edge(a, i, out);
    if (j >= 0) out.data(i * blk, blk, a.sources[i], j * blk);
  }
}

}  // namespace

extern const Collective kNeighborAlltoall = {Coll::kNeighborAlltoall,
                                             "neighbor_alltoall",
                                             /*traits=*/kNeighbor,
                                             send_bytes,
                                             recv_bytes,
                                             /*selection_bytes=*/count_bytes,
                                             /*own_in_recv=*/nothing_in_recv,
                                             expect,
                                             CallArrays::kGraph,
                                             SizeIs::kCount,
                                             /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
