#include "coll/select/registry.h"

#include <algorithm>
#include <cmath>

#include "coll/algorithms.h"
#include "coll/patterns/hier.h"

namespace torusmpi::coll {
namespace {

// Cost helpers: lg is log2 rounded up; f is 1 when p is not a power of two (a fold before and
// after); frac is (p-1)/p.
double lg(int p) { return p <= 1 ? 0 : std::ceil(std::log2(p)); }
double lg_floor(int p) { return p <= 1 ? 0 : std::floor(std::log2(p)); }
double f(int p) { return (p & (p - 1)) == 0 ? 0 : 1; }
double frac(int p) { return (p - 1.0) / p; }

// The torus algorithms' costs (TorusModel figures). A shaped torus is worked stage by stage: a
// stage has an extent e, one message's latency and the per-byte time of its busiest link, and
// works on n_i = n / (the earlier extents); each of `phases` passes (reduce-scatter, allgather)
// costs (e-1) a + ((e-1)/e) n_i b, and a reduction ((e-1)/e) n_i g. A torus axis's link is shared
// by the rings of the chip's cores, hence link_beta * cores.
struct TorusStage {
  int extent;
  double alpha, beta;
};
bool torus_shaped(const Model& m) { return m.torus != nullptr && m.torus->shaped; }
bool spans_instances(const Model& m) { return m.torus != nullptr && m.torus->instances > 1; }
TorusStage chip_stage(const Model& m, int e) { return {e, m.torus->chip_alpha, m.torus->chip_beta}; }
TorusStage link_stage(const Model& m, int e) {
  return {e, m.torus->hop_alpha, m.torus->link_beta * m.torus->cores};
}
// What the closed forms miss, measured against the simulator (coll/sim: per-link queues, ports,
// reductions overlapping other ranks' transfers) on trn2.48xl and trn2u at 64 MiB and 1 GiB,
// where the per-byte terms decide: the simulated time of the per-byte part over the closed
// form's. rdh's pairwise exchanges keep both directions of a link busy and its later stages
// overlap across chips; torus_ring's rings use one direction of each axis; dual_ring's 2(p-1)
// steps each wait for the reduction of the step before, which its formula counts apart.
constexpr double kRdhBytes = 0.65;
constexpr double kTorusRingBytes = 0.86;
constexpr double kDualRingBytes = 1.28;

// The stages' cost; `bytes_factor` scales their per-byte terms (transfers and reductions).
double stages_cost(const Model& m, const std::vector<TorusStage>& st, double n, int phases,
                   bool reduces, double bytes_factor = 1.0) {
  double t = 0;
  for (const TorusStage& s : st) {
    if (s.extent <= 1) continue;
    t += phases * (s.extent - 1) * s.alpha;
    t += bytes_factor * phases * frac(s.extent) * n * s.beta;
    if (reduces) t += bytes_factor * frac(s.extent) * n * m.torus->gamma;
    n /= s.extent;
  }
  return t;
}
int torus_chips(const Model& m) { return m.torus->dims[0] * m.torus->dims[1] * m.torus->dims[2]; }
// torus_ring: cores, then each dimension.
std::vector<TorusStage> axis_stages(const Model& m) {
  std::vector<TorusStage> st = {chip_stage(m, m.torus->cores)};
  for (int k = 0; k < m.torus->ndims; ++k) st.push_back(link_stage(m, m.torus->dims[k]));
  return st;
}
// rdh: one stage of two per bit, when the torus is a hypercube under Gray labels; none else.
std::vector<TorusStage> cube_stages(const Model& m, int p) {
  std::vector<TorusStage> st;
  bool cube = (p & (p - 1)) == 0 && (m.torus->cores & (m.torus->cores - 1)) == 0;
  for (int k = 0; k < m.torus->ndims; ++k) cube = cube && (m.torus->dims[k] <= 2 || m.torus->dims[k] == 4);
  if (!cube) return st;
  for (int c = m.torus->cores; c > 1; c /= 2) st.push_back(chip_stage(m, 2));
  for (int k = 0; k < m.torus->ndims; ++k) {
    for (int d = m.torus->dims[k]; d > 1; d /= 2) st.push_back(link_stage(m, 2));
  }
  return st;
}
// chip_ring: the chip's cores, then the chips' ring.
std::vector<TorusStage> chip_ring_stages(const Model& m) {
  return {chip_stage(m, m.torus->cores), link_stage(m, torus_chips(m))};
}
// dual_ring: one ring of p on each of two cycles, each link carrying one ring's traffic on half
// the data.
double dual_cost(const Model& m, int p, double n, int phases, bool reduces) {
  const double bytes = phases * frac(p) * (n / 2) * m.torus->link_beta +
                       (reduces ? frac(p) * n * m.torus->gamma : 0);
  return phases * (p - 1) * m.torus->hop_alpha + kDualRingBytes * bytes;
}
// Direct messages on the torus: the farthest is `diameter` hops; a message crosses `mean_hops`
// links on average, and a chip's 2 ndims outgoing links carry its cores' traffic.
double direct_cost(const Model& m, double bytes_out) {
  double diameter = 0, mean_hops = 0;
  for (int k = 0; k < m.torus->ndims; ++k) {
    diameter += m.torus->dims[k] / 2;
    mean_hops += m.torus->dims[k] / 4.0;
  }
  const double links = std::max(1, 2 * m.torus->ndims);
  return std::max(1.0, diameter) * m.torus->hop_alpha +
         m.torus->cores * bytes_out * std::max(1.0, mean_hops) / links * m.torus->link_beta;
}
// Direct messages across instances, `bytes_out` from each of the p ranks, spread evenly over the
// p - 1 others: the network's latency once (the messages overlap), and each chip's interface
// carrying its ranks' off-instance share, (p - q) of the p - 1 destinations for q ranks an
// instance (not (N-1)/N of them: at 2 x 2 ranks that priced direct's network bytes at 3/4 of theirs).
double net_direct_cost(const Model& m, int p, double bytes_out) {
  const TorusModel& t = *m.torus;
  const double off = (p - static_cast<double>(p) / t.instances) / std::max(1, p - 1);
  return t.efa_alpha + off * bytes_out * t.efa_beta;
}
// bcast down chains of chunks (patterns/chain.h): k chunks over a chain of `len` ranks.
double chain_cost(double alpha, double beta, int len, double n) {
  const double k = std::min(64.0, std::max(1.0, std::floor(n / 32768)));
  return (k + len - 2) * (alpha + n / k * beta);
}
double ring_allreduce_cost(const Model& m, int p, double n) {
  return 2 * (p - 1) * m.alpha + 2 * frac(p) * n * m.beta + frac(p) * n * m.gamma;
}
double rabenseifner_cost(const Model& m, int p, double n) {
  return 2 * lg_floor(p) * m.alpha + (2 * frac(p) + f(p)) * n * m.beta +
         (frac(p) + f(p)) * n * m.gamma;
}
double ring_rs_cost(const Model& m, int p, double n) {
  return 2 * (p - 1) * m.alpha + frac(p) * n * (m.beta + m.gamma);
}
double halving_rs_cost(const Model& m, int p, double n) {
  return lg_floor(p) * m.alpha + (frac(p) + f(p)) * n * (m.beta + m.gamma);
}
double bcast_classic_cost(const Model& m, int p, double n) {
  return std::min(lg(p) * (m.alpha + n * m.beta),
                  (lg(p) + p - 1) * m.alpha + 2 * frac(p) * n * m.beta);
}

// The torus algorithms' reduce-scatter costs, the same for the vector and the block form (n: the
// whole vector).
double rs_torus_ring_cost(const Model& m, int p, double n) {
  return torus_shaped(m) ? stages_cost(m, axis_stages(m), n, 1, true, kTorusRingBytes)
                         : ring_rs_cost(m, p, n);
}
double rs_dual_ring_cost(const Model& m, int p, double n) {
  return torus_shaped(m) ? dual_cost(m, p, n, 1, true) : ring_rs_cost(m, p, n);
}
double rs_rdh_cost(const Model& m, int p, double n) {
  if (torus_shaped(m) && !cube_stages(m, p).empty()) {
    return stages_cost(m, cube_stages(m, p), n, 1, true, kRdhBytes);
  }
  return halving_rs_cost(m, p, n);
}
double rs_direct_cost(const Model& m, int p, double n) {
  if (spans_instances(m)) return net_direct_cost(m, p, frac(p) * n) + frac(p) * n * m.gamma;
  return torus_shaped(m) ? direct_cost(m, frac(p) * n) + frac(p) * n * m.torus->gamma
                         : (p - 1) * m.alpha + frac(p) * n * (m.beta + m.gamma);
}
double rs_chip_ring_cost(const Model& m, int p, double n) {
  return torus_shaped(m) ? stages_cost(m, chip_ring_stages(m), n, 1, true) : ring_rs_cost(m, p, n);
}

// The hierarchical algorithms (patterns/hier.h): the instance's own stages on the whole vector,
// the network stages on each rank's piece of it (n / q, q ranks per instance), every rank of an
// instance sending at once, so a chip's NIC carries its ranks' pieces (efa_beta). A pass of the
// network stages takes N-1 messages in a ring, lg of N's power of two (+1 for an odd rest)
// halving, one direct; the direct stage's N-1 messages overlap on the NIC.
using patterns::NetKind;
// The instance's stages: torus_ring's on a full torus, else one ring with its flat figures.
double instance_cost(const Model& m, int q, double n, int phases, bool reduces) {
  const TorusModel& t = *m.torus;
  if (t.instance_shaped) {
    TorusModel one = t;
    one.shaped = true;
    one.cores = t.instance_cores;
    Model within = m;
    within.torus = &one;
    return stages_cost(within, axis_stages(within), n, phases, reduces, kTorusRingBytes);
  }
  return phases * (q - 1) * t.instance_alpha + phases * frac(q) * n * t.instance_beta +
         (reduces ? frac(q) * n * m.gamma : 0);
}
double net_cost(const Model& m, NetKind k, double piece, int phases, bool reduces) {
  const TorusModel& t = *m.torus;
  const int n = t.instances;
  double steps = n - 1;
  if (k == NetKind::kDirect) steps = 1;
  if (k == NetKind::kHalving) {
    int odd = n;
    for (steps = 0; odd % 2 == 0; odd /= 2) ++steps;
    steps += odd > 1 ? 1 : 0;
  }
  return phases * steps * t.efa_alpha + phases * frac(n) * piece * t.efa_beta +
         (reduces ? frac(n) * piece * m.gamma : 0);
}
// Off the case they are for (the registry's restriction keeps them off), the ring's cost.
double hier_allreduce_cost(const Model& m, int p, double n, NetKind k) {
  if (!spans_instances(m)) return ring_allreduce_cost(m, p, n);
  const int q = p / m.torus->instances;
  return instance_cost(m, q, n, 2, true) + net_cost(m, k, n / q, 2, true);
}
double hier_allgather_cost(const Model& m, int p, double n, NetKind k) {
  if (!spans_instances(m)) return (p - 1) * (m.alpha + n * m.beta);
  const int q = p / m.torus->instances;
  return net_cost(m, k, m.torus->instances * n, 1, false) + instance_cost(m, q, p * n, 1, false);
}
double hier_rs_cost(const Model& m, int p, double n, NetKind k) {
  if (!spans_instances(m)) return ring_rs_cost(m, p, n);
  const int q = p / m.torus->instances;
  return instance_cost(m, q, n, 1, true) + net_cost(m, k, n / q, 1, true);
}
double rs_instance_ring_cost(const Model& m, int p, double n) {
  return hier_rs_cost(m, p, n, NetKind::kRing);
}
double rs_instance_rdh_cost(const Model& m, int p, double n) {
  return hier_rs_cost(m, p, n, NetKind::kHalving);
}
double rs_instance_direct_cost(const Model& m, int p, double n) {
  return hier_rs_cost(m, p, n, NetKind::kDirect);
}
constexpr unsigned kHierReduces = kNeedsCommutative | kNeedsInstances;

// allreduce recursive_doubling across instances of q ranks each, p a power of two: ranks fill the
// instances in order, so its rounds with rank^2^k, 2^k < q, stay in the instance (the instance's
// figures) and the lg(N) others cross the network, every rank at once (the average pair's alpha
// would price every round as a network one).
double rd_instances_cost(const Model& m, int p, double n) {
  const TorusModel& t = *m.torus;
  const double across = lg_floor(t.instances), within = lg_floor(p) - across;
  return within * (t.instance_alpha + n * t.instance_beta) +
         across * (t.efa_alpha + n * t.efa_beta) +
         lg_floor(p) * n * m.gamma;
}

const std::vector<Algorithm> kAlgorithms = {
    // barrier
    {Coll::kBarrier, "dissemination", barrier_dissemination, 0, "Cost = lg(p) a",
     [](const Model& m, int p, double) { return lg(p) * m.alpha; },
     "round k: signal rank+2^k, hear from rank-2^k"},

    // bcast
    {Coll::kBcast, "binomial", bcast_binomial, 0, "Cost = lg(p) (a + n b)",
     [](const Model& m, int p, double n) { return lg(p) * (m.alpha + n * m.beta); },
     "binomial tree from the root"},
    {Coll::kBcast, "scatter_allgather", bcast_scatter_allgather, 0,
     "Cost = (lg(p) + p-1) a + 2((p-1)/p) n b",
     [](const Model& m, int p, double n) {
       return (lg(p) + p - 1) * m.alpha + 2 * frac(p) * n * m.beta;
     },
     "binomial scatter of p blocks, then a ring allgather (van de Geijn)"},
    {Coll::kBcast, "torus_ring", bcast_torus_ring, 0, "Cost = (k + L - 2)(a + (n/k) b)",
     [](const Model& m, int p, double n) {
       if (torus_shaped(m)) return chain_cost(m.torus->hop_alpha, m.torus->link_beta, p / 2 + 1, n);
       return std::max(chain_cost(m.alpha, m.beta, p, n), bcast_classic_cost(m, p, n));
     },
     "chunks pipelined down two chains of links from the root"},
    {Coll::kBcast, "dual_ring", bcast_dual_ring, 0, "Cost = (k + p - 2)(a + (n/2k) b)",
     [](const Model& m, int p, double n) {
       if (torus_shaped(m)) return chain_cost(m.torus->hop_alpha, m.torus->link_beta, p, n / 2);
       return std::max(chain_cost(m.alpha, m.beta, p, n / 2), bcast_classic_cost(m, p, n));
     },
     "half the vector pipelined down each of two link-disjoint Hamiltonian cycles"},

    // reduce
    {Coll::kReduce, "binomial", reduce_binomial, 0, "Cost = lg(p) (a + n b + n g)",
     [](const Model& m, int p, double n) { return lg(p) * (m.alpha + n * m.beta + n * m.gamma); },
     "binomial tree to the root (non-commutative ops: trees laid over rank order)"},
    {Coll::kReduce, "rabenseifner", reduce_rabenseifner, kNeedsCommutative,
     "Cost = 2 lg(p2) a + (2((p-1)/p) + f) n b + ((p-1)/p + f) n g",
     [](const Model& m, int p, double n) {
       return 2 * lg_floor(p) * m.alpha + (2 * frac(p) + f(p)) * n * m.beta +
              (frac(p) + f(p)) * n * m.gamma;
     },
     "recursive-halving reduce-scatter, then a binomial gather of the blocks to the root"},

    // allreduce
    {Coll::kAllreduce, "recursive_doubling", allreduce_recursive_doubling, 0,
     "Cost = (lg(p2) + 2f) a + n (lg(p2) + 2f) b + n (lg(p2) + f) g",
     [](const Model& m, int p, double n) {
       if (spans_instances(m) && f(p) == 0) return rd_instances_cost(m, p, n);
       double steps = lg_floor(p) + 2 * f(p);
       return steps * (m.alpha + n * m.beta) + (lg_floor(p) + f(p)) * n * m.gamma;
     },
     "swap whole vectors with rank^2^k, lg(p) rounds"},
    {Coll::kAllreduce, "ring", allreduce_ring, kNeedsCommutative,
     "Cost = 2(p-1) a + 2((p-1)/p) n b + ((p-1)/p) n g",
     [](const Model& m, int p, double n) {
       return 2 * (p - 1) * m.alpha + 2 * frac(p) * n * m.beta + frac(p) * n * m.gamma;
     },
     "ring reduce-scatter, then ring allgather"},
    {Coll::kAllreduce, "rabenseifner", allreduce_rabenseifner, kNeedsCommutative,
     "Cost = 2 lg(p2) a + (2((p-1)/p) + f) n b + ((p-1)/p + f) n g",
     [](const Model& m, int p, double n) {
       return 2 * lg_floor(p) * m.alpha + (2 * frac(p) + f(p)) * n * m.beta +
              (frac(p) + f(p)) * n * m.gamma;
     },
     "recursive-halving reduce-scatter, then recursive-doubling allgather; extra ranks fold "
     "into the first and last rounds"},
    {Coll::kAllreduce, "reduce_bcast", allreduce_reduce_bcast, 0,
     "Cost = 2 lg(p) (a + n b) + lg(p) n g",
     [](const Model& m, int p, double n) {
       return 2 * lg(p) * (m.alpha + n * m.beta) + lg(p) * n * m.gamma;
     },
     "binomial reduce to rank 0, then binomial bcast"},
    {Coll::kAllreduce, "torus_ring", allreduce_torus_ring, kNeedsCommutative,
     "Cost = sum_k 2(e_k-1) a_k + 2((e_k-1)/e_k) n_k b_k + ((e_k-1)/e_k) n_k g",
     [](const Model& m, int p, double n) {
       return torus_shaped(m) ? stages_cost(m, axis_stages(m), n, 2, true, kTorusRingBytes)
                              : ring_allreduce_cost(m, p, n);
     },
     "per-axis rings: reduce-scatter along cores, x, y, z, then allgather back"},
    {Coll::kAllreduce, "dual_ring", allreduce_dual_ring, kNeedsCommutative,
     "Cost = 2(p-1) a + 2((p-1)/p)(n/2) b + ((p-1)/p) n g",
     [](const Model& m, int p, double n) {
       return torus_shaped(m) ? dual_cost(m, p, n, 2, true) : ring_allreduce_cost(m, p, n);
     },
     "ring allreduce of each half of the vector over two link-disjoint Hamiltonian cycles"},
    {Coll::kAllreduce, "rdh", allreduce_rdh, kNeedsCommutative,
     "Cost = 2 lg(p) a + 2((p-1)/p) n b + ((p-1)/p) n g",
     [](const Model& m, int p, double n) {
       if (torus_shaped(m) && !cube_stages(m, p).empty()) {
         return stages_cost(m, cube_stages(m, p), n, 2, true, kRdhBytes);
       }
       return rabenseifner_cost(m, p, n);
     },
     "recursive halving, then doubling, over the torus as a hypercube (Gray labels)"},
    {Coll::kAllreduce, "direct", allreduce_direct, 0,
     "Cost = 2(p-1) a + 2((p-1)/p) n b + ((p-1)/p) n g (messages of a step overlap)",
     [](const Model& m, int p, double n) {
       if (spans_instances(m)) return 2 * net_direct_cost(m, p, frac(p) * n) + frac(p) * n * m.gamma;
       return torus_shaped(m) ? 2 * direct_cost(m, frac(p) * n) + frac(p) * n * m.torus->gamma
                              : ring_allreduce_cost(m, p, n);
     },
     "direct: block j to rank j in one step, fold in rank order, reduced blocks to all"},
    {Coll::kAllreduce, "chip_ring", allreduce_chip_ring, kNeedsCommutative,
     "Cost = 2(c-1) a_c + 2((c-1)/c) n b_c + 2(C-1) a + 2((C-1)/C)(n/c) c b + ((p-1)/p) n g",
     [](const Model& m, int p, double n) {
       return torus_shaped(m) ? stages_cost(m, chip_ring_stages(m), n, 2, true)
                              : ring_allreduce_cost(m, p, n);
     },
     "reduce-scatter in each chip, ring allreduce across chips per core, allgather in the chip"},

    {Coll::kAllreduce, "instance_ring", allreduce_instance_ring, kHierReduces,
     "Cost = T_rs(q) + T_ag(q) + 2(N-1) a_e + 2((N-1)/N)(n/q) c b_e + ((N-1)/N)(n/q) g",
     [](const Model& m, int p, double n) { return hier_allreduce_cost(m, p, n, NetKind::kRing); },
     "reduce-scatter in each instance, ring allreduce of each piece across the instances, "
     "allgather in each instance"},
    {Coll::kAllreduce, "instance_rdh", allreduce_instance_rdh, kHierReduces,
     "Cost = T_rs(q) + T_ag(q) + 2 lg(N) a_e + 2((N-1)/N)(n/q) c b_e + ((N-1)/N)(n/q) g",
     [](const Model& m, int p, double n) {
       return hier_allreduce_cost(m, p, n, NetKind::kHalving);
     },
     "reduce-scatter in each instance, recursive halving/doubling of each piece across the "
     "instances, allgather in each instance"},
    {Coll::kAllreduce, "instance_direct", allreduce_instance_direct, kHierReduces,
     "Cost = T_rs(q) + T_ag(q) + 2 a_e + 2((N-1)/N)(n/q) c b_e + ((N-1)/N)(n/q) g",
     [](const Model& m, int p, double n) { return hier_allreduce_cost(m, p, n, NetKind::kDirect); },
     "reduce-scatter in each instance, direct allreduce of each piece across the instances, "
     "allgather in each instance"},

    // allgather (n: one rank's block)
    {Coll::kAllgather, "ring", allgather_ring, 0, "Cost = (p-1) a + (p-1) n b",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "pass blocks around the ring, p-1 steps"},
    {Coll::kAllgather, "recursive_doubling", allgather_recursive_doubling, 0,
     "Cost = (lg(p2) + 2f) a + (p-1) n b (+ f p n b)",
     [](const Model& m, int p, double n) {
       return (lg_floor(p) + 2 * f(p)) * m.alpha + (p - 1 + f(p) * p) * n * m.beta;
     },
     "swap all blocks gathered so far with rank^2^k"},
    {Coll::kAllgather, "bruck", allgather_bruck, 0, "Cost = lg(p) a + (p-1) n b",
     [](const Model& m, int p, double n) { return lg(p) * m.alpha + (p - 1) * n * m.beta; },
     "Bruck: round k sends the 2^k blocks gathered so far to rank-2^k, in place (no rotation)"},
    {Coll::kAllgather, "torus_ring", allgather_torus_ring, 0,
     "Cost = sum_k (e_k-1) a_k + (e_k-1) m_k n b_k",
     [](const Model& m, int p, double n) {
       return torus_shaped(m) ? stages_cost(m, axis_stages(m), p * n, 1, false, kTorusRingBytes)
                              : (p - 1) * (m.alpha + n * m.beta);
     },
     "per-axis rings: z, y, x, then the chip's cores, each passing what the later gathered"},
    {Coll::kAllgather, "dual_ring", allgather_dual_ring, 0, "Cost = (p-1) a + (p-1)(n/2) b",
     [](const Model& m, int p, double n) {
       return torus_shaped(m) ? dual_cost(m, p, p * n, 1, false) : (p - 1) * (m.alpha + n * m.beta);
     },
     "each half of every block round one of two link-disjoint Hamiltonian cycles"},
    {Coll::kAllgather, "rdh", allgather_rdh, 0, "Cost = lg(p) a + (p-1) n b",
     [](const Model& m, int p, double n) {
       if (torus_shaped(m) && !cube_stages(m, p).empty()) {
         return stages_cost(m, cube_stages(m, p), p * n, 1, false, kRdhBytes);
       }
       return (lg_floor(p) + 2 * f(p)) * m.alpha + (p - 1 + f(p) * p) * n * m.beta;
     },
     "recursive doubling over the torus as a hypercube (Gray labels)"},
    {Coll::kAllgather, "direct", allgather_direct, 0,
     "Cost = (p-1) a + (p-1) n b (messages of the step overlap)",
     [](const Model& m, int p, double n) {
       if (spans_instances(m)) return net_direct_cost(m, p, (p - 1) * n);
       return torus_shaped(m) ? direct_cost(m, (p - 1) * n) : (p - 1) * (m.alpha + n * m.beta);
     },
     "direct: every block to every rank in one step"},
    {Coll::kAllgather, "chip_ring", allgather_chip_ring, 0,
     "Cost = (C-1) a + (C-1) n c b + (c-1) a_c + (c-1) C n b_c",
     [](const Model& m, int p, double n) {
       return torus_shaped(m) ? stages_cost(m, chip_ring_stages(m), p * n, 1, false)
                              : (p - 1) * (m.alpha + n * m.beta);
     },
     "ring across the chips per core, then the chip's cores swap what they gathered"},
    {Coll::kAllgather, "instance_ring", allgather_instance_ring, kNeedsInstances,
     "Cost = (N-1) a_e + (N-1) n c b_e + T_ag(q) on blocks of N n",
     [](const Model& m, int p, double n) { return hier_allgather_cost(m, p, n, NetKind::kRing); },
     "ring across the instances per place, then the instance's own allgather"},
    {Coll::kAllgather, "instance_rdh", allgather_instance_rdh, kNeedsInstances,
     "Cost = lg(N) a_e + (N-1) n c b_e + T_ag(q) on blocks of N n",
     [](const Model& m, int p, double n) {
       return hier_allgather_cost(m, p, n, NetKind::kHalving);
     },
     "recursive doubling across the instances per place, then the instance's own allgather"},
    {Coll::kAllgather, "instance_direct", allgather_instance_direct, kNeedsInstances,
     "Cost = a_e + (N-1) n c b_e + T_ag(q) on blocks of N n",
     [](const Model& m, int p, double n) { return hier_allgather_cost(m, p, n, NetKind::kDirect); },
     "direct exchange across the instances per place, then the instance's own allgather"},
    {Coll::kAllgatherv, "ring", allgatherv_ring, 0, "Cost = (p-1) a + (p-1) n b",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "pass blocks around the ring, p-1 steps"},

    // reduce_scatter (n: the whole vector)
    {Coll::kReduceScatter, "pairwise", reduce_scatter_pairwise, 0,
     "Cost = (p-1) a + ((p-1)/p) n b + (n/p) g",
     [](const Model& m, int p, double n) {
       return (p - 1) * m.alpha + frac(p) * n * m.beta + n / p * m.gamma;
     },
     "step k: send rank+k its block, get ours from rank-k; folded in rank order as they come"},
    {Coll::kReduceScatter, "ring", reduce_scatter_ring, kNeedsCommutative,
     "Cost = 2(p-1) a + ((p-1)/p) n b + ((p-1)/p) n g",
     [](const Model& m, int p, double n) {
       return 2 * (p - 1) * m.alpha + frac(p) * n * (m.beta + m.gamma);
     },
     "pass partial blocks around the ring, p-1 steps"},
    {Coll::kReduceScatter, "recursive_halving", reduce_scatter_recursive_halving,
     kNeedsCommutative, "Cost = lg(p2) a + ((p-1)/p + f) n (b + g)",
     [](const Model& m, int p, double n) {
       return lg_floor(p) * m.alpha + (frac(p) + f(p)) * n * (m.beta + m.gamma);
     },
     "halve the vector with rank^2^k each round"},
    {Coll::kReduceScatter, "torus_ring", reduce_scatter_torus_ring, kNeedsCommutative,
     "Cost = sum_k (e_k-1) a_k + ((e_k-1)/e_k) n_k (b_k + g)",
     rs_torus_ring_cost,
     "per-axis reduce-scatter rings: along the chip's cores, then x, y, z"},
    {Coll::kReduceScatter, "dual_ring", reduce_scatter_dual_ring, kNeedsCommutative,
     "Cost = (p-1) a + ((p-1)/p)(n/2) b + ((p-1)/p) n g",
     rs_dual_ring_cost,
     "each half of every block reduced round one of two link-disjoint Hamiltonian cycles"},
    {Coll::kReduceScatter, "rdh", reduce_scatter_rdh, kNeedsCommutative,
     "Cost = lg(p) a + ((p-1)/p) n (b + g)",
     rs_rdh_cost,
     "recursive halving over the torus as a hypercube (Gray labels)"},
    {Coll::kReduceScatter, "direct", reduce_scatter_direct, 0,
     "Cost = (p-1) a + ((p-1)/p) n b + ((p-1)/p) n g (messages of the step overlap)",
     rs_direct_cost,
     "direct: block j to rank j in one step, folded in rank order"},
    {Coll::kReduceScatter, "chip_ring", reduce_scatter_chip_ring, kNeedsCommutative,
     "Cost = (c-1) a_c + ((c-1)/c) n b_c + (C-1) a + ((C-1)/C) n b + ((p-1)/p) n g",
     rs_chip_ring_cost,
     "reduce-scatter in each chip, then rings of same-core ranks across the chips"},
    {Coll::kReduceScatter, "instance_ring", reduce_scatter_instance_ring, kHierReduces,
     "Cost = T_rs(q) + (N-1) a_e + ((N-1)/N)(n/q)(c b_e + g)",
     rs_instance_ring_cost,
     "reduce-scatter in each instance, then rings across the instances per place"},
    {Coll::kReduceScatter, "instance_rdh", reduce_scatter_instance_rdh, kHierReduces,
     "Cost = T_rs(q) + lg(N) a_e + ((N-1)/N)(n/q)(c b_e + g)",
     rs_instance_rdh_cost,
     "reduce-scatter in each instance, then recursive halving across the instances per place"},
    {Coll::kReduceScatter, "instance_direct", reduce_scatter_instance_direct, kHierReduces,
     "Cost = T_rs(q) + a_e + ((N-1)/N)(n/q)(c b_e + g)",
     rs_instance_direct_cost,
     "reduce-scatter in each instance, then direct exchanges across the instances per place"},
    {Coll::kReduceScatterBlock, "pairwise", reduce_scatter_block_pairwise, 0,
     "Cost = (p-1) a + ((p-1)/p) n b + (n/p) g",
     [](const Model& m, int p, double n) {
       return (p - 1) * m.alpha + frac(p) * n * m.beta + n / p * m.gamma;
     },
     "step k: send rank+k its block, get ours from rank-k; folded in rank order as they come"},
    {Coll::kReduceScatterBlock, "ring", reduce_scatter_block_ring, kNeedsCommutative,
     "Cost = 2(p-1) a + ((p-1)/p) n b + ((p-1)/p) n g",
     [](const Model& m, int p, double n) {
       return 2 * (p - 1) * m.alpha + frac(p) * n * (m.beta + m.gamma);
     },
     "pass partial blocks around the ring, p-1 steps"},
    {Coll::kReduceScatterBlock, "recursive_halving", reduce_scatter_block_recursive_halving,
     kNeedsCommutative, "Cost = lg(p2) a + ((p-1)/p + f) n (b + g)",
     [](const Model& m, int p, double n) {
       return lg_floor(p) * m.alpha + (frac(p) + f(p)) * n * (m.beta + m.gamma);
     },
     "halve the vector with rank^2^k each round"},
    {Coll::kReduceScatterBlock, "torus_ring", reduce_scatter_block_torus_ring, kNeedsCommutative,
     "Cost = sum_k (e_k-1) a_k + ((e_k-1)/e_k) n_k (b_k + g)",
     rs_torus_ring_cost,
     "per-axis reduce-scatter rings: along the chip's cores, then x, y, z"},
    {Coll::kReduceScatterBlock, "dual_ring", reduce_scatter_block_dual_ring, kNeedsCommutative,
     "Cost = (p-1) a + ((p-1)/p)(n/2) b + ((p-1)/p) n g",
     rs_dual_ring_cost,
     "each half of every block reduced round one of two link-disjoint Hamiltonian cycles"},
    {Coll::kReduceScatterBlock, "rdh", reduce_scatter_block_rdh, kNeedsCommutative,
     "Cost = lg(p) a + ((p-1)/p) n (b + g)",
     rs_rdh_cost,
     "recursive halving over the torus as a hypercube (Gray labels)"},
    {Coll::kReduceScatterBlock, "direct", reduce_scatter_block_direct, 0,
     "Cost = (p-1) a + ((p-1)/p) n b + ((p-1)/p) n g (messages of the step overlap)",
     rs_direct_cost,
     "direct: block j to rank j in one step, folded in rank order"},
    {Coll::kReduceScatterBlock, "chip_ring", reduce_scatter_block_chip_ring, kNeedsCommutative,
     "Cost = (c-1) a_c + ((c-1)/c) n b_c + (C-1) a + ((C-1)/C) n b + ((p-1)/p) n g",
     rs_chip_ring_cost,
     "reduce-scatter in each chip, then rings of same-core ranks across the chips"},

    {Coll::kReduceScatterBlock, "instance_ring", reduce_scatter_block_instance_ring, kHierReduces,
     "Cost = T_rs(q) + (N-1) a_e + ((N-1)/N)(n/q)(c b_e + g)",
     rs_instance_ring_cost,
     "reduce-scatter in each instance, then rings across the instances per place"},
    {Coll::kReduceScatterBlock, "instance_rdh", reduce_scatter_block_instance_rdh, kHierReduces,
     "Cost = T_rs(q) + lg(N) a_e + ((N-1)/N)(n/q)(c b_e + g)",
     rs_instance_rdh_cost,
     "reduce-scatter in each instance, then recursive halving across the instances per place"},
    {Coll::kReduceScatterBlock, "instance_direct", reduce_scatter_block_instance_direct, kHierReduces,
     "Cost = T_rs(q) + a_e + ((N-1)/N)(n/q)(c b_e + g)",
     rs_instance_direct_cost,
     "reduce-scatter in each instance, then direct exchanges across the instances per place"},

    // alltoall (n: one block)
    {Coll::kAlltoall, "pairwise", alltoall_pairwise, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "step k: send to rank+k, receive from rank-k"},
    {Coll::kAlltoall, "bruck", alltoall_bruck, 0,
     "Cost = lg(p) a + lg(p) (p/2) n b + (lg(p)/2 + 1) p n c",
     [](const Model& m, int p, double n) {
       return lg(p) * (m.alpha + p / 2.0 * n * m.beta) + (lg(p) / 2 + 1) * p * n * m.copy;
     },
     "Bruck: lg(p) rounds of half the blocks each; for small blocks"},
    {Coll::kAlltoall, "linear", alltoall_linear, 0, "Cost = a + (p-1) n b",
     [](const Model& m, int p, double n) { return m.alpha * std::sqrt(p) + (p - 1) * n * m.beta; },
     "every send and receive at once"},
    {Coll::kAlltoall, "direct", alltoall_direct, 0, "Cost = (p-1) a + (p-1) n b (all at once)",
     [](const Model& m, int p, double n) {
       if (torus_shaped(m)) return direct_cost(m, (p - 1) * n);
       return std::max((p - 1) * (m.alpha + n * m.beta),
                       m.alpha * std::sqrt(p) + (p - 1) * n * m.beta);
     },
     "direct: every block to its rank in one step"},
    {Coll::kAlltoall, "torus_ring", alltoall_torus_ring, 0,
     "Cost = sum_k (e_k-1) a_k + ((e_k-1)/2) p n b_k + 2 p n c",
     [](const Model& m, int p, double n) {
       if (!torus_shaped(m)) return (p - 1) * (m.alpha + n * m.beta);
       double t = 0;
       for (const TorusStage& s : axis_stages(m)) {
         if (s.extent > 1) t += (s.extent - 1) * (s.alpha + p * n / 2 * s.beta) + 2 * p * n * m.copy;
       }
       return t;
     },
     "dimension-ordered forwarding: blocks ride round each axis's ring in turn, one link a hop"},
    {Coll::kAlltoallv, "pairwise", alltoallv_pairwise, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "step k: send to rank+k, receive from rank-k"},
    {Coll::kAlltoallw, "pairwise", alltoallw_pairwise, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "step k: send to rank+k, receive from rank-k"},

    // gather, scatter (n: one block)
    {Coll::kGather, "binomial", gather_binomial, 0, "Cost = lg(p) a + (p-1) n b",
     [](const Model& m, int p, double n) { return lg(p) * m.alpha + (p - 1) * n * m.beta; },
     "binomial tree: subtrees gather, then pass up"},
    {Coll::kGather, "linear", gather_linear, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "the root receives from every rank at once"},
    {Coll::kGatherv, "linear", gatherv_linear, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "the root receives from every rank at once"},
    {Coll::kScatter, "binomial", scatter_binomial, 0, "Cost = lg(p) a + (p-1) n b",
     [](const Model& m, int p, double n) { return lg(p) * m.alpha + (p - 1) * n * m.beta; },
     "binomial tree: each rank passes on its subtree's blocks"},
    {Coll::kScatter, "linear", scatter_linear, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "the root sends to every rank at once"},
    {Coll::kScatterv, "linear", scatterv_linear, 0, "Cost = (p-1) (a + n b)",
     [](const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); },
     "the root sends to every rank at once"},

