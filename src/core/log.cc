#include "core/log.h"

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace torusmpi::log {
namespace {

std::atomic<unsigned> g_mask{0};
std::atomic<int> g_rank{-1};

constexpr const char* kNames[] = {"boot", "mpi", "progress", "params", "pml", "select"};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<unsigned>(Subsystem::kCount),
              "one name per subsystem");

// One write(2)-sized line, so lines of different ranks do not interleave mid-line.
void emit(const char* tag, const char* fmt, va_list ap) {
  char line[1024];
  std::string head = prefix() + tag;
  int n = std::snprintf(line, sizeof(line), "%s", head.c_str());
  int m = std::vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
  size_t len = n + (m < 0 ? 0 : std::min<size_t>(m, sizeof(line) - n - 2));
  line[len++] = '\n';
  std::fwrite(line, 1, len, stderr);
  std::fflush(stderr);
}

}  // namespace

const char* subsystem_name(Subsystem s) { return kNames[static_cast<unsigned>(s)]; }

unsigned parse_mask(const std::string& text, std::string* unknown) {
  unsigned mask = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    if (word == "all") {
      mask = (1u << static_cast<unsigned>(Subsystem::kCount)) - 1;
      continue;
    }
    bool found = false;
    for (unsigned i = 0; i < static_cast<unsigned>(Subsystem::kCount); ++i) {
      if (word == kNames[i]) mask |= 1u << i, found = true;
    }
    if (!found) *unknown += (unknown->empty() ? "" : ",") + word;
  }
  return mask;
}

void set_mask(unsigned mask) { g_mask.store(mask, std::memory_order_relaxed); }

bool enabled(Subsystem s) {
  return (g_mask.load(std::memory_order_relaxed) >> static_cast<unsigned>(s)) & 1u;
}

void set_rank(int rank) { g_rank.store(rank, std::memory_order_relaxed); }

std::string prefix() {
  int rank = g_rank.load(std::memory_order_relaxed);
  return rank < 0 ? std::string("torusmpi[r?] ") : "torusmpi[r" + std::to_string(rank) + "] ";
}

void debug(Subsystem s, const char* fmt, ...) {
  std::string tag = std::string(subsystem_name(s)) + ": ";
  va_list ap;
  va_start(ap, fmt);
  emit(tag.c_str(), fmt, ap);
  va_end(ap);
}

void warn(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit("warning: ", fmt, ap);
  va_end(ap);
}

void error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit("error: ", fmt, ap);
  va_end(ap);
}

std::string format(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[256];
  va_list again;
  va_copy(again, ap);
  const int n = std::vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  std::string out;
  if (n < 0) {
    out = fmt;  // an encoding error: the format itself says more than nothing
  } else if (static_cast<size_t>(n) < sizeof small) {
    out.assign(small, static_cast<size_t>(n));
  } else {
    out.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(&out[0], out.size(), fmt, again);
    out.resize(static_cast<size_t>(n));
  }
  va_end(again);
  return out;
}

}  // namespace torusmpi::log
