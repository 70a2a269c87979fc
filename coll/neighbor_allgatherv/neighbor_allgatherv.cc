// neighbor_allgatherv: a rank sends its block of count elements to each of its topology's
// destinations; the one from sources[i] lands at displs[i] of recv (counts[i] elements). No
// in-place form. Size: none every rank knows alike (0).
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t recv_bytes(const Args& a) { return span_of(a.counts, a.displs, a.indegree) * a.elem; }

void expect(const Args& a, sim::Expect& out) {
  const uint64_t e = a.elem;
  for (int i = 0; i < a.indegree; ++i) {
    if (sending_edge(a, i, out) >= 0) out.data(a.displs[i] * e, a.counts[i] * e, a.sources[i], 0);
  }
}

}  // namespace

extern const Collective kNeighborAllgatherv = {Coll::kNeighborAllgatherv,
                                               "neighbor_allgatherv",
                                               /*traits=*/kVector | kNeighbor,
                                               /*send_bytes=*/count_unless_in_place,
                                               recv_bytes,
                                               /*selection_bytes=*/no_common_size,
                                               /*own_in_recv=*/nothing_in_recv,
                                               expect,
                                               CallArrays::kGraphBlocks,
                                               SizeIs::kCount,
                                               /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
