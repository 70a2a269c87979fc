// The allgather pass around a ring, over blocks laid out anywhere in one buffer: in step s rank r
// sends block r-s to its right and receives block r-s-1 from its left, straight into place, so
// after p-1 steps every rank holds every block. Zero-byte blocks are skipped on both sides
// alike. Allgather(v) ring is this alone; algorithms that end in an allgather (bcast
// scatter_allgather, allreduce ring) can end with it.
//   p = 4, step 0: 0:b0->1  1:b1->2  2:b2->3  3:b3->0
//          step 1: 0:b3->1  1:b0->2  2:b1->3  3:b2->0
//          step 2: 0:b2->1  1:b3->2  2:b0->3  3:b1->0
#ifndef TORUSMPI_COLL_PATTERNS_RING_ALLGATHER_H_
#define TORUSMPI_COLL_PATTERNS_RING_ALLGATHER_H_

#include <cstdint>

#include "coll/coll.h"
#include "coll/patterns/ring.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll::patterns {

// Block q is `len(q)` bytes at `buf + at(q)`; this rank's block is at `own` to begin with (buf
// at its place, or elsewhere: it then leaves from there in step 0 while it is copied in).
template <typename At, typename Len>
void ring_allgather(Builder& b, int rank, int p, BufRef buf, BufRef own, At at, Len len) {
  const int right = ring_right(rank, p), left = ring_left(rank, p);
  b.copy(buf + at(rank), own, len(rank));
  for (int s = 0; s < p - 1; ++s) {
    const int out = mod(rank - s, p), in = mod(rank - s - 1, p);
    const uint64_t out_len = len(out), in_len = len(in);
    if (out_len > 0) b.send(right, s == 0 ? own : buf + at(out), out_len);
    if (in_len > 0) b.recv(left, buf + at(in), in_len);
    b.step();
  }
  b.step();
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_RING_ALLGATHER_H_
