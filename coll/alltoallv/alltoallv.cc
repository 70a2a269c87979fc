// alltoallv: rank q's scounts[j] elements at sdispls[j] reach rank j, at rdispls[q] of its recv
// (rcounts[q] elements). MPI_IN_PLACE: a rank's blocks are taken from recv, laid out as its
// receive arrays say, and replaced there. Size: none every rank knows alike (0). Its functions
// serve alltoallw too (coll/collective.h).
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {

uint64_t alltoallv_send_bytes(const Args& a) {
  return a.in_place ? kNoBuffer : span_of(a.scounts, a.sdispls, a.size) * a.elem;
}

uint64_t alltoallv_recv_bytes(const Args& a) {
  return span_of(a.rcounts, a.rdispls, a.size) * a.elem;
}

Region alltoallv_own_in_recv(const Args& a) {
  return whole_if_in_place(a, alltoallv_recv_bytes(a));
}

// Where rank q's block came from is in q's send layout, which the simulator's calls give every
// rank (peer_sdispls); without it the blocks are not checked.
void alltoallv_expect(const Args& a, sim::Expect& out) {
  const uint64_t e = a.elem;
  for (int q = 0; q < a.size; ++q) {
    if (a.peer_sdispls == nullptr) {
      out.skip(a.rdispls[q] * e, (a.rdispls[q] + a.rcounts[q]) * e);
      continue;
    }
    out.data(a.rdispls[q] * e, a.rcounts[q] * e, q, a.peer_sdispls[q][a.rank] * e);
  }
}

extern const Collective kAlltoallv = {Coll::kAlltoallv,
                                      "alltoallv",
                                      /*traits=*/kVector | kInPlace,
                                      /*send_bytes=*/alltoallv_send_bytes,
                                      /*recv_bytes=*/alltoallv_recv_bytes,
                                      /*selection_bytes=*/no_common_size,
                                      /*own_in_recv=*/alltoallv_own_in_recv,
                                      /*expect=*/alltoallv_expect,
                                      CallArrays::kMatrix,
                                      SizeIs::kRankBlock,
                                      /*bus_factor=*/bus_factor_ring};

}  // namespace torusmpi::coll::collectives
