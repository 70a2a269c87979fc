// Near-equal splits of a vector into blocks: the first count % n blocks get one element more.
//   count 10, n 4: blocks of 3 3 2 2 starting at 0 3 6 8
#ifndef TORUSMPI_COLL_PATTERNS_BLOCKS_H_
#define TORUSMPI_COLL_PATTERNS_BLOCKS_H_

#include <cstddef>

namespace torusmpi::coll::patterns {

inline size_t block_count(size_t count, int n, int i) {
  size_t q = count / n, r = count % n;
  return q + (static_cast<size_t>(i) < r ? 1 : 0);
}

inline size_t block_start(size_t count, int n, int i) {
  size_t q = count / n, r = count % n, k = static_cast<size_t>(i);
  return q * k + (k < r ? k : r);
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_BLOCKS_H_
