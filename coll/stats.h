// Statistics of the collectives this process took part in, for TORUSMPI_STATS=1: per collective
// and algorithm, the calls and their bytes (selection_bytes() of each call: what the OSU benchmark
// of the collective calls its size). Recorded by Team at every call, printed at MPI_Finalize.
#ifndef TORUSMPI_COLL_STATS_H_
#define TORUSMPI_COLL_STATS_H_

#include <cstddef>
#include <cstdio>

#include "coll/select/registry.h"

namespace torusmpi::coll {

void stats_record(const Algorithm& alg, size_t bytes);
// One line per (collective, algorithm) used, in registry order:
//   torusmpi-stats coll <collective> alg=<token> calls=<N> bytes=<N>
void stats_print(FILE* out);

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_STATS_H_
