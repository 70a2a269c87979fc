// scatterv: counts[r] elements at displs[r] of the root's send reach rank r; only the root has a
// send buffer, and only the root knows every count (a rank off it, its own) and displs.
// MPI_IN_PLACE (the root's) replaces its recv: its own block stays in its send. Size: none every
// rank knows alike (0).
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t send_bytes(const Args& a) {
  return a.rank == a.root ? span_of(a.counts, a.displs, a.size) * a.elem : kNoBuffer;
}
uint64_t recv_bytes(const Args& a) {
  return a.rank == a.root && a.in_place ? kNoBuffer : a.counts[a.rank] * a.elem;
}

// Off the root a rank knows no displacements: the root's say where its block came from.
void expect(const Args& a, sim::Expect& out) {
  out.data(0, a.counts[a.rank] * a.elem, a.root, out.args(a.root).displs[a.rank] * a.elem);
}

}  // namespace

extern const Collective kScatterv = {Coll::kScatterv,
                                     "scatterv",
                                     /*traits=*/kRooted | kVector | kInPlace,
                                     send_bytes,
                                     recv_bytes,
                                     /*selection_bytes=*/no_common_size,
                                     /*own_in_recv=*/nothing_in_recv,
                                     expect,
                                     CallArrays::kPerRankAtRoot,
                                     SizeIs::kRankBlock,
                                     /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
