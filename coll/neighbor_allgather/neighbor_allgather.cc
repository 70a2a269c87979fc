// neighbor_allgather: a rank sends its block of count elements to each of its topology's
// destinations and receives one from each source, the one from sources[i] at block i of recv.
// No in-place form. Size: one block.
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t recv_bytes(const Args& a) { return a.indegree * a.block_bytes(); }

void expect(const Args& a, sim::Expect& out) {
  const uint64_t blk = a.block_bytes();
  for (int i = 0; i < a.indegree; ++i) {
    if (sending_edge(a, i, out) >= 0) out.data(i * blk, blk, a.sources[i], 0);
  }
}

}  // namespace

extern const Collective kNeighborAllgather = {Coll::kNeighborAllgather,
                                              "neighbor_allgather",
                                              /*traits=*/kNeighbor,
                                              /*send_bytes=*/count_unless_in_place,
                                              recv_bytes,
                                              /*selection_bytes=*/count_bytes,
                                              /*own_in_recv=*/nothing_in_recv,
                                              expect,
                                              CallArrays::kGraph,
                                              SizeIs::kCount,
                                              /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
