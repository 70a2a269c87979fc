// Debug and diagnostic lines. Every line is one line with its context:
//   torusmpi[r3] boot: PMIx server reached, job of 4 ranks
// Debug lines of a subsystem appear when TORUSMPI_DEBUG names it (or "all").
#ifndef TORUSMPI_CORE_LOG_H_
#define TORUSMPI_CORE_LOG_H_

#include <string>

namespace torusmpi::log {

enum class Subsystem : unsigned { kBoot, kMpi, kProgress, kParams, kPml, kSelect, kCount };

const char* subsystem_name(Subsystem s);

// Parses a TORUSMPI_DEBUG value ("boot,mpi", "all", ""). Unknown names go to *unknown, comma
// separated; the known ones are still enabled.
unsigned parse_mask(const std::string& text, std::string* unknown);
void set_mask(unsigned mask);
bool enabled(Subsystem s);

// The rank shown in the prefix; -1 (the default) shows "r?" until the bootstrap knows it.
void set_rank(int rank);

// printf-style; a newline is added. warn() and error() always print.
void debug(Subsystem s, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// The "torusmpi[r3] " prefix of this process's lines.
std::string prefix();

// printf into a string, of any length.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace torusmpi::log

#define TORUSMPI_DEBUG(subsys, ...)                                            \
  do {                                                                         \
    if (::torusmpi::log::enabled(::torusmpi::log::Subsystem::subsys))          \
      ::torusmpi::log::debug(::torusmpi::log::Subsystem::subsys, __VA_ARGS__); \
  } while (0)

#endif  // TORUSMPI_CORE_LOG_H_
