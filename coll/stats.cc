// Per-process statistics of collective calls for TORUSMPI_STATS=1 (see stats.h).
//
// A table indexed like the registry (an algorithm's position in algorithms()), so recording is
// two additions with no lookup, and printing in registry order is a walk over it. Team checks
// TORUSMPI_STATS before calling, so a job without statistics does not even compute the bytes.
#include "coll/stats.h"

#include <cinttypes>
#include <cstdint>
#include <functional>
#include <vector>

namespace torusmpi::coll {
namespace {

struct Row {
  uint64_t calls = 0;
  uint64_t bytes = 0;
};

std::vector<Row>& table() {
  static std::vector<Row> rows(algorithms().size());
  return rows;
}

}  // namespace

void stats_record(const Algorithm& alg, size_t bytes) {
  const std::vector<Algorithm>& all = algorithms();
  // Only registry entries have a name to print.
  if (all.empty() || std::less<const Algorithm*>()(&alg, all.data()) ||
      !std::less<const Algorithm*>()(&alg, all.data() + all.size())) {
    return;
  }
  Row& r = table()[static_cast<size_t>(&alg - all.data())];
  ++r.calls;
  r.bytes += bytes;
}

void stats_print(FILE* out) {
  const std::vector<Algorithm>& all = algorithms();
  const std::vector<Row>& rows = table();
  for (size_t i = 0; i < all.size(); ++i) {
    if (rows[i].calls == 0) continue;
    std::fprintf(out, "torusmpi-stats coll %s alg=%s calls=%" PRIu64 " bytes=%" PRIu64 "\n",
                 coll_name(all[i].coll), all[i].token, rows[i].calls, rows[i].bytes);
  }
}

}  // namespace torusmpi::coll
