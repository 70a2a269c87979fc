// Placeholder while the algorithm is being written.
#include "coll/algorithms.h"

namespace torusmpi::coll {

void exscan_recursive_doubling(Builder&, const Args&) {}

}  // namespace torusmpi::coll
