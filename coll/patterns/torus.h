// A communicator as the torus algorithms see it: a grid whose axis 0 is the cores of a chip and
// whose further axes are the torus dimensions, so that neighbours along an axis are ranks of one
// chip (axis 0) or of chips joined by a link (axes 1..3).
//
//   torus:2x2:cores=2, 8 ranks:   virtual rank v = core + 2 * (x + 2 * y)
//       chip (0,1): v 4 5 -- chip (1,1): v 6 7
//            |                    |
//       chip (0,0): v 0 1 -- chip (1,0): v 2 3
//
// A communicator fills its torus ("shaped") when every chip of the torus holds the same number of
// its ranks, all of one instance. Any other (a split, a subset, the host) is one axis: all its
// ranks in the order of a snake through the chips, so consecutive ranks are on one chip or on
// neighbouring chips, and the same algorithms run on it as on a ring.
#ifndef TORUSMPI_COLL_PATTERNS_TORUS_H_
#define TORUSMPI_COLL_PATTERNS_TORUS_H_

#include <algorithm>
#include <array>
#include <vector>

#include "coll/coll.h"

namespace torusmpi::coll::patterns {

struct TorusGrid {
  bool shaped = false;
  int naxes = 1;                             // 1 + the torus's dimensions when shaped, else 1
  std::array<int, 4> extent = {1, 1, 1, 1};  // cores per chip, then x, y, z
  std::vector<int> order;                    // virtual rank -> rank of the communicator
  std::vector<int> vrank;                    // rank of the communicator -> virtual rank

  int size() const { return static_cast<int>(order.size()); }
  // The coordinate of virtual rank v on axis k, and v moved to coordinate c on axis k.
  int coord(int v, int k) const {
    for (int i = 0; i < k; ++i) v /= extent[i];
    return v % extent[k];
  }
  int with_coord(int v, int k, int c) const {
    int stride = 1;
    for (int i = 0; i < k; ++i) stride *= extent[i];
    return v + (c - coord(v, k)) * stride;
  }
};

// The position of a chip on a snake (boustrophedon) path through the torus: x runs forward on
// even rows and backward on odd ones, rows likewise within planes, so consecutive positions are
// neighbouring chips.
inline int snake_position(const TopoView& t, int chip) {
  int x = chip % t.dims[0], y = chip / t.dims[0] % t.dims[1], z = chip / (t.dims[0] * t.dims[1]);
  if (z % 2 == 1) y = t.dims[1] - 1 - y;
  if ((z * t.dims[1] + y) % 2 == 1) x = t.dims[0] - 1 - x;
  return x + t.dims[0] * (y + t.dims[1] * z);
}

inline TorusGrid torus_grid(const TopoView* t, int size) {
  TorusGrid g;
  g.order.resize(size);
  g.vrank.resize(size);
  for (int r = 0; r < size; ++r) g.order[r] = r;
  if (t != nullptr && t->ndims > 0 && static_cast<int>(t->chip.size()) == size && size > 0) {
    const int chips = t->dims[0] * t->dims[1] * t->dims[2];
    std::vector<int> per_chip(chips, 0);
    bool one_instance = true;
    for (int r = 0; r < size; ++r) {
      ++per_chip[t->chip[r]];
      one_instance = one_instance && t->instance[r] == t->instance[0];
    }
    const int k = per_chip[0];
    g.shaped = one_instance && k > 0 &&
               std::all_of(per_chip.begin(), per_chip.end(), [k](int n) { return n == k; });
    auto key = [&](int r) {
      // Shaped: chip in torus order; otherwise instance, then the chip's place on the snake.
      long pos = g.shaped
                     ? t->chip[r]
                     : static_cast<long>(t->instance[r]) * chips + snake_position(*t, t->chip[r]);
      return std::array<long, 3>{pos, t->core[r], r};
    };
    std::stable_sort(g.order.begin(), g.order.end(), [&](int a, int b) { return key(a) < key(b); });
    if (g.shaped) {
      g.naxes = 1 + t->ndims;
      g.extent = {k, t->dims[0], t->dims[1], t->dims[2]};
    }
  }
  if (!g.shaped) g.extent = {size, 1, 1, 1};
  for (int v = 0; v < size; ++v) g.vrank[g.order[v]] = v;
  return g;
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_TORUS_H_
