// Reduce-scatter and allgather over staged rings (torus_rings.h), shared by the torus algorithms
// of allreduce, allgather, reduce_scatter and reduce_scatter_block.
//
// Each slot of a StagedRing is a piece of the vector (allreduce: the vector cut into P near-equal
// blocks in slot order; allgather, reduce_scatter: the block of the slot's owner). The
// reduce-scatter runs the stages in order: in stage i the ring of ranks whose slots differ in
// digit i cuts what they hold into `extent[i]` parts and passes partial parts around (part d
// ends at the member with digit d), so afterwards each rank holds its own slot, reduced over all.
// The allgather runs the stages backwards and passes finished parts around. A part whose slots
// are not laid out one after another in the vector is sent as one message per run of adjacent
// slots; both sides cut it alike.
//
// Steps are planned into a StepList rather than the Builder, so that two plans over disjoint
// halves of the data (dual_ring, the bcast chains) can run side by side, step k of each in the
// same step of the schedule.
#ifndef TORUSMPI_COLL_PATTERNS_STAGED_H_
#define TORUSMPI_COLL_PATTERNS_STAGED_H_

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "coll/coll.h"
#include "coll/patterns/reduce_scatter.h"
#include "coll/patterns/ring.h"
#include "coll/patterns/torus_rings.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll::patterns {

class StepList {
 public:
  void send(int peer, BufRef src, uint64_t n) { add({OpType::kSend, peer, {}, src, n}); }
  void recv(int peer, BufRef dst, uint64_t n) { add({OpType::kRecv, peer, dst, {}, n}); }
  void copy(BufRef dst, BufRef src, uint64_t n) {
    if (n > 0 && !(dst.buf == src.buf && dst.offset == src.offset)) {
      add({OpType::kCopy, -1, dst, src, n});
    }
  }
  void reduce(BufRef inout, BufRef in, uint64_t n) {
    if (n > 0) add({OpType::kReduce, -1, inout, in, n});
  }
  // Unlike Builder::step, an empty step counts: lists emitted side by side stay aligned, and
  // messages between two ranks keep one order on both sides (the Builder drops empty steps).
  void step() { steps_.emplace_back(); }

  // Emits the lists side by side: step k of the schedule holds step k of each.
  static void emit(Builder& b, std::initializer_list<const StepList*> lists) {
    size_t n = 0;
    for (const StepList* l : lists) n = std::max(n, l->steps_.size());
    for (size_t k = 0; k < n; ++k) {
      for (const StepList* l : lists) {
        if (k >= l->steps_.size()) continue;
        for (const Act& x : l->steps_[k]) {
          switch (x.type) {
            case OpType::kSend:
              b.send(x.peer, x.src, x.bytes);
              break;
            case OpType::kRecv:
              b.recv(x.peer, x.dst, x.bytes);
              break;
            case OpType::kCopy:
              b.copy(x.dst, x.src, x.bytes);
              break;
            case OpType::kReduce:
              b.reduce(x.dst, x.src, x.bytes);
              break;
            case OpType::kAggregate:
              break;  // not planned in lists
          }
        }
      }
      b.step();
    }
  }

 private:
  struct Act {
    OpType type;
    int peer;
    BufRef dst, src;
    uint64_t bytes;
  };
  void add(const Act& a) { steps_.back().push_back(a); }
  std::vector<std::vector<Act>> steps_ = std::vector<std::vector<Act>>(1);
};

// A StagedRing with its slots placed in the vector, as one rank runs it.
class Staged {
 public:
  // Slot j is len[j] bytes at byte at[j] of the vector.
  Staged(StagedRing ring, int rank, std::vector<uint64_t> at, std::vector<uint64_t> len)
      : ring_(std::move(ring)), at_(std::move(at)), len_(std::move(len)) {
    for (int j = 0; j < ring_.slots(); ++j) {
      if (ring_.owner[j] == rank) me_ = j;
    }
  }

  uint64_t at(int j) const { return at_[j]; }
  uint64_t len(int j) const { return len_[j]; }
  int me() const { return me_; }

