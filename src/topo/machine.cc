// The instance models and the geometry of their tori: parsing TORUSMPI_INSTANCE, placing ranks,
// naming links and routing between chips (see machine.h).
//
// Every hardware figure sits in one table (kModels), each with where it comes from, so that the
// link emulation, the cost model and the simulator all read the same numbers and a reader can
// check them against the documentation. The table holds the figures as the documentation gives
// them (per chip, in GB/s or Gbit/s); make_model() derives the per-link, per-direction figures
// that Machine carries, with the formula next to each.
//
// Link ids are dense over the links that exist, chip by chip (chip * links_per_chip + the
// link's slot within its chip), because pml/shm and the simulator keep one counter per id: a
// dimension of size 2 has one link each way between its two chips (slot "+1" of each chip), a
// dimension of size 1 none, so no counter stands for a link that cannot carry a byte.
#include "topo/machine.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/params.h"

namespace torusmpi::topo {
namespace {

// One row per hardware model. Sources: AWS Neuron documentation, pages under
// awsdocs-neuron.readthedocs-hosted.com/en/latest/:
//  [T1]  Trainium architecture: about-neuron/arch/neuron-hardware/trainium.html (2 NeuronCore-v2
//        per chip, 820 GB/s HBM, 1 TB/s DMA)
//  [T1i] Trn1/Trn1n architecture: about-neuron/arch/neuron-hardware/trn1-arch.html (16 chips,
//        800 Gbps EFA for trn1.32xlarge; its "4D hypercube" is the 4x4 torus: a ring of 4 is a
//        2-cube, so a 4x4 torus is a 4-cube)
//  [T2]  Trainium2 architecture: about-neuron/arch/neuron-hardware/trainium2.html (8
//        NeuronCore-v3, 2.9 TB/s HBM, 3.5 TB/s DMA, NeuronLink-v3 1.28 TB/s per chip; its
//        comparison table: inter-chip interconnect 384 GB/s per chip for Trainium, 1280 for
//        Trainium2)
//  [T2i] Trn2 architecture: about-neuron/arch/neuron-hardware/trn2-arch.html (16 chips in a 4x4 2D
//        torus, LNC=2 default, one 200 Gbps EFA per chip, 3.2 Tbps; the UltraServer joins 4
//        instances, same-coordinate chips in a ring: a 4x4x4 torus)
//  [NKI] NKI architecture guides: nki/arch/trainium_inferentia2_arch.html and trainium2_arch.html
//        (4 NeuronLink ports and 6 CC-Cores per Trainium chip; 4 NeuronLink-v3 and 20 CC-Cores
//        per Trainium2 chip; [T2] counts 16 CC-Cores for Trainium2, and 6 for Trainium)
//  [CC]  Neuron collectives documentation: neuron-runtime/explore/intranode-collective-comm.html
//        (NeuronLink about 1-2 us per hop) and internode-collective-comm.html (EFA about 15 us
//        per hop)
//  [NC]  nccom-test user guide: tools/neuron-sys-tools/nccom-test.html, its examples measured on
//        trn1.32xlarge (coll/sim/published.cc lists every point with its source); the figures
//        fitted to them say which point they come from.
// Estimates (no published figure) are marked "est." and explained where make_model() uses them.
struct ModelRow {
  const char* name;
  const char* chip;  // the accelerator, for listings
  int ndims;
  int dims[3];
  int cores;                // ranks per chip
  double link_chip_gbs;     // NeuronLink GB/s per chip, all ports, both directions
  int link_ports;           // NeuronLink ports per chip within one instance
  double link_latency_us;   // per hop
  double efa_chip_gbit;     // EFA Gbit/s available to one chip
  double efa_latency_us;    // per hop
  double hbm_gbs;           // HBM bandwidth per chip, GB/s
  double dma_gbs;           // DMA engines' bandwidth per chip, GB/s
  double intra_latency_us;  // a message between two cores of one chip (est.)
  double intra_gbs;         // one core to another of its chip, GB/s one way (0: HBM-derived)
  double call_us;           // the runtime's cost of one collective call (Machine::call)
  double call_chip_us;      // ... and per chip of the call beyond the first
  double call_instance_us;  // ... and per instance of the call beyond the first
  int cc_cores;             // collective-communication cores per chip
  const char* source;
};

// One row per model, its figures in the column order of ModelRow: a table clang-format would
// spread one figure a line.
// clang-format off
constexpr ModelRow kModels[] = {
    // trn1.32xlarge: 16 Trainium, 4x4 torus [T1i][CC], 2 cores per chip [T1]; 384 GB/s of
    // NeuronLink per chip [T2] over 4 ports [NKI]; 800 Gbps EFA per instance [T1i] = 50 per
    // chip; HBM 820 GB/s, DMA 1 TB/s [T1]; 1.5 us per NeuronLink hop (middle of [CC]'s 1-2 us),
    // 15 us per EFA hop [CC]; 0.5 us within a chip (est.: one DMA, no link); 6 CC-Cores [NKI].
    // Fitted to [NC]'s trn1 examples (coll/sim/published.cc):
    //   100 GB/s core to core: `nccom-test -r 2 allr` (the two cores of one chip) at 1 GiB, 18930
    //     us (52.83 GiB/s busbw), is bound by the runtime's DMA rings, not by HBM (1 GiB of a
    //     2-rank allreduce touches about 4 GiB of HBM, a fifth of what 820 GB/s moves in that
    //     time). That point alone gives 72 GB/s (its reduction at 820/3 GB/s on top); 100 also
    //     keeps `-r 64 -N 2 allr` at 1 GiB within 1.5x, whose torus stages start with a swap of
    //     half the vector between the two cores of each chip (the 2-rank points stay within
    //     0.67-1.09 of AWS's);
    //   a call costs 56 us: the same command's 58 us from 1 KiB to 64 KiB, less its one message;
    //     5.7 us more per chip: `-r 32 allg` (16 chips) at 150 us from 1 KiB to 64 KiB;
    //     480 us more per instance: `-r 64 -N 2 allr` (2 instances) at 520 us for 8 B, here 745
    //     (1.43x; 8 B within 1.5x allows at most ~500 us, 4 MiB within 1/1.5 at least ~400).
    {"trn1.32xl", "Trainium", 2, {4, 4, 1}, 2, 384, 4, 1.5, 50, 15, 820, 1000, 0.5,
     100, 56, 5.7, 480, 6,
     "AWS Neuron docs: Trainium and Trn1 architecture (chips, cores, HBM, DMA, EFA), Trainium2 "
     "architecture (384 GB/s NeuronLink per Trainium chip), nccom-test user guide (trn1 "
     "examples: per-call cost, core-to-core bandwidth); per-link split and latencies "
     "estimated"},
    // trn2.48xlarge, LNC=2 (default): 16 Trainium2, 4x4 torus, 8 physical cores seen as 4 ranks
    // [T2i]; NeuronLink-v3 1280 GB/s per chip [T2] over 4 ports [NKI]; one 200 Gbps EFA per chip
    // [T2i]; HBM 2.9 TB/s, DMA 3.5 TB/s [T2]; latencies as trn1; 20 CC-Cores [NKI]. A call
    // costs 6 us: the lowest floor of the newer runtime's examples in [NC], `-r 32 allg` at 6.16 us
    // for 1 KiB. Those examples name no instance (coll/sim/published.cc shows them on trn2 and
    // says why) and their floors disagree (6 to 300 us), so none is held to a bound.
    {"trn2.48xl", "Trainium2", 2, {4, 4, 1}, 4, 1280, 4, 1.5, 200, 15, 2900, 3500, 0.5,
     0, 6, 0, 0, 20,
     "AWS Neuron docs: Trainium2 and Trn2 architecture (chips, LNC, HBM, DMA, NeuronLink-v3 "
     "1.28 TB/s per chip, 200 Gbps EFA per chip); per-link split and latencies estimated"},
    // The same with LNC=1: each physical core is a rank [T2i].
    {"trn2.48xl:lnc=1", "Trainium2", 2, {4, 4, 1}, 8, 1280, 4, 1.5, 200, 15, 2900, 3500, 0.5,
     0, 6, 0, 0, 20,
     "AWS Neuron docs: Trainium2 and Trn2 architecture (as trn2.48xl, LNC=1); per-link split and "
     "latencies estimated"},
    // Trn2 UltraServer: 4 trn2.48xlarge, the z rings join same-coordinate chips [T2i]: one
    // 4x4x4 torus. No per-link figure is published for the z links: they are taken to be like
    // the in-instance ones (est.), so every link carries the trn2 per-port figure.
    {"trn2u", "Trainium2", 3, {4, 4, 4}, 4, 1280, 4, 1.5, 200, 15, 2900, 3500, 0.5,
     0, 6, 0, 0, 20,
     "AWS Neuron docs: Trainium2 and Trn2 architecture (UltraServer of 4 trn2 instances, "
     "same-coordinate chips in a ring); z links assumed like the in-instance links; per-link "
     "split and latencies estimated"},
    {"trn2u:lnc=1", "Trainium2", 3, {4, 4, 4}, 8, 1280, 4, 1.5, 200, 15, 2900, 3500, 0.5,
     0, 6, 0, 0, 20,
     "AWS Neuron docs: Trainium2 and Trn2 architecture (UltraServer, LNC=1); z links assumed "
     "like the in-instance links; per-link split and latencies estimated"},
};
// clang-format on

// The small test tori take the Trainium2 figures, so that a 2x2 torus behaves like a corner of a
// trn2 instance, but not the runtime's per-call cost (a test torus stands for links, not for the
// Neuron runtime); ":link=GBPS,LAT_US" replaces the NeuronLink figures (slow links make pacing
// measurable on a laptop).
constexpr const ModelRow& kTestFigures = kModels[1];

constexpr int kMaxDim = 16;
constexpr int kMaxCores = 64;

const char kExpected[] =
    "expected host, trn1.32xl, trn2.48xl, trn2.48xl:lnc=1, trn2u, trn2u:lnc=1 or "
    "torus:AxB[xC]:cores=N[:link=GBPS,LAT_US] (dimensions 1-16, cores 1-64, GBPS in GB/s per "
    "direction, LAT_US in microseconds per hop)";

Machine make_model(const ModelRow& row, const std::string& name) {
  Machine m;
  m.name = name;
  m.ndims = row.ndims;
  for (int d = 0; d < 3; ++d) m.dims[d] = row.dims[d];
  m.cores = row.cores;
  // The per-chip NeuronLink figure counts every port in both directions (as AWS adds up link
  // bandwidth; est.): one port, one direction carries link_chip / (2 * ports).
  m.neuronlink.bandwidth = row.link_chip_gbs * 1e9 / (2.0 * row.link_ports);
  m.neuronlink.latency = row.link_latency_us * 1e-6;
  // A copy inside one HBM reads and writes every byte, so it gets half the HBM bandwidth, unless
  // the DMA engines are slower still.
  m.hbm_bandwidth = std::min(row.dma_gbs * 1e9, row.hbm_gbs * 1e9 / 2.0);
  // Two cores of one chip exchange data through their chip's HBM: a copy, at the rate the
  // published figures give where they do (intra_gbs).
  m.intra_chip.bandwidth = row.intra_gbs > 0 ? row.intra_gbs * 1e9 : m.hbm_bandwidth;
  m.intra_chip.latency = row.intra_latency_us * 1e-6;
  m.efa.bandwidth = row.efa_chip_gbit * 1e9 / 8.0;
  m.efa.latency = row.efa_latency_us * 1e-6;
  // A reduction reads both operands and writes the result through HBM: three bytes of HBM
  // traffic per byte of input (est.: the vector engines are assumed not to be the bottleneck).
  m.reduce_bandwidth = row.hbm_gbs * 1e9 / 3.0;
  m.call.fixed = row.call_us * 1e-6;
  m.call.per_chip = row.call_chip_us * 1e-6;
  m.call.per_instance = row.call_instance_us * 1e-6;
  m.cc_cores = row.cc_cores;
  m.source = std::string(row.chip) + "; " + row.source;
  return m;
}

// A whole decimal number in [lo, hi], nothing else (no sign, no spaces, no suffix).
bool parse_bounded(const std::string& text, int lo, int hi, int* out) {
  if (text.empty() || text.size() > 6) return false;
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool parse_double(const std::string& text, double* out) {
  if (text.empty() || text[0] == ' ' || text[0] == '+' || text[0] == '-') return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

bool parse_torus(const std::string& text, Machine* out, std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = "'" + text + "': " + why;
    return false;
  };
  std::vector<std::string> fields = split(text.substr(6), ':');  // after "torus:"
  std::vector<std::string> dims = split(fields[0], 'x');
  if (dims.size() < 2 || dims.size() > 3) {
    return fail("the shape is AxB or AxBxC (e.g. torus:2x2:cores=1), not '" + fields[0] + "'");
  }
  const ModelRow& fig = kTestFigures;
  Machine m = make_model(fig, text);
  m.call = {};
  m.ndims = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!parse_bounded(dims[d], 1, kMaxDim, &m.dims[d])) {
      return fail("dimension " + std::to_string(d + 1) + " is '" + dims[d] +
                  "'; each dimension is a number from 1 to 16");
    }
  }
  bool have_cores = false, have_link = false;
  for (size_t i = 1; i < fields.size(); ++i) {
    const std::string& f = fields[i];
    if (f.compare(0, 6, "cores=") == 0 && !have_cores) {
      if (!parse_bounded(f.substr(6), 1, kMaxCores, &m.cores)) {
        return fail("cores is '" + f.substr(6) + "'; expected a number from 1 to 64");
      }
      have_cores = true;
    } else if (f.compare(0, 5, "link=") == 0 && !have_link) {
      std::vector<std::string> v = split(f.substr(5), ',');
      double gbps = 0, lat_us = 0;
      if (v.size() != 2 || !parse_double(v[0], &gbps) || !parse_double(v[1], &lat_us) ||
          !(gbps > 0) || lat_us < 0) {
        return fail("link is '" + f.substr(5) +
                    "'; expected GBPS,LAT_US: GB/s per direction (more than 0) and microseconds "
                    "per hop (0 or more), e.g. link=1,20");
      }
      m.neuronlink.bandwidth = gbps * 1e9;
      m.neuronlink.latency = lat_us * 1e-6;
      have_link = true;
    } else {
      return fail("'" + f + "' is not cores=N or link=GBPS,LAT_US (each at most once)");
    }
  }
  if (!have_cores) return fail("cores=N is missing (e.g. torus:2x2:cores=1)");
  m.source = std::string("test torus with the figures of ") + fig.name + " (" + fig.chip + ")";
  if (have_link) m.source += "; NeuronLink figures given by link=";
  *out = m;
  return true;
}

int dim_links(int size) { return size >= 3 ? 2 : size == 2 ? 1 : 0; }

int links_per_chip(const Machine& m) {
  int n = 0;
  for (int d = 0; d < m.ndims; ++d) n += dim_links(m.dims[d]);
  return n;
}

// The chip one step from `chip` along `dim` in direction `dir`, with wrap-around.
int neighbour(const Machine& m, int chip, int dim, int dir) {
  int c[3];
  chip_coords(m, chip, c);
  c[dim] = (c[dim] + dir + m.dims[dim]) % m.dims[dim];
  return chip_at(m, c);
}

constexpr double kHostNetworkGBps = 5.0;
constexpr double kHostNetworkLatencyUs = 10.0;

Machine host_machine() {
  Machine m;
  m.name = "host";
  // Host instances (TORUSMPI_INSTANCES) and nodes talk over whatever network this host has, so
  // the figures are a plain host's: libfabric tcp as measured between two host instances on a
  // 2-core VM over loopback (osu_latency 8 B 9 us, 1 MiB 204 us: about 5 GB/s a pair), which is
  // also the order of a 40-50 Gbit/s Ethernet. They decide when the hierarchical algorithms,
  // which send less across the network, beat the flat ones.
  m.efa.bandwidth = kHostNetworkGBps * 1e9;
  m.efa.latency = kHostNetworkLatencyUs * 1e-6;
  m.source = "no emulation: ranks are where the launcher put them";
  return m;
}

// A host machine of one instance per node: nodes numbered in the order of their lowest rank, each
// rank's core its position among its node's ranks, cores the most ranks a node holds. False (m
// untouched) when the map is not one label from 0 up per job rank, or names one node only.
bool place_on_nodes(const std::vector<int>& node_of_rank, int job_size, Machine* m) {
  if (static_cast<int>(node_of_rank.size()) != job_size) return false;
  std::map<int, int> instance_of;  // node label -> instance
  std::vector<int> held;           // ranks placed so far on each instance
  std::vector<Place> placement(node_of_rank.size());
  for (size_t r = 0; r < node_of_rank.size(); ++r) {
    if (node_of_rank[r] < 0) return false;
    auto [it, added] = instance_of.emplace(node_of_rank[r], static_cast<int>(held.size()));
    if (added) held.push_back(0);
    placement[r].instance = it->second;
    placement[r].core = held[it->second]++;
  }
  if (held.size() < 2) return false;
  m->instances = static_cast<int>(held.size());
  m->cores = *std::max_element(held.begin(), held.end());
  m->placement = std::move(placement);
  return true;
}

Machine& current() {
  static Machine m = host_machine();
  return m;
}

}  // namespace

