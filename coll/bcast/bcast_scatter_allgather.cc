// Placeholder while the algorithm is being written.
#include "coll/algorithms.h"

namespace torusmpi::coll {

void bcast_scatter_allgather(Builder&, const Args&) {}

}  // namespace torusmpi::coll
