// Two-phase collective buffering: the plan. Pure functions of the ranks' file accesses, unit
// tested without processes (tests/unit/io_plan_test.cc); coll_io.cc carries a plan out.
//
// A collective access of p ranks, each touching a sorted list of byte extents of the file (its
// view applied to the call: file offsets only grow along a view, so the list is sorted and its
// bytes follow the order of the rank's packed data), is done by a few aggregators:
//
//   1. Aggregators: two ranks per node by default (the lowest two of each node), cb_nodes of
//      them when that hint is given (more than the nodes: a second rank of each node, and so on).
//   2. File domains: the byte range [lowest offset, highest end) that the call touches, over all
//      ranks, is cut into one contiguous domain per aggregator, the cuts aligned (kAlign) so that
//      domains start on page and block boundaries.
//   3. Rounds: an aggregator walks its domain cb_buffer_size bytes at a time. In round k of
//      aggregator a every rank sends a (writes; receives from a, reads) the bytes of its extents
//      that fall into the round's range: one contiguous slice of the rank's packed data, since
//      both are in file order. The aggregator places the pieces in its buffer and writes the
//      round's covered runs with one pwrite each (reads: one pread of the span the round's pieces
//      cover, holes included, as data sieving does).
//
// So a 3-D block decomposition, whose ranks' rows interleave finely in the file but together
// cover it, becomes one pwrite or pread of cb_buffer_size bytes per round, and each rank's share
// of a round travels as one message.
//
//     file  |a0 b0 c0 d0|a1 b1 c1 d1|a2 b2 c2 d2|a3 b3 c3 d3|   rows of ranks a..d, interleaved
//     domain of aggregator 0 ------------|---- aggregator 1 -----
//     round 0 of agg 0: a0 b0 c0 d0 a1 b1 -> one pwrite; a sends agg 0 "a0 a1" (one message)
//
// Cost per round: one message per rank and aggregator, one file call per covered run.
#ifndef TORUSMPI_IO_TWO_PHASE_H_
#define TORUSMPI_IO_TWO_PHASE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "io/view.h"  // Extent

namespace torusmpi::io {

// Domain cuts are multiples of this (absolute file offsets), unless a domain would be smaller.
constexpr int64_t kAlign = 64 * 1024;

// Aggregators per node when cb_nodes is not given. ROMIO has one; two placed the round buffers'
// copies and file calls of a node on two cores (osu_io, 4 ranks of one node, 1-8 MiB on tmpfs:
// write_all and read_all 1.2-1.5 times one aggregator's bandwidth), and with one, the other ranks
// of the node wait idle while the aggregator copies every byte twice.
constexpr int kAggregatorsPerNode = 2;

// The aggregators: ranks of the communicator, from node_of[r] (rank r's node; any numbering) and
// cb_nodes (0 or less: kAggregatorsPerNode per node, as far as the node has ranks). Ordered by
// node of first appearance, then rank; at most node_of.size() of them.
std::vector<int> choose_aggregators(const std::vector<int>& node_of, int cb_nodes);

// The file domains of naggr aggregators over [begin, end), walked cb bytes a round.
struct Domains {
  int64_t cb = 0;
  std::vector<int64_t> bounds;  // naggr + 1 cuts: aggregator a has [bounds[a], bounds[a + 1])

  int count() const { return static_cast<int>(bounds.size()) - 1; }
  int64_t begin(int a) const { return bounds[a]; }
  int64_t end(int a) const { return bounds[a + 1]; }
  int rounds(int a) const;
  // Round k of aggregator a: [round_begin, round_end).
  int64_t round_begin(int a, int k) const { return bounds[a] + k * cb; }
  int64_t round_end(int a, int k) const;
  // The aggregator whose domain holds byte off (begin <= off < end).
  int owner(int64_t off) const;
  int max_rounds() const;
};
// begin == end (no byte is touched): every domain is empty. cb >= 1.
Domains split_domains(int64_t begin, int64_t end, int naggr, int64_t cb);

// A piece of a rank's access inside one round: file bytes [off, off + len), at `pos` in the
// rank's packed data.
struct Piece {
  int64_t off = 0;
  int64_t len = 0;
  int64_t pos = 0;
};
// What one rank exchanges with aggregator `agg` in its round `round`: packed bytes [pos, pos +
// bytes) of the rank, which are pieces [first, first + count) of the plan.
struct Slice {
  int agg = 0;
  int round = 0;
  int64_t pos = 0;
  int64_t bytes = 0;
  size_t first = 0;
  size_t count = 0;
};
struct RankPlan {
  std::vector<Piece> pieces;  // in file order
  std::vector<Slice> slices;  // in file order: by aggregator, then round; none is empty
  int64_t bytes = 0;          // all of the rank's bytes
};
// A rank's part of the call: its extents (sorted, not overlapping), cut by domain and round.
// `first_pos` is where extents[0] starts in its packed data (0, or an aggregator's count of the
// bytes it has from that rank before these extents).
RankPlan plan_rank(const std::vector<Extent>& extents, const Domains& d, int64_t first_pos = 0);

// The extents of a rank that fall into aggregator a's domain, clipped to it: what the rank tells
// the aggregator, which plans them with plan_rank to place each round's message.
std::vector<Extent> clip(const std::vector<Extent>& extents, int64_t begin, int64_t end);

// The runs a round's pieces (of every rank, any order) cover: sorted, adjacent and overlapping
// pieces merged. A write makes one pwrite per run.
std::vector<Extent> covered_runs(std::vector<Extent> pieces);

// Whether collective buffering pays for this access (ROMIO's "automatic"): the ranks' ranges
// interleave, i.e. some rank's [lo, hi) overlaps another's. ranges: per rank, {lo, hi - lo};
// empty ranges (len 0) are left out.
bool interleaved(const std::vector<Extent>& ranges);

}  // namespace torusmpi::io

#endif  // TORUSMPI_IO_TWO_PHASE_H_
