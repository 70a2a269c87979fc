// The orders in which the torus algorithms visit a communicator's ranks, as "staged rings": the
// ranks are slots 0..P-1 of a mixed-radix number (digit 0 most significant), and stage i is a
// ring through the ranks whose slots differ in digit i only, in digit order. One ring of P is a
// plain ring; (cores, x, y) digits are the per-axis rings of torus_ring; digits of 2 are
// recursive halving/doubling; (cores, chip on a Hamiltonian cycle) is chip_ring. Keeping digit 0
// most significant makes what a rank keeps after each reduce-scatter stage a contiguous run of
// slots, so each message is one range of the vector where the slots are laid out in order.
//
// Also here: the snake ring (consecutive ranks on one chip or on neighbouring chips) and two
// edge-disjoint Hamiltonian cycles of the chips of a 4x4 or 4x4x4 torus (built once per shape
// and cached), which dual_ring and the bcast chains follow (elsewhere: the snake ring both ways).
//
//   4x4 chips (x across, y up), cycle A by its position, cycle B the links A leaves unused:
//     A: 12 13 14 15      A's row y starts at column -y and runs three steps east, then one
//         9 10 11  8      step north; on C4 x C4 that closes after four rows, and the eight
//         6  7  4  5      links of each kind it skips form one cycle too (checked when built;
//         3  0  1  2      a shape where they do not gets no pair). 4x4x4: the same on C4 x C16,
//                         C16 being cycle A of the 4x4 plane, stacked along z.
#ifndef TORUSMPI_COLL_PATTERNS_TORUS_RINGS_H_
#define TORUSMPI_COLL_PATTERNS_TORUS_RINGS_H_

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "coll/coll.h"
#include "coll/patterns/pow2.h"
#include "coll/patterns/torus.h"

namespace torusmpi::coll::patterns {

struct StagedRing {
  std::vector<int> extent;  // per stage; their product is the number of slots
  std::vector<int> owner;   // slot -> rank of the communicator
  // Per stage (missing: false): the stage's members exchange directly, each part straight to
  // the member that ends with it, in one step, instead of passing parts round their ring.
  std::vector<bool> direct;

