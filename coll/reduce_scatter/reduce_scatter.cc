// reduce_scatter: the reduction over all ranks of a vector of sum(counts) elements, cut in
// blocks: rank r gets block r (counts[r] elements, after the blocks of the ranks below it).
// MPI_IN_PLACE: a rank's whole vector is taken from recv, its block of the result lands at the
// start of recv and MPI leaves the rest undefined. Size: the whole vector.
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {
namespace {

uint64_t whole(const Args& a) { return sum_of(a.counts, a.size) * a.elem; }
uint64_t send_bytes(const Args& a) { return a.in_place ? kNoBuffer : whole(a); }
uint64_t recv_bytes(const Args& a) { return a.in_place ? whole(a) : a.counts[a.rank] * a.elem; }
Region own_in_recv(const Args& a) { return whole_if_in_place(a, recv_bytes(a)); }

void expect(const Args& a, sim::Expect& out) {
  const uint64_t mine = a.counts[a.rank] * a.elem;
  out.reduction(0, mine, 0, a.size - 1, sum_of(a.counts, a.rank) * a.elem);
  if (a.in_place) out.skip(mine, recv_bytes(a));
}

}  // namespace

extern const Collective kReduceScatter = {Coll::kReduceScatter,
                                          "reduce_scatter",
                                          /*traits=*/kReduces | kVector | kInPlace,
                                          send_bytes,
                                          recv_bytes,
                                          /*selection_bytes=*/whole,
                                          own_in_recv,
                                          expect,
                                          CallArrays::kPerRank,
                                          SizeIs::kWhole,
                                          /*bus_factor=*/bus_factor_ring};

}  // namespace torusmpi::coll::collectives
