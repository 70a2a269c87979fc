// The flight recorder: what it keeps (folding, nesting, the ring), how another process reads it
// (a forked child finds the parent's book through /proc maps), the timeout handler, and the
// report's grouping of ranks.
#include "core/flight.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <new>
#include <string>

namespace torusmpi::flight {
namespace {

class FlightTest : public ::testing::Test {
 protected:
  void SetUp() override { open(2, 4, "job.7", "node1"); }
  void TearDown() override { close(); }
};

const Op& op_at(uint64_t index) { return self()->ops[index % kDepth]; }

TEST_F(FlightTest, RecordsCallsInOrderWithTheirState) {
  ASSERT_NE(self(), nullptr);
  EXPECT_EQ(self()->h.magic, kMagic);
  EXPECT_EQ(self()->h.rank, 2);
  EXPECT_STREQ(self()->h.nspace, "job.7");
  {
    Scope s("MPI_Allreduce", 0, "MPI_COMM_WORLD", 1, 8, kNoPeer);
    EXPECT_EQ(self()->h.depth, 1);
    EXPECT_EQ(op_at(1).state, State::kActive);
    step(2, 3);
    EXPECT_EQ(op_at(1).step, 2);
    EXPECT_EQ(op_at(1).steps, 3);
  }
  EXPECT_EQ(self()->h.depth, 0);
  EXPECT_EQ(op_at(1).state, State::kDone);
  EXPECT_GE(op_at(1).ended_ns, op_at(1).entered_ns);
  Scope started("MPI_Isend", 0, "MPI_COMM_WORLD", 0, 100, 3);
  started.finish(State::kStarted);
  EXPECT_EQ(op_at(2).state, State::kStarted);
  EXPECT_EQ(op_at(2).peer, 3);
  EXPECT_EQ(self()->h.next_index, 3u);
}

// A blocking call found done before it waits is recorded done at once, never in progress, and
// folds like any other.
TEST_F(FlightTest, ACallDoneAtOnceIsRecordedDone) {
  done("MPI_Allreduce", 0, "MPI_COMM_WORLD", 1, 8, kNoPeer);
  EXPECT_EQ(self()->h.depth, 0);
  EXPECT_EQ(op_at(1).state, State::kDone);
  EXPECT_EQ(op_at(1).ended_ns, op_at(1).entered_ns);
  { Scope s("MPI_Allreduce", 0, "MPI_COMM_WORLD", 2, 8, kNoPeer); }
  done("MPI_Allreduce", 0, "MPI_COMM_WORLD", 3, 8, kNoPeer);
  EXPECT_EQ(self()->h.next_index, 2u);
  EXPECT_EQ(op_at(1).repeats, 2u);
  EXPECT_EQ(op_at(1).state, State::kDone);
}

TEST_F(FlightTest, FoldsRepeatedTestsIntoOneRecord) {
  { Scope s("MPI_Barrier", 0, "MPI_COMM_WORLD", 1, 0, kNoPeer); }
  for (int i = 0; i < 1000; ++i) Scope s("MPI_Testall", 0, "", 0, 1, kNoPeer);
  EXPECT_EQ(self()->h.next_index, 3u);  // two records: the barrier's history survives
  EXPECT_STREQ(op_at(1).call, "MPI_Barrier");
  EXPECT_EQ(op_at(2).repeats, 999u);
  // Collectives fold when numbered one after the other on their communicator, and the record
  // keeps the newest number.
  { Scope s("MPI_Barrier", 0, "MPI_COMM_WORLD", 2, 0, kNoPeer); }
  { Scope s("MPI_Barrier", 0, "MPI_COMM_WORLD", 3, 0, kNoPeer); }
  { Scope s("MPI_Barrier", 0, "MPI_COMM_WORLD", 4, 0, kNoPeer); }
  EXPECT_EQ(self()->h.next_index, 4u);
  EXPECT_EQ(op_at(3).comm_seq, 4u);
  EXPECT_EQ(op_at(3).repeats, 2u);
  const std::string history = describe_node({Seen{*self(), 'S'}}, now_ns(), 4);
  EXPECT_NE(history.find("MPI_Barrier #4 on MPI_COMM_WORLD, 0 B, repeated 2 more times (#2-4)"),
            std::string::npos)
      << history;
  // Not after a gap (a call of this communicator that the book did not see), nor on another one.
  { Scope s("MPI_Barrier", 0, "MPI_COMM_WORLD", 6, 0, kNoPeer); }
  { Scope s("MPI_Barrier", 1, "MPI_COMM_WORLD", 7, 0, kNoPeer); }
  EXPECT_EQ(self()->h.next_index, 6u);
}

TEST_F(FlightTest, NestedOperationsKeepTheirRecordsPastTheRing) {
  Scope outer("MPI_Comm_split", 0, "MPI_COMM_WORLD", 0, -1, kNoPeer);
  for (int i = 0; i < 3 * kDepth; ++i) {
    Scope inner("MPI_Allgather", 0, "MPI_COMM_WORLD", static_cast<uint32_t>(i + 1), 4, kNoPeer);
    EXPECT_EQ(self()->h.depth, 2);
  }
  EXPECT_EQ(self()->h.depth, 1);
  const Op& o = self()->ops[self()->h.active[0]];
  EXPECT_STREQ(o.call, "MPI_Comm_split");
  EXPECT_EQ(o.state, State::kActive);
}

// Records alternate between two calls (numbered apart, so that none folds), so each slot keeps
// seeing the same name pointer: a name renamed in place, or freed and made again at the same
// address, must still show its new text.
TEST_F(FlightTest, ANameChangedAtTheSameAddressIsCopiedAgain) {
  alignas(Name) unsigned char storage[sizeof(Name)];
  auto* name = new (storage) Name;
  *name = "solver";
  uint32_t seq = 1;
  auto call_pair = [&] {
    Scope a("MPI_Barrier", 5, name->c_str(), seq, 0, kNoPeer);
    a.finish(State::kDone);
    Scope b("MPI_Allreduce", 5, name->c_str(), seq + 1, 8, kNoPeer);
    seq += 3;
  };
  for (int i = 0; i < 2 * kDepth; ++i) call_pair();
  EXPECT_EQ(self()->h.next_index, 4u * kDepth + 1);
  EXPECT_STREQ(op_at(self()->h.next_index - 1).comm, "solver");
  *name = "smoother";  // short texts: the same buffer inside the string
  call_pair();
  call_pair();
  for (uint64_t i = self()->h.next_index - 4; i < self()->h.next_index; ++i)
    EXPECT_STREQ(op_at(i).comm, "smoother") << "record " << i;
  name->~Name();
  name = new (storage) Name;  // a communicator without a name, where the old one was
  call_pair();
  EXPECT_STREQ(op_at(self()->h.next_index - 1).comm, "");
  name->~Name();
}

// A benchmark's loop (the timed call, then a barrier) and a ping-pong fold into two records,
// each numbered two after its previous; the report says so, and where the rank was last.
TEST_F(FlightTest, AlternatingCallsFoldIntoTwoRecords) {
  for (uint32_t seq = 1; seq <= 200; seq += 2) {
    { Scope s("MPI_Allreduce", 0, "MPI_COMM_WORLD", seq, 8, kNoPeer); }
    { Scope s("MPI_Barrier", 0, "MPI_COMM_WORLD", seq + 1, 0, kNoPeer); }
  }
  EXPECT_EQ(self()->h.next_index, 3u);
  EXPECT_EQ(op_at(1).repeats, 99u);
  EXPECT_EQ(op_at(1).stride, 2u);
  EXPECT_EQ(op_at(1).comm_seq, 199u);
  EXPECT_EQ(op_at(2).comm_seq, 200u);
  std::string report = describe_node({Seen{*self(), 'S'}}, now_ns(), 4);
  EXPECT_NE(report.find("MPI_Allreduce #199 on MPI_COMM_WORLD, 8 B, repeated 99 more times in "
                        "turn with the record next to it (#1-199, every other)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("outside MPI, last in MPI_Barrier #200"), std::string::npos) << report;
  // The older record taken last: the report's last call is its.
  { Scope s("MPI_Allreduce", 0, "MPI_COMM_WORLD", 201, 8, kNoPeer); }
  EXPECT_EQ(self()->h.next_index, 3u);
  report = describe_node({Seen{*self(), 'S'}}, now_ns(), 0);
  EXPECT_NE(report.find("outside MPI, last in MPI_Allreduce #201"), std::string::npos) << report;
  // A call of a third kind between them ends the turns; a gap in the numbers too.
  { Scope s("MPI_Bcast", 0, "MPI_COMM_WORLD", 202, 8, kNoPeer); }
  { Scope s("MPI_Barrier", 0, "MPI_COMM_WORLD", 203, 0, kNoPeer); }
  EXPECT_EQ(self()->h.next_index, 5u);
  { Scope s("MPI_Bcast", 0, "MPI_COMM_WORLD", 205, 8, kNoPeer); }
  EXPECT_EQ(self()->h.next_index, 6u);
  // A ping-pong: point-to-point calls have no numbers, only their peer must match.
  for (int i = 0; i < 50; ++i) {
    { Scope s("MPI_Send", 0, "MPI_COMM_WORLD", 0, 8, 1); }
    { Scope s("MPI_Recv", 0, "MPI_COMM_WORLD", 0, 8, 1); }
  }
  EXPECT_EQ(self()->h.next_index, 8u);
  EXPECT_EQ(op_at(6).repeats, 49u);
  EXPECT_EQ(op_at(7).repeats, 49u);
  { Scope s("MPI_Send", 0, "MPI_COMM_WORLD", 0, 8, 2); }  // another peer
  EXPECT_EQ(self()->h.next_index, 9u);
  // A run of one call (stride 1) does not take turns afterwards.
  { Scope s("MPI_Recv", 0, "MPI_COMM_WORLD", 0, 8, 2); }
  { Scope s("MPI_Recv", 0, "MPI_COMM_WORLD", 0, 8, 2); }
  { Scope s("MPI_Send", 0, "MPI_COMM_WORLD", 0, 8, 2); }
  EXPECT_EQ(self()->h.next_index, 11u);
  EXPECT_EQ(op_at(9).stride, 1u);
}

TEST_F(FlightTest, AnotherProcessReadsTheBook) {
  Scope s("MPI_Recv", 4, "mine", 0, 16, 1);
  pid_t parent = getpid();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child reads the parent as torusmpi_info --hang would: it has no book open itself, but
    // fork gave it the mapping, so it stops looking at its own (close) first.
    close();
    Book b;
    std::string error;
    bool ok = read_book(parent, &b, &error);
    bool found = false;
    for (pid_t p : find_books()) found = found || p == parent;
    _exit(ok && found && b.h.depth == 1 && std::strcmp(b.ops[b.h.active[0]].call, "MPI_Recv") == 0
              ? 0
              : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(FlightTest, ReadingAProcessWithoutABookFails) {
  Book b;
  std::string error;
  EXPECT_FALSE(read_book(1, &b, &error));
  EXPECT_NE(error.find("no torusmpi flight recorder"), std::string::npos) << error;
}

double g_waited = 0;
void record_timeout(double waited_s) { g_waited = waited_s; }
int32_t g_waiting[] = {3, kAnyPeer};
int waiting(int32_t* ranks, int max) {
  int n = std::min(max, 2);
  std::memcpy(ranks, g_waiting, sizeof(int32_t) * n);
  return n;
}

TEST_F(FlightTest, StalledCallsTheTimeoutHandlerAndListsWhomItWaitsFor) {
  g_waited = 0;
  set_on_timeout(record_timeout, 0.05);
  set_waiting_for(waiting);
  Scope s("MPI_Barrier", 0, "MPI_COMM_WORLD", 9, 0, kNoPeer);
  stalled();
  EXPECT_EQ(g_waited, 0);  // not yet
  usleep(250 * 1000);      // past the look period and the timeout
  stalled();
  EXPECT_GT(g_waited, 0.05);
  EXPECT_EQ(self()->h.nwait, 2);
  EXPECT_EQ(self()->h.wait_for[0], 3);
  discount_wait();
  g_waited = 0;
  usleep(250 * 1000);
  stalled();
  EXPECT_GT(g_waited, 0.05);  // the clock started again, and has run past the timeout again
  EXPECT_LT(g_waited, 1.0);
  set_on_timeout(nullptr, 0);
  set_waiting_for(nullptr);
}

TEST(FlightReport, RankRanges) {
  EXPECT_EQ(rank_ranges({}), "");
  EXPECT_EQ(rank_ranges({4}), "4");
  EXPECT_EQ(rank_ranges({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
}

Seen seen_rank(int rank, char state, int64_t now) {
  Seen s{};
  s.state = state;
  s.book.h.magic = kMagic;
  s.book.h.rank = rank;
  s.book.h.pid = 1000 + rank;
  s.book.h.next_index = 2;
  s.book.h.last = 1;
  Op& op = s.book.ops[1];
  op.index = 1;
  op.entered_ns = now - int64_t{602} * 1000000000;
  op.comm_seq = 58;
  op.bytes = 8;
  op.peer = kNoPeer;
  std::strcpy(op.call, "MPI_Allreduce");
  std::strcpy(op.comm, "MPI_COMM_WORLD");
  return s;
}

TEST(FlightReport, GroupsRanksInTheSamePlace) {
  const int64_t now = now_ns();
  std::vector<Seen> ranks;
  for (int r = 0; r < 3; ++r) {
    Seen s = seen_rank(r, 'S', now);
    s.book.h.depth = 1;
    s.book.h.active[0] = 1;
    s.book.ops[1].state = State::kActive;
    s.book.ops[1].step = 1;
    s.book.ops[1].steps = 2;
    s.book.h.nwait = 1;
    s.book.h.wait_for[0] = 3;
    s.book.h.wait_seen_ns = now;
    ranks.push_back(s);
  }
  Seen stopped = seen_rank(3, 'T', now);
  stopped.book.ops[1].comm_seq = 57;
  stopped.book.ops[1].state = State::kDone;
  stopped.book.ops[1].ended_ns = stopped.book.ops[1].entered_ns;
  ranks.push_back(stopped);
  std::string text = describe_node(ranks, now, 0, {5});
  EXPECT_NE(text.find("ranks 0-2 are in MPI_Allreduce #58 on MPI_COMM_WORLD, step 1 of 2, "
                      "waiting for rank 3, entered 602 s ago"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 3 is stopped (state T) outside MPI, last in MPI_Allreduce #57 on "
                      "MPI_COMM_WORLD, for 602 s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 5: no flight recorder found"), std::string::npos) << text;
  std::string history = describe_node(ranks, now, 2);
  EXPECT_NE(history.find("rank 3 (pid 1003 on , state T), last operations:"), std::string::npos)
      << history;
}

TEST(FlightReport, ProcessStates) {
  EXPECT_EQ(proc_state(getpid()), 'R');
  EXPECT_FALSE(traced(getpid()));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  kill(child, SIGSTOP);
  char state = '?';
  for (int i = 0; i < 100 && state != 'T'; ++i) {
    usleep(10000);
    state = proc_state(child);
  }
  EXPECT_EQ(state, 'T');
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(proc_state(child), '?');
}

}  // namespace
}  // namespace torusmpi::flight
