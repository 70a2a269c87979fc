// The pieces the algorithms' cost functions share (see cost.h).
#include "coll/select/cost.h"

#include <algorithm>
#include <cmath>

#include "coll/algorithms.h"

namespace torusmpi::coll {

double lg(int p) { return p <= 1 ? 0 : std::ceil(std::log2(p)); }
double lg_floor(int p) { return p <= 1 ? 0 : std::floor(std::log2(p)); }
double folds(int p) { return (p & (p - 1)) == 0 ? 0 : 1; }
double frac(int p) { return (p - 1.0) / p; }
double one_wait_saving(const Model& m, int steps, double message_bytes) {
  // At most alpha: a model whose alpha was set by hand (torusmpi_sim --alpha) keeps its switch.
  return message_bytes <= kWholeMessage ? (steps - 1) * std::min(m.switch_wait, m.alpha) : 0;
}

bool torus_shaped(const Model& m) { return m.torus != nullptr && m.torus->shaped; }
bool spans_instances(const Model& m) { return m.torus != nullptr && m.torus->instances > 1; }

namespace {

TorusStage chip_stage(const Model& m, int e) {
  return {e, m.torus->chip_alpha, m.torus->chip_beta};
}
TorusStage link_stage(const Model& m, int e) {
  return {e, m.torus->hop_alpha, m.torus->link_beta * m.torus->cores};
}
int torus_chips(const Model& m) { return m.torus->dims[0] * m.torus->dims[1] * m.torus->dims[2]; }

}  // namespace

double stages_cost(const Model& m, const std::vector<TorusStage>& stages, double n, int phases,
                   bool reduces, double bytes_factor) {
  double t = 0;
  for (const TorusStage& s : stages) {
    if (s.extent <= 1) continue;
    t += phases * (s.extent - 1) * s.alpha;
    t += bytes_factor * phases * frac(s.extent) * n * s.beta;
    if (reduces) t += bytes_factor * frac(s.extent) * n * m.torus->gamma;
    n /= s.extent;
  }
  return t;
}

std::vector<TorusStage> axis_stages(const Model& m) {
  std::vector<TorusStage> st = {chip_stage(m, m.torus->cores)};
  for (int k = 0; k < m.torus->ndims; ++k) st.push_back(link_stage(m, m.torus->dims[k]));
  return st;
}

std::vector<TorusStage> cube_stages(const Model& m, int p) {
  std::vector<TorusStage> st;
  bool cube = (p & (p - 1)) == 0 && (m.torus->cores & (m.torus->cores - 1)) == 0;
  for (int k = 0; k < m.torus->ndims; ++k) {
    cube = cube && (m.torus->dims[k] <= 2 || m.torus->dims[k] == 4);
  }
  if (!cube) return st;
  for (int c = m.torus->cores; c > 1; c /= 2) st.push_back(chip_stage(m, 2));
  for (int k = 0; k < m.torus->ndims; ++k) {
    for (int d = m.torus->dims[k]; d > 1; d /= 2) st.push_back(link_stage(m, 2));
  }
  return st;
}

std::vector<TorusStage> chip_ring_stages(const Model& m) {
  return {chip_stage(m, m.torus->cores), link_stage(m, torus_chips(m))};
}

double dual_cost(const Model& m, int p, double n, int phases, bool reduces) {
  const double bytes = phases * frac(p) * (n / 2) * m.torus->link_beta +
                       (reduces ? frac(p) * n * m.torus->gamma : 0);
  return phases * (p - 1) * m.torus->hop_alpha + kDualRingBytes * bytes;
}

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

// Each chip's interface carries its ranks' off-instance share: (p - q) of the p - 1 destinations
// for q ranks an instance (not (N-1)/N of them: at 2 x 2 ranks that priced direct's network bytes
// at 3/4 of theirs).
double net_direct_cost(const Model& m, int p, double bytes_out) {
  const TorusModel& t = *m.torus;
  const double off = (p - static_cast<double>(p) / t.instances) / std::max(1, p - 1);
  return t.efa_alpha + off * bytes_out * t.efa_beta;
}

double chain_cost(double alpha, double beta, int len, double n) {
  const double k = std::min(64.0, std::max(1.0, std::floor(n / 32768)));
  return (k + len - 2) * (alpha + n / k * beta);
}

namespace {

using patterns::NetKind;

// The instance's own stages, every rank of an instance at once: torus_ring's on a full torus,
// else one ring with the instance's flat figures.
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

// The network stages on each rank's `piece`, every rank of an instance sending at once, so a
// chip's NIC carries its ranks' pieces (efa_beta). A pass takes N-1 messages in a ring, lg of N's
// power of two (+1 for an odd rest) halving, one direct (its N-1 messages overlap on the NIC).
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

}  // namespace

double hier_allreduce_cost(const Model& m, int p, double n, NetKind k) {
  if (!spans_instances(m)) return kAllreduceRing.cost(m, p, n);
  const int q = p / m.torus->instances;
  return instance_cost(m, q, n, 2, true) + net_cost(m, k, n / q, 2, true);
}

double hier_allgather_cost(const Model& m, int p, double n, NetKind k) {
  if (!spans_instances(m)) return kAllgatherRing.cost(m, p, n);
  const int q = p / m.torus->instances;
  return net_cost(m, k, m.torus->instances * n, 1, false) + instance_cost(m, q, p * n, 1, false);
}

double hier_rs_cost(const Model& m, int p, double n, NetKind k) {
  if (!spans_instances(m)) return kReduceScatterRing.cost(m, p, n);
  const int q = p / m.torus->instances;
  return instance_cost(m, q, n, 1, true) + net_cost(m, k, n / q, 1, true);
}

double neighbor_exchange_cost(const Model& m, int, double n) { return m.alpha + n * m.beta; }

double switch_stage_cost(const Model& m, double n) {
  const TorusModel& t = *m.torus;
  return 2 * t.efa_alpha + kSwitch.latency + n * std::max(t.efa_beta, 1.0 / kSwitch.port_bandwidth);
}

double ina_rs_cost(const Model& m, int p, double n) {
  if (!spans_instances(m)) return kReduceScatterRing.cost(m, p, n);
  const int q = p / m.torus->instances;
  return instance_cost(m, q, n, 1, true) + switch_stage_cost(m, n / q);
}

double ina_allgather_cost(const Model& m, int p, double n) {
  if (!spans_instances(m)) return kAllgatherRing.cost(m, p, n);
  const int q = p / m.torus->instances;
  return switch_stage_cost(m, m.torus->instances * n) + instance_cost(m, q, p * n, 1, false);
}

double ina_allreduce_cost(const Model& m, int p, double n) {
  if (!spans_instances(m)) return kAllreduceRing.cost(m, p, n);
  const int q = p / m.torus->instances;
  return instance_cost(m, q, n, 2, true) + switch_stage_cost(m, n / q);
}

}  // namespace torusmpi::coll
