// Helpers for unit tests that change the environment of the test process.
#ifndef TORUSMPI_TESTS_UNIT_TEST_ENV_H_
#define TORUSMPI_TESTS_UNIT_TEST_ENV_H_

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace torusmpi::test {

// Names of the environment variables that start with one of `prefixes`.
inline std::vector<std::string> variables_with_prefix(const std::vector<std::string>& prefixes) {
  std::vector<std::string> names;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    for (const std::string& prefix : prefixes) {
      if (std::strncmp(*e, prefix.c_str(), prefix.size()) == 0) {
        names.emplace_back(*e, std::strcspn(*e, "="));
        break;
      }
    }
  }
  return names;
}

// Unsets them. The names are collected first: unsetenv() reshuffles environ under the loop.
inline void unset_with_prefix(const std::vector<std::string>& prefixes) {
  for (const std::string& name : variables_with_prefix(prefixes)) unsetenv(name.c_str());
}

}  // namespace torusmpi::test

#endif  // TORUSMPI_TESTS_UNIT_TEST_ENV_H_