bool parse_machine(const std::string& text, Machine* out, std::string* error) {
  if (text == "host") {
    *out = host_machine();
    return true;
  }
  // The default LNC is also accepted by name, so that scripts can spell out both settings.
  std::string lookup = text;
  if (text == "trn2.48xl:lnc=2") lookup = "trn2.48xl";
  if (text == "trn2u:lnc=2") lookup = "trn2u";
  for (const ModelRow& row : kModels) {
    if (lookup == row.name) {
      *out = make_model(row, text);
      return true;
    }
  }
  if (text.compare(0, 6, "torus:") == 0) return parse_torus(text, out, error);
  *error = "'" + text + "' is not an instance model; " + kExpected;
  return false;
}

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const ModelRow& row : kModels) v.push_back(row.name);
    return v;
  }();
  return names;
}

Place place(const Machine& m, int rank) {
  Place p;
  if (rank < 0) return p;
  if (!m.placement.empty()) {
    return rank < static_cast<int>(m.placement.size()) ? m.placement[rank] : p;
  }
  int cores = m.cores > 0 ? m.cores : 1;
  int per_instance = cores * m.chips();
  p.instance = rank / per_instance;
  p.chip = (rank / cores) % m.chips();
  p.core = rank % cores;
  return p;
}

void chip_coords(const Machine& m, int chip, int coords[3]) {
  coords[0] = chip % m.dims[0];
  coords[1] = (chip / m.dims[0]) % m.dims[1];
  coords[2] = chip / (m.dims[0] * m.dims[1]);
}

