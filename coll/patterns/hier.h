// Hierarchical orders for communicators that span instances (instance_ring, instance_rdh,
// instance_direct of allreduce, allgather, reduce_scatter and reduce_scatter_block): staged rings
// (torus_rings.h) whose first stages run inside each instance, over NeuronLink, and whose last
// stages join the ranks that hold the same slot in every instance, over the network. The staged
// engine (staged.h) then gives the order AWS Neuron uses:
//   reduce-scatter: the stages in order      intra-instance first, then inter-instance
//   allgather:      the stages backwards     inter-instance first, then intra-instance
//   allreduce:      both                     intra reduce-scatter, inter allreduce of each
//                                            rank's piece, intra allgather
// In the inter stages every rank of an instance talks to its counterparts at once, so every
// chip's network interface is busy in parallel and each carries 1/q of the data (q ranks per
// instance).
//
// The inter stages, by kind:
//   ring     one ring of the N instances
//   halving  a stage of two per factor 2 of N (recursive halving / doubling), then the odd rest
//            of N as one direct stage (N = 3: one direct exchange; N = 6: a pair, then three)
//   direct   one direct stage of N: each piece straight to the rank that ends with it
//
// The intra stages are those of the instance's torus-aware algorithms, the same in every
// instance: the per-axis rings of torus_ring when the instance's ranks fill its torus (every
// message one link or within a chip, and the fewest steps of the staged orders: 9 a pass on
// trn2.48xl against chip_ring's 18), else chip_ring's stages over the chips as they are
// (a communicator that holds as many ranks on every chip it touches: a subset by core), else
// one ring in snake order. When the instances' orders would differ in shape (subsets placed
// differently in each), every instance takes its snake ring.
//
//   2 instances of torus:2x1:cores=1 (ranks 0 1 | 2 3), allreduce of blocks A B C D, ring:
//     intra: 0,1 swap halves: 0 keeps AB, 1 keeps CD; 2,3 likewise
//     inter: 0 and 2 allreduce AB (0 ends with A, 2 with B, then swap), 1 and 3 CD
//     intra: 0,1 swap their halves back; 2,3 likewise
#ifndef TORUSMPI_COLL_PATTERNS_HIER_H_
#define TORUSMPI_COLL_PATTERNS_HIER_H_

#include <algorithm>
#include <map>
#include <vector>

#include "coll/coll.h"
#include "coll/patterns/torus.h"
#include "coll/patterns/torus_rings.h"

namespace torusmpi::coll::patterns {

enum class NetKind { kRing, kHalving, kDirect };

// The communicator's ranks by instance (instances in increasing order, ranks in rank order)
// when it spans two or more instances with the same number of ranks in each; empty otherwise.
inline std::vector<std::vector<int>> instance_groups(const TopoView* t, int size) {
  if (t == nullptr || static_cast<int>(t->instance.size()) != size || size < 2) return {};
  std::map<int, std::vector<int>> by;
  for (int r = 0; r < size; ++r) by[t->instance[r]].push_back(r);
  if (by.size() < 2) return {};
  std::vector<std::vector<int>> groups;
  const size_t each = by.begin()->second.size();
  for (auto& [inst, ranks] : by) {
    if (ranks.size() != each) return {};
    groups.push_back(std::move(ranks));
  }
  return groups;
}

// One instance's ranks `ranks` (ranks of the communicator) as a communicator of their own.
inline TopoView instance_view(const TopoView* t, const std::vector<int>& ranks) {
  TopoView sub;
  sub.ndims = t->ndims;
  std::copy(t->dims, t->dims + 3, sub.dims);
  for (int r : ranks) {
    sub.instance.push_back(0);
    sub.chip.push_back(t->chip[r]);
    sub.core.push_back(t->core[r]);
  }
  return sub;
}

// The instance's own stages over `ranks`, or (snake) its ranks in snake order as one ring.
inline StagedRing instance_stages(const TopoView* t, const std::vector<int>& ranks, bool snake) {
  const TopoView sub = instance_view(t, ranks);
  const TorusGrid g = torus_grid(&sub, static_cast<int>(ranks.size()));
  StagedRing s = snake ? StagedRing::one(g.order) : g.shaped ? torus_axes(g) : chip_stages(g, &sub);
  for (int& o : s.owner) o = ranks[o];
  return s;
}

// The inter-instance stages of N instances: extents, and which are direct.
inline void net_stages(NetKind kind, int n, std::vector<int>* extent, std::vector<bool>* direct) {
  if (kind == NetKind::kHalving) {
    for (; n % 2 == 0; n /= 2) extent->push_back(2), direct->push_back(false);
    if (n > 1) extent->push_back(n), direct->push_back(true);
    return;
  }
  extent->push_back(n);
  direct->push_back(kind == NetKind::kDirect);
}

// The hierarchical order of a communicator spanning instances evenly; any other communicator
// gets one ring in snake order (the registry does not give it these algorithms; a forced one
// still runs).
inline StagedRing hier_stages(const TopoView* t, int size, NetKind kind) {
  const std::vector<std::vector<int>> groups = instance_groups(t, size);
  if (groups.empty()) return StagedRing::one(torus_grid(t, size).order);
  std::vector<StagedRing> in;
  for (const auto& g : groups) in.push_back(instance_stages(t, g, false));
  for (const StagedRing& s : in) {
    if (s.extent != in[0].extent) {
      in.clear();
      for (const auto& g : groups) in.push_back(instance_stages(t, g, true));
      break;
    }
  }
  const int n = static_cast<int>(groups.size()), q = in[0].slots();
  StagedRing s;
  s.extent = in[0].extent;
  s.direct.assign(s.extent.size(), false);
  net_stages(kind, n, &s.extent, &s.direct);
  // Intra digits most significant: slot = intra slot * N + instance.
  s.owner.resize(static_cast<size_t>(q) * n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < q; ++j) s.owner[static_cast<size_t>(j) * n + i] = in[i].owner[j];
  }
  return s;
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_HIER_H_