  int slots() const { return static_cast<int>(owner.size()); }
  bool is_direct(size_t i) const { return i < direct.size() && direct[i]; }
  // One ring through `ranks` in the order given.
  static StagedRing one(std::vector<int> ranks) {
    StagedRing s;
    s.extent = {static_cast<int>(ranks.size())};
    s.owner = std::move(ranks);
    return s;
  }
};

// Chips of a torus (chip = x + d0 * (y + d1 * z)) on two edge-disjoint Hamiltonian cycles.
struct ChipCycles {
  std::vector<int> a, b;
};

namespace detail {

// On C_na x C_nb (node (x, y) = x + na * y, na | nb, both >= 3): cycle A as pictured above,
// and the cycle formed by the links A leaves unused; false when those do not form one cycle.
inline bool product_pair(int na, int nb, std::vector<int>* a, std::vector<int>* b) {
  if (na < 3 || nb < 3 || nb % na != 0) return false;
  const int n = na * nb;
  a->clear();
  int x = 0;
  for (int y = 0; y < nb; ++y) {
    for (int s = 0; s < na; ++s) {
      a->push_back(x % na + na * y);
      if (s + 1 < na) ++x;
    }
  }
  auto edge = [](int u, int v) { return std::make_pair(std::min(u, v), std::max(u, v)); };
  std::set<std::pair<int, int>> used;
  for (int i = 0; i < n; ++i) used.insert(edge((*a)[i], (*a)[(i + 1) % n]));
  if (static_cast<int>(used.size()) != n) return false;
  std::vector<std::vector<int>> adj(n);
  for (int u = 0; u < n; ++u) {
    const int ux = u % na, uy = u / na;
    for (int v : {(ux + 1) % na + na * uy, ux + na * ((uy + 1) % nb)}) {
      if (used.count(edge(u, v)) == 0) adj[u].push_back(v), adj[v].push_back(u);
    }
  }
  for (const auto& l : adj) {
    if (l.size() != 2) return false;
  }
  b->assign(1, 0);
  int prev = -1, cur = 0;
  for (;;) {
    const int next = adj[cur][0] != prev ? adj[cur][0] : adj[cur][1];
    if (next == 0) break;
    b->push_back(next);
    prev = cur, cur = next;
    if (static_cast<int>(b->size()) > n) return false;
  }
  return static_cast<int>(b->size()) == n;
}

inline bool build_cycles(int ndims, const int dims[3], ChipCycles* out) {
  std::vector<int> a, b;
  if (ndims == 2) {
    if (!product_pair(dims[0], dims[1], &a, &b)) return false;
    out->a = a, out->b = b;  // node index is already the chip index
    return true;
  }
  if (ndims != 3) return false;
  std::vector<int> plane, unused;
  if (!product_pair(dims[0], dims[1], &plane, &unused)) return false;
  // C_d2 (z) x C_L (position on the plane's cycle A): node (z, i) = z + d2 * i.
  const int d2 = dims[2], len = static_cast<int>(plane.size());
  if (!product_pair(d2, len, &a, &b)) return false;
  auto chip = [&](int node) { return plane[node / d2] + dims[0] * dims[1] * (node % d2); };
  for (int& c : a) c = chip(c);
  for (int& c : b) c = chip(c);
  out->a = a, out->b = b;
  return true;
}

}  // namespace detail

// Two edge-disjoint Hamiltonian cycles of the torus's chips, or nullptr when this construction
// has none for the shape (2x2, 2x4: chips with fewer than four links; any shape it does not
// cover). Built once per shape.
inline const ChipCycles* disjoint_cycles(int ndims, const int dims[3]) {
  static std::mutex mu;
  static std::map<std::array<int, 4>, std::pair<bool, ChipCycles>> cache;
  const std::array<int, 4> key = {ndims, dims[0], dims[1], dims[2]};
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it == cache.end()) {
    ChipCycles c;
    const bool ok = detail::build_cycles(ndims, dims, &c);
    it = cache.emplace(key, std::make_pair(ok, std::move(c))).first;
  }
  return it->second.first ? &it->second.second : nullptr;
}

// The communicator's ranks on chip `c` (shaped grid), in core order.
inline int grid_rank(const TorusGrid& g, int chip, int core) {
  return g.order[core + g.extent[0] * chip];
}

inline int grid_chips(const TorusGrid& g) { return g.extent[1] * g.extent[2] * g.extent[3]; }

// Ranks along a sequence of chips of a shaped grid, each chip's ranks in a row.
inline std::vector<int> ranks_along(const TorusGrid& g, const std::vector<int>& chips) {
  std::vector<int> r;
  for (int c : chips) {
    for (int k = 0; k < g.extent[0]; ++k) r.push_back(grid_rank(g, c, k));
  }
  return r;
}

// The chips of a shaped torus in snake order (consecutive chips are neighbours).
inline std::vector<int> snake_chips(const TopoView& t) {
  const int chips = t.dims[0] * t.dims[1] * t.dims[2];
  std::vector<int> c(chips);
  for (int i = 0; i < chips; ++i) c[snake_position(t, i)] = i;
  return c;
}

// Every rank on one ring whose consecutive ranks share a chip or sit on neighbouring chips.
inline std::vector<int> snake_ring(const TorusGrid& g, const TopoView* t) {
  if (!g.shaped) return g.order;  // already in snake order
  return ranks_along(g, snake_chips(*t));
}

// The chips in the order a single inter-chip ring follows: cycle A when the torus has the
// pair, else the snake.
inline std::vector<int> chip_cycle(const TorusGrid& g, const TopoView* t) {
  const ChipCycles* c = g.shaped ? disjoint_cycles(t->ndims, t->dims) : nullptr;
  return c != nullptr ? c->a : snake_chips(*t);
}

