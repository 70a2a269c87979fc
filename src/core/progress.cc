#include "core/progress.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "core/params.h"

namespace torusmpi::progress {
namespace {

struct Entry {
  int id;
  PollFn fn;
  void* ctx;
};

// Registration happens at init and teardown only; poll() is the hot path and walks a flat array.
std::vector<Entry> g_entries;
inline std::vector<Entry>& entries() { return g_entries; }
int g_next_id = 1;
SleepFn g_sleeper = nullptr;
void* g_sleeper_ctx = nullptr;
bool g_oversubscribed = false;

// An oversubscribed rank polls once, then yields: a yield hands the core to a rank that has work
// (spinning 50 polls first made a ring of 8 ranks on 2 cores 2x slower), and keeps the core from
// going idle, which on a virtual machine makes the next wake-up cost tens of microseconds. Only after many yields (about a millisecond:
// the peer is computing, not communicating) does it sleep on its doorbell, so waiting ranks stop
// taking turns away from computing ones.
constexpr int64_t kOversubscribedSpin = 1;
constexpr int64_t kOversubscribedYield = 1000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

int add(PollFn fn, void* ctx) {
  int id = g_next_id++;
  entries().push_back({id, fn, ctx});
  return id;
}

void remove(int id) {
  auto& list = entries();
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].id == id) {
      list.erase(list.begin() + i);
      return;
    }
  }
}

void set_sleeper(SleepFn fn, void* ctx) {
  g_sleeper = fn;
  g_sleeper_ctx = ctx;
}

void set_oversubscribed(bool oversubscribed) { g_oversubscribed = oversubscribed; }
bool oversubscribed() { return g_oversubscribed; }

int poll() {
  int events = 0;
  for (const Entry& e : entries()) events += e.fn(e.ctx);
  return events;
}

Backoff::Backoff()
    : spin_limit_(params::spin_count()),
      yield_limit_(params::yield_count()),
      sleep_max_us_(params::sleep_max_us() > 0 ? params::sleep_max_us() : 1) {
  if (g_oversubscribed) {
    spin_limit_ = std::min(spin_limit_, kOversubscribedSpin);
    yield_limit_ = std::max(yield_limit_, kOversubscribedYield);
  }
  yield_limit_ += spin_limit_;
}

Backoff::Phase Backoff::phase() const {
  if (calls_ < spin_limit_) return Phase::kSpin;
  if (calls_ < yield_limit_) return Phase::kYield;
  return Phase::kSleep;
}

void Backoff::pause() {
  switch (phase()) {
    case Phase::kSpin:
      cpu_relax();
      break;
    case Phase::kYield:
      sched_yield();
      break;
    case Phase::kSleep:
      if (g_sleeper != nullptr) {
        g_sleeper(g_sleeper_ctx, sleep_us_);
      } else {
        timespec ts{static_cast<time_t>(sleep_us_ / 1000000),
                    static_cast<long>(sleep_us_ % 1000000) * 1000};
        nanosleep(&ts, nullptr);
      }
      sleep_us_ = std::min(sleep_us_ * 2, sleep_max_us_);
      break;
  }
  ++calls_;
}

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace torusmpi::progress
