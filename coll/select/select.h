// Choosing a collective's algorithm, in this order:
//   1. forced: TORUSMPI_<COLL>_ALGORITHM=<token>, or by size, TORUSMPI_<COLL>="tok:0-4096;tok:4097-max"
//   2. the first matching rule of the JSON file TORUSMPI_COLL_RULES
//   3. the cost model (registry costs with this machine's figures, model.h), cheapest first
//   4. the collective's fallback
// A forced algorithm that cannot run the call (an op it does not take) obeys
// TORUSMPI_COLL_FALLBACK: error (the call fails), warn (once per call shape), silent.
// Nothing rank-local goes into a choice: every rank of a call makes the same one.
#ifndef TORUSMPI_COLL_SELECT_SELECT_H_
#define TORUSMPI_COLL_SELECT_SELECT_H_

#include <string>

#include "coll/coll.h"
#include "coll/select/registry.h"
#include "core/status.h"

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

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_SELECT_SELECT_H_
