// Placeholder while the algorithm is being written.
#include "coll/algorithms.h"

namespace torusmpi::coll {

void alltoallv_pairwise(Builder&, const Args&) {}

}  // namespace torusmpi::coll
