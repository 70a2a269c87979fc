// The matching engine and its protocols, in one process: rank 0 of a two-rank job whose "rank 1"
// is a transport that hands every fragment straight back. So each message is both sent and
// received here, and the control fragments (ACK, CTS, FIN) come back to the sender they are for.
// The transport's limits (room, payload size, single copy) are set per test to reach every path.
#include "pml/pml.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <numeric>
#include <vector>

#include "core/progress.h"
#include "pml/transport.h"

namespace torusmpi::pml {
namespace {

class LoopTransport final : public Transport {
 public:
  size_t room = 1000;       // fragments it holds before send() says no
  size_t payload = 4096;    // max_payload()
  bool single_copy = true;  // read_remote() works
  int reads = 0;
  int from = 1;       // the rank its fragments come back from (PmlCrossTest crosses two loops)
  bool hold = false;  // poll() delivers nothing: a peer that does not progress

  const char* name() const override { return "loop"; }
  bool send(int, const FragHeader& h, const void* p, size_t len) override {
    if (queue_.size() >= room) return false;
    const auto* b = static_cast<const uint8_t*>(p);
    queue_.push_back({h, std::vector<uint8_t>(b, b + len)});
    return true;
  }
  size_t max_payload() const override { return payload; }
  bool read_remote(int, uint64_t addr, void* dst, size_t len, const void*, size_t) override {
    if (!single_copy) return false;
    ++reads;
    std::memcpy(dst, reinterpret_cast<const void*>(addr), len);
    return true;
  }
  // Split copies (Transport::split_copy) for messages of split_from bytes or more (0: none); the
  // sender's part is written unless write_ok is false.
  size_t split_from = 0;
  bool write_ok = true;
  int writes = 0;
  bool split_copy(int, uint64_t, size_t len) override {
    return split_from > 0 && len >= split_from && single_copy;
  }
  bool write_remote(int, uint64_t addr, const void* src, size_t len) override {
    if (!write_ok) return false;
    ++writes;
    std::memcpy(reinterpret_cast<void*>(addr), src, len);
    return true;
  }
  // A network's read: copied, and reported, by the poll after the one that started it, after that
  // poll's fragments (so a fragment the pml sends meanwhile goes ahead of the kFin).
  bool deferred_reads = false;
  ReadStart start_read(int peer, uint64_t addr, void* dst, size_t len, const void* key,
                       size_t key_len, uint64_t cookie) override {
    if (!deferred_reads) return Transport::start_read(peer, addr, dst, len, key, key_len, cookie);
    if (!single_copy) return ReadStart::kUnsupported;
    ++reads;
    started_.push_back({addr, dst, len, cookie});
    return ReadStart::kStarted;
  }
  size_t reads_in_flight() const { return started_.size(); }

  int poll() override {
    if (hold) return 0;
    size_t n = queue_.size();
    const size_t reads_due = started_.size();
    for (size_t i = 0; i < n; ++i) {
      Frag f = std::move(queue_.front());
      queue_.pop_front();
      deliver(from, f.h, f.payload.data(), f.payload.size());
    }
    for (size_t i = 0; i < reads_due; ++i) {
      Read rd = started_.front();
      started_.pop_front();
      std::memcpy(rd.dst, reinterpret_cast<const void*>(rd.addr), rd.len);
      read_done(rd.cookie);
    }
    return static_cast<int>(n + reads_due);
  }
  bool pending() const override { return !queue_.empty() || !started_.empty(); }
  void sleep(int64_t, int) override {}

