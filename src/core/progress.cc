#include "core/progress.h"

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "core/flight.h"
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
// Set while the thread may be running (a stream made after the first device allocation).
std::atomic<PollFn> g_engine_step{nullptr};
std::atomic<void*> g_engine_ctx{nullptr};
std::atomic<SleepFn> g_sleeper{nullptr};
std::atomic<WakeFn> g_waker{nullptr};  // changes while the progress thread runs (add_peer)
void* g_sleeper_ctx = nullptr;
bool g_oversubscribed = false;
bool g_node_oversubscribed = false;

// An oversubscribed rank polls once, then yields: a yield hands the core to a rank that has work
// (spinning 50 polls first made a ring of 8 ranks on 2 cores 2x slower), and keeps the core from
// going idle, which on a virtual machine makes the next wake-up cost tens of microseconds. Only
// after many yields (about a millisecond: the peer is computing, not communicating) does it sleep
// on its doorbell, so waiting ranks stop taking turns away from computing ones.
constexpr int64_t kOversubscribedSpin = 1;
constexpr int64_t kOversubscribedYield = 1000;

// Asynchronous progress. g_async changes only while no other thread runs (MPI_Init, Finalize).
bool g_async = false;
bool g_threaded = false;  // MPI_THREAD_MULTIPLE
std::atomic<int> g_work{0};
std::atomic<bool> g_stop{false};
std::thread g_thread;
// The thread sleeps on this while there is no work, woken by add_work (no periodic wake-ups: on
// a full machine each one would take a core from a rank that is spinning on a short message).
std::mutex g_idle_mutex;
std::condition_variable g_idle;
std::atomic<bool> g_idle_sleeping{false};

// A busy thread that found nothing sleeps on the doorbell (a peer's message rings it, and so does
// add_work) for at most kBellSleepUs: what rings no bell (a network without a descriptor) waits
// that long. Without a doorbell it sleeps kBusySleepUs at a time.
constexpr int64_t kBellSleepUs = 500;
constexpr int64_t kBusySleepUs = 5;
constexpr int kBusyYields = 64;
// A thread whose work just ended yields (on a core nobody else wants, that is spinning) this long
// before it sleeps: the next collective of a training step comes soon, and waking a sleeping
// thread costs its caller a system call (2-3 us on a virtual machine, a fifth of a 64 KiB
// allreduce at 2 ranks).
constexpr double kLingerS = 200e-6;
// Tries of the lock before a thread sleeps on it (detail::acquire).
constexpr int kAcquireSpins = 1000;
std::atomic<bool> g_bell_sleeping{false};