    // scan, exscan
    {Coll::kScan, "recursive_doubling", scan_recursive_doubling, 0,
     "Cost = lg(p) (a + n b + n g)",
     [](const Model& m, int p, double n) { return lg(p) * (m.alpha + n * m.beta + n * m.gamma); },
     "round k: pass the partial prefix to rank+2^k"},
    {Coll::kExscan, "recursive_doubling", exscan_recursive_doubling, 0,
     "Cost = lg(p) (a + n b + 2 n g)",
     [](const Model& m, int p, double n) { return lg(p) * (m.alpha + n * m.beta + 2 * n * m.gamma); },
     "round k: pass the partial prefix to rank+2^k"},

    // neighbourhood collectives (n: one block; the cost model does not know the degree, so it
    // takes p as its bound)
    {Coll::kNeighborAllgather, "linear", neighbor_allgather_linear, 0,
     "Cost = a + max(indegree, outdegree) n b",
     [](const Model& m, int, double n) { return m.alpha + n * m.beta; },
     "every neighbour's block at once, one step"},
    {Coll::kNeighborAllgatherv, "linear", neighbor_allgatherv_linear, 0,
     "Cost = a + max(indegree, outdegree) n b",
     [](const Model& m, int, double n) { return m.alpha + n * m.beta; },
     "every neighbour's block at once, one step"},
    {Coll::kNeighborAlltoall, "linear", neighbor_alltoall_linear, 0,
     "Cost = a + max(indegree, outdegree) n b",
     [](const Model& m, int, double n) { return m.alpha + n * m.beta; },
     "every neighbour's block at once, one step"},
    {Coll::kNeighborAlltoallv, "linear", neighbor_alltoallv_linear, 0,
     "Cost = a + max(indegree, outdegree) n b",
     [](const Model& m, int, double n) { return m.alpha + n * m.beta; },
     "every neighbour's block at once, one step"},
    {Coll::kNeighborAlltoallw, "linear", neighbor_alltoallw_linear, 0,
     "Cost = a + max(indegree, outdegree) n b",
     [](const Model& m, int, double n) { return m.alpha + n * m.beta; },
     "every neighbour's block at once, one step"},
};

}  // namespace

