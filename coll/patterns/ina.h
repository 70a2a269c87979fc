// The ina algorithms' shape (allreduce, reduce_scatter, reduce_scatter_block, allgather ina): the
// instances' own stages over NeuronLink, as the hierarchical algorithms run them (hier.h), and
// between the instances one aggregation through the in-network switch per group of ranks that
// hold the same slot in every instance (Builder::aggregate; pml/ina does it, exec.cc does it again
// over the network when the switch fails).
//
// Off their case (no even instances: forced, or the simulator's sweeps) every rank is an instance
// of its own, so the whole call is one aggregation among all ranks (at most the switch's 256).
#ifndef TORUSMPI_COLL_PATTERNS_INA_H_
#define TORUSMPI_COLL_PATTERNS_INA_H_

#include <vector>

#include "coll/coll.h"
#include "coll/patterns/hier.h"
#include "coll/patterns/reduce_scatter.h"
#include "coll/patterns/staged.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll::patterns {

struct InaShape {
  std::vector<StagedRing> in;  // each instance's stages, alike in shape
  int inst = 0;                // this rank's instance
  // The members of slot j's group, in instance order (the switch's source order).
  std::vector<int> group(int j) const {
    std::vector<int> m;
    for (const StagedRing& s : in) m.push_back(s.owner[j]);
    return m;
  }
  int slots() const { return in[0].slots(); }
};

inline InaShape ina_shape(const Args& a) {
  InaShape s;
  std::vector<std::vector<int>> groups = instance_groups(a.topo, a.size);
  if (groups.empty()) {
    for (int r = 0; r < a.size; ++r) {
      s.in.push_back(StagedRing::one({r}));
      if (r == a.rank) s.inst = r;
    }
    return s;
  }
  for (const auto& g : groups) s.in.push_back(instance_stages(a.topo, g, false));
  for (const StagedRing& x : s.in) {
    if (x.extent != s.in[0].extent) {
      s.in.clear();
      for (const auto& g : groups) s.in.push_back(instance_stages(a.topo, g, true));
      break;
    }
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    for (int r : groups[i]) {
      if (r == a.rank) s.inst = static_cast<int>(i);
    }
  }
  return s;
}

// Whether the switch can take the call's groups.
inline bool ina_fits(const InaShape& s) {
  return static_cast<int>(s.in.size()) <= kMaxAggregationMembers;
}

// Allreduce: the instance's reduce-scatter, this rank's piece aggregated with its group's, the
// instance's allgather.
inline void ina_allreduce(Builder& b, const Args& a, const InaShape& s) {
  const BufRef mine = a.in_place ? a.recv : a.send;
  const Staged g = vector_slots(s.in[s.inst], a.rank, 0, a.count, a.elem);
  StepList rs;
  g.reduce_scatter(rs, b, mine, a.recv);
  StepList::emit(b, {&rs});
  const int slot = g.me();
  const uint64_t piece = g.len(slot);
  // The result lands beside the contribution, which a failed aggregation is done again from.
  const BufRef tmp = b.scratch(piece);
  b.aggregate(AggMode::kReduce, static_cast<uint32_t>(slot), s.group(slot), s.inst, tmp,
              a.recv + g.at(slot), piece);
  b.step();
  StepList ag;
  g.allgather(ag, a.recv, tmp);
  StepList::emit(b, {&ag});
}

// Reduce-scatter of blocks v: the vector laid out again in scratch so that the blocks of slot j's
// group sit one after another (the instance's slot j), the instance's reduce-scatter of that
// layout, slot j aggregated among the group (the switch sends each member its own block only),
// and this rank's block copied out.
inline void ina_reduce_scatter(Builder& b, const Args& a, const InaShape& s,
                               const VectorBlocks& v) {
  if (v.total() == 0) return;
  const BufRef mine = a.in_place ? a.recv : a.send;
  const int q = s.slots(), n = static_cast<int>(s.in.size());
  std::vector<uint64_t> at(q), len(q);
  std::vector<uint64_t> packed(a.size);  // where rank r's block sits in the packed layout
  uint64_t pos = 0;
  for (int j = 0; j < q; ++j) {
    at[j] = pos;
    for (int k = 0; k < n; ++k) {
      const int r = s.in[k].owner[j];
      packed[r] = pos;
      pos += v.len(r);
    }
    len[j] = pos - at[j];
  }
  const BufRef w = b.scratch(v.total());
  for (int r = 0; r < a.size; ++r) b.copy(w + packed[r], mine + v.at(r), v.len(r));
  b.step();
  const Staged g(s.in[s.inst], a.rank, at, len);
  StepList rs;
  g.reduce_scatter(rs, b, w, w);
  StepList::emit(b, {&rs});
  const int slot = g.me();
  const BufRef tmp = b.scratch(len[slot]);
  std::vector<uint64_t> parts;
  for (int k = 0; k < n; ++k) parts.push_back(v.len(s.in[k].owner[slot]));
  b.aggregate(AggMode::kReduceScatter, static_cast<uint32_t>(slot), s.group(slot), s.inst, tmp,
              w + at[slot], len[slot], std::move(parts));
  b.step();
  b.copy(a.recv, tmp + (packed[a.rank] - at[slot]), v.len(a.rank));
  b.step();
}

// Allgather of blocks of n bytes: this rank's block gathered with its group's by the switch (the
// group's blocks, in instance order), the instance's allgather of the groups' gathers in a packed
// layout (slot j: group j's N blocks), every block copied to its place.
inline void ina_allgather(Builder& b, const Args& a, const InaShape& s) {
  const uint64_t n = a.block_bytes();
  if (n == 0) return;
  const BufRef own = a.in_place ? a.recv + a.rank * n : a.send;
  const int q = s.slots(), members = static_cast<int>(s.in.size());
  const uint64_t slot_bytes = n * members;
  const BufRef w = b.scratch(slot_bytes * q);
  std::vector<uint64_t> at(q), len(q, slot_bytes);
  for (int j = 0; j < q; ++j) at[j] = j * slot_bytes;
  const Staged g(s.in[s.inst], a.rank, at, len);
  const int slot = g.me();
  b.aggregate(AggMode::kGather, static_cast<uint32_t>(slot), s.group(slot), s.inst, w + at[slot],
              own, n);
  b.step();
  StepList ag;
  g.allgather(ag, w, w + at[slot]);
  StepList::emit(b, {&ag});
  for (int j = 0; j < q; ++j) {
    for (int k = 0; k < members; ++k) {
      const int r = s.in[k].owner[j];
      b.copy(a.recv + r * n, w + at[j] + k * n, n);
    }
  }
  b.step();
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_INA_H_