void sleep_us(int64_t us) {
  timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void progress_thread() {
  // Its short sleeps while a collective waits for a peer must be short: the kernel's default
  // slack (50 us) would make each step of a small collective wait that long.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  // Woken, it does not preempt the application's thread (SCHED_BATCH: same share of the core, no
  // wake-up preemption): it runs when that thread yields, sleeps or has had its slice. Preempting
  // it, the engine held a device MPI_Iallreduce of 1 MiB between 2 instances inside the call for
  // 0.6 ms (the whole collective: tcp copies on the 2 cores) and overlapped 4-35% of it; now 99%.
  // Where the policy cannot be changed the thread runs as it is.
  sched_param normal{};
  sched_setscheduler(0, SCHED_BATCH, &normal);
  // Like a wait's Backoff: a peer's answer on another core comes within microseconds, and a
  // yield each time round costs a system call per look; when oversubscribed, spinning only delays
  // the rank it waits for.
  const int spins = g_oversubscribed ? 0 : static_cast<int>(params::spin_count());
  int idle = 0;
  while (!g_stop.load(std::memory_order_acquire)) {
    if (g_work.load(std::memory_order_acquire) <= 0) {
      const double until = now_seconds() + kLingerS;
      while (g_work.load(std::memory_order_acquire) <= 0 && !g_stop.load() &&
             now_seconds() < until) {
        sched_yield();
      }
      if (g_work.load(std::memory_order_acquire) > 0 || g_stop.load()) continue;
      // Idle, the lock goes off for a program whose other threads do not call MPI: its calls then
      // cost no mutex. Only a thread in the library gives this one work (add_work), and it turns
      // the lock back on, for itself first, before this one can run.
      if (!g_threaded && detail::g_locked.load(std::memory_order_relaxed)) {
        Lock lock;
        if (g_work.load() <= 0) detail::g_locked.store(false, std::memory_order_release);
      }
      std::unique_lock<std::mutex> hold(g_idle_mutex);
      g_idle_sleeping.store(true);  // seq_cst: add_work sees it, or this sees the work
      g_idle.wait_for(hold, std::chrono::milliseconds(100),
                      [] { return g_work.load() > 0 || g_stop.load(); });
      g_idle_sleeping.store(false);
      continue;
    }
    int events = 0;
    {
      Lock lock;  // once for both (poll() nests in it)
      events = poll();
      if (PollFn step = g_engine_step.load(std::memory_order_acquire)) {
        events += step(g_engine_ctx.load(std::memory_order_relaxed));
      }
    }
    if (events > 0) {
      idle = 0;
    } else if (idle < spins) {
      ++idle;
      cpu_relax();
    } else if (idle < spins + kBusyYields) {
      ++idle;
      sched_yield();
    } else if (g_waker.load(std::memory_order_relaxed) != nullptr) {
      // Nothing arrives: leave the core to the application's computation until something does.
      Lock lock;
      g_bell_sleeping.store(true);  // seq_cst: add_work sees it, or the sleeper sees the work
      SleepFn sleeper = g_sleeper.load();
      if (sleeper != nullptr && g_work.load() > 0 && !g_stop.load()) {
        sleeper(g_sleeper_ctx, kBellSleepUs);
      }
      g_bell_sleeping.store(false, std::memory_order_relaxed);
    } else {
      sleep_us(kBusySleepUs);
    }
  }
}

}  // namespace

namespace detail {
// Threads that found the mutex taken are counted: a waiting thread that lets it go for a moment
// yields to them, or it would take it straight back (a mutex is not fair) and starve them.
std::atomic<bool> g_locked{false};
std::mutex g_mutex;
// Initial-exec: read on every entry point, and a __tls_get_addr call each time cost more than the
// mutex (a few bytes of static TLS, which a library opened by dlopen can still have).
__attribute__((tls_model("initial-exec"))) thread_local int t_depth = 0;
__attribute__((tls_model("initial-exec"))) thread_local bool t_owned = false;
std::atomic<int> g_contenders{0};

void acquire() {
  if (!g_mutex.try_lock()) {
    g_contenders.fetch_add(1, std::memory_order_relaxed);
    // The progress thread holds it for one round of polling, microseconds: a futex sleep and the
    // wake-up after it cost more than that on a virtual machine. Not when oversubscribed: the
    // holder may be waiting for this core.
    bool got = false;
    for (int i = g_oversubscribed ? kAcquireSpins : 0; i < kAcquireSpins && !got; ++i) {
      cpu_relax();
      got = g_mutex.try_lock();
    }
    if (!got) g_mutex.lock();
    g_contenders.fetch_sub(1, std::memory_order_relaxed);
  }
  t_owned = true;
}
void release() {
  t_owned = false;
  g_mutex.unlock();
}
bool release_all() {
  if (!t_owned) return false;
  release();
  return true;
}
void reacquire() {
  if (t_depth > 0 && !t_owned && g_locked.load(std::memory_order_acquire)) acquire();
}
}  // namespace detail
using detail::g_locked;

namespace {
// Turns the lock on from a thread that may be inside the library without it (its scopes began
// while it was off): that thread takes it now, and its outermost scope lets it go.
void lock_on() {
  g_locked.store(true, std::memory_order_release);
  detail::reacquire();
}
}  // namespace

void set_threaded(bool threaded) {
  g_threaded = threaded;
  g_locked.store(g_threaded || g_async, std::memory_order_release);
}
bool threaded() { return g_threaded; }

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

void set_engine_step(PollFn fn, void* ctx) {
  g_engine_ctx.store(ctx, std::memory_order_relaxed);
  g_engine_step.store(fn, std::memory_order_release);
}