  // Reduces so that this rank's slot ends complete at w + at(me()). `mine` holds this rank's
  // contribution (vector byte v at mine + v); when it is not w (the send buffer, read-only),
  // partials combine in scratch until the first ring's last step and w gets reduced data only.
  void reduce_scatter(StepList& s, Builder& b, BufRef mine, BufRef w) const {
    bool from_mine = !(mine.buf == w.buf && mine.offset == w.offset);
    int span_prev = ring_.slots();
    for (size_t i = 0; i < ring_.extent.size(); ++i) {
      const int e = ring_.extent[i], span = span_prev / e;
      const Stage st = stage(span_prev, span, e);
      span_prev = span;
      if (e == 1) continue;
      if (ring_.is_direct(i)) {
        reduce_direct(s, b, st, from_mine ? mine : w, from_mine, w);
        from_mine = false;
        continue;
      }
      uint64_t most = 0;
      for (int j = 0; j < e; ++j) most = std::max(most, st.bytes(*this, j));
      const BufRef tmp[2] = {b.scratch(most), from_mine ? b.scratch(most) : BufRef{}};
      for (int k = 0; k + 1 < e; ++k) {
        const int out = mod(st.d - 1 - k, e), in = mod(st.d - 2 - k, e);
        const bool last = k + 2 == e;
        for (const Piece& x : st.pieces(*this, out)) {
          BufRef src = k == 0 ? (from_mine ? mine : w) + x.at
                              : (from_mine ? tmp[(k - 1) % 2] + x.packed : w + x.at);
          s.send(st.right, src, x.len);
        }
        const std::vector<Piece> got = st.pieces(*this, in);
        auto dst = [&](const Piece& x) {
          if (!from_mine) return tmp[0] + x.packed;
          return last ? w + x.at : tmp[k % 2] + x.packed;
        };
        for (const Piece& x : got) s.recv(st.left, dst(x), x.len);
        s.step();
        for (const Piece& x : got) {
          if (from_mine) {
            s.reduce(dst(x), mine + x.at, x.len);
          } else {
            s.reduce(w + x.at, dst(x), x.len);
          }
        }
        s.step();
      }
      from_mine = false;
    }
    if (from_mine) s.copy(w + at_[me_], mine + at_[me_], len_[me_]);  // one rank
  }

  // Spreads every slot from its owner: this rank's slot is complete at `own` (w + at(me()), or
  // elsewhere: it is copied in while it leaves from there); afterwards w holds every slot.
  void allgather(StepList& s, BufRef w, BufRef own) const {
    s.copy(w + at_[me_], own, len_[me_]);
    bool first = true;
    std::vector<int> spans(ring_.extent.size());
    int span = 1;
    for (size_t i = ring_.extent.size(); i-- > 0;) spans[i] = span, span *= ring_.extent[i];
    for (size_t i = ring_.extent.size(); i-- > 0;) {
      const int e = ring_.extent[i];
      if (e == 1) continue;
      const Stage st = stage(spans[i] * e, spans[i], e);
      if (ring_.is_direct(i)) {
        // Our part to every member, every member's part from it, in one step.
        for (int j = 1; j < e; ++j) {
          const int to = member(st, mod(st.d + j, e)), from = member(st, mod(st.d - j, e));
          for (const Piece& x : st.pieces(*this, st.d)) {
            s.send(to, first ? own + (x.at - at_[me_]) : w + x.at, x.len);
          }
          for (const Piece& x : st.pieces(*this, mod(st.d - j, e))) s.recv(from, w + x.at, x.len);
        }
        s.step();
        first = false;
        continue;
      }
      for (int k = 0; k + 1 < e; ++k) {
        const int out = mod(st.d - k, e), in = mod(st.d - k - 1, e);
        // The first part sent is this rank's slot alone (later stages have one member).
        for (const Piece& x : st.pieces(*this, out)) {
          s.send(st.right, first && k == 0 ? own + (x.at - at_[me_]) : w + x.at, x.len);
        }
        for (const Piece& x : st.pieces(*this, in)) s.recv(st.left, w + x.at, x.len);
        s.step();
      }
      first = false;
    }
  }

 private:
  struct Piece {
    uint64_t at, len, packed;  // in the vector; and where it sits in a part packed end to end
  };
  // Stage i as this rank sees it: its group's slots [base, base + e * span), its digit d, and
  // its ring neighbours.
  struct Stage {
    int base, span, e, d, right, left;

