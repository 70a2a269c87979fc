// What a collective's descriptor (coll/collective.h) says its receive buffer must hold after a
// call, in the simulator's terms, and nothing of how the simulator keeps track: the descriptor
// names where each rank's data lands, the simulator (coll/sim/contrib.h) turns that into the
// contributions it compares the schedules' result with.
#ifndef TORUSMPI_COLL_SIM_EXPECT_H_
#define TORUSMPI_COLL_SIM_EXPECT_H_

#include <cstdint>

#include "coll/coll.h"

namespace torusmpi::coll::sim {

// One rank's receive buffer after the call; bytes named by none of these keep what they held
// before the call (the blocks of a neighbour that is no rank, a gap between displacements).
class Expect {
 public:
  // recv[at, at+len) holds bytes [origin, origin+len) of `rank`'s send buffer.
  virtual void data(uint64_t at, uint64_t len, int rank, uint64_t origin) = 0;
  // recv[at, at+len) holds the reduction over ranks lo..hi (each once, in rank order for a
  // non-commutative op) of the vector's bytes [origin, origin+len).
  virtual void reduction(uint64_t at, uint64_t len, int lo, int hi, uint64_t origin) = 0;
  // recv[lo, hi) is left undefined by MPI: whatever the schedule leaves there is right.
  virtual void skip(uint64_t lo, uint64_t hi) = 0;
  // Every rank's call: what a rank's own Args do not say (the root's displacements, a
  // neighbour's dests) is in the others'.
  virtual const Args& args(int rank) const = 0;

 protected:
  ~Expect() = default;
};

}  // namespace torusmpi::coll::sim

#endif  // TORUSMPI_COLL_SIM_EXPECT_H_
