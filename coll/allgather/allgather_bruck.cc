// allgather bruck: ceil(lg p) rounds; in round k every rank sends the first min(2^k, p-2^k) of
// the blocks it holds (its own and the ones after it, mod p) to rank-2^k and receives as many
// from rank+2^k, so the run it holds doubles. The blocks are kept at their final places in recv
// rather than in Bruck's shifted order, so there is no rotation at the end and no scratch: a run
// that passes block p-1 goes as two messages (patterns/cyclic.h), split at the same place by
// sender and receiver.
//
// Cost = lg(p) a + (p-1) n b, with n one rank's block (a round has up to two messages each way
// where its run wraps; they go at once). Latency-optimal for any p: for small blocks.
// Restrictions: none.
//
//   p = 5, rank r holds the run r, r+1, ... (mod 5):
//     round 0: r sends b(r)       to r-1, gets b(r+1)          from r+1   -> holds 2 blocks
//     round 1: r sends b(r..r+1)  to r-2, gets b(r+2..r+3)     from r+2   -> holds 4
//     round 2: r sends b(r)       to r-4, gets b(r+4)          from r+4   -> holds 5
//   rank 3 in round 1 gets b0 b1 from rank 0; rank 4 gets b1 b2 and rank 2 sends b2 b3 whole,
//   while rank 4 sends b4 | b0 in two messages to rank 2, which receives them in two.
#include "coll/algorithms.h"
#include "coll/patterns/cyclic.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return lg(p) * m.alpha + (p - 1) * n * m.beta; }

}  // namespace

extern const Algorithm kAllgatherBruck = {
    Coll::kAllgather,
    "bruck",
    allgather_bruck,
    0,
    "Cost = lg(p) a + (p-1) n b",
    cost,
    "Bruck: round k sends the 2^k blocks gathered so far to rank-2^k, in place (no rotation)"};

void allgather_bruck(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  if (n == 0) return;
  const int p = a.size, r = a.rank;
  const BufRef mine = a.in_place ? a.recv + r * n : a.send;
  // Round 0 sends the own block alone, from where it is, while it is copied into recv.
  b.copy(a.recv + r * n, mine, n);
  for (int d = 1; d < p; d *= 2) {
    const int cnt = d < p - d ? d : p - d;
    const int to = (r - d + p) % p, from = (r + d) % p;
    if (d == 1) {
      b.send(to, mine, n);
    } else {
      const patterns::CyclicRuns out = patterns::cyclic_runs(r, cnt, p);
      for (int i = 0; i < out.count; ++i) {
        b.send(to, a.recv + out.run[i].start * n, out.run[i].len * n);
      }
    }
    const patterns::CyclicRuns in = patterns::cyclic_runs(from, cnt, p);
    for (int i = 0; i < in.count; ++i) {
      b.recv(from, a.recv + in.run[i].start * n, in.run[i].len * n);
    }
    b.step();
  }
}

}  // namespace torusmpi::coll