 private:
  struct Frag {
    FragHeader h;
    std::vector<uint8_t> payload;
  };
  struct Read {
    uint64_t addr;
    void* dst;
    size_t len;
    uint64_t cookie;
  };
  std::deque<Frag> queue_;
  std::deque<Read> started_;
};

std::vector<uint8_t> pattern(size_t n, int seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + seed);
  return v;
}

class PmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    comm_.context = kWorldContext;
    comm_.rank = 0;
    comm_.size = 2;
    set_transport(1, &loop_);
    ASSERT_EQ(init(0, 2), Status::kOk);
  }
  void TearDown() override { finalize(); }

  Status send(const std::vector<uint8_t>& data, int tag, Request* r,
              SendMode mode = SendMode::kStandard) {
    return isend(comm_, comm_.context, data.data(), data.size(), 1, tag, mode, r);
  }
  Status recv(std::vector<uint8_t>* buf, int source, int tag, Request* r) {
    return irecv(comm_, comm_.context, buf->data(), buf->size(), source, tag, r);
  }

  // Sends n bytes and receives them into a buffer of capacity bytes followed by a guard.
  void round_trip(size_t n, size_t capacity) {
    auto data = pattern(n, static_cast<int>(n));
    std::vector<uint8_t> buf(capacity + 64, 0xEE);
    Request s, r;
    ASSERT_EQ(irecv(comm_, comm_.context, buf.data(), capacity, 0, 7, &r), Status::kOk);
    ASSERT_EQ(send(data, 7, &s), Status::kOk);
    wait(&r);
    wait(&s);
    size_t got = std::min(n, capacity);
    EXPECT_EQ(r.bytes, got);
    EXPECT_EQ(r.message_bytes, n);
    EXPECT_EQ(r.error, n > capacity ? Status::kErrTruncate : Status::kOk);
    EXPECT_EQ(r.source, 0);
    EXPECT_EQ(r.tag, 7);
    EXPECT_TRUE(std::equal(data.begin(), data.begin() + got, buf.begin())) << n;
    for (size_t i = capacity; i < buf.size(); ++i)
      ASSERT_EQ(buf[i], 0xEE) << "written past the buffer";
  }

  Comm comm_;
  LoopTransport loop_;
};

TEST_F(PmlTest, EagerAndRendezvousCarryEveryByte) {
  for (size_t n : {0, 1, 100, 4095, 4096, 4097, 100000}) round_trip(n, n);
  EXPECT_GT(loop_.reads, 0) << "messages above the transport's payload went by single copy";
}

TEST_F(PmlTest, PipelinedRendezvousWhenNoSingleCopy) {
  loop_.single_copy = false;
  loop_.payload = 1000;
  loop_.room = 3;  // the data chunks wait for room too
  for (size_t n : {1001, 5000, 123457}) round_trip(n, n);
  EXPECT_EQ(loop_.reads, 0);
}

TEST_F(PmlTest, TruncationNeverWritesPastTheBuffer) {
  round_trip(200, 100);      // eager
  round_trip(50000, 30000);  // single copy
  loop_.single_copy = false;
  round_trip(50000, 30001);  // pipelined: the excess is dropped
}

TEST_F(PmlTest, DeferredReadsCarryEveryByteAndTruncate) {
  loop_.deferred_reads = true;
  for (size_t n : {4097, 100000}) round_trip(n, n);
  round_trip(50000, 30000);
  EXPECT_EQ(loop_.reads, 3);
}

TEST_F(PmlTest, ADeferredReadCompletesItsReceiveAndThenItsSend) {
  loop_.deferred_reads = true;
  auto data = pattern(50000, 3);
  std::vector<uint8_t> buf(data.size());
  Request s, r;
  ASSERT_EQ(recv(&buf, 0, 4, &r), Status::kOk);
  ASSERT_EQ(send(data, 4, &s), Status::kOk);
  progress::poll();  // the RTS matches and the read starts
  ASSERT_EQ(loop_.reads_in_flight(), 1u);
  EXPECT_FALSE(r.done()) << "complete before its bytes are read";
  EXPECT_FALSE(s.done()) << "the sender's buffer is still being read";
  // Asked meanwhile, the receiver says no before its kFin goes: the send completes at the kFin,
  // not cancelled.
  EXPECT_TRUE(cancel(&s));
  wait(&r);
  wait(&s);
  EXPECT_FALSE(s.cancelled);
  EXPECT_EQ(buf, data);
  EXPECT_EQ(loop_.reads_in_flight(), 0u);
}

