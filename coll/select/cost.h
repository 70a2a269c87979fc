// What the algorithms' cost functions are made of. Each algorithm's cost is written once, in its
// own file beside its `Cost =` comment (coll/<collective>/<collective>_<token>.cc); the pieces
// several of them share are here: the usual terms, the torus worked stage by stage, direct
// messages on the torus and across instances, the hierarchical algorithms' stages, and the
// calibration of the closed forms against the simulator (calibration.def).
#ifndef TORUSMPI_COLL_SELECT_COST_H_
#define TORUSMPI_COLL_SELECT_COST_H_

#include <vector>

#include "coll/patterns/hier.h"
#include "coll/select/registry.h"

namespace torusmpi::coll {

// The calibration: a factor on the per-byte terms of the torus algorithms' closed forms, one
// number per kind of algorithm, computed from the simulator (calibration.def says how;
// `torusmpi_sim --calibrate` writes it, coll_cost_test checks it is current). kRdhBytes,
// kTorusRingBytes, kDualRingBytes.
#define TORUSMPI_CALIBRATION(name, token, value) inline constexpr double name = value;
#include "coll/select/calibration.def"
#undef TORUSMPI_CALIBRATION

// The same table for the tools that compute it: the constant's name, the allreduce algorithm it
// is measured on, its value.
struct CalibrationFactor {
  const char* name;
  const char* token;
  double value;
};
inline constexpr CalibrationFactor kCalibration[] = {
#define TORUSMPI_CALIBRATION(name, token, value) {#name, token, value},
#include "coll/select/calibration.def"
#undef TORUSMPI_CALIBRATION
};

// The in-network aggregation switch (torusmpi_switch, the ina algorithms), as the cost model and
// the simulator price it: a member's data crosses its chip's NIC to the switch and the result
// comes back, in blocks pipelined through the window, so one stage of n bytes costs
//   2 a_e + a_s + n max(b_e, b_s)
// (a_e, b_e the network's, as for a message between instances; the switch adds its own latency
// and aggregates at its ports' rate). Figures, for a switch of the kind AWS's instances would meet:
//   latency     1 us      an aggregating switch's pass (NVIDIA's SHARP: about 1 us added to an
//                         allreduce of small messages on Quantum InfiniBand switches)
//   port        200 Gb/s  as the chip's EFA interface it faces (trn1: 8 x 100 Gb/s for 16 chips
//                         is 50 Gb/s each; trn2: 3.2 Tb/s for 16 chips is 200 Gb/s each)
//   aggregation the port's rate: Trio's packet engines add two 32-bit integers per 8 bytes at
//               line rate, and a reduction never slows the stream below it
struct SwitchFigures {
  double latency = 1e-6;
  double port_bandwidth = 200e9 / 8;  // bytes per second
};
inline constexpr SwitchFigures kSwitch{};
// One switch stage of n bytes per member, on a model whose instance figures are set.
double switch_stage_cost(const Model& m, double n);
// allreduce ina: the instance's reduce-scatter and allgather, and a switch stage between them on
// each rank's piece.
double ina_allreduce_cost(const Model& m, int p, double n);
// reduce_scatter ina on a vector of n bytes: the instance's reduce-scatter, a switch stage on the
// slot of each rank's group.
double ina_rs_cost(const Model& m, int p, double n);
// allgather ina of blocks of n bytes: a switch stage gathering N blocks, the instance's allgather
// of the whole.
double ina_allgather_cost(const Model& m, int p, double n);

// lg(p) is log2 rounded up; lg_floor(p) rounded down (p2 = 2^lg_floor(p), the largest power of
// two <= p); folds(p) is 1 when p is not a power of two, MPICH's fold before and after (f in the
// cost texts); frac(p) is (p-1)/p.
double lg(int p);
double lg_floor(int p);
double folds(int p);
double frac(int p);

// With more ranks than cores, a step that waits is a context switch (Model::switch_wait) however
// many messages it waits for, as long as each arrives whole (up to kWholeMessage bytes; a larger
// one comes in pieces, each of which may need the core again). A one-step algorithm whose closed
// form counts `steps` alphas, each with its switch, then waits `steps - 1` times less: this is
// what it saves. 4 ranks on 2 cores, medians of 3 alternating runs, direct against the choice
// before: reduce_scatter 1 KiB 2.41 us against 3.17, 64 KiB 14.7 against 17.5, but 1 MiB 299
// against 210 (pairwise); allgather 64 KiB 29.1 against 44.3.
constexpr double kWholeMessage = 16384;
double one_wait_saving(const Model& m, int steps, double message_bytes);

// The communicator fills its torus (the torus algorithms follow the links; otherwise they run as
// one ring); it spans two or more instances with as many ranks in each.
bool torus_shaped(const Model& m);
bool spans_instances(const Model& m);

// A shaped torus worked stage by stage (TorusModel figures): a stage has an extent e, one
// message's latency and the per-byte time of its busiest link, and works on n_i = n / (the
// earlier extents); each of `phases` passes (reduce-scatter, allgather) costs
// (e-1) a + ((e-1)/e) n_i b, and a reduction ((e-1)/e) n_i g. A torus axis's link is shared by
// the rings of the chip's cores, hence link_beta * cores.
struct TorusStage {
  int extent;
  double alpha, beta;
};
// The stages' cost; `bytes_factor` scales their per-byte terms (transfers and reductions): a
// calibration factor above.
double stages_cost(const Model& m, const std::vector<TorusStage>& stages, double n, int phases,
                   bool reduces, double bytes_factor = 1.0);
// torus_ring's stages: the chip's cores, then each dimension.
std::vector<TorusStage> axis_stages(const Model& m);
// rdh's: one stage of two per bit, when the torus is a hypercube under Gray labels; none else.
std::vector<TorusStage> cube_stages(const Model& m, int p);
// chip_ring's: the chip's cores, then the chips' ring.
std::vector<TorusStage> chip_ring_stages(const Model& m);

// dual_ring's: one ring of p on each of two cycles, each link carrying one ring's traffic on half
// the data; scaled by kDualRingBytes.
double dual_cost(const Model& m, int p, double n, int phases, bool reduces);

// The neighbourhood collectives' one step: the degree is not the cost model's to know, so it
// prices one neighbour's block; it weighs each against no other (each is its collective's only
// algorithm).
double neighbor_exchange_cost(const Model& m, int p, double n);

// Direct messages on the torus, `bytes_out` from each rank: the farthest is `diameter` hops; a
// message crosses `mean_hops` links on average, and a chip's 2 ndims outgoing links carry its
// cores' traffic.
double direct_cost(const Model& m, double bytes_out);
// Direct messages across instances, `bytes_out` from each of the p ranks, spread evenly over the
// p - 1 others: the network's latency once (the messages overlap), and each chip's interface
// carrying its ranks' off-instance share.
double net_direct_cost(const Model& m, int p, double bytes_out);

// bcast down chains of chunks (patterns/chain.h): k chunks over a chain of `len` ranks.
double chain_cost(double alpha, double beta, int len, double n);

// The hierarchical algorithms (patterns/hier.h): the instance's own stages on the whole vector,
// the network stages (of kind k) on each rank's piece of it; off the case they are for (the
// registry's restriction keeps them off it), the ring's cost. n as the collective's selection
// bytes: the vector for allreduce and the reduce-scatters, one block for allgather.
double hier_allreduce_cost(const Model& m, int p, double n, patterns::NetKind k);
double hier_allgather_cost(const Model& m, int p, double n, patterns::NetKind k);
double hier_rs_cost(const Model& m, int p, double n, patterns::NetKind k);

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_SELECT_COST_H_