    std::vector<Piece> pieces(const Staged& g, int part) const {
      std::vector<Piece> v;
      uint64_t packed = 0;
      for (int j = base + part * span; j < base + (part + 1) * span; ++j) {
        if (g.len_[j] == 0) continue;
        if (!v.empty() && v.back().at + v.back().len == g.at_[j]) {
          v.back().len += g.len_[j];
        } else {
          v.push_back({g.at_[j], g.len_[j], packed});
        }
        packed += g.len_[j];
      }
      return v;
    }
    uint64_t bytes(const Staged& g, int part) const {
      uint64_t n = 0;
      for (int j = base + part * span; j < base + (part + 1) * span; ++j) n += g.len_[j];
      return n;
    }
  };
  // The member of this rank's group in stage `st` whose digit is `digit`.
  int member(const Stage& st, int digit) const {
    return ring_.owner[me_ + (digit - st.d) * st.span];
  }
  // A direct reduce-scatter stage: part j of `src` straight to member j, the e-1 partials of our
  // part received at once into scratch and folded into w one after another (a fold per step: they
  // all write the same bytes). From `mine` (read-only), our own part is copied into w first.
  void reduce_direct(StepList& s, Builder& b, const Stage& st, BufRef src, bool from_mine,
                     BufRef w) const {
    const int e = st.e;
    const uint64_t n = st.bytes(*this, st.d);
    const BufRef tmp = n > 0 ? b.scratch(n * (e - 1)) : BufRef{};
    const std::vector<Piece> ours = st.pieces(*this, st.d);
    for (int j = 1; j < e; ++j) {
      const int part = mod(st.d + j, e), from = member(st, mod(st.d - j, e));
      for (const Piece& x : st.pieces(*this, part)) s.send(member(st, part), src + x.at, x.len);
      for (const Piece& x : ours) s.recv(from, tmp + (j - 1) * n + x.packed, x.len);
    }
    if (from_mine) {
      for (const Piece& x : ours) s.copy(w + x.at, src + x.at, x.len);
    }
    s.step();
    for (int j = 1; j < e; ++j) {
      for (const Piece& x : ours) s.reduce(w + x.at, tmp + (j - 1) * n + x.packed, x.len);
      s.step();
    }
  }

  Stage stage(int span_prev, int span, int e) const {
    Stage st;
    st.base = me_ - me_ % span_prev;
    st.span = span;
    st.e = e;
    st.d = (me_ - st.base) / span;
    auto member = [&](int digit) { return ring_.owner[me_ + (digit - st.d) * span]; };
    st.right = member((st.d + 1) % e);
    st.left = member((st.d + e - 1) % e);
    return st;
  }

  StagedRing ring_;
  std::vector<uint64_t> at_, len_;
  int me_ = 0;
};

// Slot placements for the three kinds of call.
// Allreduce: elements [first, first + count) cut into near-equal blocks, one per slot in order.
inline Staged vector_slots(const StagedRing& r, int rank, size_t first, size_t count, size_t elem) {
  const int p = r.slots();
  std::vector<uint64_t> at(p), len(p);
  for (int j = 0; j < p; ++j) {
    const size_t q = count / p, rem = count % p, k = j;
    at[j] = (first + q * k + std::min(k, rem)) * elem;
    len[j] = (q + (k < rem ? 1 : 0)) * elem;
  }
  return Staged(r, rank, std::move(at), std::move(len));
}

// Half of a block of `bytes` made of `elem`-byte elements: the first half's bytes.
inline uint64_t half_bytes(uint64_t bytes, size_t elem) { return bytes / elem / 2 * elem; }

// The runners: one Staged, or two over the halves of the data side by side (dual_ring).
inline void staged_allreduce(Builder& b, const Args& a, const std::vector<StagedRing>& rings) {
  if (a.count == 0) return;
  const BufRef mine = a.in_place ? a.recv : a.send;
  const int halves = static_cast<int>(rings.size());
  std::vector<StepList> lists(halves);
  for (int h = 0; h < halves; ++h) {
    const size_t first = h == 0 ? 0 : a.count / 2;
    const size_t count = halves == 1 ? a.count : h == 0 ? a.count / 2 : a.count - a.count / 2;
    const Staged g = vector_slots(rings[h], a.rank, first, count, a.elem);
    g.reduce_scatter(lists[h], b, mine, a.recv);
    lists[h].step();
    g.allgather(lists[h], a.recv, a.recv + g.at(g.me()));
  }
  if (halves == 1) {
    StepList::emit(b, {&lists[0]});
  } else {
    StepList::emit(b, {&lists[0], &lists[1]});
  }
}

