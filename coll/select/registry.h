// The one registry of algorithms: for each collective, every algorithm by token, with its builder,
// what it cannot do (restrictions), its cost model and a line of documentation. Each algorithm's
// file defines its entry (coll/algorithms.h; the cost beside the file's `Cost =` comment, made of
// coll/select/cost.h's pieces) and registry.cc lists them. Selection (select.h), torusmpi_info,
// torusmpi_sim and the tests read it; nothing else lists algorithms.
#ifndef TORUSMPI_COLL_SELECT_REGISTRY_H_
#define TORUSMPI_COLL_SELECT_REGISTRY_H_

#include <string>
#include <vector>

#include "coll/coll.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll {

// What an algorithm cannot do; a call with any of these is given another algorithm.
enum Restriction : unsigned {
  kNeedsCommutative = 1u << 0,  // combines blocks out of rank order
  // Spans two or more instances with as many ranks in each: the cost model and the rules pass
  // it over elsewhere; forced elsewhere it runs anyway, as one ring in snake order (its builder's
  // form off its case, as the torus algorithms run as rings off a torus), so forcing every
  // algorithm of the registry on any job stays right.
  kNeedsInstances = 1u << 1,
  // Aggregates through the in-network switch (Args::in_network): elsewhere the cost model and the
  // rules pass it over; forced without one it runs anyway, every aggregation done over the network
  // instead (coll/sched/exec.cc), so its schedule stays right everywhere.
  kNeedsSwitch = 1u << 2,
};

// The emulated machine as the cost model sees one communicator on it (coll/select/model.cc fills
// it from src/topo's figures; the simulator uses the same figures per link).
//   shaped    the communicator fills its torus: every chip of the torus holds `cores` of its
//             ranks (the torus algorithms then follow the links; otherwise they run as one ring)
//   hop_alpha, link_beta    per hop and per byte on one NeuronLink link, one direction
//   chip_alpha, chip_beta   per message and per byte between two cores of one chip
//   gamma     per byte reduced by a chip's reduction kernels
// On the host (no torus) a job spanning instances gets one too, ndims 0, for its instance figures.
struct TorusModel {
  int ndims = 0;
  int dims[3] = {1, 1, 1};
  int cores = 1;
  bool shaped = false;
  double hop_alpha = 0;
  double link_beta = 0;
  double chip_alpha = 0;
  double chip_beta = 0;
  double gamma = 0;
  // A communicator spanning `instances` instances with as many ranks in each (else 1), as the
  // hierarchical algorithms see it:
  //   instance_shaped, instance_cores   each instance's ranks fill its torus, so many a chip
  //   instance_alpha, instance_beta     the flat figures among one instance's ranks
  //   efa_alpha   per message between instances (software + the network's latency)
  //   efa_beta    per byte a rank sends to another instance: its chip's NIC, shared by the
  //               chip's ranks, which all send at once in the network stages
  int instances = 1;
  bool instance_shaped = false;
  int instance_cores = 1;
  double instance_alpha = 0;
  double instance_beta = 0;
  double efa_alpha = 0;
  double efa_beta = 0;
};

// Figures of the flat cost model, in seconds: per message, per byte moved between ranks, per
// byte reduced, per byte copied within a rank. On an emulated machine alpha and beta are those of
// a message between two ranks placed as the average pair of the communicator is (hops, sharing
// of links), and `torus` has the per-link figures; `call` is the runtime's own cost of the call
// (topo::call_time), the same whatever the algorithm. `overhead` is what one more message of a
// step costs the rank that posts it (LogP's o: posting, matching); `switch_wait` the part of
// alpha that a step waits for its peer's process to get a core (more ranks than cores), 0 when
// every rank has one.
struct Model {
  double alpha;
  double beta;
  double gamma;
  double copy;
  const TorusModel* torus = nullptr;  // nullptr: the host, no emulation
  double call = 0;
  double overhead = 0;
  double switch_wait = 0;
};

using BuildFn = void (*)(Builder&, const Args&);
// Predicted seconds for p ranks and `bytes` (selection_bytes() of the call).
using CostFn = double (*)(const Model& m, int p, double bytes);

struct Algorithm {
  Coll coll;
  const char* token;
  BuildFn build;
  unsigned restrictions;
  const char* cost_text;  // the cost in MPICH's notation, as the file's opening comment gives it
  CostFn cost;
  const char* doc;
};

// Every algorithm, grouped by collective in Coll order; within a collective the first is the
// fallback, which runs every call.
const std::vector<Algorithm>& algorithms();
const Algorithm* find_algorithm(Coll c, const std::string& token);
const Algorithm& fallback(Coll c);

// Whether `alg` can run the call; if not, why (one phrase).
bool supports(const Algorithm& alg, const Args& a, std::string* why);
// Whether a forced `alg` runs the call: as supports(), except kNeedsInstances (see above).
bool runs_forced(const Algorithm& alg, const Args& a, std::string* why);

// The message size selection works with: what the OSU benchmark of the collective calls its
// size. Vectors (bcast, reduce, allreduce, scan, exscan, reduce_scatter, reduce_scatter_block):
// the whole vector; blocks (allgather, alltoall, gather, scatter): one rank's block; allgatherv:
// the average block. gatherv, scatterv, alltoallv, alltoallw and the neighbourhood v and w forms:
// 0, as a rank knows its own counts only and every rank must choose alike; neighbor_allgather and
// neighbor_alltoall: one block. Each collective's descriptor says (coll/collective.h); this reads
// it (coll/collectives.cc).
size_t selection_bytes(const Args& a);

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_SELECT_REGISTRY_H_
