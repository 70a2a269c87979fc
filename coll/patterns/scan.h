// Prefix reductions by recursive doubling, shared by scan (inclusive) and exscan (exclusive).
// In the round of distance d = 1, 2, 4, ... (< p) rank r sends its partial over ranks
// [r-d+1 .. r] to rank r+d and receives rank r-d's, over [r-2d+1 .. r-d], which it puts on the
// left of its own: the ranks stay in order, so any op works, and after ceil(lg p) rounds rank r
// holds [0 .. r]. Exscan keeps the partial it sends apart from the result, which leaves out the
// rank's own contribution; a partial no later round sends is not kept up.
//   p = 5:  d = 1: 0->1 1->2 2->3 3->4    d = 2: 0->2 1->3 2->4    d = 4: 0->4
#ifndef TORUSMPI_COLL_PATTERNS_SCAN_H_
#define TORUSMPI_COLL_PATTERNS_SCAN_H_

#include <cstdint>

#include "coll/coll.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll::patterns {

inline void recursive_doubling_scan(Builder& b, const Args& a, bool exclusive) {
  const int p = a.size, r = a.rank;
  const uint64_t n = a.count * a.elem;
  if (n == 0) return;
  const BufRef mine = a.in_place ? a.recv : a.send;
  const BufRef out = a.recv;
  BufRef tmp_buf;
  bool have_tmp = false;
  auto tmp = [&]() {
    if (!have_tmp) tmp_buf = b.scratch(n), have_tmp = true;
    return tmp_buf;
  };
  // Whether the round of distance d sends, and whether the partial is still sent after it.
  auto sends = [&](int d) { return r + d < p; };
  auto sent_after = [&](int d) { return r + 2 * d < p; };

  if (!exclusive) {
    // The partial is the result, kept in `out`. Round 1 sends the bare contribution from where
    // it is; a commutative op lets the left's land in `out` and saves copying our own there.
    for (int d = 1; d < p; d *= 2) {
      const bool first = d == 1, gets = r - d >= 0;
      const bool straight = first && gets && !a.in_place && a.commutative;
      const BufRef in = straight || !gets ? out : tmp();
      if (sends(d)) b.send(r + d, first ? mine : out, n);
      if (gets) b.recv(r - d, in, n);
      if (first && !straight) b.copy(out, mine, n);
      b.step();
      if (gets) b.reduce(out, straight ? mine : in, n);
      b.step();
    }
    if (p == 1) b.copy(out, mine, n);
    return;
  }

  if (r == 0) {
    // Rank 0's partial is its contribution for good, and its result is undefined.
    for (int d = 1; d < p; d *= 2) {
      b.send(d, mine, n);
      b.step();
    }
    return;
  }
  // The result `res` and the partial `part` (own contribution included). Not in place, the
  // result gathers in `out` and the partial is a copy of the contribution, if it is sent again
  // after round 1. In place, the partial grows where the contribution is, in `out`, and the result
  // gathers in scratch, to be moved there at the end, unless this rank sends nothing (r = p-1):
  // its contribution is then of no use and the result gathers in `out` at once.
  const bool keep = sent_after(1);
  BufRef res = out, part = mine;
  if (!a.in_place && keep) part = b.scratch(n);
  if (a.in_place && r < p - 1) res = b.scratch(n);
  for (int d = 1; d < p; d *= 2) {
    const bool first = d == 1, gets = r - d >= 0;
    // The first arrival is the result so far as it is.
    const BufRef in = first || !gets ? res : tmp();
    if (sends(d)) b.send(r + d, first ? mine : part, n);
    if (gets) b.recv(r - d, in, n);
    if (first && keep) b.copy(part, mine, n);
    b.step();
    if (gets && !first) b.reduce(res, in, n);
    if (gets && sent_after(d)) b.reduce(part, in, n);
    b.step();
  }
  b.copy(out, res, n);
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_SCAN_H_
