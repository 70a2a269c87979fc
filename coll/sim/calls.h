// Whole calls for the simulator: every rank's Args of one collective call, with the arrays the
// vector collectives need, made up so that they break what they can (uneven counts, zeros, gaps
// and reversed displacements). torusmpi_sim and the tests make their calls here.
#ifndef TORUSMPI_COLL_SIM_CALLS_H_
#define TORUSMPI_COLL_SIM_CALLS_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "coll/coll.h"
#include "topo/machine.h"

namespace torusmpi::coll::sim {

struct CallShape {
  Coll coll = Coll::kAllreduce;
  int size = 1;
  size_t count = 0;  // as Args::count; for vector collectives, the typical per-rank count
  size_t elem = 4;
  int root = 0;
  bool in_place = false;
  bool commutative = true;
  bool in_network = false;  // an in-network aggregation switch serves the call (Args::in_network)
  // The ranks sit on this machine as job ranks 0..size-1 would (core, then chip, then
  // instance): every Args::topo points at the call's view. nullptr or the host of one instance: no
  // placement.
  const topo::Machine* machine = nullptr;
};

// One call: args[r] is rank r's. The arrays the Args point into live as long as the Call.
struct Call {
  CallShape shape;
  std::vector<Args> args;
  std::vector<std::vector<size_t>> arrays;  // storage
  std::vector<const size_t*> peer_scounts, peer_sdispls;
  std::vector<std::vector<int>> dests, sources;  // neighbourhood collectives' graph
  TopoView view;  // the ranks' placement (ndims 0 without an emulated machine)
};

std::unique_ptr<Call> make_call(const CallShape& shape);

}  // namespace torusmpi::coll::sim

#endif  // TORUSMPI_COLL_SIM_CALLS_H_
