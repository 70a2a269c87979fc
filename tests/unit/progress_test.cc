// The progress engine: registration and poll order, Backoff phases, wait_until.
#include "core/progress.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/params.h"
#include "tests/unit/test_env.h"

namespace torusmpi::progress {
namespace {

// A poll function that records its calls in a shared journal and reports `events` each time.
struct Poller {
  char name;
  int events;
  std::string* journal;
  int calls = 0;
};

int poll_poller(void* ctx) {
  Poller* p = static_cast<Poller*>(ctx);
  p->journal->push_back(p->name);
  ++p->calls;
  return p->events;
}

// Every test starts from the default parameters and no TORUSMPI_* variable; a test that sets
// Backoff limits through the environment gets them reset afterwards.
class ProgressTest : public ::testing::Test {
 protected:
  void SetUp() override { reload_params(); }
  void TearDown() override {
    for (int id : ids_) remove(id);
    test::unset_with_prefix({"TORUSMPI_"});
    reload_params();
  }

  static void reload_params() {
    std::vector<std::string> errors, warnings;
    ASSERT_EQ(params::load(&errors, &warnings), Status::kOk) << (errors.empty() ? "" : errors[0]);
  }

  // Backoff limits, the way a user sets them.
  static void set_limits(const char* spin, const char* yield, const char* sleep_max_us) {
    setenv("TORUSMPI_SPIN_COUNT", spin, 1);
    setenv("TORUSMPI_YIELD_COUNT", yield, 1);
    setenv("TORUSMPI_SLEEP_MAX_US", sleep_max_us, 1);
    reload_params();
  }

  int add_poller(Poller* p) {
    int id = add(poll_poller, p);
    ids_.push_back(id);
    return id;
  }

  std::vector<int> ids_;  // removed in TearDown even when a test fails half-way
};

TEST_F(ProgressTest, PollWithNothingRegisteredReportsNoEvents) { EXPECT_EQ(poll(), 0); }

TEST_F(ProgressTest, PollRunsEveryFunctionInRegistrationOrderAndSumsTheirEvents) {
  std::string journal;
  Poller a{'a', 1, &journal}, b{'b', 0, &journal}, c{'c', 2, &journal};
  int ida = add_poller(&a);
  int idb = add_poller(&b);
  int idc = add_poller(&c);
  EXPECT_NE(ida, idb);
  EXPECT_NE(idb, idc);
  EXPECT_NE(ida, idc);
  EXPECT_EQ(poll(), 3);
  EXPECT_EQ(poll(), 3);
  EXPECT_EQ(journal, "abcabc");
  EXPECT_EQ(a.calls, 2);
  EXPECT_EQ(b.calls, 2);
  EXPECT_EQ(c.calls, 2);
}

TEST_F(ProgressTest, RemoveTakesOutOneFunctionAndKeepsTheOrderOfTheOthers) {
  std::string journal;
  Poller a{'a', 1, &journal}, b{'b', 10, &journal}, c{'c', 100, &journal};
  add_poller(&a);
  int idb = add_poller(&b);
  add_poller(&c);
  remove(idb);
  EXPECT_EQ(poll(), 101);
  EXPECT_EQ(journal, "ac");
  // A function added after a removal goes last.
  Poller d{'d', 1000, &journal};
  add_poller(&d);
  journal.clear();
  EXPECT_EQ(poll(), 1101);
  EXPECT_EQ(journal, "acd");
}

TEST_F(ProgressTest, RemovingAnUnknownOrAlreadyRemovedIdChangesNothing) {
  std::string journal;
  Poller a{'a', 1, &journal};
  int ida = add_poller(&a);
  remove(ida + 1000);
  EXPECT_EQ(poll(), 1);
  remove(ida);
  remove(ida);
  EXPECT_EQ(poll(), 0);
  EXPECT_EQ(journal, "a");
}

TEST_F(ProgressTest, IdsAreNotReusedAfterRemoval) {
  std::string journal;
  Poller a{'a', 1, &journal}, b{'b', 2, &journal};
  int ida = add_poller(&a);
  remove(ida);
  int idb = add_poller(&b);
  EXPECT_NE(ida, idb);
  remove(ida);  // the old id must not remove the new function
  EXPECT_EQ(poll(), 2);
}

TEST_F(ProgressTest, BackoffSpinsThenYieldsThenSleeps) {
  set_limits("3", "2", "4");
  Backoff backoff;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(backoff.phase(), Backoff::Phase::kSpin) << "pause " << i;
    backoff.pause();
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(backoff.phase(), Backoff::Phase::kYield) << "pause " << i;
    backoff.pause();
  }
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(backoff.phase(), Backoff::Phase::kSleep) << "pause " << i;
    backoff.pause();
  }
  backoff.reset();
  EXPECT_EQ(backoff.phase(), Backoff::Phase::kSpin);
}

