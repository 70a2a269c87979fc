// Placeholder while the algorithm is being written.
#include "coll/algorithms.h"

namespace torusmpi::coll {

void reduce_rabenseifner(Builder&, const Args&) {}

}  // namespace torusmpi::coll
