// Recursive halving (Rabenseifner's reduce-scatter), commutative ops only: the first half of
// allreduce and reduce rabenseifner, and the whole of reduce_scatter(_block) recursive_halving.
//
// The ranks form p2 teams, the pairs of the fold in pow2.h: team t < extra is ranks 2t (its
// member) and 2t+1 (its leader), team t >= extra is rank t+extra alone (its leader). Teams own
// the blocks of their ranks, so team t's range of the vector is contiguous and comes before
// team t+1's. In the round of mask m (p2/2, p2/4, ..., 1) a leader holds partial results for
// the 2m teams of its group; it keeps the half its team is in and sends the other half to the
// leader of team t^m, whose half it receives and adds in. After the last round each team's range
// is complete.
//
// Unlike MPICH's fold, which costs a round before and one after, the fold rides on the first and
// the last round: in the first round a member sends the half its team keeps to its leader and the
// other half straight to the partner team's leader (so a leader takes in up to three halves), and
// in the last round every partial block goes straight to the rank that owns it, members included.
// So p ranks take lg(p2) rounds, with the bytes of MPICH's fold.
//
//   p = 6: teams {0,1} {2,3} {4} {5}; blocks A..F, rank q ends with block q
//     round m=2:  0: ABCD->1 EF->4  1: EF->4  2: ABCD->3 EF->5  3: EF->5  4: ABCD->1  5: ABCD->3
//     round m=1:  1: A->0 C->2 D->3  3: A->0 B->1 C->2  4: F->5  5: E->4
//     (rank 0 adds the two A's it gets, rank 1 its own B to 3's; and so on)
//
// Blocks of zero bytes are skipped on both sides alike.
#ifndef TORUSMPI_COLL_PATTERNS_HALVING_H_
#define TORUSMPI_COLL_PATTERNS_HALVING_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "coll/coll.h"
#include "coll/patterns/blocks.h"
#include "coll/patterns/pow2.h"
#include "coll/patterns/reduce_scatter.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll::patterns {

class Halving {
 public:
  // Block q of `blocks` is what rank q ends with.
  Halving(int rank, int size, VectorBlocks blocks)
      : rank_(rank), fold_(rank, size), blocks_(std::move(blocks)) {
    team_ = team_of(rank);
  }

  // Blocks for algorithms that go on from the leaders (allreduce, reduce): the vector split
  // near-evenly into p2 blocks, team t's for its leader; members end with nothing.
  static VectorBlocks team_blocks(size_t count, size_t elem, int size) {
    const Fold fold(0, size);
    std::vector<size_t> counts(size);
    for (int q = 0; q < size; ++q) {
      const bool member = q < 2 * fold.extra && q % 2 == 0;
      const int t = q < 2 * fold.extra ? q / 2 : q - fold.extra;
      counts[q] = member ? 0 : block_count(count, fold.p2, t);
    }
    return VectorBlocks::of_counts(counts.data(), size, elem);
  }

  int p2() const { return fold_.p2; }
  int team() const { return team_; }
  bool leader() const { return !fold_.sits_out(); }
  int team_of(int rank) const { return rank < 2 * fold_.extra ? rank / 2 : rank - fold_.extra; }
  int leader_of(int t) const { return fold_.unfold(t); }
  int member_of(int t) const { return t < fold_.extra ? 2 * t : -1; }
  const VectorBlocks& blocks() const { return blocks_; }

  // Bytes of teams [t, t+n) in the vector: where they start, and how many.
  uint64_t at(int t) const { return blocks_.at(t < fold_.extra ? 2 * t : t + fold_.extra); }
  uint64_t len(int t, int n) const { return blocks_.at(leader_of(t + n - 1) + 1) - at(t); }

  // The half of the vector this rank's team keeps in the first round: all a leader ever holds
  // partial results of, and so the window its accumulator needs.
  int window_team() const { return fold_.p2 == 1 ? 0 : team_ & ~(fold_.p2 / 2 - 1); }
  int window_teams() const { return fold_.p2 == 1 ? 1 : fold_.p2 / 2; }
  uint64_t window_at() const { return at(window_team()); }
  uint64_t window_len() const { return len(window_team(), window_teams()); }

  struct Buffers {
    BufRef mine;          // this rank's contribution, the whole vector
    BufRef acc;           // a leader's partial results: vector byte v at acc + v - origin (the
    uint64_t origin = 0;  // receive buffer, or scratch for the window)
    BufRef out;           // where this rank's own block ends up
  };

