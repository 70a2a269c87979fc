// Pairwise exchanges, where every rank trades one block with every other rank, one partner a
// step: the schedule of alltoall, alltoallv and alltoallw pairwise (one builder core for all
// three; they differ only in where block j of each buffer is).
//
// Out of place, step k (1..p-1) sends to rank+k and receives from rank-k (MPICH's order: no two
// ranks send to the same rank in one step). In place that order cannot work without about p/2
// blocks of scratch: block rank-k arrives in step k but still has to leave in step p-k. So in
// place the partners come from a round-robin tournament instead (a 1-factorization of the
// complete graph, the "circle method"): in each round the ranks pair up, a rank's partner is its
// own partner's partner, and so what leaves from and arrives for block j is one and the same
// block. It arrives in scratch and is copied home in the next step; two scratch slots alternate.
//
//   tournament, p = 5 (m = 5, partner (k - r) mod 5; 2r = k mod 5 sits out):
//     round 0: 1-4 2-3        round 1: 0-1 2-4        round 2: 0-2 3-4
//     round 3: 0-3 1-2        round 4: 0-4 1-3
//   p = 6: the same on ranks 0..4, and whoever would sit out plays rank 5 (m = 5 rounds).
#ifndef TORUSMPI_COLL_PATTERNS_PAIRWISE_H_
#define TORUSMPI_COLL_PATTERNS_PAIRWISE_H_

#include <algorithm>
#include <cstdint>

#include "coll/coll.h"
#include "coll/patterns/ring.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll::patterns {

// The round-robin tournament on p ranks: rounds() rounds, in each of which every rank meets
// partner(rank, round) (or sits out, -1: only when p is odd), and any two ranks meet exactly once.
struct Tournament {
  int p;
  int m;  // the odd number of ranks the circle is built on: p, or p-1 when p is even

  explicit Tournament(int size) : p(size), m(size % 2 == 1 ? size : size - 1) {}

  int rounds() const { return m; }
  int partner(int rank, int round) const {
    // Even p: the rank outside the circle meets the one that would sit out, x with 2x = round.
    if (rank == m) return static_cast<int>(int64_t{round} * ((m + 1) / 2) % m);
    int q = mod(round - rank, m);
    if (q != rank) return q;
    return p == m ? -1 : m;
  }
};

// A block of one buffer, in bytes from the buffer's start.
struct Span {
  uint64_t offset;
  uint64_t bytes;
};

// Emits the calling rank's pairwise all-to-all: send_span(j) is the block of a.send that goes to
// rank j, recv_span(j) the block of a.recv that rank j's data fills (in place, also the block that
// goes to j: send_span is not used). The receiver knows each message's size as the sender does,
// so empty blocks are skipped on both sides alike.
template <class SendSpan, class RecvSpan>
void pairwise_exchange(Builder& b, const Args& a, const SendSpan& send_span,
                       const RecvSpan& recv_span) {
  const int p = a.size, r = a.rank;
  if (!a.in_place) {
    // The own block is copied during the first exchange.
    const Span own_in = recv_span(r), own_out = send_span(r);
    b.copy(a.recv + own_in.offset, a.send + own_out.offset, own_in.bytes);
    for (int k = 1; k < p; ++k) {
      const int to = mod(r + k, p), from = mod(r - k, p);
      const Span out = send_span(to), in = recv_span(from);
      if (out.bytes > 0) b.send(to, a.send + out.offset, out.bytes);
      if (in.bytes > 0) b.recv(from, a.recv + in.offset, in.bytes);
      b.step();
    }
    b.step();
    return;
  }

  uint64_t slot = 0;
  for (int j = 0; j < p; ++j) {
    if (j != r) slot = std::max(slot, recv_span(j).bytes);
  }
  if (slot == 0) return;
  const BufRef tmp = b.scratch(2 * slot);
  const Tournament t(p);
  int held = -1;  // the partner whose block waits in scratch to be copied home
  BufRef held_at = tmp;
  for (int k = 0; k < t.rounds(); ++k) {
    const int j = t.partner(r, k);
    if (j < 0 || recv_span(j).bytes == 0) continue;
    const Span blk = recv_span(j);
    // Not the slot the block held from the last exchange is in: that one is copied out meanwhile.
    const BufRef in = held >= 0 && held_at.offset == tmp.offset ? tmp + slot : tmp;
    b.send(j, a.recv + blk.offset, blk.bytes);
    b.recv(j, in, blk.bytes);
    if (held >= 0) b.copy(a.recv + recv_span(held).offset, held_at, recv_span(held).bytes);
    b.step();
    held = j;
    held_at = in;
  }
  if (held >= 0) b.copy(a.recv + recv_span(held).offset, held_at, recv_span(held).bytes);
  b.step();
}

// alltoallv and alltoallw: the layout in a's arrays, in elements of a.elem bytes (alltoallw's are
// bytes, elem 1).
inline void pairwise_alltoallv(Builder& b, const Args& a) {
  const uint64_t e = a.elem;
  auto out = [&](int j) { return Span{a.sdispls[j] * e, a.scounts[j] * e}; };
  auto in = [&](int j) { return Span{a.rdispls[j] * e, a.rcounts[j] * e}; };
  pairwise_exchange(b, a, out, in);
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_PAIRWISE_H_
