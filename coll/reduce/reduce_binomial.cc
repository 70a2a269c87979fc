// Placeholder while the algorithm is being written.
#include "coll/algorithms.h"

namespace torusmpi::coll {

void reduce_binomial(Builder&, const Args&) {}

}  // namespace torusmpi::coll
