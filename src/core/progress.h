// The progress engine. Transports and the collective executor register a poll function; every
// blocking wait and every MPI call that may complete work drives them through poll().
//
// Waiting ranks must not starve each other when there are more ranks than cores: Backoff spins
// briefly (the cheapest answer when a peer runs on another core), then yields the core, then sleeps
// in growing steps. A transport with a doorbell shortens the sleep by waking the sleeper.
#ifndef TORUSMPI_CORE_PROGRESS_H_
#define TORUSMPI_CORE_PROGRESS_H_

#include <atomic>
#include <cstdint>

namespace torusmpi::progress {

// Returns how many events (completions, arrivals) the call made progress on.
using PollFn = int (*)(void* ctx);

// Registers fn; the returned id removes it. Poll functions run in registration order.
int add(PollFn fn, void* ctx);
void remove(int id);

// Runs every registered poll function once; returns the events they report.
int poll();

// A transport with a doorbell sleeps in sleeper(ctx, us) instead of a plain sleep: it returns when
// its bell rings or after `us` microseconds. nullptr restores the plain sleep. waker(ctx), when
// given, rings it from another thread, and says that every arrival rings it: the progress thread
// then sleeps there too, holding the lock (the sleeper lets it go for the system call alone).
using SleepFn = void (*)(void* ctx, int64_t us);
using WakeFn = void (*)(void* ctx);
void set_sleeper(SleepFn sleeper, WakeFn waker, void* ctx);

// With more ranks on the node than hardware threads to run them (`by_count`), or than the CPUs
// their affinity lets them use (`by_affinity`), a waiting rank's spinning only delays the rank it
// waits for: Backoffs made afterwards spin briefly and then yield the core. oversubscribed() is
// either, for waits and transports; node_oversubscribed() the count alone, for what every rank
// must decide alike (the collective selection): affinity may differ from node to node.
void set_oversubscribed(bool by_count, bool by_affinity);
bool oversubscribed();
bool node_oversubscribed();

// Asynchronous progress (TORUSMPI_ASYNC_PROGRESS=1): a thread polls while nonblocking work is in
// flight, so communication goes on while the application computes.
void start_async();  // after the transports are up
void stop_async();   // before they go
bool async();
// Nonblocking work in flight (runs of nonblocking collectives, stream entries): the thread polls
// while it is above zero and sleeps otherwise.
void add_work(int delta);
// Work only the thread does (the device's stream queues): fn runs on it, under the lock, each time
// round while there is work, after the poll functions; it returns the events it made.
void set_engine_step(PollFn fn, void* ctx);

// Threads. With MPI_THREAD_MULTIPLE or the progress thread, one lock guards the library's state:
// every MPI entry point holds it (Lock), so does poll(), and a wait lets it go while it pauses
// (Backoff::pause), so a thread blocked in MPI never keeps the others out. Completion flags are
// published with release stores. Without threads the lock is never taken: a Lock costs one test
// of a flag. Nor is it while the progress thread waits for work, below MPI_THREAD_MULTIPLE: it
// turns it off then, and add_work on. set_threaded changes only while one thread runs (MPI_Init,
// MPI_Finalize).
void set_threaded(bool threaded);
bool threaded();

namespace detail {
extern std::atomic<bool> g_locked;
// Scopes of Lock this thread is in; whether it holds the mutex (taken by the outermost scope, or
// later when the lock is turned on while it is inside: see add_work).
extern __attribute__((tls_model("initial-exec"))) thread_local int t_depth;
extern __attribute__((tls_model("initial-exec"))) thread_local bool t_owned;
void acquire();
void release();
bool release_all();  // lets the mutex go if this thread holds it; true when it did
void reacquire();    // takes it back if this thread is in a scope and the lock is on
}  // namespace detail

class Lock {
 public:
  Lock() {
    if (detail::t_depth++ == 0 && detail::g_locked.load(std::memory_order_acquire)) {
      detail::acquire();
    }
  }
  ~Lock() {
    if (--detail::t_depth == 0 && detail::t_owned) detail::release();
  }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
};

// Lets the lock go, however deeply this thread holds it, for a call that blocks outside the
// library (PMIx's spawn, connect, lookup), and takes it back at the end of the scope.
class Unlocked {
 public:
  Unlocked() : released_(detail::release_all()) {}
  ~Unlocked() {
    if (released_) detail::reacquire();
  }
  Unlocked(const Unlocked&) = delete;
  Unlocked& operator=(const Unlocked&) = delete;

 private:
  bool released_;
};

// Spin, then yield, then sleep, with the limits of TORUSMPI_SPIN_COUNT, _YIELD_COUNT and
// _SLEEP_MAX_US (read when the Backoff is made).
class Backoff {
 public:
  // `let_go`: pauses let the lock go (Lock), for a wait between MPI operations. Waits inside one
  // (a transport waiting for room, mid-delivery) keep it: another thread must not enter the
  // transport while it is half way through a fragment.
  explicit Backoff(bool let_go = false);
  // Waits a little; each call waits as long as or longer than the one before.
  void pause();
  // Back to spinning: call it when progress was made.
  void reset() {
    calls_ = 0;
    sleep_us_ = 1;
  }
  // Which phase the next pause() is in, for tests.
  enum class Phase { kSpin, kYield, kSleep };
  Phase phase() const;

 private:
  int64_t spin_limit_;
  int64_t yield_limit_;
  int64_t sleep_max_us_;
  int64_t calls_ = 0;
  int64_t sleep_us_ = 1;
  bool let_go_;
};

// Polls until done() is true, backing off while nothing progresses (and letting the lock go as it
// pauses: only for waits between operations, never inside a poll). Returns false when timeout_s
// (if > 0) runs out first.
template <class Done>
bool wait_until(Done done, double timeout_s = 0);

double now_seconds();  // monotonic clock

}  // namespace torusmpi::progress

template <class Done>
bool torusmpi::progress::wait_until(Done done, double timeout_s) {
  if (done()) return true;  // the common case of a short message: no Backoff to set up
  Backoff backoff(true);
  double deadline = timeout_s > 0 ? now_seconds() + timeout_s : 0;
  while (!done()) {
    // Checked every time round: polls that keep reporting events must not outlast the timeout.
    if (deadline > 0 && now_seconds() > deadline) return false;
    if (poll() > 0) {
      backoff.reset();
    } else {
      backoff.pause();
    }
  }
  return true;
}

#endif  // TORUSMPI_CORE_PROGRESS_H_
