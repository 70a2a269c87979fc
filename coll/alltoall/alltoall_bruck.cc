// alltoall bruck: ceil(lg p) rounds of one message each. Rank r's block for rank r+i is "slot i";
// in round k every slot whose index has bit k set moves to rank r+2^k (keeping its index), so
// after all rounds slot i has travelled i ranks and is at its destination, which stores it as the
// block from r-i. A round's slots go as one message, gathered into scratch (packed); the receiver
// keeps them where they arrive and gathers the next round's from there.
//
// Bruck's local rotations are not needed: slots are read where they are (slot i starts as block
// r+i of the send buffer) and copied to their final block r-i once their last round is over, most
// of them during a later exchange. Messages list slots in decreasing index, so runs of slots that
// arrived together stay runs in the next message and in recv (one copy each). A message that is
// one such run goes from where it is, and one whose slots are all final and land in one run of
// recv is received straight there. In place, the originals are in recv: a block there is written
// only in a step after the one that read it.
//
// Cost = lg(p) a + lg(p) (p/2) n b + (lg(p)/2 + 1) p n c, with n one block, the copies at most
// (each round's packing, each slot once home), and as much scratch (each round's arrivals stay
// where they land, and two pack buffers). Latency-optimal: for small blocks.
// Restrictions: none.
//
//   p = 5; slot i of rank r is its block for r+i; round k sends to r+2^k, gets from r-2^k:
//     round 0: slots 3 1 (bit 0)      round 1: slots 3 2 (bit 1)      round 2: slot 4 (bit 2)
//   rank 0, out of place:
//     step 0: copy own block; pack 3 1
//     step 1: exchange round 0; pack 2 (from send)
//     step 2: pack 3 (as it arrived in round 0)
//     step 3: exchange round 1, received straight into blocks 2 3; slot 1 home (to block 4)
//     step 4: exchange round 2: slot 4 sent from block 4 of send, received into block 1
#include <algorithm>
#include <vector>

#include "coll/algorithms.h"
#include "coll/patterns/pow2.h"
#include "coll/patterns/ring.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return lg(p) * (m.alpha + p / 2.0 * n * m.beta) + (lg(p) / 2 + 1) * p * n * m.copy;
}

}  // namespace

extern const Algorithm kAlltoallBruck = {
    Coll::kAlltoall,
    "bruck",
    alltoall_bruck,
    0,
    "Cost = lg(p) a + lg(p) (p/2) n b + (lg(p)/2 + 1) p n c",
    cost,
    "Bruck: lg(p) rounds of half the blocks each; for small blocks"};

namespace {

using patterns::mod;

// A copy of whole blocks; consecutive blocks whose source and destination both continue the run
// (and come from the same place, `from`) join it.
struct Run {
  BufRef dst;
  BufRef src;
  uint64_t bytes;
  int from;
};

void add_block(std::vector<Run>* runs, BufRef dst, BufRef src, uint64_t n, int from) {
  if (!runs->empty()) {
    Run& last = runs->back();
    if (last.from == from && last.dst.buf == dst.buf && last.src.buf == src.buf &&
        last.dst.offset + last.bytes == dst.offset && last.src.offset + last.bytes == src.offset) {
      last.bytes += n;
      return;
    }
  }
  runs->push_back({dst, src, n, from});
}

int top_bit(int i) {
  int k = 0;
  while (i >> (k + 1)) ++k;
  return k;
}

}  // namespace

