// The cost model's calibration (coll/select/calibration.def) computed from the simulator, so that
// a change to a machine's figures, the timing model or an algorithm shows as changed numbers in
// one file: `torusmpi_sim --calibrate` writes it, coll_cost_test fails while it is stale.
#ifndef TORUSMPI_COLL_SIM_CALIBRATE_H_
#define TORUSMPI_COLL_SIM_CALIBRATE_H_

#include <string>
#include <vector>

namespace torusmpi::coll::sim {

struct Calibrated {
  const char* name;            // the constant: kRdhBytes, ...
  const char* token;           // the allreduce algorithm it is measured on
  double value;                // the mean of `points`
  std::vector<double> points;  // one ratio per machine and size, in kCalibrationPoints' order
};

// For each factor of coll/select/cost.h's kCalibration: its allreduce algorithm simulated on the
// full trn2.48xl and trn2u at 64 MiB and 1 GiB, where the per-byte terms decide, and at each the
// simulated time's per-byte part over the closed form's,
//   (simulated - call - A) / B, the closed form being A + factor * B (A its cost at 0 bytes,
//   call the runtime's cost of the call, Model::call).
// A second or so.
std::vector<Calibrated> calibrate();

// calibration.def's text for `values`, each to two decimals (finer than the spread of the
// points, which no single factor follows better).
std::string calibration_def(const std::vector<Calibrated>& values);

// The points, as "trn2.48xl 64 MiB", in calibrate()'s order.
std::vector<std::string> calibration_points();

}  // namespace torusmpi::coll::sim

#endif  // TORUSMPI_COLL_SIM_CALIBRATE_H_
