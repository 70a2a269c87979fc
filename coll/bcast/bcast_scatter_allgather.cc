// bcast scatter_allgather (van de Geijn): the vector is cut into p near-equal blocks
// (patterns/blocks.h), block v belonging to the rank v places after the root. A binomial scatter
// from the root (patterns/binomial.h) hands each rank the blocks of its subtree, a contiguous
// range, straight into its place in the buffer; then a ring allgather, in the same rank order,
// passes the blocks around: in ring step s rank v sends block v-s to v+1 and receives block
// v-s-1 from v-1. All of it happens in the one buffer, recv.
//
// The ring skips the blocks the scatter already left at their receiver (a rank holds its whole
// subtree's range, the root all of them): both sides know the tree, so they skip alike. That is
// (lg p / 2) n of the ring's (p-1) n bytes in all, the root's incoming link never used. Ring step
// 0 goes out with the scatter's sends: it reads the own block and writes one outside the subtree,
// so it touches nothing the children are sent.
//
// Cost = (lg(p) + p-1) a + 2((p-1)/p) n b. Bandwidth-optimal among tree algorithms: for long
// vectors. Empty blocks (count < p) are no messages.
// Restrictions: none.
//
//   p = 4, root 0, blocks A B C D:   scatter: 0 -> 2 (C D), then 0 -> 1 (B), 2 -> 3 (D)
//   ring (v sends to v+1):  step 0: 0:A 1:B 2:C 3:(D)     (x): skipped, the receiver holds x
//                           step 1: 0:D 1:A 2:B 3:(C)     (step 0 goes with the scatter's sends)
//                           step 2: 0:C 1:(D) 2:A 3:(B)
#include "coll/algorithms.h"
#include "coll/patterns/binomial.h"
#include "coll/patterns/blocks.h"
#include "coll/patterns/ring.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return (lg(p) + p - 1) * m.alpha + 2 * frac(p) * n * m.beta;
}

}  // namespace

extern const Algorithm kBcastScatterAllgather = {
    Coll::kBcast,
    "scatter_allgather",
    bcast_scatter_allgather,
    0,
    "Cost = (lg(p) + p-1) a + 2((p-1)/p) n b",
    cost,
    "binomial scatter of p blocks, then a ring allgather (van de Geijn)"};

using patterns::mod;

void bcast_scatter_allgather(Builder& b, const Args& a) {
  const int p = a.size;
  const uint64_t n = a.count * a.elem;
  if (n == 0 || p == 1) return;
  const patterns::Binomial tree(a.rank, p, a.root);
  const int v = tree.vrank;
  // Bytes where block i starts; at(p) is the end of the vector.
  auto at = [&](int i) { return patterns::block_start(a.count, p, i) * a.elem; };
  const int mine = tree.subtree();

  // Scatter: blocks [v, v + subtree) from the parent, each child's range on to it.
  if (tree.parent >= 0 && at(v + mine) > at(v)) {
    b.recv(tree.parent, a.recv + at(v), at(v + mine) - at(v));
    b.step();
  }
  for (const patterns::Binomial::Child& c : tree.children) {
    const uint64_t bytes = at(c.vrank + c.subtree) - at(c.vrank);
    if (bytes > 0) b.send(c.rank, a.recv + at(c.vrank), bytes);
  }

  // Ring allgather: block i is at rank w after the scatter if w <= i < w + subtree(w).
  const int right = tree.real(mod(v + 1, p)), left = tree.real(mod(v - 1, p));
  const int v_right = mod(v + 1, p);
  const int right_holds = patterns::Binomial(right, p, a.root).subtree();
  for (int s = 0; s < p - 1; ++s) {
    const int out = mod(v - s, p), in = mod(v - s - 1, p);
    const bool right_has = out >= v_right && out < v_right + right_holds;
    const bool have = in >= v && in < v + mine;
    if (!right_has && at(out + 1) > at(out)) b.send(right, a.recv + at(out), at(out + 1) - at(out));
    if (!have && at(in + 1) > at(in)) b.recv(left, a.recv + at(in), at(in + 1) - at(in));
    b.step();
  }
}

}  // namespace torusmpi::coll