void alltoall_bruck(Builder& b, const Args& a) {
  const int p = a.size, r = a.rank;
  const uint64_t n = a.block_bytes();
  if (n == 0) return;
  if (!a.in_place) b.copy(a.recv + r * n, a.send + r * n, n);
  if (p == 1) return;
  const int rounds = patterns::ceil_log2(p);
  const BufRef orig = a.in_place ? a.recv : a.send;
  auto home = [&](int i) { return a.recv + mod(r - i, p) * n; };

  // Slot i: where it is, which round's receive put it there (-1: none yet, it is the original),
  // the step that read the original (-1: not yet), and whether it is home.
  std::vector<BufRef> at(p);
  std::vector<int> from(p, -1), read(p, -1);
  std::vector<bool> done(p, false);
  for (int i = 1; i < p; ++i) at[i] = orig + mod(r + i, p) * n;
  int step = 0;  // the step being built
  auto end_step = [&]() {
    b.step();
    ++step;
  };
  // In place, the home of slot i holds slot p-i's original until a step has read it.
  auto may_write_home = [&](int i) {
    return !a.in_place || (read[p - i] >= 0 && read[p - i] < step);
  };
  auto note_reads = [&](const std::vector<int>& slots) {
    for (int i : slots) {
      if (from[i] < 0 && read[i] < 0) read[i] = step;
    }
  };

  // Round k's message: the slots with bit k set, by decreasing index.
  auto message = [&](int k) {
    std::vector<int> m;
    for (int i = p - 1; i > 0; --i) {
      if (i >> k & 1) m.push_back(i);
    }
    return m;
  };
  uint64_t most = 0;
  for (int k = 0; k < rounds; ++k) most = std::max<uint64_t>(most, message(k).size() * n);
  // Two pack buffers, so the next round's message can be gathered while this one's goes out.
  BufRef packs{Buf::kScratch, 0};
  bool have_packs = false;
  auto pack = [&](int k) {
    if (!have_packs) packs = b.scratch(2 * most);
    have_packs = true;
    return packs + (k % 2) * most;
  };
  // Copies that gather round k's message, destinations relative to the pack buffer.
  auto gather = [&](int k) {
    std::vector<Run> runs;
    std::vector<int> m = message(k);
    for (size_t j = 0; j < m.size(); ++j) {
      add_block(&runs, BufRef{Buf::kScratch, j * n}, at[m[j]], n, from[m[j]]);
    }
    return runs;
  };
  // Emits the runs of `plan` (`late`: those gathering what round k-1 received, else the others).
  auto emit_pack = [&](int k, const std::vector<Run>& plan, bool late) {
    bool any = false;
    for (const Run& run : plan) {
      if ((k > 0 && run.from == k - 1) != late) continue;
      b.copy(pack(k) + run.dst.offset, run.src, run.bytes);
      any = true;
    }
    return any;
  };

  // Copies home the slots whose last round came before round k, where their home may be written.
  auto go_home = [&](int k) {
    std::vector<Run> runs;
    for (int i = p - 1; i > 0; --i) {
      if (done[i] || top_bit(i) >= k || !may_write_home(i)) continue;
      add_block(&runs, home(i), at[i], n, 0);
      done[i] = true;
    }
    for (const Run& run : runs) b.copy(run.dst, run.src, run.bytes);
  };

  std::vector<Run> plan = gather(0);
  if (plan.size() > 1) {
    emit_pack(0, plan, false);
    note_reads(message(0));
    end_step();
  }
  for (int k = 0; k < rounds; ++k) {
    const std::vector<int> m = message(k);
    const uint64_t bytes = m.size() * n;
    const bool direct = plan.size() == 1;
    if (direct) note_reads(m);
    // Straight home if every slot is final after this round and the homes are one run of recv.
    bool straight = true;
    for (size_t j = 0; j < m.size() && straight; ++j) {
      straight =
          m[j] < (2 << k) && home(m[j]).offset == home(m[0]).offset + j * n && may_write_home(m[j]);
    }
    const BufRef dst = straight ? home(m[0]) : b.scratch(bytes);
    b.send(mod(r + (1 << k), p), direct ? plan[0].src : pack(k), bytes);
    b.recv(mod(r - (1 << k), p), dst, bytes);
    for (size_t j = 0; j < m.size(); ++j) {
      at[m[j]] = dst + j * n;
      from[m[j]] = k;
      done[m[j]] = straight;
    }
    // Meanwhile: the part of the next message that is not arriving now, and slots whose last
    // round is over go home.
    if (k + 1 < rounds) {
      plan = gather(k + 1);
      if (plan.size() > 1) {
        emit_pack(k + 1, plan, false);
        note_reads(message(k + 1));
      }
    }
    go_home(k);
    end_step();
    if (k + 1 < rounds && plan.size() > 1 && emit_pack(k + 1, plan, true)) end_step();
  }
  go_home(rounds);
}

}  // namespace torusmpi::coll
