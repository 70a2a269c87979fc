// What the network transports (pml/ofi, pml/ucx) share, driven without any network library:
// per-peer ordering (net::PeerOrder) and its wire stamp, the arrival queue that poll() drains
// (net::Inbox), sleeping on a descriptor (net::sleep_on), flushing at the end (net::flush), and
// watching the processes of peers on this host (Liveness).
//
// Whatever ends the job (a rank off the wire that is not in it, a dead peer) goes through
// boot::abort_job, which outside a launched job prints its message and _exits: those cases are
// death tests, and so are the cases where a check must *not* end the job, so that a wrong abort
// fails one test instead of ending this program.
#include "pml/net_peers.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/progress.h"
#include "pml/liveness.h"

namespace torusmpi::pml {
namespace {

// What a check that must not end the job exits with: the death test's statement ends in _exit(0),
// and the regex "^$" adds that nothing was printed (no diagnosis either).
const ::testing::ExitedWithCode kReturned(0);
// boot::abort_job's status for every diagnosed end below.
const ::testing::ExitedWithCode kAborted(1);

// Rank 1 of a 4-rank job: peers on both sides of it, and room for ranks out of range on both.
boot::JobInfo job_of_four() {
  boot::JobInfo job;
  job.rank = 1;
  job.size = 4;
  job.hostname = "node7";
  return job;
}

// ---------------------------------------------------------------------------------------------
// Stamp: 16 bytes in front of every fragment on the wire, copied with memcpy (ofi) or as part of
// an AM header (ucx). Sender and receiver are the same build, so host byte order; what must hold
// is the size, the order of the fields, and that a byte copy is the whole of it.

TEST(StampTest, IsSixteenBytesRankThenSeqThenJob) {
  static_assert(std::is_standard_layout_v<net::Stamp>);
  static_assert(std::is_trivially_copyable_v<net::Stamp>);
  EXPECT_EQ(sizeof(net::Stamp), 16u);
  EXPECT_EQ(offsetof(net::Stamp, from), 0u);  // ofi's comment: | rank | seq | FragHeader |
  EXPECT_EQ(offsetof(net::Stamp, seq), 4u);
  EXPECT_EQ(offsetof(net::Stamp, job), 8u);
}

TEST(StampTest, SurvivesAByteCopyAtItsExtremes) {
  // A receiver reads the stamp back from a buffer of bytes: the sign of `from` and the top bit
  // of `seq` must come back intact (a negative rank is how a foreign sender may show up).
  for (const net::Stamp s : {net::Stamp{0, 0, 0}, net::Stamp{-1, UINT32_MAX, 0},
                             net::Stamp{INT32_MAX, 0x80000000u, 0}, net::Stamp{3, 12345, 0}}) {
    uint8_t wire[sizeof(net::Stamp)];
    std::memcpy(wire, &s, sizeof s);
    net::Stamp back;
    std::memcpy(&back, wire, sizeof back);
    EXPECT_EQ(back.from, s.from);
    EXPECT_EQ(back.seq, s.seq);
  }
}

// ---------------------------------------------------------------------------------------------
// PeerOrder, driven as ofi's take() and ucx's arrived() drive it: an arrival in turn is delivered
// and then delivered() releases what it unblocked; one out of turn is held.

class PeerOrderTest : public ::testing::Test {
 protected:
  // One arrival from `from`: delivered at once (into got_) when in turn, with whatever it
  // releases; held otherwise. Returns how many were delivered.
  int arrive(int from, uint32_t seq, const std::string& frag) {
    const net::Stamp s{from, seq, 0};
    if (!order_.in_turn(s)) {
      order_.hold(s, frag);
      return 0;
    }
    got_.push_back(frag);
    return 1 + order_.delivered(from, [&](const std::string& held) { got_.push_back(held); });
  }

