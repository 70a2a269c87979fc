// Reduce-scatter over blocks laid end to end in the vector, shared by reduce_scatter (a count per
// rank) and reduce_scatter_block (one count for all, the same algorithms with equal blocks). Rank
// i keeps block i, reduced over all ranks, at the start of its receive buffer; with
// MPI_IN_PLACE its contribution is the whole vector in the receive buffer. The algorithm files
// (coll/reduce_scatter/, coll/reduce_scatter_block/) give costs and pictures. Blocks of zero
// bytes are skipped on both sides alike.
//   counts 2 0 3 1, elem 4:  blocks at bytes 0 8 8 20, 24 in all
#ifndef TORUSMPI_COLL_PATTERNS_REDUCE_SCATTER_H_
#define TORUSMPI_COLL_PATTERNS_REDUCE_SCATTER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/coll.h"
#include "coll/patterns/ring.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll::patterns {

// Where each rank's block lies in the vector, in bytes.
class VectorBlocks {
 public:
  // Block i holds counts[i] elements.
  static VectorBlocks of_counts(const size_t* counts, int p, size_t elem) {
    VectorBlocks v;
    v.at_.resize(p + 1);
    for (int i = 0; i < p; ++i) v.at_[i + 1] = v.at_[i] + counts[i] * elem;
    return v;
  }
  // p blocks of `count` elements.
  static VectorBlocks equal(size_t count, int p, size_t elem) {
    VectorBlocks v;
    v.at_.resize(p + 1);
    for (int i = 0; i <= p; ++i) v.at_[i] = static_cast<uint64_t>(i) * count * elem;
    return v;
  }

  uint64_t at(int i) const { return at_[i]; }
  uint64_t len(int i) const { return at_[i + 1] - at_[i]; }
  uint64_t total() const { return at_.back(); }
  uint64_t max_len() const {
    uint64_t m = 0;
    for (size_t i = 0; i + 1 < at_.size(); ++i) m = std::max(m, at_[i + 1] - at_[i]);
    return m;
  }

 private:
  std::vector<uint64_t> at_{0};
};

// Ring, commutative ops only: in step s rank r sends its partial sum of block r-1-s to the right
// and receives the left's partial of block r-2-s, to which it adds its own contribution; the
// partial that arrives in the last step is block r, complete. In place, partials are combined
// straight into the vector (one scratch block); otherwise in two alternating scratch blocks, as
// the send buffer is not ours to write.
inline void ring_reduce_scatter(Builder& b, const Args& a, const VectorBlocks& v) {
  const int p = a.size, r = a.rank;
  if (v.total() == 0) return;
  const BufRef mine = a.in_place ? a.recv : a.send;  // this rank's contribution, whole
  const BufRef out = a.recv;
  const uint64_t n = v.len(r);
  if (p == 1) {
    b.copy(out, mine, n);
    return;
  }
  const int right = ring_right(r, p), left = ring_left(r, p);
  BufRef tmp_buf[2];
  bool have_tmp[2] = {false, false};
  auto tmp = [&](int s) {
    const int i = a.in_place ? 0 : s % 2;
    if (!have_tmp[i]) tmp_buf[i] = b.scratch(v.max_len()), have_tmp[i] = true;
    return tmp_buf[i];
  };
  // The last partial can land in `out` when nothing still needed lies there: in place, that is
  // when `out` misses this rank's own block and block r+1, the only one sent in that step.
  const int last_out = ring_right(r, p);
  const bool land = !a.in_place || (v.at(r) >= n && (v.len(last_out) == 0 || v.at(last_out) >= n));

  for (int s = 0; s < p - 1; ++s) {
    const int send_blk = mod(r - 1 - s, p), recv_blk = mod(r - 2 - s, p);
    const bool last = s == p - 2;
    // Step 0 sends a bare contribution, straight from the user's buffer.
    BufRef src = s == 0 || a.in_place ? mine + v.at(send_blk) : tmp(s - 1);
    BufRef dst = last && land ? out : tmp(s);
    if (v.len(send_blk) > 0) b.send(right, src, v.len(send_blk));
    if (v.len(recv_blk) > 0) b.recv(left, dst, v.len(recv_blk));
    b.step();
    const uint64_t in_len = v.len(recv_blk);
    if (!last) {
      if (a.in_place) {
        b.reduce(mine + v.at(recv_blk), dst, in_len);
      } else {
        b.reduce(dst, mine + v.at(recv_blk), in_len);
      }
    } else if (land) {
      b.reduce(out, mine + v.at(r), n);
    } else if (v.at(r) == 0) {
      b.reduce(out, dst, n);  // out is this rank's own block
    } else {
      // out overlaps what was still needed: finish in scratch, then move.
      b.reduce(dst, mine + v.at(r), n);
      b.step();
      b.copy(out, dst, n);
    }
    b.step();
  }
}

