// The cost model's figures: one table of the software's own costs and of what is derived from
// the machine, each with where it comes from. The machine's figures themselves (link latency and
// bandwidth, HBM, reduction kernels, EFA) live in src/topo's model table; nothing here repeats
// them. Selection evaluates every registered algorithm's cost (each in its algorithm's file, of
// cost.h's pieces) with the Model made here for the communicator's placement and takes the
// cheapest; the simulator times its messages with the same DeviceFigures and the machine's timing
// model (topo/timing.h), so the two disagree only where the cost formulas simplify, and where
// that matters most, the torus algorithms' per-byte terms, calibration.def closes the gap.
#include <algorithm>
#include <cstdio>
#include <map>

#include "coll/patterns/hier.h"
#include "coll/patterns/torus.h"
#include "coll/select/select.h"
#include "topo/timing.h"

namespace torusmpi::coll {
namespace {

// Ranks of one node talking through shared memory (pml/shm), measured on a 2-core x86 VM:
//   alpha  per message of a collective step: osu_latency gives 0.18 us one way for 8 B; a step
//          adds posting, matching and the schedule walk, about as much again.
//   beta   per byte: the pipelined shared-memory copy moves 1 MiB in 41 us one way (~25 GB/s),
//          but a collective's copies compete for the same memory bus: 10 GB/s.
//   gamma  per byte reduced: a float sum runs at ~5 GB/s out of cache on one core.
//   copy   per byte copied within a rank: memcpy out of cache, ~12 GB/s.
//   overhead  per message more in a step: osu_bw's window of 8 B sends runs at about 12 million
//          messages a second, 0.08 us each.
constexpr Model kSharedMemory = {0.35e-6, 1.0 / 10e9, 1.0 / 5e9, 1.0 / 12e9, nullptr, 0, 0.08e-6};

// More ranks than cores: a step whose peer is not running waits for a context switch (measured
// here: 2 us to hand a core from one process to another by sched_yield), so steps cost more and
// algorithms with fewer of them win.
constexpr double kOversubscribedStep = 2e-6;
// ... and a step that waits on the network sleeps on the transport's descriptor until data comes,
// a wake-up that costs far more than a yield: osu_latency 8 B between two host instances is 9 us
// with a core each, and an allreduce at 2 x 2 ranks on 2 cores shows about 40 us per network step
// (recursive doubling beats the hierarchical algorithms, which take two network steps, up to
// 64 KiB). Host instances only: emulated ones are priced as the instance would run.
constexpr double kOversubscribedNetworkStep = 30e-6;

// An emulated machine: figures of the software and what is derived from src/topo's table.
//   kSoftwareAlpha   per message, on top of the links' latency: the schedule walk, writing the
//                    DMA descriptors and the ready/done handshake with the peer. AWS publishes no
//                    per-message figure; 1 us is the order of a DMA queue's doorbell plus one
//                    semaphore round over NeuronLink. (The 58 us floor AWS gives for a 2-rank
//                    allreduce on trn1 is mostly the runtime launching the collective: the
//                    machine's per-call cost, topo::call_time, which is Model::call.)
//   kGammaFallback   per byte reduced when a model gives no reduce_bandwidth (test tori): the
//                    host's figure above, so small tori behave like the machine they run on.
//   kCopyFallback    likewise per byte copied, when a model gives no hbm_bandwidth.
// Derived per rank (a chip's engines are shared by the `cores` ranks it holds, all busy at once
// in a collective):
//   port_beta = cores / hbm_bandwidth      a rank's DMA queue: every byte it sends is read from
//                                          HBM; several links at once are bounded by this
//   gamma     = cores / reduce_bandwidth   the chip's reduction kernels, per byte of input
//   copy      = cores / hbm_bandwidth      a copy within the chip's HBM
constexpr double kSoftwareAlpha = 1.0e-6;
constexpr double kGammaFallback = kSharedMemory.gamma;
constexpr double kCopyFallback = kSharedMemory.copy;

// Seconds per byte at `bandwidth` bytes/s, shared by `sharers`; `fallback` when not given.
double per_byte(double bandwidth, int sharers, double fallback) {
  return bandwidth > 0 ? sharers / bandwidth : fallback;
}

}  // namespace

Model host_model(bool oversubscribed) {
  Model m = kSharedMemory;
  if (oversubscribed) {
    m.alpha += kOversubscribedStep;
    m.switch_wait = kOversubscribedStep;
  }
  return m;
}

TopoView topo_view(const topo::Machine& m, const std::vector<int>& job_ranks) {
  TopoView v;
  const size_t p = job_ranks.size();
  v.instance.assign(p, 0);
  v.chip.assign(p, 0);
  v.core.resize(p);
  if (!m.emulated()) {
    // Host instances: each is one chip holding its share of the job.
    for (size_t r = 0; r < p; ++r) {
      v.core[r] = static_cast<int>(r);
      if (m.instances > 1) v.instance[r] = topo::place(m, job_ranks[r]).instance;
    }
    return v;
  }
  v.ndims = m.ndims;
  std::copy(m.dims, m.dims + 3, v.dims);
  for (size_t r = 0; r < p; ++r) {
    topo::Place at = topo::place(m, job_ranks[r]);
    v.instance[r] = at.instance;
    v.chip[r] = at.chip;
    v.core[r] = at.core;
  }
  return v;
}

DeviceFigures device_figures(const topo::Machine& m) {
  DeviceFigures f;
  f.software_alpha = kSoftwareAlpha;
  f.port_beta = per_byte(m.hbm_bandwidth, m.cores, 0);
  f.gamma = per_byte(m.reduce_bandwidth, m.cores, kGammaFallback);
  f.copy = per_byte(m.hbm_bandwidth, m.cores, kCopyFallback);
  return f;
}

// The flat figures of an emulated placement: those of a message between the communicator's
// average pair of ranks when every rank sends one at once.
//   alpha = software_alpha + mean over ordered pairs (i != j) of the pair's latency:
//           intra_chip.latency on one chip, hops * neuronlink.latency across chips of one
//           instance (dimension-order route), efa.latency across instances
//   beta  = the largest of the pair classes present, as a step ends with its slowest message:
//           port_beta; 1 / intra_chip.bandwidth; load / neuronlink.bandwidth, where
//           load = max(1, (sum over pairs of hops) / (p - 1) / links), the average number of
//           messages a link carries when each of the p ranks sends one to an average partner
//           (p * mean hops link crossings over `links` links of the instances used);
//           max(1, off-instance messages per chip) / efa.bandwidth
// The torus figures are one link's and one chip's; the software cost rides on hop_alpha and
// chip_alpha, as every message of a torus algorithm is one hop or within a chip.
// `oversubscribed` counts on the host only: the emulation predicts the instance, and a choice
// made here must be the one the instance would make, whatever this host's scheduling costs.
namespace {

// Across instances (the hierarchical algorithms' figures, TorusModel): the communicator's ranks
// by instance; with two or more instances holding as many each, the first instance's ranks as a
// communicator of their own give the instance figures (instances are alike), and
//   efa_alpha = software_alpha + efa.latency
//   efa_beta  = (the most ranks the communicator has on one chip) / efa.bandwidth
void instance_figures(const topo::Machine& m, const TopoView& view, bool oversubscribed,
                      TorusModel* torus) {
  const int p = static_cast<int>(view.instance.size());
  const std::vector<std::vector<int>> groups = patterns::instance_groups(&view, p);
  torus->instances = 1;
  if (groups.empty()) return;
  const TopoView one = patterns::instance_view(&view, groups[0]);
  TorusModel within;
  const Model inside = topo_model(m, one, oversubscribed, &within);
  std::map<std::pair<int, int>, int> on;
  int most = 1;
  for (int r = 0; r < p; ++r) most = std::max(most, ++on[{view.instance[r], view.chip[r]}]);
  torus->instances = static_cast<int>(groups.size());
  torus->instance_shaped = m.emulated() && within.shaped;
  torus->instance_cores = within.cores;
  torus->instance_alpha = inside.alpha;
  torus->instance_beta = inside.beta;
  torus->efa_alpha = kSoftwareAlpha + m.efa.latency;
  torus->efa_beta = per_byte(m.efa.bandwidth, most, 0);
}

// The host's figures for ranks that span host instances: the shared-memory ones, with the
// network's latency averaged in over the pairs that cross instances and its per-byte time when
// it is the slower, and the instance figures.
Model host_instances_model(const topo::Machine& m, const TopoView& view, bool oversubscribed,
                           TorusModel* torus) {
  Model model = host_model(oversubscribed);
  *torus = TorusModel{};
  instance_figures(m, view, oversubscribed, torus);
  if (torus->instances < 2) return model;
  const double step = oversubscribed ? kOversubscribedNetworkStep : 0;
  torus->efa_alpha += step;
  const double n = torus->instances, p = static_cast<double>(view.instance.size());
  const double off = (n - 1) / n * p / (p - 1);  // of a rank's pairs, those off its instance
  model.alpha += off * (m.efa.latency + step);
  model.beta = std::max(model.beta, torus->efa_beta * off);
  torus->gamma = model.gamma;
  model.torus = torus;
  return model;
}

}  // namespace

Model topo_model(const topo::Machine& m, const TopoView& view, bool oversubscribed,
                 TorusModel* torus) {
  if (!m.emulated()) {
    if (m.instances > 1) return host_instances_model(m, view, oversubscribed, torus);
    return host_model(oversubscribed);
  }
  const DeviceFigures dev = device_figures(m);
  const int p = static_cast<int>(view.chip.size());
  // Ranks per (instance, chip): pairs are weighed by the product of two chips' counts.
  std::map<std::pair<int, int>, int> on;
  for (int r = 0; r < p; ++r) ++on[{view.instance[r], view.chip[r]}];
  double latency = 0, hop_sum = 0, off_instance = 0;
  int chips = 0;
  bool intra = false, inter = false;
  int max_on_chip = 0;
  std::map<int, bool> instances;
  for (const auto& [a, na] : on) {
    instances[a.first] = true;
    ++chips;
    max_on_chip = std::max(max_on_chip, na);
    for (const auto& [b, nb] : on) {
      double pairs = a == b ? static_cast<double>(na) * (na - 1) : static_cast<double>(na) * nb;
      if (pairs == 0) continue;
      if (a == b) {
        latency += pairs * m.intra_chip.latency;
        intra = true;
      } else if (a.first == b.first) {
        int h = topo::hops(m, a.second, b.second);
        latency += pairs * h * m.neuronlink.latency;
        hop_sum += pairs * h;
        inter = true;
      } else {
        latency += pairs * m.efa.latency;
        off_instance += pairs;
      }
    }
  }
  Model model{kSoftwareAlpha, dev.port_beta,
              dev.gamma,      dev.copy,
              nullptr,        topo::call_time(m, chips, static_cast<int>(instances.size()))};
  model.overhead = kSoftwareAlpha;  // each message is its own DMA descriptors and handshake
  if (p > 1) {
    const double pairs = static_cast<double>(p) * (p - 1);
    model.alpha += latency / pairs;
    if (intra) model.beta = std::max(model.beta, per_byte(m.intra_chip.bandwidth, 1, 0));
    const double links = static_cast<double>(topo::link_count(m)) * instances.size();
    if (inter && links > 0) {
      double load = std::max(1.0, hop_sum / (p - 1) / links);
      model.beta = std::max(model.beta, per_byte(m.neuronlink.bandwidth, 1, 0) * load);
    }
    if (off_instance > 0) {
      // Each rank's share of its off-instance messages goes through its chip's one interface.
      double per_chip = std::max(1.0, off_instance / (p - 1) * max_on_chip / p);
      model.beta = std::max(model.beta, per_byte(m.efa.bandwidth, 1, 0) * per_chip);
    }
  }
  *torus = TorusModel{};
  torus->ndims = m.ndims;
  std::copy(m.dims, m.dims + 3, torus->dims);
  patterns::TorusGrid grid = patterns::torus_grid(&view, p);
  torus->shaped = grid.shaped;
  torus->cores = grid.shaped ? grid.extent[0] : 1;
  torus->hop_alpha = kSoftwareAlpha + m.neuronlink.latency;
  torus->link_beta = per_byte(m.neuronlink.bandwidth, 1, 0);
  torus->chip_alpha = kSoftwareAlpha + m.intra_chip.latency;
  torus->chip_beta = per_byte(m.intra_chip.bandwidth, 1, 0);
  torus->gamma = dev.gamma;
  instance_figures(m, view, oversubscribed, torus);
  model.torus = torus;
  return model;
}

std::string describe_model(const Model& m) {
  char t[256];
  int n = std::snprintf(t, sizeof t, "alpha %.3g us, %.3g GB/s moved, %.3g GB/s reduced",
                        m.alpha * 1e6, 1e-9 / m.beta, 1e-9 / m.gamma);
  if (m.call > 0 && n > 0 && static_cast<size_t>(n) < sizeof t) {
    n += std::snprintf(t + n, sizeof t - n, ", call %.3g us", m.call * 1e6);
  }
  if (m.torus != nullptr && m.torus->ndims > 0 && n > 0 && static_cast<size_t>(n) < sizeof t) {
    const TorusModel& x = *m.torus;
    std::snprintf(t + n, sizeof t - n,
                  "; torus %dx%dx%d, %d core(s) per chip, %s, hop %.3g us, link %.3g GB/s",
                  x.dims[0], x.dims[1], x.dims[2], x.cores, x.shaped ? "shaped" : "not shaped",
                  x.hop_alpha * 1e6, 1e-9 / x.link_beta);
  }
  std::string text = t;
  if (m.torus != nullptr && m.torus->instances > 1) {
    const TorusModel& x = *m.torus;
    std::snprintf(t, sizeof t,
                  "; %d instances (%s each), network %.3g us, %.3g GB/s per rank through its NIC",
                  x.instances, x.instance_shaped ? "filled" : "not filled", x.efa_alpha * 1e6,
                  1e-9 / x.efa_beta);
    text += t;
  }
  return text;
}

}  // namespace torusmpi::coll
