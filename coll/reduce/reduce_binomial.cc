// reduce binomial: partial results flow up a binomial tree; a rank takes in its children's one
// per round, smallest subtree first, then sends the sum to its parent (patterns/binomial.h).
//
// Commutative ops use the tree relative to the root. Others need every sum to be a run of
// consecutive ranks, joined in rank order, so the tree is laid over rank order instead: in round
// j the root takes in a run of up to 2^j ranks, on its left when bit j of the root is set (those
// runs fill [0, root) exactly), else on its right, each run a binomial tree rooted next to the
// root. So any root finishes in ceil(lg p) rounds (MPICH reduces to rank 0 and forwards: a round
// more). A run from the left is reduced into the sum; one from the right takes the sum into its
// own buffer (reduce's order: the incoming operand is the left one), so sums move between
// buffers, planned so that the root's last move lands in its receive buffer.
//
// Cost = lg(p) (a + n b + n g). Latency-optimal: for short vectors.
// Restrictions: none. Off the root the sums form in scratch.
//
//   p = 5, root 0 (commutative or not):   round 0: 1->0 3->2   round 1: 2->0   round 2: 4->0
//   p = 5, root 2, not commutative (2 = binary 010): runs 3 (bit 0), 0-1 (bit 1, summed at 1)
//   and 4 (bit 2, cut short, so taken in early):   3->2 0->1, then 4->2, then 1->2
#include <algorithm>
#include <vector>

#include "coll/algorithms.h"
#include "coll/patterns/binomial.h"
#include "coll/patterns/pow2.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return lg(p) * (m.alpha + n * m.beta + n * m.gamma);
}

}  // namespace

extern const Algorithm kReduceBinomial = {
    Coll::kReduce,
    "binomial",
    reduce_binomial,
    0,
    "Cost = lg(p) (a + n b + n g)",
    cost,
    "binomial tree to the root (non-commutative ops: trees laid over rank order)"};

namespace {

// A partial result this rank takes in, and whether its ranks come before this rank's.
struct Arrival {
  int peer;
  bool left;
};

// Where a rank sits: its parent (-1 at the root) and its arrivals, in the order they combine.
struct Place {
  int parent = -1;
  std::vector<Arrival> in;
};

// The binomial tree over the n ranks end, end+1, ... (or end, end-1, ... when `down`), rooted at
// `end`: each subtree is a run of consecutive ranks.
void run_tree(int rank, int end, int n, bool down, Place* pl) {
  auto real = [&](int v) { return down ? end - v : end + v; };
  const patterns::Binomial t(down ? end - rank : rank - end, n, 0);
  pl->parent = t.parent < 0 ? -1 : real(t.parent);
  // Smallest subtree first: the order the children finish in.
  for (auto c = t.children.rbegin(); c != t.children.rend(); ++c) {
    pl->in.push_back({real(c->vrank), down});
  }
}

// The tree in rank order: in round j (0 .. ceil(lg p)-1) the root takes in the sum of one run
// of ranks next to what it has: 2^j ranks on its left when bit j of the root is set (so the left
// runs fill [0, root) exactly), else up to 2^j on its right (the clear bits below 2^ceil(lg p)
// add up to at least the p-1-root ranks there). Each run is a binomial tree rooted at its end
// next to the root, done within j rounds.
Place rank_order_place(int rank, int p, int root) {
  Place pl;
  int lo = root, hi = root;  // the ranks the root has taken in so far, itself included
  std::vector<int> ready;    // the round each of the root's runs can join in
  int last_left = 0, last_right = 0;
  for (int j = 0; (1 << j) < p; ++j) {
    const bool left = (root >> j) & 1;
    const int n = left ? 1 << j : std::min(1 << j, p - 1 - hi);
    if (n == 0) continue;
    const int end = left ? lo - 1 : hi + 1;  // the run's rank next to the root
    const int first = left ? lo - n : hi + 1;
    if (left) {
      lo -= n;
    } else {
      hi += n;
    }
    if (rank == root) {
      // A side's runs join from the root outwards: none before the one inside it.
      int& last = left ? last_left : last_right;
      last = std::max(last, patterns::ceil_log2(n));
      pl.in.push_back({end, left});
      ready.push_back(last);
    } else if (rank >= first && rank < first + n) {
      run_tree(rank, end, n, left, &pl);
      if (pl.parent < 0) pl.parent = root;
      return pl;
    }
  }
  // A run cut short is done early: take it in as soon as it can join.
  std::vector<size_t> order(pl.in.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return ready[x] < ready[y]; });
  std::vector<Arrival> in;
  for (size_t i : order) in.push_back(pl.in[i]);
  pl.in = in;
  return pl;
}