int chip_at(const Machine& m, const int coords[3]) {
  int c[3];
  // Coordinates wrap, as the torus does: a neighbour across the edge is one step away.
  for (int d = 0; d < 3; ++d) c[d] = ((coords[d] % m.dims[d]) + m.dims[d]) % m.dims[d];
  return c[0] + m.dims[0] * (c[1] + m.dims[1] * c[2]);
}

int link_count(const Machine& m) { return m.emulated() ? m.chips() * links_per_chip(m) : 0; }

int link_id(const Machine& m, const Link& l) {
  if (!m.emulated() || l.from < 0 || l.from >= m.chips() || l.dim < 0 || l.dim >= m.ndims ||
      (l.dir != 1 && l.dir != -1)) {
    return -1;
  }
  int size = m.dims[l.dim];
  if (size < 2) return -1;
  int slot = 0;
  for (int d = 0; d < l.dim; ++d) slot += dim_links(m.dims[d]);
  // Both directions of a size-2 dimension reach the same chip over the same link.
  if (size >= 3 && l.dir < 0) slot += 1;
  return l.from * links_per_chip(m) + slot;
}

Link link_of(const Machine& m, int id) {
  Link l;
  int per = links_per_chip(m);
  if (per == 0 || id < 0 || id >= link_count(m)) return l;
  l.from = id / per;
  int slot = id % per;
  for (int d = 0; d < m.ndims; ++d) {
    int n = dim_links(m.dims[d]);
    if (slot < n) {
      l.dim = d;
      l.dir = slot == 0 ? 1 : -1;
      break;
    }
    slot -= n;
  }
  l.to = neighbour(m, l.from, l.dim, l.dir);
  return l;
}

