// allreduce ring: a reduce-scatter around the ring (p-1 steps: pass a block right, combine the one
// from the left), then an allgather around it (p-1 steps: pass the finished blocks on). The vector
// is cut into p near-equal blocks.
//
// Cost = 2(p-1) a + 2((p-1)/p) n b + ((p-1)/p) n g. Bandwidth-optimal: for large vectors.
// Restrictions: commutative ops (blocks combine in ring order, not rank order).
//
//   p = 4, blocks A B C D; reduce-scatter step s: rank r sends block r-s, combines block r-s-1
//     step 0: 0:A->1  1:B->2  2:C->3  3:D->0
//     step 1: 0:D'->1 1:A'->2 2:B'->3 3:C'->0      (' = two contributions so far)
//     step 2: ...     after it rank r holds block r+1 whole: 0:B 1:C 2:D 3:A
//   allgather step s: rank r sends block r+1-s, receives block r-s.
// Nothing is copied: partials combine into the block just received, the last one in recv.
#include "coll/algorithms.h"
#include "coll/patterns/blocks.h"
#include "coll/patterns/ring.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return 2 * (p - 1) * m.alpha + 2 * frac(p) * n * m.beta + frac(p) * n * m.gamma;
}

}  // namespace

extern const Algorithm kAllreduceRing = {Coll::kAllreduce,
                                         "ring",
                                         allreduce_ring,
                                         kNeedsCommutative,
                                         "Cost = 2(p-1) a + 2((p-1)/p) n b + ((p-1)/p) n g",
                                         cost,
                                         "ring reduce-scatter, then ring allgather"};

using patterns::block_count;
using patterns::block_start;
using patterns::mod;

void allreduce_ring(Builder& b, const Args& a) {
  const int p = a.size, r = a.rank;
  const uint64_t n = a.count * a.elem;
  if (n == 0) return;
  const BufRef mine = a.in_place ? a.recv : a.send;
  if (p == 1) {
    b.copy(a.recv, mine, n);
    return;
  }
  const int right = patterns::ring_right(r, p), left = patterns::ring_left(r, p);
  auto at = [&](int blk) { return block_start(a.count, p, blk) * a.elem; };
  auto len = [&](int blk) { return block_count(a.count, p, blk) * a.elem; };

  // Reduce-scatter. In place, partials combine straight into the vector. Otherwise they combine
  // into the block just received (own contribution on the left: ops commute here), alternating
  // two scratch blocks, and the last lands in recv: no byte of the send buffer is copied.
  BufRef tmp[2] = {b.scratch(len(0)), a.in_place ? BufRef{} : b.scratch(len(0))};
  for (int s = 0; s < p - 1; ++s) {
    const int out = mod(r - s, p), in = mod(r - s - 1, p);
    const bool last = s == p - 2;
    BufRef from = s == 0 || a.in_place ? mine + at(out) : tmp[(s - 1) % 2];
    BufRef into = last && !a.in_place ? a.recv + at(in) : tmp[a.in_place ? 0 : s % 2];
    // Empty blocks (count < p) are skipped on both sides alike.
    if (len(out) > 0) b.send(right, from, len(out));
    if (len(in) > 0) b.recv(left, into, len(in));
    b.step();
    if (a.in_place) {
      b.reduce(a.recv + at(in), into, len(in));
    } else {
      b.reduce(into, mine + at(in), len(in));
    }
    b.step();
  }
  // Allgather: rank r holds block r+1 whole; pass the finished blocks on.
  for (int s = 0; s < p - 1; ++s) {
    int out = mod(r + 1 - s, p), in = mod(r - s, p);
    if (len(out) > 0) b.send(right, a.recv + at(out), len(out));
    if (len(in) > 0) b.recv(left, a.recv + at(in), len(in));
    b.step();
  }
}

}  // namespace torusmpi::coll
