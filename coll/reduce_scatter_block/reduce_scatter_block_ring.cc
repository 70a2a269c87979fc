// Placeholder while the algorithm is being written.
#include "coll/algorithms.h"

namespace torusmpi::coll {

void reduce_scatter_block_ring(Builder&, const Args&) {}

}  // namespace torusmpi::coll
