// bcast: the root's vector of count elements reaches every rank. One buffer (MPI's "buffer",
// here recv): the root's holds the data before the call, the others' after it; there is no
// in-place form. Size: the vector.
#include "coll/collective.h"
#include "coll/sim/expect.h"

namespace torusmpi::coll::collectives {
namespace {

// The root's buffer is its contribution, as a send buffer would be.
Region own_in_recv(const Args& a) {
  if (a.in_place || a.rank != a.root) return {};
  return {0, a.block_bytes()};
}

void expect(const Args& a, sim::Expect& out) { out.data(0, a.block_bytes(), a.root, 0); }

}  // namespace

extern const Collective kBcast = {Coll::kBcast,
                                  "bcast",
                                  /*traits=*/kRooted,
                                  /*send_bytes=*/no_buffer,
                                  /*recv_bytes=*/count_bytes,
                                  /*selection_bytes=*/count_bytes,
                                  own_in_recv,
                                  expect,
                                  CallArrays::kNone,
                                  SizeIs::kCount,
                                  /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
