// alltoall torus_ring: dimension-ordered forwarding. Each block travels along axis 0 (the cores
// of its chip) to its destination's coordinate, then along x, then y (then z), so every message
// is one link long or stays in a chip. Along an axis of extent e the ranks pass blocks round the
// axis's ring, e-1 steps: in step s a rank sends its right neighbour, in one message, every
// block that set out from s-1 positions back and still has at least s positions to go; the
// message is packed farthest first, so the blocks that arrive home are its tail (copied into
// place) and the rest go on unchanged in the next step. A communicator that does not fill its
// torus is alltoall pairwise (one ring of p would forward each block up to p-1 times).
//
// Cost = sum over axes k of (e_k-1) a_k + (e_k-1)/2 p n b_k + 2 p n c, n one block, a_k b_k one
// link's (shared by the chip's cores) or a chip's own; per axis p n c to pack and nearly as much
// to unpack. Unshaped: as pairwise.
// Restrictions: none.
//
//   ring of 4 along one axis, blocks named by their destination's position, from rank 0:
//     step 1: 0 sends [3 2 1] to 1 (packed)        1 keeps block 1, holds [3 2]
//     step 2: 1 sends [3 2] to 2                   2 keeps block 2, holds [3]
//     step 3: 2 sends [3] to 3                     3 keeps block 3
//   every rank does the same at once, so step s carries e-s blocks per rank and axis row.
#include <vector>

#include "coll/algorithms.h"
#include "coll/patterns/torus.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  if (!torus_shaped(m)) return kAlltoallPairwise.cost(m, p, n);
  double t = 0;
  for (const TorusStage& s : axis_stages(m)) {
    if (s.extent > 1) t += (s.extent - 1) * (s.alpha + p * n / 2 * s.beta) + 2 * p * n * m.copy;
  }
  return t;
}

}  // namespace

extern const Algorithm kAlltoallTorusRing = {
    Coll::kAlltoall,
    "torus_ring",
    alltoall_torus_ring,
    0,
    "Cost = sum over axes k of (e_k-1) a_k + (e_k-1)/2 p n b_k + 2 p n c",
    cost,
    "dimension-ordered forwarding: blocks ride round each axis's ring in turn, one link a hop"};

void alltoall_torus_ring(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  if (!g.shaped) {
    alltoall_pairwise(b, a);
    return;
  }
  if (n == 0) return;
  const int p = g.size(), v = g.vrank[a.rank];
  std::vector<int> axes;
  for (int k = 0; k < g.naxes; ++k) {
    if (g.extent[k] > 1) axes.push_back(k);
  }
  // Before axis k a rank holds p blocks, by key: the source's coordinates on the axes done and
  // the destination's on the others. Key = the destination's rank for the first axis (the send
  // buffer), the source's after the last (the receive buffer); scratch arrays in between.
  BufRef first = a.send;
  if (a.in_place && !axes.empty()) {
    first = b.scratch(n * p);
    b.copy(first, a.recv, n * p);
    b.step();
  }
  auto in_user = [&](BufRef base, int key) { return base + g.order[key] * n; };
  if (axes.empty()) {
    if (!a.in_place) b.copy(a.recv, a.send, n);
    return;
  }
  BufRef input = first;
  bool input_user = true;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int k = axes[i], e = g.extent[k], c = g.coord(v, k), per = p / e;
    const bool last_axis = i + 1 == axes.size();
    const BufRef output = last_axis ? a.recv : b.scratch(n * p);
    auto in_at = [&](int key) { return input_user ? in_user(input, key) : input + key * n; };
    auto out_at = [&](int key) { return last_axis ? in_user(output, key) : output + key * n; };
    // The keys of the blocks for axis coordinate d, in order.
    auto keys = [&](int d) {
      std::vector<int> ks;
      for (int key = 0; key < p; ++key) {
        if (g.coord(key, k) == d) ks.push_back(key);
      }
      return ks;
    };
    const int right = g.order[g.with_coord(v, k, (c + 1) % e)];
    const int left = g.order[g.with_coord(v, k, (c + e - 1) % e)];
    const BufRef pack = b.scratch(n * per * (e - 1));
    const BufRef got[2] = {b.scratch(n * per * (e - 1)),
                           e > 2 ? b.scratch(n * per * (e - 2)) : BufRef{}};
    // Step 0: pack the blocks that leave, farthest first; the ones for here stay at their key.
    uint64_t at = 0;
    for (int t = e - 1; t >= 1; --t) {
      for (int key : keys((c + t) % e)) b.copy(pack + at, in_at(key), n), at += n;
    }
    for (int key : keys(c)) b.copy(out_at(key), in_at(key), n);
    b.step();
    for (int s = 1; s <= e; ++s) {
      if (s < e) {
        const BufRef src = s == 1 ? pack : got[(s - 2) % 2];
        b.send(right, src, n * per * (e - s));
        b.recv(left, got[(s - 1) % 2], n * per * (e - s));
      }
      if (s > 1) {
        // The tail of the message of step s-1: blocks from coordinate o = c - (s-1), home now.
        const int o = (c - (s - 1) + e) % e;
        const BufRef tail = got[(s - 2) % 2] + n * per * (e - s);
        uint64_t off = 0;
        for (int key : keys(c)) b.copy(out_at(g.with_coord(key, k, o)), tail + off, n), off += n;
      }
      b.step();
    }
    input = output;
    input_user = last_axis;
  }
}

}  // namespace torusmpi::coll