const std::vector<Algorithm>& algorithms() { return kAlgorithms; }

// Tokens renamed since they were published: environment values and rule files that use the old
// ones keep working (torusmpi(7) lists them). "mesh" read as a topology in a torus library.
constexpr struct {
  const char* old_token;
  const char* token;
} kAliases[] = {
    {"mesh", "direct"},
    {"chip_hier", "chip_ring"},
    {"hier_ring", "instance_ring"},
    {"hier_rdh", "instance_rdh"},
    {"hier_mesh", "instance_direct"},
};

const Algorithm* find_algorithm(Coll c, const std::string& token) {
  std::string name = token;
  for (const auto& alias : kAliases) {
    if (name == alias.old_token) name = alias.token;
  }
  for (const Algorithm& a : kAlgorithms) {
    if (a.coll == c && name == a.token) return &a;
  }
  return nullptr;
}

const Algorithm& fallback(Coll c) {
  for (const Algorithm& a : kAlgorithms) {
    if (a.coll == c) return a;
  }
  return kAlgorithms.front();  // unreachable: every collective has algorithms (tested)
}

bool supports(const Algorithm& alg, const Args& a, std::string* why) {
  if ((alg.restrictions & kNeedsCommutative) && !a.commutative) {
    *why = "needs a commutative op";
    return false;
  }
  if ((alg.restrictions & kNeedsInstances) && patterns::instance_groups(a.topo, a.size).empty()) {
    *why = "needs two or more instances with as many ranks in each";
    return false;
  }
  return true;
}

bool runs_forced(const Algorithm& alg, const Args& a, std::string* why) {
  Algorithm anywhere = alg;
  anywhere.restrictions &= ~kNeedsInstances;
  return supports(anywhere, a, why);
}

size_t selection_bytes(const Args& a) {
  size_t e = a.elem;
  auto total = [&](const size_t* v) {
    size_t s = 0;
    for (int i = 0; i < a.size; ++i) s += v[i];
    return s;
  };
  switch (a.coll) {
    case Coll::kAllgatherv:
      return total(a.counts) * e / a.size;
    case Coll::kReduceScatter:
      return total(a.counts) * e;
    case Coll::kReduceScatterBlock:
      return a.count * e * a.size;
    case Coll::kGatherv:
    case Coll::kScatterv:
    case Coll::kAlltoallv:
    case Coll::kAlltoallw:
    case Coll::kNeighborAllgatherv:
    case Coll::kNeighborAlltoallv:
    case Coll::kNeighborAlltoallw:
      return 0;  // no size every rank knows alike
    default:
      return a.count * e;
  }
}

}  // namespace torusmpi::coll
