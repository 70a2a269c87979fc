// Fuzz target: TORUSMPI_* values (src/core/params.cc). The input is "NAME=value" lines: each is
// set in the environment and params::load() reads them all, then each value is written again
// through params::set() (as MPI_T does). A bad value is an error naming its variable; the default
// stays. Every accessor then returns a value of its type (counts are never negative).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/params.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torusmpi;
  const std::vector<params::Info>& all = params::all();
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> names;
  size_t start = 0;
  while (start < text.size() && names.size() < 8) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t eq = line.find('=');
    if (eq == std::string::npos || line.find('\0') != std::string::npos) continue;
    std::string name = line.substr(0, eq), value = line.substr(eq + 1);
    // A short name is a row of the table: "3=64K" sets the fourth parameter.
    if (!name.empty() && name.size() <= 2 && name.find_first_not_of("0123456789") == name.npos) {
      name = all[std::strtoul(name.c_str(), nullptr, 10) % all.size()].env;
    } else {
      name = "TORUSMPI_" + name;
    }
    if (name.size() <= 9 || name.find('=') != name.npos) continue;
    setenv(name.c_str(), value.c_str(), 1);
    names.push_back(name);
  }
  std::vector<std::string> errors, warnings;
  const Status s = params::load(&errors, &warnings);
  if ((s == Status::kOk) != errors.empty()) std::abort();
  for (const std::string& e : errors) {
    if (e.compare(0, 9, "TORUSMPI_") != 0) std::abort();  // names its variable
  }
  for (const std::string& name : names) {
    const char* value = std::getenv(name.c_str());
    for (size_t i = 0; i < all.size(); ++i) {
      if (name != all[i].env || value == nullptr) continue;
      std::string error;
      if (params::set(i, value, &error) != Status::kOk && error.find(all[i].env) != 0) {
        std::abort();
      }
    }
    unsetenv(name.c_str());
  }
  for (size_t i = 0; i < all.size(); ++i) {
    const params::Value v = params::value(i);
    if (all[i].type != params::Type::String && v.number < 0) std::abort();
  }
  // Leave the defaults for the next input.
  errors.clear();
  params::load(&errors, &warnings);
  int64_t n = 0;
  for (const char* t : {"0", "64K", "1M", "8G", "9223372036854775807"}) {
    if (!params::parse_size(t, &n) || n < 0) std::abort();
  }
  return 0;
}