void set_sleeper(SleepFn sleeper, WakeFn waker, void* ctx) {
  g_sleeper.store(sleeper);
  g_waker.store(waker, std::memory_order_relaxed);
  if (g_sleeper_ctx != ctx) g_sleeper_ctx = ctx;  // the same each time after the first
}

void set_oversubscribed(bool by_count, bool by_affinity) {
  g_oversubscribed = by_count || by_affinity;
  g_node_oversubscribed = by_count;
}
bool oversubscribed() { return g_oversubscribed; }
bool node_oversubscribed() { return g_node_oversubscribed; }

void start_async() {
  if (g_async) return;
  g_async = true;
  lock_on();
  g_stop.store(false);
  g_thread = std::thread(progress_thread);
}

void stop_async() {
  if (!g_async) return;
  g_stop.store(true, std::memory_order_release);
  {
    std::lock_guard<std::mutex> hold(g_idle_mutex);
    g_idle.notify_one();
  }
  if (WakeFn wake = g_waker.load(std::memory_order_relaxed)) wake(g_sleeper_ctx);
  // The caller (MPI_Finalize) may hold the lock; the thread may be waiting for it in a poll.
  detail::release_all();
  g_thread.join();
  detail::reacquire();
  g_async = false;
  g_locked.store(g_threaded, std::memory_order_release);
}

bool async() { return g_async; }

void add_work(int delta) {
  // The thread may have turned the lock off while idle (progress_thread): on before it can see
  // the work, so that it finds the lock on when it does.
  if (delta > 0 && g_async && !g_locked.load(std::memory_order_relaxed)) lock_on();
  if (g_work.fetch_add(delta) + delta <= 0 || delta <= 0) return;
  if (g_idle_sleeping.load()) {
    std::lock_guard<std::mutex> hold(g_idle_mutex);
    g_idle.notify_one();
  }
  if (g_bell_sleeping.load()) {
    if (WakeFn wake = g_waker.load(std::memory_order_relaxed)) wake(g_sleeper_ctx);
  }
}

int poll() {
  Lock lock;
  int events = 0;
  for (const Entry& e : entries()) events += e.fn(e.ctx);
  return events;
}

Backoff::Backoff(bool let_go)
    : spin_limit_(params::spin_count()),
      yield_limit_(params::yield_count()),
      sleep_max_us_(params::sleep_max_us() > 0 ? params::sleep_max_us() : 1),
      let_go_(let_go) {
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
  const Phase now = phase();
  // Whom the rank waits for is read under the lock, before it is let go.
  if (now == Phase::kSleep) flight::stalled();
  // Other threads may take the lock while this one waits; they may be what it waits for. While
  // spinning it is let go only when another thread has found it taken (a contender): an unlock
  // and lock per spin would cost the wait of a short message while the device engine's thread,
  // busy with a collective, has the lock on.
  const bool let_go =
      detail::t_owned && let_go_ &&
      (now != Phase::kSpin || detail::g_contenders.load(std::memory_order_relaxed) > 0);
  const bool released = let_go && detail::release_all();
  switch (now) {
    case Phase::kSpin:
      if (released && detail::g_contenders.load(std::memory_order_relaxed) > 0) {
        sched_yield();
      } else {
        cpu_relax();
      }
      break;
    case Phase::kYield:
      sched_yield();
      break;
    case Phase::kSleep:
      // A doorbell wakes one sleeper and its sleep reads transport state other threads change:
      // with threads, a plain sleep (the others deliver meanwhile). An idle progress thread
      // counts as none: it turns the lock off (progress_thread).
      SleepFn sleeper = g_sleeper.load(std::memory_order_relaxed);
      if (sleeper != nullptr && !g_locked.load(std::memory_order_relaxed)) {
        sleeper(g_sleeper_ctx, sleep_us_);
      } else {
        timespec ts{static_cast<time_t>(sleep_us_ / 1000000),
                    static_cast<long>(sleep_us_ % 1000000) * 1000};
        nanosleep(&ts, nullptr);
      }
      sleep_us_ = std::min(sleep_us_ * 2, sleep_max_us_);
      break;
  }
  if (released) detail::reacquire();
  ++calls_;
}

double now_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace torusmpi::progress
