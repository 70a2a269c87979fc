// Placeholder while the algorithm is being written.
#include "coll/algorithms.h"

namespace torusmpi::coll {

void gather_binomial(Builder&, const Args&) {}

}  // namespace torusmpi::coll