// torus_ring: shaped, one stage per axis (cores first, then x, y, z); otherwise one ring in
// snake order.
inline StagedRing torus_axes(const TorusGrid& g) {
  StagedRing s;
  if (!g.shaped) return StagedRing::one(g.order);
  for (int k = 0; k < g.naxes; ++k) s.extent.push_back(g.extent[k]);
  s.owner.resize(g.size());
  for (int v = 0; v < g.size(); ++v) {
    int slot = 0;
    for (int k = 0; k < g.naxes; ++k) slot = slot * g.extent[k] + g.coord(v, k);
    s.owner[slot] = g.order[v];
  }
  return s;
}

// dual_ring: the two cycles, each visiting a chip's ranks in a row; when the torus has no
// disjoint pair or the communicator does not fill it, the snake ring and the snake ring
// reversed, so the second half uses each link in the direction the first leaves idle.
inline std::pair<StagedRing, StagedRing> dual_cycles(const TorusGrid& g, const TopoView* t) {
  const ChipCycles* c = g.shaped ? disjoint_cycles(t->ndims, t->dims) : nullptr;
  if (c != nullptr) {
    return {StagedRing::one(ranks_along(g, c->a)), StagedRing::one(ranks_along(g, c->b))};
  }
  std::vector<int> ring = snake_ring(g, t);
  std::vector<int> back(ring.rbegin(), ring.rend());
  return {StagedRing::one(std::move(ring)), StagedRing::one(std::move(back))};
}

// rdh: stages of two. Shaped with cores a power of two and every torus extent 1, 2 or 4: the
// core's bits, then per axis its coordinate's bit (extent 2) or the two bits of its Gray label
// (extent 4: positions 0 1 2 3 are labels 0 1 3 2, so flipping either bit moves one link).
// Otherwise, for a power-of-two size, the bits of the snake-order position. Empty when the size
// is not a power of two (the callers fold, as rabenseifner does).
inline StagedRing hypercube(const TorusGrid& g) {
  StagedRing s;
  const int p = g.size();
  if (!is_pow2(p)) return s;
  bool cube = g.shaped && is_pow2(g.extent[0]);
  for (int k = 1; k < g.naxes; ++k) cube = cube && (g.extent[k] <= 2 || g.extent[k] == 4);
  s.extent.assign(ceil_log2(p), 2);
  s.owner.resize(p);
  for (int v = 0; v < p; ++v) {
    int slot = v;
    if (cube) {
      slot = g.coord(v, 0);
      for (int k = 1; k < g.naxes; ++k) {
        const int c = g.coord(v, k);
        slot = slot * g.extent[k] + (g.extent[k] == 4 ? (c ^ (c >> 1)) : c);
      }
    }
    s.owner[slot] = g.order[v];
  }
  return s;
}

// chip_ring: a ring among each chip's ranks, then rings of same-core ranks along the chips
// (cycle A or the snake). A communicator that does not fill its torus but holds the same number
// of ranks on every chip it touches (of one instance or several) gets the same two stages over
// the chips as they are, in snake order; any other gets one ring in snake order.
inline StagedRing chip_stages(const TorusGrid& g, const TopoView* t) {
  StagedRing s;
  std::vector<std::vector<int>> groups;  // chips in ring order, each its ranks in core order
  if (g.shaped) {
    for (int c : chip_cycle(g, t)) {
      groups.emplace_back();
      for (int k = 0; k < g.extent[0]; ++k) groups.back().push_back(grid_rank(g, c, k));
    }
  } else {
    for (int v = 0; v < g.size(); ++v) {
      const int r = g.order[v];
      const bool fresh = v == 0 || t == nullptr || t->ndims == 0 ||
                         t->chip[r] != t->chip[g.order[v - 1]] ||
                         t->instance[r] != t->instance[g.order[v - 1]];
      if (v == 0 || (fresh && t != nullptr && t->ndims > 0)) groups.emplace_back();
      groups.back().push_back(r);
    }
    for (const auto& grp : groups) {
      if (grp.size() != groups[0].size()) return StagedRing::one(g.order);
    }
  }
  const int k = static_cast<int>(groups[0].size()), n = static_cast<int>(groups.size());
  s.extent = {k, n};
  s.owner.resize(k * n);
  for (int c = 0; c < n; ++c) {
    for (int j = 0; j < k; ++j) s.owner[j * n + c] = groups[c][j];
  }
  return s;
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_TORUS_RINGS_H_
