// Choosing a collective's algorithm, in this order:
//   1. forced: TORUSMPI_<COLL>_ALGORITHM=<token>, or by size,
//   TORUSMPI_<COLL>="tok:0-4096;tok:4097-max"
//   2. the first matching rule of the JSON file TORUSMPI_COLL_RULES
//   3. the cost model (registry costs with this machine's figures, model.h), cheapest first
//   4. the collective's fallback
// A forced algorithm that cannot run the call (an op it does not take) obeys
// TORUSMPI_COLL_FALLBACK: error (the call fails), warn (once per call shape), silent.
// Nothing rank-local goes into a choice: every rank of a call makes the same one.
#ifndef TORUSMPI_COLL_SELECT_SELECT_H_
#define TORUSMPI_COLL_SELECT_SELECT_H_

#include <string>
#include <vector>

#include "coll/coll.h"
#include "coll/select/registry.h"
#include "core/status.h"
#include "topo/machine.h"

namespace torusmpi::coll {

struct Choice {
  const Algorithm* alg = nullptr;  // nullptr: no algorithm may run the call (see why)
  std::string why;                 // one phrase: "forced by TORUSMPI_ALLREDUCE_ALGORITHM", ...
  bool passed_over = false;        // a forced algorithm could not run the call
};

// Reads TORUSMPI_COLL_RULES and checks every forced token and range string of the environment.
// An error names the variable, or the file and the rule's index, and what is wrong.
Status selection_load(std::string* error);

// Checks the selection parameters as they are now (after an MPI_T write).
Status selection_check(std::string* error);

Choice select_algorithm(const Args& a, const Model& m);

// The cost model's figures for ranks of one node (model.cc).
Model host_model(bool oversubscribed);

// Where the ranks of a communicator sit: job_ranks[r] is the job rank of its rank r, placed on
// `m` as topo::place() says. Host (not emulated): ndims 0, every rank on chip 0.
TopoView topo_view(const topo::Machine& m, const std::vector<int>& job_ranks);

// What a chip does besides its links, per rank, as both the cost model and the simulator count it
// (model.cc derives it from the machine's figures and the software's own costs).
//   software_alpha  per message: posting, matching, DMA descriptors, the handshake
//   port_beta       per byte through one rank's DMA queue (its share of the chip's engines): a
//                   rank driving several links at once is bounded by this, not by one link
//   gamma, copy     per byte reduced by the chip's kernels, copied within the chip's memory
struct DeviceFigures {
  double software_alpha = 0;
  double port_beta = 0;
  double gamma = 0;
  double copy = 0;
};
DeviceFigures device_figures(const topo::Machine& m);

// The cost model for a communicator placed as `view` on `m`: host_model() on the host (torus
// nullptr), else the flat figures of its average pair and *torus filled with the per-link ones
// (the result's torus points at it: keep it alive as long as the Model).
Model topo_model(const topo::Machine& m, const TopoView& view, bool oversubscribed,
                 TorusModel* torus);

// One line for TORUSMPI_DEBUG=select and torusmpi_sim: the figures a choice was made with.
std::string describe_model(const Model& m);

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_SELECT_SELECT_H_