// Rank 0 of a three-rank job whose ranks 1 and 2 are two loops crossed: what goes to rank 1 comes
// back from rank 2, and what goes to 2 back from 1. A rendezvous received is then not from a
// peer this rank is sending one to (a one-way transfer, which split copies are for); in
// PmlTest's single loop it always is.
class PmlCrossTest : public PmlTest {
 protected:
  void SetUp() override {
    comm_.context = kWorldContext;
    comm_.rank = 0;
    comm_.size = 3;
    loop_.from = 2;
    back_.from = 1;
    set_transport(1, &loop_);
    set_transport(2, &back_);
    ASSERT_EQ(init(0, 3), Status::kOk);
  }
  // Splits from `bytes` on; the receiver reads from rank 2 (back_), the sender writes into rank 1
  // (loop_).
  void split_from(size_t bytes) { loop_.split_from = back_.split_from = bytes; }
  int reads() const { return loop_.reads + back_.reads; }
  int writes() const { return loop_.writes + back_.writes; }
  LoopTransport back_;
};

TEST_F(PmlCrossTest, SplitCopiesCarryEveryByteAndTruncate) {
  split_from(8192);
  for (size_t n : {8192, 8193, 100000, 1000001}) round_trip(n, n);
  round_trip(100000, 60000);  // the split is of what the receive takes
  round_trip(8191, 8191);     // below: one read
  EXPECT_EQ(writes(), 5);
  EXPECT_EQ(reads(), 6);
}

TEST_F(PmlCrossTest, ASplitCopyCompletesOnlyWithBothHalves) {
  split_from(8192);
  auto data = pattern(300000, 5);
  std::vector<uint8_t> buf(data.size());
  Request s, r;
  ASSERT_EQ(recv(&buf, 0, 4, &r), Status::kOk);
  ASSERT_EQ(send(data, 4, &s), Status::kOk);
  back_.hold = true;  // the sender does not see kSplit yet
  progress::poll();   // the RTS matches: kSplit goes and the receiver reads its half
  EXPECT_EQ(reads(), 1);
  EXPECT_EQ(writes(), 0);
  EXPECT_FALSE(r.done()) << "complete before the sender's half is written";
  EXPECT_FALSE(s.done()) << "the sender's buffer is still being copied";
  back_.hold = false;
  wait(&r);
  wait(&s);
  EXPECT_EQ(buf, data);
  EXPECT_EQ(writes(), 1);
}

TEST_F(PmlCrossTest, ASplitWriteThatFailsIsReadByTheReceiver) {
  split_from(8192);
  loop_.write_ok = false;
  round_trip(100000, 100000);
  round_trip(100000, 70000);
  EXPECT_EQ(writes(), 0);
  EXPECT_EQ(reads(), 4);
}

// Both ends sending (an exchange): each has its own message to be copied, and splitting would
// only add a round trip; the receiver reads it whole. In PmlTest's loop every rendezvous received
// is from the peer of this rank's own send.
TEST_F(PmlTest, ARendezvousFromAPeerThisRankSendsToIsReadWhole) {
  loop_.split_from = 8192;
  round_trip(100000, 100000);
  round_trip(1000001, 1000001);
  EXPECT_EQ(loop_.writes, 0);
  EXPECT_EQ(loop_.reads, 2);
}

// A rendezvous send to rank 2 (left unmatched) makes the message from rank 2 a read of its own;
// once that send is cancelled, the next one is split again.
TEST_F(PmlCrossTest, SplitsResumeWhenTheSendToThePeerEnds) {
  split_from(8192);
  auto data = pattern(50000, 9);
  Request s;
  ASSERT_EQ(isend(comm_, comm_.context, data.data(), data.size(), 2, 11, SendMode::kStandard, &s),
            Status::kOk);
  round_trip(100000, 100000);
  EXPECT_EQ(writes(), 0);
  EXPECT_EQ(reads(), 1);
  ASSERT_TRUE(cancel(&s));
  wait(&s);
  EXPECT_TRUE(s.cancelled);
  round_trip(100000, 100000);
  EXPECT_EQ(writes(), 1);
  EXPECT_EQ(reads(), 2);
}

