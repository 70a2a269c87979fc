// Fuzz target: collective selection's inputs from the user (coll/select/select.cc): the rule file
// TORUSMPI_COLL_RULES (JSON, src/core/json.cc) and the forced tokens and size ranges
// TORUSMPI_<COLL>_ALGORITHM, TORUSMPI_<COLL> ("tok:lo-hi;..."), TORUSMPI_COLL_FALLBACK. A bad one
// is an error that names the file or the variable.
//
// Input: byte 0 even: the rest is a rule file. Byte 0 odd: byte 1 picks a selection parameter and
// the rest is its value.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "coll/select/select.h"
#include "core/params.h"

namespace {

using namespace torusmpi;

size_t row_of(const std::string& env) {
  const std::vector<params::Info>& all = params::all();
  for (size_t i = 0; i < all.size(); ++i) {
    if (env == all[i].env) return i;
  }
  std::abort();
}

// The selection parameters: the rows after TORUSMPI_COLL_RULES (the forced tokens, the ranges
// and the fallback).
std::vector<size_t> selection_rows() {
  std::vector<size_t> rows;
  const std::vector<params::Info>& all = params::all();
  for (size_t i = row_of("TORUSMPI_COLL_RULES") + 1; i < all.size(); ++i) {
    if (all[i].type == params::Type::String) rows.push_back(i);
  }
  return rows;
}

void rule_file(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("rules_fuzz", 0);
  if (fd < 0) std::abort();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
    std::abort();
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  std::string error;
  if (params::set(row_of("TORUSMPI_COLL_RULES"), path, &error) != Status::kOk) std::abort();
  if (coll::selection_load(&error) != Status::kOk && error.compare(0, path.size(), path) != 0) {
    std::abort();  // names the file
  }
}

void parameter(const uint8_t* data, size_t size) {
  static const std::vector<size_t> rows = selection_rows();
  if (size == 0) return;
  const size_t row = rows[data[0] % rows.size()];
  const std::string value(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string error;
  if (params::set(row, value, &error) != Status::kOk) return;
  const std::string env = params::all()[row].env;
  if (coll::selection_check(&error) != Status::kOk && error.compare(0, env.size(), env) != 0) {
    std::abort();  // names the variable
  }
  params::set(row, params::all()[row].default_text, &error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] & 1) {
    parameter(data + 1, size - 1);
  } else {
    rule_file(data + 1, size - 1);
  }
  return 0;
}