// Slot j of half h of the blocks of rank q: the first half_bytes of the block, or the rest.
template <typename At, typename Len>
std::vector<Staged> half_slots(const std::vector<StagedRing>& rings, int rank, size_t elem, At at,
                               Len len) {
  std::vector<Staged> v;
  const int halves = static_cast<int>(rings.size());
  for (int h = 0; h < halves; ++h) {
    const int p = rings[h].slots();
    std::vector<uint64_t> sa(p), sl(p);
    for (int j = 0; j < p; ++j) {
      const int q = rings[h].owner[j];
      const uint64_t cut = halves == 1 ? 0 : half_bytes(len(q), elem);
      sa[j] = at(q) + (h == 0 ? 0 : cut);
      sl[j] = halves == 1 ? len(q) : h == 0 ? cut : len(q) - cut;
    }
    v.emplace_back(rings[h], rank, std::move(sa), std::move(sl));
  }
  return v;
}

inline void emit_all(Builder& b, const std::vector<StepList>& lists) {
  if (lists.size() == 1) {
    StepList::emit(b, {&lists[0]});
  } else {
    StepList::emit(b, {&lists[0], &lists[1]});
  }
}

// Allgather: rank q's block of n bytes lands at recv + q n.
inline void staged_allgather(Builder& b, const Args& a, const std::vector<StagedRing>& rings) {
  const uint64_t n = a.block_bytes();
  if (n == 0) return;
  const BufRef own = a.in_place ? a.recv + a.rank * n : a.send;
  const std::vector<Staged> gs = half_slots(
      rings, a.rank, a.elem, [&](int q) { return q * n; }, [&](int) { return n; });
  std::vector<StepList> lists(gs.size());
  for (size_t h = 0; h < gs.size(); ++h) {
    gs[h].allgather(lists[h], a.recv, own + (gs[h].at(gs[h].me()) - a.rank * n));
  }
  emit_all(b, lists);
}

// Reduce-scatter: block q (len(q) bytes at at(q) of the vector) ends at rank q's recv + 0.
template <typename At, typename Len>
void staged_reduce_scatter(Builder& b, const Args& a, const std::vector<StagedRing>& rings, At at,
                           Len len, uint64_t total) {
  if (total == 0) return;
  const BufRef mine = a.in_place ? a.recv : a.send;
  // Partials gather in the vector's own layout: in place in recv, otherwise in scratch.
  const BufRef w = a.in_place ? a.recv : b.scratch(total);
  const std::vector<Staged> gs = half_slots(rings, a.rank, a.elem, at, len);
  std::vector<StepList> lists(gs.size());
  for (size_t h = 0; h < gs.size(); ++h) gs[h].reduce_scatter(lists[h], b, mine, w);
  emit_all(b, lists);
  const uint64_t n = len(a.rank), from = at(a.rank);
  if (n == 0 || (a.in_place && from == 0)) return;
  if (a.in_place && from < n) {
    // The block overlaps its destination: through scratch.
    const BufRef tmp = b.scratch(n);
    b.copy(tmp, w + from, n);
    b.step();
    b.copy(a.recv, tmp, n);
  } else {
    b.copy(a.recv, w + from, n);
  }
  b.step();
}

// The two reduce-scatter calls' blocks over the staged runner: reduce_scatter's counts (uneven,
// zeros allowed) and reduce_scatter_block's p blocks of count elements.
inline void staged_reduce_scatter_counts(Builder& b, const Args& a,
                                         const std::vector<StagedRing>& rings) {
  const VectorBlocks v = VectorBlocks::of_counts(a.counts, a.size, a.elem);
  staged_reduce_scatter(
      b, a, rings, [&](int q) { return v.at(q); }, [&](int q) { return v.len(q); }, v.total());
}
inline void staged_reduce_scatter_block(Builder& b, const Args& a,
                                        const std::vector<StagedRing>& rings) {
  const uint64_t n = a.block_bytes();
  staged_reduce_scatter(
      b, a, rings, [&](int q) { return q * n; }, [&](int) { return n; }, n * a.size);
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_STAGED_H_
