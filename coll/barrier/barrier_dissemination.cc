// Placeholder while the algorithm is being written.
#include "coll/algorithms.h"

namespace torusmpi::coll {

void barrier_dissemination(Builder&, const Args&) {}

}  // namespace torusmpi::coll