TEST_F(PmlTest, MessagesFromOneSenderMatchInSendOrder) {
  // Mixed protocols with one tag: each receive gets the next message sent.
  std::vector<size_t> sizes{10, 50000, 20, 9000, 0, 70000};
  std::vector<std::vector<uint8_t>> data;
  std::vector<Request> sends(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) data.push_back(pattern(sizes[i], static_cast<int>(i)));
  for (size_t i = 0; i < sizes.size(); ++i) ASSERT_EQ(send(data[i], 3, &sends[i]), Status::kOk);
  progress::poll();  // all arrive before any receive: the unexpected queue keeps their order
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<uint8_t> buf(100000);
    Request r;
    ASSERT_EQ(recv(&buf, kAnySource, kAnyTag, &r), Status::kOk);
    wait(&r);
    ASSERT_EQ(r.bytes, sizes[i]) << i;
    EXPECT_TRUE(std::equal(data[i].begin(), data[i].end(), buf.begin())) << i;
  }
  for (Request& s : sends) wait(&s);
}

TEST_F(PmlTest, TagsSelectAndWildcardsTakeTheOldest) {
  auto a = pattern(8, 1), b = pattern(8, 2), c = pattern(8, 3);
  Request sa, sb, sc;
  send(a, 1, &sa);
  send(b, 2, &sb);
  send(c, 1, &sc);
  progress::poll();
  std::vector<uint8_t> buf(8);
  Request r;
  recv(&buf, 0, 2, &r);
  wait(&r);
  EXPECT_EQ(buf, b);
  recv(&buf, kAnySource, kAnyTag, &r);
  wait(&r);
  EXPECT_EQ(buf, a);
  EXPECT_EQ(r.tag, 1);
  recv(&buf, 0, 1, &r);
  wait(&r);
  EXPECT_EQ(buf, c);
}

TEST_F(PmlTest, PostedReceivesMatchInPostOrder) {
  std::vector<uint8_t> first(4), second(4);
  Request r1, r2, s1, s2;
  recv(&first, kAnySource, 5, &r1);
  recv(&second, 0, kAnyTag, &r2);
  auto x = pattern(4, 9), y = pattern(4, 10);
  send(x, 5, &s1);
  send(y, 5, &s2);
  wait(&r1);
  wait(&r2);
  EXPECT_EQ(first, x);
  EXPECT_EQ(second, y);
}

TEST_F(PmlTest, SynchronousSendCompletesOnlyWhenMatched) {
  auto small = pattern(16, 4);
  Request s;
  ASSERT_EQ(send(small, 1, &s, SendMode::kSync), Status::kOk);
  for (int i = 0; i < 10; ++i) progress::poll();
  EXPECT_FALSE(s.done()) << "no receive is posted yet";
  std::vector<uint8_t> buf(16);
  Request r;
  recv(&buf, 0, 1, &r);
  wait(&s);
  wait(&r);
  EXPECT_EQ(buf, small);
}

TEST_F(PmlTest, CancelOnlyBeforeMatching) {
  std::vector<uint8_t> buf(4, 0xAB);
  Request r;
  recv(&buf, 0, 42, &r);
  EXPECT_TRUE(cancel(&r));
  EXPECT_TRUE(r.done());
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(buf, std::vector<uint8_t>(4, 0xAB));
  // Matched already: too late.
  auto data = pattern(4, 5);
  Request s, r2;
  recv(&buf, 0, 43, &r2);
  send(data, 43, &s);
  wait(&r2);
  EXPECT_FALSE(cancel(&r2));
  EXPECT_FALSE(r2.cancelled);
  EXPECT_EQ(buf, data);
}

