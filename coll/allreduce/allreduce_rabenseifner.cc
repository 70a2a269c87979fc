// allreduce rabenseifner: a recursive-halving reduce-scatter (in the round of mask m = p2/2, ...,
// 1 each rank sends half of what it still holds to the rank m away and adds in the half it gets
// back), after which folded rank f holds block f of p2 complete; then a recursive-doubling
// allgather (masks 1, ..., p2/2: trade everything held so far) brings every block everywhere.
// Ranks beyond a power of two pair up as in patterns/pow2.h and join their partner in the first
// round of the reduce-scatter and the last of the allgather, so they cost bytes but no rounds
// (patterns/halving.h).
//
// Cost = 2 lg(p2) a + (2((p-1)/p) + f) n b + ((p-1)/p + f) n g, p2 the largest power of two
// <= p, f = 1 when p is not one (the bytes of MPICH's fold, without its two rounds). Few rounds
// and near-optimal bytes: for medium and large vectors.
// Restrictions: commutative ops (halves combine in folded-rank order).
//
//   p = 4, blocks A B C D
//     reduce-scatter m=2: 0:CD->2 1:CD->3 2:AB->0 3:AB->1    m=1: 0:B->1 1:A->0 2:D->3 3:C->2
//     allgather      m=1: 0:A->1 1:B->0 2:C->3 3:D->2        m=2: 0:AB->2 1:AB->3 2:CD->0 3:CD->1
//   p = 5: teams {0,1} 2 3 4; rank 0 sends AB to 1 and CD to 3 in the first round, and gets AB
//   from 1 and CD from 3 in the last
#include "coll/algorithms.h"
#include "coll/patterns/halving.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return 2 * lg_floor(p) * m.alpha + (2 * frac(p) + folds(p)) * n * m.beta +
         (frac(p) + folds(p)) * n * m.gamma;
}

}  // namespace

extern const Algorithm kAllreduceRabenseifner = {
    Coll::kAllreduce,
    "rabenseifner",
    allreduce_rabenseifner,
    kNeedsCommutative,
    "Cost = 2 lg(p2) a + (2((p-1)/p) + f) n b + ((p-1)/p + f) n g",
    cost,
    "recursive-halving reduce-scatter, then recursive-doubling allgather; extra ranks fold into "
    "the first and last rounds"};

void allreduce_rabenseifner(Builder& b, const Args& a) {
  const uint64_t n = a.count * a.elem;
  if (n == 0) return;
  const patterns::Halving h(a.rank, a.size,
                            patterns::Halving::team_blocks(a.count, a.elem, a.size));
  patterns::Halving::Buffers x;
  x.mine = a.in_place ? a.recv : a.send;
  x.acc = a.recv;
  x.out = a.recv + h.blocks().at(a.rank);
  h.reduce_scatter(b, x);
  b.step();

  const int p2 = h.p2(), t = h.team();
  for (int m = 1; m < p2; m <<= 1) {
    const int g = t ^ m;
    // The m teams whose blocks each side holds: its own, and the partner's.
    const int own = t & ~(m - 1), other = g & ~(m - 1);
    const uint64_t own_len = h.len(own, m), other_len = h.len(other, m);
    if (h.leader()) {
      if (own_len > 0) b.send(h.leader_of(g), a.recv + h.at(own), own_len);
      if (other_len > 0) b.recv(h.leader_of(g), a.recv + h.at(other), other_len);
      // Members get the result in the last round, half from each leader of the pair.
      if (2 * m == p2 && own_len > 0) {
        for (int y : {h.member_of(t), h.member_of(g)}) {
          if (y >= 0) b.send(y, a.recv + h.at(own), own_len);
        }
      }
    } else if (2 * m == p2) {
      if (own_len > 0) b.recv(h.leader_of(t), a.recv + h.at(own), own_len);
      if (other_len > 0) b.recv(h.leader_of(g), a.recv + h.at(other), other_len);
    }
    b.step();
  }
}

}  // namespace torusmpi::coll
