// Rooted data movement in one step: the root receives every rank's block (gather) or sends every
// rank its block (scatter) all at once, the others make their one transfer. Blocks may lie
// anywhere in the root's buffer; zero-byte blocks are skipped on both sides alike.
//   p = 4, root 1:   gather   0->1  2->1  3->1       scatter   1->0  1->2  1->3
#ifndef TORUSMPI_COLL_PATTERNS_LINEAR_H_
#define TORUSMPI_COLL_PATTERNS_LINEAR_H_

#include <cstdint>

#include "coll/coll.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll::patterns {

// Rank q's block is `len(q)` bytes at `a.recv + at(q)` on the root. In place, the root's own
// block is already there.
template <typename At, typename Len>
void linear_gather(Builder& b, const Args& a, At at, Len len) {
  if (a.rank != a.root) {
    if (len(a.rank) > 0) b.send(a.root, a.send, len(a.rank));
    b.step();
    return;
  }
  for (int q = 0; q < a.size; ++q) {
    if (q != a.root && len(q) > 0) b.recv(q, a.recv + at(q), len(q));
  }
  if (!a.in_place) b.copy(a.recv + at(a.root), a.send, len(a.root));
  b.step();
}

// Rank q's block is `len(q)` bytes at `a.send + at(q)` on the root. In place, the root keeps its
// own block where it is (it has no receive buffer).
template <typename At, typename Len>
void linear_scatter(Builder& b, const Args& a, At at, Len len) {
  if (a.rank != a.root) {
    if (len(a.rank) > 0) b.recv(a.root, a.recv, len(a.rank));
    b.step();
    return;
  }
  for (int q = 0; q < a.size; ++q) {
    if (q != a.root && len(q) > 0) b.send(q, a.send + at(q), len(q));
  }
  if (!a.in_place) b.copy(a.recv, a.send + at(a.root), len(a.root));
  b.step();
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_LINEAR_H_
