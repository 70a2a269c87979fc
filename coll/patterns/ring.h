// Ring neighbours and positions relative to a rank.
#ifndef TORUSMPI_COLL_PATTERNS_RING_H_
#define TORUSMPI_COLL_PATTERNS_RING_H_

namespace torusmpi::coll::patterns {

// (i mod n) for any int i, negative included.
inline int mod(int i, int n) { return ((i % n) + n) % n; }

inline int ring_right(int rank, int n) { return rank + 1 == n ? 0 : rank + 1; }
inline int ring_left(int rank, int n) { return rank == 0 ? n - 1 : rank - 1; }

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_RING_H_
