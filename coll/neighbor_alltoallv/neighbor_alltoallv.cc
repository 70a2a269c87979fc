// neighbor_alltoallv: scounts[j] elements at sdispls[j] of a rank's send go to dests[j], and the
// block from sources[i] lands at rdispls[i] of recv (rcounts[i] elements). No in-place form.
// Size: none every rank knows alike (0). Its functions serve neighbor_alltoallw too
// (coll/collective.h).
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {

uint64_t neighbor_alltoallv_send_bytes(const Args& a) {
  return a.in_place ? kNoBuffer : span_of(a.scounts, a.sdispls, a.outdegree) * a.elem;
}

uint64_t neighbor_alltoallv_recv_bytes(const Args& a) {
  return span_of(a.rcounts, a.rdispls, a.indegree) * a.elem;
}

// The block's origin is where the source's send layout put the edge's block.
void neighbor_alltoallv_expect(const Args& a, sim::Expect& out) {
  const uint64_t e = a.elem;
  for (int i = 0; i < a.indegree; ++i) {
    const int j = sending_edge(a, i, out);
    if (j < 0) continue;
    const int s = a.sources[i];
    out.data(a.rdispls[i] * e, a.rcounts[i] * e, s, out.args(s).sdispls[j] * e);
  }
}

extern const Collective kNeighborAlltoallv = {Coll::kNeighborAlltoallv,
                                              "neighbor_alltoallv",
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
