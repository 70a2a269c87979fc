// The simulator must catch what is wrong with a schedule: each test builds a deliberately broken
// one and expects the diagnosis; correct ones pass, and the time model adds up.
#include <gtest/gtest.h>

#include <functional>

#include "coll/algorithms.h"
#include "coll/sim/calls.h"
#include "coll/sim/sim.h"

namespace torusmpi::coll {
namespace {

using Build = std::function<void(Builder&, const Args&)>;

sim::Result simulate(Coll c, int p, size_t count, const Build& build, bool in_place = false,
                     bool commutative = true, const sim::Costs& costs = sim::Costs{}) {
  sim::CallShape shape;
  shape.coll = c;
  shape.size = p;
  shape.count = count;
  shape.elem = 4;
  shape.in_place = in_place;
  shape.commutative = commutative;
  auto call = sim::make_call(shape);
  return sim::run(call->args, build, costs);
}

// A correct allreduce of two ranks: swap, combine (the lower rank's data on the left).
void swap_and_combine(Builder& b, const Args& a) {
  uint64_t n = a.count * a.elem;
  BufRef tmp = b.scratch(n);
  int peer = 1 - a.rank;
  b.copy(a.recv, a.send, n);
  b.send(peer, a.send, n);
  b.recv(peer, tmp, n);
  b.step();
  b.reduce(a.recv, tmp, n);
}

// Builder::finish marks the steps that send kFanOutBytes or more to two peers or more (the
// executor sends those by rendezvous when ranks share cores): alltoall linear's one step at 4
// ranks with 32 KiB blocks, not with smaller ones, and never a ring's steps (one send each).
TEST(Schedule, StepsThatFanOutAreMarked) {
  auto marks = [](const Algorithm& alg, Coll c, size_t count) {
    sim::CallShape shape;
    shape.coll = c;
    shape.size = 4;
    shape.count = count;
    shape.elem = 1;
    auto call = sim::make_call(shape);
    Schedule s;
    Builder b(&s);
    alg.build(b, call->args[1]);
    b.finish();
    EXPECT_EQ(s.fans_out.size(), s.steps());
    int marked = 0;
    for (uint8_t f : s.fans_out) marked += f;
    return marked;
  };
  EXPECT_EQ(marks(kAlltoallLinear, Coll::kAlltoall, kFanOutBytes), 1);
  EXPECT_EQ(marks(kAlltoallLinear, Coll::kAlltoall, kFanOutBytes - 1), 0);
  EXPECT_EQ(marks(kAllgatherRing, Coll::kAllgather, 4 * kFanOutBytes), 0);
}

TEST(Sim, CorrectScheduleIsAccepted) {
  sim::Result r = simulate(Coll::kAllreduce, 2, 10, swap_and_combine);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.messages, 2u);
  EXPECT_EQ(r.bytes, 80u);
  EXPECT_EQ(r.max_steps, 2u);
}

TEST(Sim, MissingContributionIsCaught) {
  sim::Result r = simulate(Coll::kAllreduce, 2, 10, [](Builder& b, const Args& a) {
    b.copy(a.recv, a.send, a.count * a.elem);
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("expected the reduction over ranks {0-1}"), std::string::npos) << r.error;
}

TEST(Sim, DoubleCountingIsCaught) {
  sim::Result r = simulate(Coll::kAllreduce, 2, 10, [](Builder& b, const Args& a) {
    swap_and_combine(b, a);
    b.step();
    b.reduce(a.recv, BufRef{Buf::kScratch, 0}, a.count * a.elem);
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("counted twice"), std::string::npos) << r.error;
}

TEST(Sim, NonCommutativeOrderIsChecked) {
  // Rank 1 combines correctly (rank 0's data on the left); rank 0 puts rank 1's data on the left.
  sim::Result r = simulate(Coll::kAllreduce, 2, 3, swap_and_combine, false, false);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("rank 0 step 1"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("out of rank order"), std::string::npos) << r.error;
  // The same schedule is right when the op commutes.
  EXPECT_TRUE(simulate(Coll::kAllreduce, 2, 3, swap_and_combine).ok);
}

TEST(Sim, RaceInAStepIsCaught) {
  sim::Result r = simulate(Coll::kAllreduce, 2, 4, [](Builder& b, const Args& a) {
    uint64_t n = a.count * a.elem;
    b.copy(a.recv, a.send, n);
    b.step();
    // Sending recv while receiving into it, in one step.
    b.send(1 - a.rank, a.recv, n);
    b.recv(1 - a.rank, a.recv, n);
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("races with"), std::string::npos) << r.error;
}

// Joins of rank sets are cached by the pair of set ids. A run's id has its top bit set; when the
// key lost that bit, run {0-1} shared its entry with the first interned set ({2,5} here), and
// {0-1} op {4} took {2,5} op {4}'s result. Rank 0 makes those two joins in that order, then
// gathers the rest and sends the sum back: a correct allreduce.
TEST(Sim, RunAndInternedSetJoinApart) {
  sim::Result r = simulate(Coll::kAllreduce, 8, 1, [](Builder& b, const Args& a) {
    const uint64_t n = a.elem;
    if (a.rank != 0) {
      b.send(0, a.send, n);
      b.step();
      b.recv(0, a.recv, n);
      return;
    }
    const BufRef got = b.scratch(8 * n), spare = b.scratch(n);  // got + q n: rank q's data
    b.copy(a.recv, a.send, n);
    for (int q = 1; q < 8; ++q) b.recv(q, got + q * n, n);
    b.step();
    b.copy(spare, got + 4 * n, n);
    b.reduce(got + 2 * n, got + 5 * n, n);  // {2,5}: the first interned set
    b.step();
    b.reduce(got + 4 * n, got + 2 * n, n);  // {2,5} op {4}
    b.reduce(got + 1 * n, a.recv, n);       // {0-1}: a run
    b.step();
    b.reduce(spare, got + 1 * n, n);  // {0-1} op {4}
    for (int q : {2, 3, 6, 7}) {
      b.step();
      b.reduce(spare, got + q * n, n);
    }
    b.step();
    b.copy(a.recv, spare, n);
    for (int q = 1; q < 8; ++q) b.send(q, spare, n);
  });
  EXPECT_TRUE(r.ok) << r.error;
}

TEST(Sim, OverlappingCopyIsCaught) {
  sim::Result r = simulate(Coll::kAllreduce, 1, 8, [](Builder& b, const Args& a) {
    b.copy(a.recv, a.send, 32);
    b.step();
    b.copy(a.recv + 4, a.recv, 16);
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("overlap"), std::string::npos) << r.error;
}

TEST(Sim, DeadlockIsCaught) {
  // Both ranks receive before they send: fine with eager buffering, a deadlock with rendezvous.
  sim::Result r = simulate(Coll::kAllreduce, 2, 4, [](Builder& b, const Args& a) {
    uint64_t n = a.count * a.elem;
    BufRef tmp = b.scratch(n);
    b.recv(1 - a.rank, tmp, n);
    b.step();
    b.send(1 - a.rank, a.send, n);
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("deadlock: 2 rank(s)"), std::string::npos) << r.error;
}

TEST(Sim, SizeMismatchIsCaught) {
  sim::Result r = simulate(Coll::kAllreduce, 2, 4, [](Builder& b, const Args& a) {
    BufRef tmp = b.scratch(16);
    b.send(1 - a.rank, a.send, a.rank == 0 ? 16 : 8);
    b.recv(1 - a.rank, tmp, 16);
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("size differs"), std::string::npos) << r.error;
}

TEST(Sim, UnmatchedSendIsCaught) {
  sim::Result r = simulate(Coll::kAllreduce, 2, 4, [](Builder& b, const Args& a) {
    if (a.rank == 0) b.send(1, a.send, 0);
    b.copy(a.recv, a.send, a.count * a.elem);
  });
  // The sender waits for a receive that never comes.
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("deadlock: 1 rank(s) wait forever: rank 0 in step 0 (send(1"),
            std::string::npos)
      << r.error;
}

TEST(Sim, OutOfBoundsAndForbiddenBuffersAreCaught) {
  sim::Result r = simulate(Coll::kAllreduce, 1, 4, [](Builder& b, const Args& a) {
    b.copy(a.recv + 8, a.send, 16);  // recv has 16 bytes
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("outside the recv buffer of 16 B"), std::string::npos) << r.error;

  r = simulate(Coll::kAllreduce, 1, 4,
               [](Builder& b, const Args& a) { b.copy(a.send, a.recv, 16); });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("writes into the send buffer"), std::string::npos) << r.error;

  r = simulate(
      Coll::kAllreduce, 1, 4,
      [](Builder& b, const Args& a) {
        b.copy(a.recv, a.send, 16);  // in place: there is no send buffer
      },
      /*in_place=*/true);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("has no send buffer"), std::string::npos) << r.error;
}

TEST(Sim, ReducingUndefinedScratchIsCaught) {
  sim::Result r = simulate(Coll::kAllreduce, 1, 4, [](Builder& b, const Args& a) {
    BufRef tmp = b.scratch(16);
    b.copy(a.recv, a.send, 16);
    b.step();
    b.reduce(a.recv, tmp, 16);
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("undefined"), std::string::npos) << r.error;
}

TEST(Sim, WritesOutsideTheOutputAreCaught) {
  // allgatherv's receive buffer has gaps between blocks (calls.cc): writing one is wrong.
  sim::Result r = simulate(Coll::kAllgatherv, 3, 4, [](Builder& b, const Args& a) {
    allgatherv_ring(b, a);
    b.step();
    uint64_t gap = (a.displs[1] + a.counts[1]) * a.elem;  // one element of gap after rank 1
    b.copy(a.recv + gap, a.recv, 1);
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("as they were before the call"), std::string::npos) << r.error;
}

TEST(Sim, BarrierMustHearFromEveryone) {
  // A "barrier" where each rank only signals its right neighbour.
  sim::Result r = simulate(Coll::kBarrier, 4, 0, [](Builder& b, const Args& a) {
    b.send((a.rank + 1) % a.size, a.recv, 0);
    b.recv((a.rank + a.size - 1) % a.size, a.recv, 0);
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("without having heard"), std::string::npos) << r.error;
  EXPECT_TRUE(simulate(Coll::kBarrier, 5, 0, barrier_dissemination).ok);
  // Folded (3, 5, 6, 7), and powers of two.
  for (int p : {1, 2, 3, 4, 5, 6, 7, 8, 13, 16}) {
    sim::Result rd = simulate(Coll::kBarrier, p, 0, barrier_recursive_doubling);
    EXPECT_TRUE(rd.ok) << p << " ranks: " << rd.error;
  }
}

TEST(Sim, NeighbourBlocksMustComeFromTheirEdges) {
  EXPECT_TRUE(simulate(Coll::kNeighborAlltoall, 5, 3, neighbor_alltoall_linear).ok);
  // Receiving each source's block into the next source's slot is wrong.
  sim::Result r = simulate(Coll::kNeighborAlltoall, 5, 3, [](Builder& b, const Args& a) {
    const uint64_t n = a.block_bytes();
    for (int i = 0; i < a.indegree; ++i)
      b.recv(a.sources[i], a.recv + ((i + 1) % a.indegree) * n, n);
    for (int j = 0; j < a.outdegree; ++j) b.send(a.dests[j], a.send + j * n, n);
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("after its last step: receive bytes"), std::string::npos) << r.error;
}

TEST(Sim, TimeAddsUp) {
  sim::Costs c;
  c.alpha = 1e-6;
  c.beta = 1e-9;
  c.gamma = 2e-9;
  c.copy = 0;
  // One exchange of 400 B (alpha + 400 beta), then a reduction of 400 B (400 gamma).
  sim::Result r = simulate(Coll::kAllreduce, 2, 100, swap_and_combine, false, true, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_NEAR(r.time, 1e-6 + 400e-9 + 800e-9, 1e-12);
}

TEST(Sim, BufferSizesFollowMpi) {
  Args a;
  a.coll = Coll::kReduce;
  a.size = 4;
  a.rank = 1;
  a.root = 0;
  a.count = 10;
  a.elem = 4;
  EXPECT_EQ(sim::buffer_bytes(a, Buf::kSend), 40u);
  EXPECT_EQ(sim::buffer_bytes(a, Buf::kRecv), sim::kUnavailable);  // not the root
  a.rank = 0;
  a.in_place = true;
  EXPECT_EQ(sim::buffer_bytes(a, Buf::kSend), sim::kUnavailable);
  EXPECT_EQ(sim::buffer_bytes(a, Buf::kRecv), 40u);
  a.coll = Coll::kAllgather;
  a.in_place = false;
  EXPECT_EQ(sim::buffer_bytes(a, Buf::kRecv), 160u);
}

}  // namespace
}  // namespace torusmpi::coll