// Pairwise: in step k rank r sends its contribution to block r+k to rank r+k and receives rank
// r-k's to block r. Arrivals come from r-1, r-2, ..., 0, then p-1, ..., r+1: each run descends,
// so each folds in as it arrives by putting the newcomer on the left (reduce's order), the fold
// of one arrival overlapping the next exchange. Commutative ops fold into one accumulator;
// others keep two, ranks 0..r and r+1..p-1, joined at the end: as many reductions, one scratch
// block and up to two local steps more, and none of the p-1 blocks is kept.
inline void pairwise_reduce_scatter(Builder& b, const Args& a, const VectorBlocks& v) {
  const int p = a.size, r = a.rank;
  if (v.total() == 0) return;
  const uint64_t n = v.len(r);
  const BufRef out = a.recv;
  const BufRef own = (a.in_place ? a.recv : a.send) + v.at(r);
  if (p == 1) {
    b.copy(out, own, n);
    return;
  }

  // What to do with each arrival: where it lands (step k = 1..p-1), and the local ops of each
  // step (index k, up to p+2 for the tail), planned first and emitted with the exchanges.
  struct Local {
    OpType type;
    BufRef dst, src;
  };
  std::vector<BufRef> land(p);
  std::vector<std::vector<Local>> local(p + 3);
  BufRef tmp_buf[2];
  bool have_tmp[2] = {false, false};
  auto tmp = [&](int k) {
    if (!have_tmp[k % 2]) tmp_buf[k % 2] = b.scratch(n), have_tmp[k % 2] = true;
    return tmp_buf[k % 2];
  };
  auto reduce_at = [&](int k, BufRef inout, BufRef in) {
    local[k].push_back({OpType::kReduce, inout, in});
  };
  auto copy_at = [&](int k, BufRef dst, BufRef src) {
    local[k].push_back({OpType::kCopy, dst, src});
  };
  // Arrival k lands in scratch and folds into `acc` in step k+1.
  auto fold = [&](int k, BufRef acc) {
    land[k] = tmp(k);
    reduce_at(k + 1, acc, land[k]);
  };
  // In place, `out` overlaps other ranks' blocks until they are sent: the last step that sends
  // one of them (0: none), and whether `out` misses this rank's own block.
  int out_busy = 0;
  for (int k = 1; k < p; ++k) {
    const int j = mod(r + k, p);
    if (v.len(j) > 0 && v.at(j) < n) out_busy = k;
  }
  const bool out_apart = v.at(r) >= n;

  if (n > 0 && a.commutative) {
    if (!a.in_place) {
      // The first arrival lands in place; the own contribution joins it in step 2.
      land[1] = out;
      reduce_at(2, out, own);
      for (int k = 2; k < p; ++k) fold(k, out);
    } else if (v.at(r) == 0) {
      for (int k = 1; k < p; ++k) fold(k, own);  // own is out
    } else {
      for (int k = 1; k < p - 1; ++k) fold(k, own);
      if (out_apart && out_busy < p - 1) {
        land[p - 1] = out;
        reduce_at(p, out, own);
      } else {
        land[p - 1] = tmp(p - 1);
        reduce_at(p, land[p - 1], own);
        copy_at(p + 1, out, land[p - 1]);
      }
    }
  } else if (n > 0) {
    // Low run: steps 1..r bring ranks r-1..0; high run: steps r+1..p-1 bring p-1..r+1.
    const bool high = r < p - 1;
    // The high run's first arrival lands in its accumulator and the rest fold in one step
    // behind, so that it is whole after step `done`.
    const int done = r + 2 <= p - 1 ? p : p - 1;
    if (!a.in_place) {
      if (!high) {
        copy_at(1, out, own);
        for (int k = 1; k < p; ++k) fold(k, out);
      } else {
        // The own contribution is read-only here: it joins the high run on its left at the end,
        // and the low run (ranks 0..r-1) after it.
        const BufRef low = r >= 1 ? b.scratch(n) : BufRef{};
        if (r >= 1) land[1] = low;
        for (int k = 2; k <= r; ++k) fold(k, low);
        land[r + 1] = out;
        for (int k = r + 2; k < p; ++k) fold(k, out);
        reduce_at(done + 1, out, own);
        if (r >= 1) reduce_at(done + 2, out, low);
      }
    } else if (!high) {
      // Everything folds into the own block; then it moves to the start, through scratch when
      // the two overlap.
      const bool apart = v.at(r) == 0 || out_apart;
      const BufRef acc = apart ? own : b.scratch(n);
      if (!apart) copy_at(1, acc, own);
      for (int k = 1; k < p; ++k) fold(k, acc);
      copy_at(p + 1, out, acc);
    } else {
      for (int k = 1; k <= r; ++k) fold(k, own);
      // The high run gathers at the start when that is free from step r+1 on.
      const BufRef acc = out_apart && out_busy <= r ? out : b.scratch(n);
      land[r + 1] = acc;
      for (int k = r + 2; k < p; ++k) fold(k, acc);
      reduce_at(done + 1, acc, own);
      copy_at(done + 2, out, acc);
    }
  }

  for (int k = 1; k < p + 3; ++k) {
    if (k < p) {
      const int to = mod(r + k, p), from = mod(r - k, p);
      if (v.len(to) > 0) b.send(to, (a.in_place ? a.recv : a.send) + v.at(to), v.len(to));
      if (n > 0) b.recv(from, land[k], n);
    }
    for (const Local& op : local[k]) {
      if (op.type == OpType::kReduce) {
        b.reduce(op.dst, op.src, n);
      } else {
        b.copy(op.dst, op.src, n);
      }
    }
    b.step();
  }
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_REDUCE_SCATTER_H_
