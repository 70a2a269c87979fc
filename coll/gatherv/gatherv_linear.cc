// Placeholder while the algorithm is being written.
#include "coll/algorithms.h"

namespace torusmpi::coll {

void gatherv_linear(Builder&, const Args&) {}

}  // namespace torusmpi::coll