// A send the receiver has not matched: kCancel drops it from the unexpected queue, and the
// request, though a standard eager send was done already, waits for the answer.
TEST_F(PmlTest, CancelSendsBeforeMatching) {
  for (size_t n : {size_t{0}, size_t{16}, size_t{100000}}) {  // eager, and rendezvous
    for (SendMode mode : {SendMode::kStandard, SendMode::kSync}) {
      auto data = pattern(n, 3);
      Request s;
      ASSERT_EQ(send(data, 50, &s, mode), Status::kOk);
      progress::poll();  // unexpected at the receiver
      EXPECT_TRUE(cancel(&s));
      EXPECT_FALSE(s.done()) << "done before the receiver answered";
      wait(&s);
      EXPECT_TRUE(s.cancelled) << n;
      ProbeInfo info;
      EXPECT_FALSE(iprobe(comm_, comm_.context, 0, 50, &info)) << "the message is still there";
      EXPECT_TRUE(contexts_idle(comm_.context));
      EXPECT_FALSE(cancel(&s)) << "cancelled twice";
    }
  }
}

// Still in this rank's backlog (the transport has no room): taken out without asking anyone.
TEST_F(PmlTest, CancelSendStillInTheBacklog) {
  loop_.room = 0;
  auto data = pattern(100, 4);
  Request s;
  ASSERT_EQ(send(data, 51, &s), Status::kOk);
  EXPECT_FALSE(s.done());
  EXPECT_TRUE(cancel(&s));
  EXPECT_TRUE(s.done());
  EXPECT_TRUE(s.cancelled);
  loop_.room = 1000;
  for (int i = 0; i < 3; ++i) progress::poll();
  ProbeInfo info;
  EXPECT_FALSE(iprobe(comm_, comm_.context, 0, 51, &info));
}

// Matched first: the answer is no, and the send completes as sent (a synchronous one knows it
// matched and does not even ask).
TEST_F(PmlTest, CancelSendAfterMatchingFails) {
  for (SendMode mode : {SendMode::kStandard, SendMode::kSync}) {
    auto data = pattern(64, 6);
    std::vector<uint8_t> buf(64);
    Request s, r;
    recv(&buf, 0, 52, &r);
    ASSERT_EQ(send(data, 52, &s, mode), Status::kOk);
    wait(&r);
    wait(&s);
    cancel(&s);
    wait(&s);
    EXPECT_FALSE(s.cancelled);
    EXPECT_EQ(buf, data);
  }
  // Rendezvous, matched, pipelined: the data still all arrives.
  loop_.single_copy = false;
  loop_.payload = 1000;
  auto big = pattern(20000, 7);
  std::vector<uint8_t> buf(20000);
  Request s, r;
  ASSERT_EQ(send(big, 53, &s), Status::kOk);
  recv(&buf, 0, 53, &r);  // matched on posting: the CTS is on its way
  cancel(&s);
  wait(&r);
  wait(&s);
  EXPECT_FALSE(s.cancelled);
  EXPECT_EQ(buf, big);
}

// A request object used again for the same envelope: the cancel drops the newer message, whose
// request it is now, and the older one is received.
TEST_F(PmlTest, CancelSendPicksTheNewestUseOfARequest) {
  auto first = pattern(32, 8), second = pattern(32, 9);
  Request s;
  ASSERT_EQ(send(first, 54, &s), Status::kOk);
  wait(&s);
  ASSERT_EQ(send(second, 54, &s), Status::kOk);
  progress::poll();
  EXPECT_TRUE(cancel(&s));
  wait(&s);
  EXPECT_TRUE(s.cancelled);
  std::vector<uint8_t> buf(32);
  Request r;
  recv(&buf, 0, 54, &r);
  wait(&r);
  EXPECT_EQ(buf, first);
  ProbeInfo info;
  EXPECT_FALSE(iprobe(comm_, comm_.context, 0, 54, &info));
}