void route(const Machine& m, int from_chip, int to_chip, std::vector<Link>* out) {
  out->clear();
  if (!m.emulated() || from_chip == to_chip) return;
  int a[3], b[3];
  chip_coords(m, from_chip, a);
  chip_coords(m, to_chip, b);
  int at = from_chip;
  for (int d = 0; d < m.ndims; ++d) {
    int size = m.dims[d];
    int forward = ((b[d] - a[d]) % size + size) % size;
    if (forward == 0) continue;
    int backward = size - forward;
    int dir = forward <= backward ? 1 : -1;
    int steps = dir > 0 ? forward : backward;
    for (int s = 0; s < steps; ++s) {
      Link l;
      l.from = at;
      l.dim = d;
      l.dir = dir;
      l.to = neighbour(m, at, d, dir);
      out->push_back(l);
      at = l.to;
    }
  }
}

int hops(const Machine& m, int from_chip, int to_chip) {
  if (!m.emulated()) return 0;
  int a[3], b[3];
  chip_coords(m, from_chip, a);
  chip_coords(m, to_chip, b);
  int n = 0;
  for (int d = 0; d < m.ndims; ++d) {
    int size = m.dims[d];
    int forward = ((b[d] - a[d]) % size + size) % size;
    n += std::min(forward, size - forward);
  }
  return n;
}

