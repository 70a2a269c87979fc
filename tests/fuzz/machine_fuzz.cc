// Fuzz target: TORUSMPI_INSTANCE models (src/topo/machine.cc). The input's first byte picks a job
// size and TORUSMPI_INSTANCES, the rest is the model's name. parse_machine() either gives a machine
// whose links and routes are consistent, or an error quoting the text; topo::load() names the
// variable it rejects.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/params.h"
#include "topo/machine.h"

namespace {

void check_machine(const torusmpi::topo::Machine& m) {
  using namespace torusmpi::topo;
  if (m.cores < 1 || m.chips() < 1) std::abort();
  const int chips = m.chips();
  const int links = link_count(m);
  for (int id = 0; id < links; ++id) {
    if (link_id(m, link_of(m, id)) != id) std::abort();
  }
  // Routes between a few pairs: each step is a link whose id is in range, ending at the target.
  std::vector<Link> path;
  for (int a = 0; a < chips && a < 8; ++a) {
    const int b = chips - 1 - a;
    route(m, a, b, &path);
    if (static_cast<int>(path.size()) != hops(m, a, b)) std::abort();
    int at = a;
    for (const Link& l : path) {
      const int id = link_id(m, l);
      if (l.from != at || id < 0 || id >= links) std::abort();
      at = l.to;
    }
    if (at != b) std::abort();
    int coords[3];
    chip_coords(m, a, coords);
    if (chip_at(m, coords) != a) std::abort();
  }
  const Place p = place(m, m.ranks() - 1);
  if (p.chip < 0 || p.chip >= chips || p.core < 0 || p.core >= m.cores) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torusmpi;
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  topo::Machine m;
  std::string error;
  if (topo::parse_machine(text, &m, &error)) {
    check_machine(m);
  } else if (error.find('\'') != 0) {
    std::abort();  // quotes the text
  }
  if (text.find('\0') != std::string::npos) return 0;
  // The job: 1 to 1456 ranks in 0 to 7 instances (0: a bad TORUSMPI_INSTANCES).
  const int job_size = 1 + (data[0] & 0x0f) * 97;
  setenv("TORUSMPI_INSTANCE", text.c_str(), 1);
  setenv("TORUSMPI_INSTANCES", std::to_string((data[0] >> 4) & 0x07).c_str(), 1);
  std::vector<std::string> errors, warnings;
  params::load(&errors, &warnings);
  if (topo::load(job_size, &error) == Status::kOk) {
    const topo::Machine& loaded = topo::machine();
    if (loaded.emulated()) check_machine(loaded);
    for (int r = 0; r < job_size; r += 1 + job_size / 16) {
      const topo::Place p = topo::place(loaded, r);
      if (p.instance < 0 || p.instance >= loaded.instances) std::abort();
    }
  } else if (error.compare(0, 18, "TORUSMPI_INSTANCE:") != 0 &&
             error.compare(0, 19, "TORUSMPI_INSTANCES=") != 0) {
    std::abort();
  }
  return 0;
}