// Commutative: the first arrival lands where the sum forms (unless the contribution is already
// there, in place) and takes the contribution in; the rest arrive in scratch.
BufRef combine_any(Builder& b, uint64_t n, const std::vector<Arrival>& in, BufRef mine,
                   bool writable, const BufRef* dest) {
  BufRef sum = mine;
  size_t k = 0;
  bool pending = false;  // the contribution still to be added, with the next arrival's step
  if (!writable && !in.empty()) {
    sum = dest != nullptr ? *dest : b.scratch(n);
    b.recv(in[0].peer, sum, n);
    b.step();
    pending = true;
    k = 1;
  }
  const BufRef tmp = k < in.size() ? b.scratch(n) : BufRef{};
  for (; k < in.size(); ++k) {
    b.recv(in[k].peer, tmp, n);
    if (pending) b.reduce(sum, mine, n);
    pending = false;
    b.step();
    b.reduce(sum, tmp, n);
    b.step();
  }
  if (pending) b.reduce(sum, mine, n);
  b.step();
  return sum;
}

// In rank order: an arrival from the right takes the sum into its own buffer (it "moves"), as
// does one from the left while the sum is still the read-only contribution (copied out first).
// Moves alternate between buffers, chosen from the last back so that the last lands at `dest`.
BufRef combine_ordered(Builder& b, uint64_t n, const std::vector<Arrival>& in, BufRef mine,
                       bool writable, const BufRef* dest) {
  // Buffers by index: -1 the contribution, 0 dest, 1 and 2 scratch (made when first used).
  BufRef tmp[2];
  bool made[2] = {false, false};
  auto buf = [&](int i) -> BufRef {
    if (i < 0) return mine;
    if (i == 0) return *dest;
    if (!made[i - 1]) tmp[i - 1] = b.scratch(n), made[i - 1] = true;
    return tmp[i - 1];
  };
  const bool mine_is_dest = dest != nullptr && writable;  // in place at the root

  std::vector<int> target(in.size(), -1);
  int first_move = -1;
  bool read_only = !writable;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].left || read_only) {
      target[i] = 0;  // a move; where to, below
      if (first_move < 0) first_move = static_cast<int>(i);
      read_only = false;
    }
  }
  int next = -1;
  for (int i = static_cast<int>(in.size()) - 1; i >= 0; --i) {
    if (target[i] < 0) continue;
    int c = dest != nullptr ? 0 : 1;
    while (c == next || (c == 0 && i == first_move && mine_is_dest)) ++c;
    target[i] = c;
    next = c;
  }

  int sum = -1;
  for (size_t i = 0; i < in.size(); ++i) {
    const int to = target[i];
    if (to >= 0 && !in[i].left) {
      b.recv(in[i].peer, buf(to), n);
      b.step();
      b.reduce(buf(to), buf(sum), n);  // sum op arrival
      sum = to;
    } else {
      // From the left: into scratch, then into the sum (copied out of the contribution first
      // when that is read-only).
      const int land = (to >= 0 ? to : sum) == 1 ? 2 : 1;
      if (to >= 0) b.copy(buf(to), mine, n), sum = to;
      b.recv(in[i].peer, buf(land), n);
      b.step();
      b.reduce(buf(sum), buf(land), n);  // arrival op sum
    }
    b.step();
  }
  return buf(sum);
}

}  // namespace

void reduce_binomial(Builder& b, const Args& a) {
  const uint64_t n = a.count * a.elem;
  if (n == 0) return;
  const bool root = a.rank == a.root;
  // Only the root may be in place; its contribution is then in recv, which is its to write.
  const BufRef mine = a.in_place ? a.recv : a.send;
  const BufRef* dest = root ? &a.recv : nullptr;
  Place pl;
  if (a.commutative) {
    const patterns::Binomial t(a.rank, a.size, a.root);
    pl.parent = t.parent;
    for (auto c = t.children.rbegin(); c != t.children.rend(); ++c) {
      pl.in.push_back({c->rank, true});
    }
  } else {
    pl = rank_order_place(a.rank, a.size, a.root);
  }
  const BufRef sum = a.commutative ? combine_any(b, n, pl.in, mine, a.in_place, dest)
                                   : combine_ordered(b, n, pl.in, mine, a.in_place, dest);
  if (pl.parent >= 0) {
    b.send(pl.parent, sum, n);
    b.step();
  } else {
    b.copy(a.recv, sum, n);  // nothing when the sum formed there
    b.step();
  }
}

}  // namespace torusmpi::coll