const Machine& machine() { return current(); }

Status load(int job_size, std::string* error) { return load(job_size, {}, error); }

Status load(int job_size, const std::vector<int>& node_of_rank, std::string* error) {
  const std::string& text = params::instance();
  Machine m;
  std::string why;
  if (!parse_machine(text, &m, &why)) {
    *error = "TORUSMPI_INSTANCE: " + why;
    return Status::kErrArg;
  }
  if (job_size < 1) job_size = 1;
  const int64_t instances = params::instances();
  if (instances < 1 || instances > job_size) {
    *error = "TORUSMPI_INSTANCES=" + std::to_string(instances) + ": a job of " +
             std::to_string(job_size) + " rank(s) fills between 1 and " + std::to_string(job_size) +
             " instance(s)";
    return Status::kErrArg;
  }
  m.instances = static_cast<int>(instances);
  if (!m.emulated()) {
    // A job on several nodes is a host instance per node, its ranks where the launcher put them,
    // unless TORUSMPI_INSTANCES asks for host instances of its own. A host instance is one chip
    // holding its share of the job (of TORUSMPI_INSTANCES, the last one may hold fewer).
    if (m.instances > 1 || !place_on_nodes(node_of_rank, job_size, &m)) {
      m.cores = (job_size + m.instances - 1) / m.instances;
    }
  } else if (job_size > m.ranks()) {
    std::string what = m.instances == 1 ? m.name + " holds "
                                        : std::to_string(m.instances) + " x " + m.name +
                                              " (TORUSMPI_INSTANCES) hold ";
    *error = "TORUSMPI_INSTANCE: " + what + std::to_string(m.ranks()) + " ranks; this job has " +
             std::to_string(job_size);
    return Status::kErrArg;
  }
  current() = m;
  return Status::kOk;
}

}  // namespace torusmpi::topo
