// reduce rabenseifner: a recursive-halving reduce-scatter (patterns/halving.h), after which folded
// rank f holds block f of p2 complete, then a binomial gather of the blocks to the root. The
// gather runs over folded ranks relative to the root's team by XOR, so what a rank has gathered is
// always one run of blocks and travels as one message. Ranks beyond a power of two pair up as in
// patterns/pow2.h and join their partner in the first round; when the root is one of them, its
// partner sends it its block in the first gather round and the rest goes straight to it, so no
// round is added.
//
// Cost = 2 lg(p2) a + (2((p-1)/p) + f) n b + ((p-1)/p + f) n g, p2 the largest power of two
// <= p, f = 1 when p is not one. For large vectors.
// Restrictions: commutative ops (halves combine in folded-rank order).
//
//   p = 4, root 0, blocks A B C D
//     reduce-scatter m=2: 0:CD->2 1:CD->3 2:AB->0 3:AB->1    m=1: 0:B->1 1:A->0 2:D->3 3:C->2
//     gather         m=1: 1:B->0 3:D->2                      m=2: 2:CD->0
#include "coll/algorithms.h"
#include "coll/patterns/halving.h"

namespace torusmpi::coll {
namespace {

// The gather moves what allreduce rabenseifner's allgather does, in as many rounds.
double cost(const Model& m, int p, double n) { return kAllreduceRabenseifner.cost(m, p, n); }

}  // namespace

extern const Algorithm kReduceRabenseifner = {
    Coll::kReduce,
    "rabenseifner",
    reduce_rabenseifner,
    kNeedsCommutative,
    "Cost = 2 lg(p2) a + (2((p-1)/p) + f) n b + ((p-1)/p + f) n g",
    cost,
    "recursive-halving reduce-scatter, then a binomial gather of the blocks to the root"};

void reduce_rabenseifner(Builder& b, const Args& a) {
  const uint64_t n = a.count * a.elem;
  if (n == 0) return;
  const bool root = a.rank == a.root;
  const patterns::Halving h(a.rank, a.size,
                            patterns::Halving::team_blocks(a.count, a.elem, a.size));
  // Partial results and gathered blocks: in the receive buffer at the root, elsewhere in scratch
  // for the half of the vector a leader ever holds.
  patterns::Halving::Buffers x;
  x.mine = a.in_place ? a.recv : a.send;
  if (root) {
    x.acc = a.recv;
  } else if (h.leader() && a.size > 1) {
    x.acc = b.scratch(h.window_len());
    x.origin = h.window_at();
  }
  auto acc = [&](uint64_t v) { return x.acc + (v - x.origin); };
  x.out = acc(h.blocks().at(a.rank));
  h.reduce_scatter(b, x);
  b.step();

  const int p2 = h.p2(), t = h.team(), rt = h.team_of(a.root);
  const bool root_leads = h.leader_of(rt) == a.root;
  if (h.leader()) {
    const int v = t ^ rt;
    for (int m = 1; m < p2; m <<= 1) {
      const int g = t ^ m;
      // This rank's run so far (m teams), and the one it takes in from g.
      const int own = t & ~(m - 1), other = g & ~(m - 1);
      if (v == 0 && !root_leads) {
        // The root's partner: its block goes to the root; its children send there directly.
        if (h.len(t, 1) > 0) b.send(a.root, acc(h.at(t)), h.len(t, 1));
        break;
      }
      if (v & m) {
        const int to = g == rt ? a.root : h.leader_of(g);
        if (h.len(own, m) > 0) b.send(to, acc(h.at(own)), h.len(own, m));
        break;
      }
      if (h.len(other, m) > 0) b.recv(h.leader_of(g), acc(h.at(other)), h.len(other, m));
      b.step();
    }
  } else if (root) {
    for (int m = 1; m < p2; m <<= 1) {
      const int g = rt ^ m, other = g & ~(m - 1);
      if (m == 1 && h.len(rt, 1) > 0) b.recv(h.leader_of(rt), a.recv + h.at(rt), h.len(rt, 1));
      if (h.len(other, m) > 0) b.recv(h.leader_of(g), a.recv + h.at(other), h.len(other, m));
      b.step();
    }
  }
}

}  // namespace torusmpi::coll