TEST_F(ProgressTest, OversubscribedBackoffSpinsLittleAndYieldsLong) {
  set_limits("100000", "0", "4");
  // Crowded by affinity alone: waits yield, and the selection's figure stays the node's count.
  set_oversubscribed(false, true);
  EXPECT_TRUE(oversubscribed());
  EXPECT_FALSE(node_oversubscribed());
  Backoff backoff;
  set_oversubscribed(false, false);
  int spins = 0, yields = 0;
  while (backoff.phase() == Backoff::Phase::kSpin) {
    backoff.pause();
    ++spins;
  }
  while (backoff.phase() == Backoff::Phase::kYield) {
    backoff.pause();
    ++yields;
  }
  EXPECT_EQ(spins, 1) << "spinning only delays the rank that has work";
  EXPECT_EQ(yields, 1000) << "yields keep the core busy for about a millisecond before sleeping";
  Backoff normal;
  EXPECT_EQ(normal.phase(), Backoff::Phase::kSpin);
}

TEST_F(ProgressTest, BackoffReadsItsLimitsWhenMade) {
  set_limits("0", "1", "4");
  Backoff early;
  set_limits("5", "1", "4");
  EXPECT_EQ(early.phase(), Backoff::Phase::kYield);
  Backoff late;
  EXPECT_EQ(late.phase(), Backoff::Phase::kSpin);
}

TEST_F(ProgressTest, BackoffWithNoSpinOrYieldSleepsAtOnce) {
  set_limits("0", "0", "1");
  Backoff backoff;
  EXPECT_EQ(backoff.phase(), Backoff::Phase::kSleep);
}

TEST_F(ProgressTest, BackoffSleepsGrowAndAreCappedBySleepMax) {
  using Clock = std::chrono::steady_clock;
  // Sleeps of 1, 2, 4, ... 512 us, then 1000 us each: twelve pauses sleep at least 3023 us.
  set_limits("0", "0", "1000");
  Backoff growing;
  auto start = Clock::now();
  for (int i = 0; i < 12; ++i) growing.pause();
  double elapsed_us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  EXPECT_GE(elapsed_us, 3023.0);
  // With the cap, 25 pauses take about 16 ms; doubling without it would take 33 s.
  Backoff capped;
  start = Clock::now();
  for (int i = 0; i < 25; ++i) capped.pause();
  double elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LT(elapsed_s, 5.0);
}

TEST_F(ProgressTest, WaitUntilReturnsOnceThePredicateHolds) {
  std::string journal;
  Poller a{'a', 0, &journal};
  add_poller(&a);
  // Done after the poll function has run five times: wait_until must keep polling until then.
  bool done = wait_until([&a] { return a.calls >= 5; }, 10.0);
  EXPECT_TRUE(done);
  EXPECT_EQ(a.calls, 5);
}

TEST_F(ProgressTest, WaitUntilSeesWorkDoneByAnotherThread) {
  set_limits("10", "10", "100");
  std::atomic<bool> flag{false};
  std::thread setter([&flag] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    flag.store(true);
  });
  double start = now_seconds();
  bool done = wait_until([&flag] { return flag.load(); }, 10.0);
  double elapsed = now_seconds() - start;
  setter.join();
  EXPECT_TRUE(done);
  EXPECT_GE(elapsed, 0.015);
  EXPECT_LT(elapsed, 5.0);
}

TEST_F(ProgressTest, WaitUntilWithATruePredicateDoesNotPoll) {
  std::string journal;
  Poller a{'a', 1, &journal};
  add_poller(&a);
  EXPECT_TRUE(wait_until([] { return true; }));
  EXPECT_EQ(a.calls, 0);
}

TEST_F(ProgressTest, WaitUntilTimesOut) {
  set_limits("10", "10", "100");
  std::string journal;
  Poller a{'a', 0, &journal};
  add_poller(&a);
  double start = now_seconds();
  EXPECT_FALSE(wait_until([] { return false; }, 0.05));
  double elapsed = now_seconds() - start;
  EXPECT_GE(elapsed, 0.05);
  EXPECT_LT(elapsed, 5.0);
  EXPECT_GT(a.calls, 0) << "it polled while it waited";
}

// A transport that keeps reporting events for something else must not make wait_until() outlast
// its timeout.
int busy_for_one_second(void* ctx) {
  return now_seconds() - *static_cast<double*>(ctx) < 1.0 ? 1 : 0;
}

TEST_F(ProgressTest, WaitUntilTimesOutWhilePollsKeepMakingProgress) {
  double start = now_seconds();
  ids_.push_back(add(busy_for_one_second, &start));
  EXPECT_FALSE(wait_until([] { return false; }, 0.05));
  EXPECT_LT(now_seconds() - start, 0.5) << "the 0.05 s timeout was not honoured";
}

// With TORUSMPI_SLEEP_MAX_US of a second or more, a sleep must still sleep (a timespec with
// tv_nsec of 1e9 or more makes nanosleep fail at once, and the "sleeping" rank would spin).
TEST_F(ProgressTest, BackoffStillSleepsWithASleepMaxOfOverASecond) {
  set_limits("0", "0", "2000000");
  Backoff backoff;
  for (int i = 0; i < 20; ++i) backoff.pause();  // 1 + 2 + ... + 524288 us: about 1 s
  double start = now_seconds();
  backoff.pause();  // should sleep 1048576 us
  EXPECT_GE(now_seconds() - start, 1.0);
}

TEST_F(ProgressTest, NowSecondsIsMonotonic) {
  double a = now_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  double b = now_seconds();
  EXPECT_GE(b - a, 0.002);
}

}  // namespace
}  // namespace torusmpi::progress
