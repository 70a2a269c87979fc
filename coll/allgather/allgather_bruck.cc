// Placeholder while the algorithm is being written.
#include "coll/algorithms.h"

namespace torusmpi::coll {

void allgather_bruck(Builder&, const Args&) {}

}  // namespace torusmpi::coll