  // Emits the rounds. Afterwards rank q's block is complete at its `out`.
  void reduce_scatter(Builder& b, const Buffers& x) const {
    const int p2 = fold_.p2;
    if (p2 == 1) {
      b.copy(x.out, x.mine + blocks_.at(rank_), blocks_.len(rank_));
      return;
    }
    Slots tmp(b, window_len());
    const int t = team_;
    const bool lead = leader();
    for (int m = p2 / 2; m >= 1; m /= 2) {
      const bool first = m == p2 / 2, last = m == 1;
      const int g = t ^ m;
      const int keep = t & ~(m - 1), give = g & ~(m - 1);  // first teams of the two halves
      // Members hold data in the first round only: their own contribution.
      const bool holds = lead || first;
      const BufRef from = first ? x.mine : x.acc;
      const uint64_t shift = first ? 0 : x.origin;
      auto src = [&](uint64_t v) { return from + (v - shift); };
      std::vector<Span> busy;  // what the sends of this round read

      if (holds && !last) {
        send(b, leader_of(g), src(at(give)), len(give, m), &busy);
        if (!lead) send(b, leader_of(t), src(at(keep)), len(keep, m), &busy);
      } else if (holds) {
        for (int y : {member_of(g), leader_of(g), member_of(t), leader_of(t)}) {
          if (y >= 0 && y != rank_) send(b, y, src(blocks_.at(y)), blocks_.len(y), &busy);
        }
      }

      // What arrives: partial results of the kept half (leaders), or of the own block (last
      // round), from the holders that send it.
      std::vector<int> senders;
      if (lead || last) {
        senders.push_back(leader_of(g));
        if (first && member_of(g) >= 0) senders.push_back(member_of(g));
        if (!lead) senders.push_back(leader_of(t));
        if (lead && first && member_of(t) >= 0) senders.push_back(member_of(t));
      }
      const uint64_t v = last ? blocks_.at(rank_) : at(keep);
      const uint64_t n = last ? blocks_.len(rank_) : len(keep, m);
      const BufRef out = last ? x.out : x.acc + (v - x.origin);
      if (senders.empty() || n == 0) {
        b.step();
        continue;
      }
      const BufRef own = src(v);
      combine(b, senders, n, holds ? &own : nullptr, out, busy, &tmp);
    }
  }

 private:
  struct Span {
    BufRef at;
    uint64_t len;
  };
  static bool overlap(BufRef x, uint64_t xl, BufRef y, uint64_t yl) {
    return x.buf == y.buf && x.offset < y.offset + yl && y.offset < x.offset + xl;
  }
  static bool same(BufRef x, BufRef y) { return x.buf == y.buf && x.offset == y.offset; }

  // Scratch slots of one size for what arrives, made when first needed.
  class Slots {
   public:
    Slots(Builder& b, uint64_t bytes) : b_(b), bytes_(bytes) {}
    BufRef operator[](size_t i) {
      while (slots_.size() <= i) slots_.push_back(b_.scratch(bytes_));
      return slots_[i];
    }

   private:
    Builder& b_;
    uint64_t bytes_;
    std::vector<BufRef> slots_;
  };

  static void send(Builder& b, int peer, BufRef src, uint64_t n, std::vector<Span>* busy) {
    if (n == 0) return;
    b.send(peer, src, n);
    busy->push_back({src, n});
  }

  // Receives `n` bytes from each sender (in this round's step, with its sends) and adds them and
  // `own` (when given) into `out`. The first arrival lands in `out` when nothing else of the step
  // touches it; when `own` is already there, all land in scratch; otherwise the sum is made in
  // scratch and moved. Sums of disjoint pairs share a step.
  static void combine(Builder& b, const std::vector<int>& senders, uint64_t n, const BufRef* own,
                      BufRef out, const std::vector<Span>& busy, Slots* tmp) {
    bool out_free = own == nullptr || !overlap(out, n, *own, n);
    for (const Span& s : busy) out_free = out_free && !overlap(out, n, s.at, s.len);
    const bool in_out = own != nullptr && same(*own, out);
    // The operands, the sum's buffer first; `own` second, as it is never written.
    std::vector<BufRef> terms;
    if (in_out) terms.push_back(out);
    size_t used = 0;
    for (size_t k = 0; k < senders.size(); ++k) {
      const BufRef to = k == 0 && !in_out && out_free ? out : (*tmp)[used++];
      b.recv(senders[k], to, n);
      terms.push_back(to);
      if (k == 0 && !in_out && own != nullptr) terms.push_back(*own);
    }
    b.step();
    while (terms.size() > 1) {
      std::vector<BufRef> left;
      for (size_t i = 0; i < terms.size(); i += 2) {
        if (i + 1 < terms.size()) b.reduce(terms[i], terms[i + 1], n);
        left.push_back(terms[i]);
      }
      b.step();
      terms = left;
    }
    b.copy(out, terms[0], n);
    b.step();
  }

  int rank_;
  Fold fold_;
  VectorBlocks blocks_;
  int team_ = 0;
};

// reduce_scatter and reduce_scatter_block: rank q's block lands at the start of its receive
// buffer. A leader's partial results live in scratch, or in place in the receive buffer (which
// then holds the vector and is ours to overwrite).
inline void halving_reduce_scatter(Builder& b, const Args& a, const VectorBlocks& v) {
  if (v.total() == 0) return;
  const Halving h(a.rank, a.size, v);
  Halving::Buffers x;
  x.mine = a.in_place ? a.recv : a.send;
  x.out = a.recv;
  if (a.in_place) {
    x.acc = a.recv;
  } else if (h.leader() && a.size > 1) {
    x.acc = b.scratch(h.window_len());
    x.origin = h.window_at();
  }
  h.reduce_scatter(b, x);
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_HALVING_H_
