// Helpers the simulator's tests share: the counts that break algorithms, and the selector's pick
// against the fastest algorithm the simulator finds for one call on an emulated machine.
#ifndef TORUSMPI_TESTS_UNIT_SIM_HELPERS_H_
#define TORUSMPI_TESTS_UNIT_SIM_HELPERS_H_

#include <algorithm>
#include <string>
#include <vector>

#include "coll/select/registry.h"
#include "coll/select/select.h"
#include "coll/sim/calls.h"
#include "coll/sim/sim.h"
#include "topo/machine.h"

namespace torusmpi::coll::test {

// 0, 1, p-1, p, p+1 and a prime, each once.
inline std::vector<size_t> sweep_counts(int p) {
  std::vector<size_t> c = {
      0, 1, static_cast<size_t>(p - 1), static_cast<size_t>(p), static_cast<size_t>(p + 1), 1009};
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

struct PickReport {
  double picked = 0, best = 0;                   // simulated seconds
  std::string pick, fastest, table, why, wrong;  // wrong: the first algorithm that failed
};

// The call `shape` (its machine set) on every algorithm that supports it, simulated with the
// machine's figures, and the selector's pick with the Model the library builds for the placement
// (the code Team runs). A wrong schedule is no candidate; it is named in `wrong`.
inline PickReport pick_vs_best(const sim::CallShape& shape) {
  PickReport rep;
  auto call = sim::make_call(shape);
  TorusModel torus;
  const Model model = topo_model(*shape.machine, call->view, false, &torus);
  const Choice pick = select_algorithm(call->args[0], model);
  rep.pick = pick.alg != nullptr ? pick.alg->token : "none";
  rep.why = pick.why;
  const sim::Costs costs = sim::machine_costs(*shape.machine, call->view);
  for (const Algorithm& alg : algorithms()) {
    std::string no;
    if (alg.coll != shape.coll || !supports(alg, call->args[0], &no)) continue;
    const sim::Result r = sim::run(
        call->args, [&alg](Builder& b, const Args& a) { alg.build(b, a); }, costs);
    if (!r.ok) {
      if (rep.wrong.empty()) rep.wrong = std::string(alg.token) + ": " + r.error;
      continue;
    }
    rep.table += " " + std::string(alg.token) + "=" + std::to_string(r.time * 1e6) + "us";
    if (rep.fastest.empty() || r.time < rep.best) rep.best = r.time, rep.fastest = alg.token;
    if (&alg == pick.alg) rep.picked = r.time;
  }
  return rep;
}

}  // namespace torusmpi::coll::test

#endif  // TORUSMPI_TESTS_UNIT_SIM_HELPERS_H_