  boot::JobInfo job_ = job_of_four();
  net::PeerOrder<std::string> order_{"test", job_};
  std::vector<std::string> got_;
};

TEST_F(PeerOrderTest, StampsCarryOwnRankAndCountFromZeroPerPeer) {
  // The receiver identifies the sender by `from` (ofi receives need no FI_SOURCE), and expects
  // seq 0 first from every peer.
  for (int peer = 0; peer < 4; ++peer) {
    EXPECT_EQ(order_.stamp(peer).from, 1) << "peer " << peer;
    EXPECT_EQ(order_.stamp(peer).seq, 0u) << "peer " << peer;
  }
}

TEST_F(PeerOrderTest, SendersOfAnotherJobResolveOnceAdded) {
  // A process of another job (spawned, connected) stamps its own job and rank; the receiver maps
  // them to the pml's number for it, past its own job's ranks, and orders its fragments there.
  const uint64_t other = boot::job_id("another job");
  net::Stamp s{0, 0, other};
  EXPECT_FALSE(order_.resolve(&s)) << "not added yet: its fragments wait";
  order_.add(5, other, 0);
  ASSERT_TRUE(order_.resolve(&s));
  EXPECT_EQ(s.from, 5);
  EXPECT_TRUE(order_.in_turn(s));
  EXPECT_EQ(order_.delivered(5, [](const std::string&) {}), 0);
  EXPECT_EQ(order_.stamp(5).seq, 0u);
  EXPECT_EQ(order_.stamp(5).job, boot::job_id(job_.nspace));
  net::Stamp own{2, 0, boot::job_id(job_.nspace)};
  ASSERT_TRUE(order_.resolve(&own));
  EXPECT_EQ(own.from, 2) << "this job's ranks stay as they are";
}

TEST_F(PeerOrderTest, SentAdvancesOnlyThatPeersSequence) {
  // A fragment the library refused is not sent(), so it is offered again with the same stamp.
  EXPECT_EQ(order_.stamp(2).seq, 0u);
  EXPECT_EQ(order_.stamp(2).seq, 0u);
  order_.sent(2);
  order_.sent(2);
  order_.sent(3);
  EXPECT_EQ(order_.stamp(2).seq, 2u);
  EXPECT_EQ(order_.stamp(3).seq, 1u);
  EXPECT_EQ(order_.stamp(0).seq, 0u);
}

TEST_F(PeerOrderTest, InOrderArrivalsAreDeliveredAtOnce) {
  // The common case: every arrival in turn, nothing held, nothing extra released.
  EXPECT_EQ(arrive(0, 0, "a"), 1);
  EXPECT_EQ(arrive(0, 1, "b"), 1);
  EXPECT_EQ(arrive(0, 2, "c"), 1);
  EXPECT_EQ(got_, (std::vector<std::string>{"a", "b", "c"}));
}

TEST_F(PeerOrderTest, EarlyArrivalsWaitAndFollowTheMissingOneInSequence) {
  // tcp;ofi_rxm completes a large fragment after a small one sent behind it: the later ones
  // (arriving 3, 1, 2) wait until 0 comes, then go in sequence order, not arrival order.
  EXPECT_EQ(arrive(2, 3, "d"), 0);
  EXPECT_EQ(arrive(2, 1, "b"), 0);
  EXPECT_EQ(arrive(2, 2, "c"), 0);
  EXPECT_TRUE(got_.empty());
  EXPECT_EQ(arrive(2, 0, "a"), 4);
  EXPECT_EQ(got_, (std::vector<std::string>{"a", "b", "c", "d"}));
  // The sequence goes on after the released ones.
  EXPECT_EQ(arrive(2, 4, "e"), 1);
  EXPECT_EQ(got_.back(), "e");
}

TEST_F(PeerOrderTest, ReleaseStopsAtTheNextGap) {
  // 2 and 4 held; 0 arrives: nothing behind it. 1 arrives: releases 2, not 4 (3 is missing).
  arrive(0, 2, "c");
  arrive(0, 4, "e");
  EXPECT_EQ(arrive(0, 0, "a"), 1);
  EXPECT_EQ(arrive(0, 1, "b"), 2);
  EXPECT_EQ(got_, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(arrive(0, 3, "d"), 2);
  EXPECT_EQ(got_, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
}

TEST_F(PeerOrderTest, SendersAreOrderedIndependently) {
  // A gap from one sender holds back only that sender's fragments: non-overtaking is per pair.
  arrive(0, 1, "0b");
  EXPECT_EQ(arrive(3, 0, "3a"), 1);
  EXPECT_EQ(arrive(3, 1, "3b"), 1);
  EXPECT_EQ(got_, (std::vector<std::string>{"3a", "3b"}));
  // And a sender's release does not hand over another's held fragments.
  arrive(3, 3, "3d");
  EXPECT_EQ(arrive(0, 0, "0a"), 2);
  EXPECT_EQ(got_, (std::vector<std::string>{"3a", "3b", "0a", "0b"}));
}

TEST_F(PeerOrderTest, ArrivalsFromItselfAreOrderedToo) {
  // This rank's own number is in range (the loopback normally carries them, but a stamp naming
  // it is not foreign).
  EXPECT_EQ(arrive(1, 1, "b"), 0);
  EXPECT_EQ(arrive(1, 0, "a"), 2);
  EXPECT_EQ(got_, (std::vector<std::string>{"a", "b"}));
}

TEST_F(PeerOrderTest, DropHeldHandsOverEveryHeldArrivalOnce) {
  // Closing: ucx releases the UCX buffers its held arrivals own, so each must come back exactly
  // once, and none may stay behind to be released twice.
  arrive(0, 2, "0c");
  arrive(0, 5, "0f");
  arrive(3, 1, "3b");
  arrive(2, 0, "2a");  // delivered, not held
  std::vector<std::string> dropped;
  order_.drop_held([&](std::string& h) { dropped.push_back(h); });
  EXPECT_EQ(dropped, (std::vector<std::string>{"0c", "0f", "3b"}));
  dropped.clear();
  order_.drop_held([&](std::string& h) { dropped.push_back(h); });
  EXPECT_TRUE(dropped.empty());
}

// A fragment whose place was delivered already, or is held already, is a duplicate or a broken
// sender: it ends the job, named, rather than be delivered twice or dropped with what it owns.
TEST_F(PeerOrderTest, AFragmentBehindItsTurnEndsTheJob) {
  arrive(2, 0, "2a");
  arrive(2, 1, "2b");
  EXPECT_EXIT(order_.hold(net::Stamp{2, 0, 0}, "again"), kAborted,
              "test: rank 1 received fragment 0 from rank 2, whose place was delivered already "
              "\\(next due: 2\\)");
}

TEST_F(PeerOrderTest, ASecondFragmentForAHeldPlaceEndsTheJob) {
  arrive(3, 4, "3e");
  EXPECT_EXIT(order_.hold(net::Stamp{3, 4, 0}, "again"), kAborted,
              "test: rank 1 received fragment 4 from rank 3, whose place is held already");
}

TEST_F(PeerOrderTest, SequenceNumbersWrap) {
  // Far ahead (by the unsigned distance) is ahead, not behind: held, not a protocol error.
  arrive(0, 0x80000000u - 1, "far");
  EXPECT_TRUE(got_.empty());
}

// A rank read off the wire that is not in the job (a process of another job or version) must end
// the job with a message naming the transport, this rank and the rank read, never index past the
// per-peer tables. Every entry point that takes a sender from the wire is checked.
class PeerOrderForeignTest : public PeerOrderTest, public ::testing::WithParamInterface<int> {
 protected:
  std::string message() const {
    return "test: rank 1 received a fragment from rank " + std::to_string(GetParam()) +
           ", which is not in this job";
  }
};

TEST_P(PeerOrderForeignTest, InTurnEndsTheJob) {
  EXPECT_EXIT((void)order_.in_turn(net::Stamp{GetParam(), 0, 0}), kAborted, message());
}

TEST_P(PeerOrderForeignTest, HoldEndsTheJob) {
  EXPECT_EXIT(order_.hold(net::Stamp{GetParam(), 1, 0}, "x"), kAborted, message());
}

TEST_P(PeerOrderForeignTest, DeliveredEndsTheJob) {
  EXPECT_EXIT(order_.delivered(GetParam(), [](const std::string&) {}), kAborted, message());
}

// Just below 0, just past the last rank (size), and far past it (a garbage word).
INSTANTIATE_TEST_SUITE_P(OutOfRange, PeerOrderForeignTest, ::testing::Values(-1, 4, INT32_MAX));

// ---------------------------------------------------------------------------------------------
// Inbox: arrivals the library hands over where they must not be delivered (inside its callbacks,
// inside pml::deliver) wait for the next poll(), in order.

TEST(InboxTest, HoldsArrivalsUntilDrained) {
  net::Inbox<int> inbox;
  EXPECT_TRUE(inbox.empty());
  inbox.push(7);
  EXPECT_FALSE(inbox.empty());  // what pending() reports, so the pml does not sleep
}

TEST(InboxTest, DrainDeliversInArrivalOrderAndSumsWhatTakeDelivered) {
  // take() returns how many fragments one arrival delivered (ofi: 0 when held, 1 + released).
  net::Inbox<int> inbox;
  for (int v : {1, 2, 3}) inbox.push(v);
  std::vector<int> seen;
  const int n = inbox.drain([&](int v) {
    seen.push_back(v);
    return v == 2 ? 0 : 2;
  });
  EXPECT_EQ(n, 4);
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(inbox.empty());
  EXPECT_EQ(inbox.drain([](int) { return 1; }), 0);
}

TEST(InboxTest, DrainCalledFromInsideADeliveryDoesNothing) {
  // pml::deliver may progress the library (a rendezvous read) and so reach poll() again: the
  // inner drain must not deliver (pml::deliver is not re-entrant), and the outer one goes on.
  net::Inbox<int> inbox;
  for (int v : {1, 2, 3}) inbox.push(v);
  std::vector<int> seen;
  int inner = -1;
  const int n = inbox.drain([&](int v) {
    seen.push_back(v);
    if (v == 1) {
      inner = inbox.drain([&](int w) {
        seen.push_back(-w);
        return 1;
      });
    }
    return 1;
  });
  EXPECT_EQ(inner, 0);
  EXPECT_EQ(n, 3);
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
}

TEST(InboxTest, ArrivalsDuringADrainWaitForTheNextOne) {
  // What a delivery makes arrive (the library progressed from inside it) is left for the next
  // poll(): a steady flood must not keep one poll() delivering forever.
  net::Inbox<int> inbox;
  inbox.push(1);
  std::vector<int> seen;
  auto take = [&](int v) {
    seen.push_back(v);
    if (v == 1) inbox.push(2);  // once: a drain that kept going would otherwise never end
    return 1;
  };
  EXPECT_EQ(inbox.drain(take), 1);
  EXPECT_EQ(seen, (std::vector<int>{1}));
  EXPECT_FALSE(inbox.empty());
  EXPECT_EQ(inbox.drain(take), 1);
  EXPECT_EQ(seen, (std::vector<int>{1, 2}));
}

TEST(InboxTest, DrainWorksAgainAfterANestedCall) {
  // The guard is lifted when the outer drain ends, not left set by the nested call.
  net::Inbox<int> inbox;
  inbox.push(1);
  inbox.drain([&](int) { return inbox.drain([](int) { return 1; }); });
  inbox.push(2);
  EXPECT_EQ(inbox.drain([](int v) { return v; }), 2);
}

TEST(InboxTest, DropHandsOverEveryQueuedArrivalAndEmpties) {
  // Closing: each queued arrival's buffer is released once.
  net::Inbox<int> inbox;
  for (int v : {4, 5}) inbox.push(v);
  std::vector<int> dropped;
  inbox.drop([&](int& v) { dropped.push_back(v); });
  EXPECT_EQ(dropped, (std::vector<int>{4, 5}));
  EXPECT_TRUE(inbox.empty());
}

// ---------------------------------------------------------------------------------------------
// sleep_on: a waiting rank sleeps in the kernel until its library's descriptor (or another
// transport's) is readable, or its sleep is over; it must never spin.

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// A pipe standing in for a library's wait descriptor; closed at the end of each test.
class SleepOnTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(pipe(fds_), 0); }
  void TearDown() override {
    close(fds_[0]);
    close(fds_[1]);
  }
  int read_end() const { return fds_[0]; }
  void ring() const { ASSERT_EQ(write(fds_[1], "x", 1), 1); }

  // Wall and CPU time of one sleep_on call.
  void timed_sleep(int fd, int also, int64_t us, net::Bell* bell = nullptr) {
    const double wall0 = progress::now_seconds();
    const double cpu0 = cpu_seconds();
    net::sleep_on(fd, also, us, bell);
    wall_ = progress::now_seconds() - wall0;
    cpu_ = cpu_seconds() - cpu0;
  }

  // Long enough that returning "on readiness" cannot be mistaken for the timeout.
  static constexpr int64_t kLongUs = 2'000'000;
  // Short enough to keep the suite fast, long enough to tell a sleep from a spin.
  static constexpr int64_t kShortUs = 30'000;
  int fds_[2] = {-1, -1};
  double wall_ = 0;
  double cpu_ = 0;
};

TEST_F(SleepOnTest, ReturnsAtOnceWhenTheDescriptorIsReadable) {
  // arm() can lose the race with an arrival that rings the descriptor just before the sleep.
  ring();
  timed_sleep(read_end(), -1, kLongUs);
  EXPECT_LT(wall_, 1.0);
}

TEST_F(SleepOnTest, ReturnsAtOnceWhenTheOtherDescriptorIsReadable) {
  // `also`: the network's descriptor ends shared memory's sleep (pml's sleep_until_bell), and
  // works without a descriptor of the caller's own.
  ring();
  timed_sleep(-1, read_end(), kLongUs);
  EXPECT_LT(wall_, 1.0);
}

TEST_F(SleepOnTest, WakesWhenTheDescriptorBecomesReadableDuringTheSleep) {
  // The case that matters: asleep first, then a fragment arrives.
  std::thread sender([this] {
    timespec ts{0, 20'000'000};
    nanosleep(&ts, nullptr);
    ring();
  });
  timed_sleep(-1, read_end(), kLongUs);
  sender.join();
  EXPECT_LT(wall_, 1.0);
}

TEST_F(SleepOnTest, TimesOutWithoutSpinningWhenNothingArrives) {
  timed_sleep(read_end(), -1, kShortUs);
  EXPECT_GE(wall_, kShortUs * 1e-6);
  EXPECT_LT(wall_, kShortUs * 1e-6 + 0.5);
  EXPECT_LT(cpu_, 0.005) << "spent CPU while waiting";
}

TEST_F(SleepOnTest, SleepsTheWholeTimeWithoutDescriptors) {
  // A transport without a wait descriptor (wait_fd() -1) still sleeps rather than spins.
  timed_sleep(-1, -1, kShortUs);
  EXPECT_GE(wall_, kShortUs * 1e-6);
  EXPECT_LT(wall_, kShortUs * 1e-6 + 0.5);
  EXPECT_LT(cpu_, 0.005) << "spent CPU while waiting";
}

TEST_F(SleepOnTest, ABellRungBeforeTheSleepEndsItAndIsTakenThere) {
  // wake_self() from another thread may come just before the sleep starts: not lost.
  net::Bell bell;
  ASSERT_GE(bell.fd(), 0);
  bell.ring();
  bell.ring();
  timed_sleep(read_end(), -1, kLongUs, &bell);
  EXPECT_LT(wall_, 1.0);
  // Both rings were taken by that sleep: the next one sleeps its time.
  timed_sleep(read_end(), -1, kShortUs, &bell);
  EXPECT_GE(wall_, kShortUs * 1e-6);
}

TEST_F(SleepOnTest, ABellRungDuringTheSleepEndsIt) {
  net::Bell bell;
  std::thread waker([&bell] {
    timespec ts{0, 20'000'000};
    nanosleep(&ts, nullptr);
    bell.ring();
  });
  timed_sleep(read_end(), -1, kLongUs, &bell);
  waker.join();
  EXPECT_LT(wall_, 1.0);
}

// ---------------------------------------------------------------------------------------------
// flush: at detach, progress until what is in flight has left, pausing when progress did nothing.
// (Its 2 s give-up, kFlushTimeoutS, is too long for this suite.)

TEST(FlushTest, DoesNotProgressWhenAlreadyDone) {
  int calls = 0;
  net::flush([] { return true; }, [&] { return ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(FlushTest, ProgressesUntilDone) {
  int calls = 0;
  net::flush([&] { return calls == 5; }, [&] { return ++calls, 1; });
  EXPECT_EQ(calls, 5);
}

TEST(FlushTest, PausesWhenProgressDidNothing) {
  // A quiet peer costs no CPU: for 20 ms of idle progress at most one call per 100 us pause
  // (200), where a spin would make hundreds of thousands.
  int calls = 0;
  const double end = progress::now_seconds() + 0.02;
  net::flush([&] { return progress::now_seconds() >= end; }, [&] { return ++calls, 0; });
  EXPECT_GT(calls, 0);
  EXPECT_LE(calls, 200);
}

// ---------------------------------------------------------------------------------------------
// Liveness: a waiting rank looks whether each peer's process on this host is still there, and
// ends the job naming a dead one.

// Above any pid Linux allocates (PID_MAX_LIMIT on 64-bit systems: pid_max may not exceed it), so
// this process is gone for certain, whatever else runs meanwhile.
constexpr pid_t kNoSuchPid = 4194304;

// The abort's message for a dead peer `rank` whose pid matches `pid` (a regex), as a regex.
std::string dead_peer(int rank, const std::string& pid, const char* doing) {
  return "test: rank " + std::to_string(rank) + " \\(pid " + pid +
         "\\) on node7 ended without calling MPI_Finalize while rank 1 was " + doing +
         ": ending the job";
}
std::string dead_peer(int rank, pid_t pid, const char* doing) {
  return dead_peer(rank, std::to_string(pid), doing);
}

class LivenessTest : public ::testing::Test {
 protected:
  boot::JobInfo job_ = job_of_four();
  Liveness live_{"test", job_};
};

TEST_F(LivenessTest, LivePeersPass) {
  // This process and its parent (the shell or the test driver) are there.
  live_.watch(0, getpid());
  live_.watch(2, getppid());
  EXPECT_EXIT(
      {
        live_.check("waiting for messages");
        _exit(0);
      },
      kReturned, "^$");
}

TEST_F(LivenessTest, APeerThatExitedEndsTheJobNamingIt) {
  // A real peer's end: a process that ran and exited (reaped, as the launcher reaps ranks).
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  live_.watch(0, getpid());
  live_.watch(3, child);
  // Any pid: under --gtest_death_test_style=threadsafe the death test's child runs this test
  // again from the start, and so forks a child of its own.
  EXPECT_EXIT(live_.check("waiting for messages"), kAborted,
              dead_peer(3, "[0-9]+", "waiting for messages"));
}

TEST_F(LivenessTest, ANonexistentPidEndsTheJob) {
  live_.watch(2, kNoSuchPid);
  EXPECT_EXIT(live_.check("reading a rendezvous message"), kAborted,
              dead_peer(2, kNoSuchPid, "reading a rendezvous message"));
}

TEST_F(LivenessTest, PeersOnOtherHostsAreNotWatched) {
  // Their card has no pid (0). A negative one is not taken as a process group either: kill()
  // of a group that does not exist would fail with ESRCH.
  live_.watch(2, 0);
  live_.watch(3, -kNoSuchPid);
  EXPECT_EXIT(
      {
        live_.check("waiting for messages");
        _exit(0);
      },
      kReturned, "^$");
}

TEST_F(LivenessTest, PeersThatMayHaveLeftAreSkipped) {
  // shm passes over peers that have finalized: their processes may be gone, rightly.
  live_.watch(2, kNoSuchPid);
  EXPECT_EXIT(
      {
        live_.check("waiting for messages", [](int rank) { return rank != 2; });
        _exit(0);
      },
      kReturned, "^$");
}

TEST_F(LivenessTest, OnlyTheSkippedPeersAreSkipped) {
  // Skipping one finalized peer must not hide another dead one.
  live_.watch(2, kNoSuchPid);
  live_.watch(3, kNoSuchPid);
  EXPECT_EXIT(live_.check("waiting for messages", [](int rank) { return rank != 2; }), kAborted,
              dead_peer(3, kNoSuchPid, "waiting for messages"));
}

TEST_F(LivenessTest, CheckDueDoesNotLookBeforeAPeriodHasPassed) {
  // A waiting loop calls check_due on every turn; it looks at most once every kLivenessPeriodS,
  // counted from construction, so a dead peer is not seen yet.
  live_.watch(2, kNoSuchPid);
  EXPECT_EXIT(
      {
        live_.check_due("waiting for messages");
        _exit(0);
      },
      kReturned, "^$");
}

// A Liveness a whole period old, watching a dead peer: built and aged once for the suite (the wait
// is the largest part of this program's run), and used only in death tests' children, so each
// test starts from the same, unchecked state.
class LivenessAgedTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    job_ = new boot::JobInfo(job_of_four());
    live_ = new Liveness("test", *job_);
    live_->watch(2, kNoSuchPid);
    const double start = progress::now_seconds();
    while (progress::now_seconds() - start < kLivenessPeriodS) {
      timespec ts{0, 10'000'000};
      nanosleep(&ts, nullptr);
    }
  }
  static void TearDownTestSuite() {
    delete live_;
    delete job_;
  }
  static boot::JobInfo* job_;
  static Liveness* live_;
};

boot::JobInfo* LivenessAgedTest::job_ = nullptr;
Liveness* LivenessAgedTest::live_ = nullptr;

TEST_F(LivenessAgedTest, CheckDueLooksOnceAPeriodHasPassed) {
  EXPECT_EXIT(live_->check_due("waiting for messages"), kAborted,
              dead_peer(2, kNoSuchPid, "waiting for messages"));
}

TEST_F(LivenessAgedTest, CheckDueWaitsAnotherPeriodAfterLooking) {
  // The first call looks (and passes over the dead peer, which it is told may have left); the
  // next, right after, does not look again, even with the peer now expected.
  EXPECT_EXIT(
      {
        live_->check_due("waiting for messages", [](int) { return false; });
        live_->check_due("waiting for messages");
        _exit(0);
      },
      kReturned, "^$");
}

}  // namespace
}  // namespace torusmpi::pml