TEST_F(PmlTest, MatchedProbeTakesTheMessage) {
  auto big = pattern(60000, 6), small = pattern(3, 7);
  Request s1, s2;
  send(big, 8, &s1);
  progress::poll();
  ProbeInfo info;
  EXPECT_TRUE(iprobe(comm_, comm_.context, 0, 8, &info));
  EXPECT_EQ(info.bytes, big.size());
  Message* msg = nullptr;
  ASSERT_TRUE(improbe(comm_, comm_.context, kAnySource, 8, &info, &msg));
  send(small, 8, &s2);
  progress::poll();
  // A plain receive now gets the later message: the probed one is out of the queue.
  std::vector<uint8_t> buf(3);
  Request r;
  recv(&buf, 0, 8, &r);
  wait(&r);
  EXPECT_EQ(buf, small);
  std::vector<uint8_t> bigbuf(60000);
  Request mr;
  ASSERT_EQ(mrecv(msg, bigbuf.data(), bigbuf.size(), &mr), Status::kOk);
  wait(&mr);
  EXPECT_EQ(bigbuf, big);
  wait(&s1);
  wait(&s2);
  EXPECT_FALSE(iprobe(comm_, comm_.context, kAnySource, kAnyTag, &info));
}

TEST_F(PmlTest, ContextsAreSeparate) {
  auto data = pattern(5, 1);
  Request s, r;
  ASSERT_EQ(isend(comm_, comm_.coll_context(), data.data(), 5, 1, 0, SendMode::kStandard, &s),
            Status::kOk);
  progress::poll();
  ProbeInfo info;
  EXPECT_FALSE(iprobe(comm_, comm_.context, kAnySource, kAnyTag, &info));
  std::vector<uint8_t> buf(5);
  irecv(comm_, comm_.coll_context(), buf.data(), 5, 0, 0, &r);
  wait(&r);
  EXPECT_EQ(buf, data);
}

TEST_F(PmlTest, ABacklogKeepsOrderAndDrains) {
  loop_.room = 2;
  constexpr int kMessages = 50;
  std::vector<std::vector<uint8_t>> data;
  std::vector<Request> sends(kMessages);
  for (int i = 0; i < kMessages; ++i) data.push_back(pattern(100 + i, i));
  for (int i = 0; i < kMessages; ++i) send(data[i], 1, &sends[i]);
  for (int i = 0; i < kMessages; ++i) {
    std::vector<uint8_t> buf(200);
    Request r;
    recv(&buf, 0, 1, &r);
    wait(&r);
    ASSERT_EQ(r.bytes, data[i].size()) << i;
    EXPECT_TRUE(std::equal(data[i].begin(), data[i].end(), buf.begin())) << i;
  }
  for (Request& s : sends) {
    wait(&s);
    EXPECT_TRUE(s.done());
  }
}

TEST_F(PmlTest, SelfSendsGoThroughTheLoopback) {
  Comm self;
  self.context = kSelfContext;
  self.world_ranks = {0};
  auto data = pattern(100000, 3);
  std::vector<uint8_t> buf(100000);
  Request s, r;
  ASSERT_EQ(isend(self, self.context, data.data(), data.size(), 0, 0, SendMode::kStandard, &s),
            Status::kOk);
  ASSERT_EQ(irecv(self, self.context, buf.data(), buf.size(), 0, 0, &r), Status::kOk);
  wait(&r);
  wait(&s);
  EXPECT_EQ(buf, data);
  EXPECT_EQ(loop_.reads, 0) << "the loopback copies itself";
}

TEST_F(PmlTest, CompletionCallbackRunsOnce) {
  static int calls;
  calls = 0;
  auto data = pattern(10, 1);
  Request s;
  s.on_complete = [](Request*) { ++calls; };
  send(data, 1, &s);
  std::vector<uint8_t> buf(10);
  Request r;
  recv(&buf, 0, 1, &r);
  wait(&r);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace torusmpi::pml
