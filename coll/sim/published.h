// What AWS publishes for Neuron collectives, beside what the simulator predicts for the same call:
// `torusmpi_sim --published` prints it, and tests/unit/sim_topo_test checks it, so that a change to
// a machine's figures (src/topo's kModels), the timing model or an algorithm that moves a
// prediction away from AWS's figure shows. published.cc holds the table, each point with its
// source.
#ifndef TORUSMPI_COLL_SIM_PUBLISHED_H_
#define TORUSMPI_COLL_SIM_PUBLISHED_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "coll/coll.h"

namespace torusmpi::coll::sim {

// One published point: an nccom-test call and what it measured.
struct PublishedPoint {
  const char* model;  // the instance model it ran on (topo::parse_machine's name)
  int instances;
  const char* op;  // nccom-test's operation: allr, allg, allgv, permute, alltoallv
  int ranks;
  uint64_t bytes;    // nccom-test's size(B): the vector (allr), every rank's blocks together (allg)
  size_t elem;       // bytes per element of its datatype
  double time_us;    // published time
  double busbw;      // published busbw, as printed
  const char* unit;  // busbw's unit as the printed figures are computed (GiB/s or GB/s)
  const char* example;  // which example of the nccom-test user guide (published.cc's source)
  // Why the point is shown but not held to the bound (nullptr: held to it), and whether it can be
  // simulated at all.
  const char* unchecked;
  bool simulated;
};

const std::vector<PublishedPoint>& published_points();

// The largest predicted/published ratio (or its inverse) a checked point may have.
constexpr double kPublishedBound = 1.5;

struct PublishedResult {
  const PublishedPoint* point = nullptr;
  Coll coll = Coll::kAllreduce;
  std::string pick;  // the algorithm the selector picks for the call
  double predicted_us = 0;
  std::string best;  // the fastest algorithm the simulator finds, and its time
  double best_us = 0;
  double ratio = 0;  // predicted / published time (0: not simulated)
  bool ok = true;    // a checked point within the bound, its result right; unchecked points: true
  std::string error;
};

// Simulates every point that can be (a second or so).
std::vector<PublishedResult> compare_published();

// The table torusmpi_sim --published prints: the hardware figures of the models, then a line per
// point, then a summary. *failed: how many checked points are outside the bound or wrong.
std::string published_report(const std::vector<PublishedResult>& results, int* failed);

}  // namespace torusmpi::coll::sim

#endif  // TORUSMPI_COLL_SIM_PUBLISHED_H_
