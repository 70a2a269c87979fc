// What several collectives' descriptors share (coll/collective.h).
#include "coll/collective.h"

#include <algorithm>

#include "coll/sim/expect.h"

namespace torusmpi::coll {

size_t Collective::count_for(size_t bytes, size_t elem, int p) const {
  return size_is == SizeIs::kWhole ? bytes / elem / p : bytes / elem;
}

double Collective::algbw_bytes(size_t bytes, int p) const {
  return static_cast<double>(bytes) * (size_is == SizeIs::kRankBlock ? p : 1);
}

namespace collectives {

uint64_t sum_of(const size_t* v, int n) {
  uint64_t s = 0;
  for (int i = 0; i < n; ++i) s += v[i];
  return s;
}

uint64_t span_of(const size_t* counts, const size_t* displs, int n) {
  uint64_t s = 0;
  for (int i = 0; i < n; ++i) {
    if (counts[i] > 0) s = std::max<uint64_t>(s, displs[i] + counts[i]);
  }
  return s;
}

uint64_t no_buffer(const Args&) { return kNoBuffer; }
uint64_t count_bytes(const Args& a) { return a.block_bytes(); }
uint64_t count_unless_in_place(const Args& a) { return a.in_place ? kNoBuffer : a.block_bytes(); }
uint64_t no_common_size(const Args&) { return 0; }

uint64_t own_count_unless_in_place(const Args& a) {
  return a.in_place ? kNoBuffer : a.counts[a.rank] * a.elem;
}

Region nothing_in_recv(const Args&) { return {}; }

Region own_block_if_in_place(const Args& a) {
  if (!a.in_place) return {};
  return {a.rank * a.block_bytes(), a.block_bytes()};
}

Region own_vblock_if_in_place(const Args& a) {
  if (!a.in_place) return {};
  return {a.displs[a.rank] * a.elem, a.counts[a.rank] * a.elem};
}

Region whole_if_in_place(const Args& a, uint64_t recv_bytes) {
  if (!a.in_place || recv_bytes == kNoBuffer) return {};
  return {0, recv_bytes};
}

Region count_if_in_place(const Args& a) { return whole_if_in_place(a, a.block_bytes()); }

void expect_nothing(const Args&, sim::Expect&) {}

void expect_reduction_of_all(const Args& a, sim::Expect& out) {
  out.reduction(0, a.block_bytes(), 0, a.size - 1, 0);
}

void expect_rank_blocks(const Args& a, sim::Expect& out) {
  const uint64_t blk = a.block_bytes();
  for (int q = 0; q < a.size; ++q) out.data(q * blk, blk, q, 0);
}

void expect_rank_vblocks(const Args& a, sim::Expect& out) {
  const uint64_t e = a.elem;
  for (int q = 0; q < a.size; ++q) out.data(a.displs[q] * e, a.counts[q] * e, q, 0);
}

int dest_index(const int* sources, int i, int to, const int* dests, int outdegree) {
  int k = 0;
  for (int x = 0; x < i; ++x) k += sources[x] == sources[i];
  int j = 0;
  for (int seen = 0; j < outdegree; ++j) {
    if (dests[j] == to && seen++ == k) break;
  }
  return j;
}

int sending_edge(const Args& a, int i, const sim::Expect& out) {
  const int s = a.sources[i];
  if (s < 0) return -1;
  const Args& from = out.args(s);
  const int j = dest_index(a.sources, i, a.rank, from.dests, from.outdegree);
  // An edge with no send: the schedule cannot match it, and says so.
  return j == from.outdegree ? -1 : j;
}

double bus_factor_one(int) { return 1; }
double bus_factor_ring(int p) { return (p - 1.0) / p; }

}  // namespace collectives
}  // namespace torusmpi::coll
