// The shared-memory ring: records in order, wrap-around with skip records, full and empty, a
// producer and a consumer on two threads, and two rings carrying one numbered stream.
#include "pml/shm/ring.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace torusmpi::pml::shm {
namespace {

struct TestRing {
  explicit TestRing(uint64_t cap) : cap(cap), data(cap) {
    writer.attach(&ctl, data.data(), cap);
    reader.attach(&ctl, data.data(), cap);
  }
  uint64_t cap;
  RingControl ctl;
  std::vector<uint8_t> data;
  RingWriter writer;
  RingReader reader;
};

FragHeader header(int tag, uint64_t size) {
  FragHeader h{};
  h.type = FragType::kEager;
  h.tag = tag;
  h.size = size;
  return h;
}

// The inline copy of small payloads (core/copy.h) against memcpy, at every size around its
// word sizes and at every alignment, touching nothing outside the destination.
TEST(CopyBytes, CopiesEverySizeAndTouchesNothingElse) {
  uint8_t src[64], dst[64], want[64];
  for (int i = 0; i < 64; ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
  for (size_t bytes = 0; bytes <= 40; ++bytes) {
    for (size_t at = 0; at < 8; ++at) {
      std::memset(dst, 0xee, sizeof dst);
      std::memset(want, 0xee, sizeof want);
      std::memcpy(want + at, src + 3, bytes);
      copy_bytes(dst + at, src + 3, bytes);
      ASSERT_EQ(std::memcmp(dst, want, sizeof dst), 0) << bytes << " B at +" << at;
    }
  }
}

TEST(Ring, DeliversRecordsInOrderWithTheirPayloads) {
  TestRing r(4096);
  EXPECT_TRUE(r.reader.empty());
  const char hello[] = "hello";
  ASSERT_TRUE(r.writer.push(header(1, 0), nullptr, 0));
  ASSERT_TRUE(r.writer.push(header(2, sizeof hello), hello, sizeof hello));
  EXPECT_FALSE(r.reader.empty());
  std::vector<int> tags;
  int n = r.reader.drain([&](const FragHeader& h, const uint8_t* p, size_t len) {
    tags.push_back(h.tag);
    if (h.tag == 2) {
      ASSERT_EQ(len, sizeof hello);
      EXPECT_STREQ(reinterpret_cast<const char*>(p), "hello");
    } else {
      EXPECT_EQ(len, 0u);
    }
  });
  EXPECT_EQ(n, 2);
  EXPECT_EQ(tags, (std::vector<int>{1, 2}));
  EXPECT_TRUE(r.reader.empty());
}

TEST(Ring, RefusesARecordWhenFullAndTakesItOnceDrained) {
  TestRing r(4096);
  std::vector<uint8_t> payload(ring_max_payload(4096), 7);
  int pushed = 0;
  while (r.writer.push(header(pushed, payload.size()), payload.data(), payload.size())) ++pushed;
  EXPECT_GE(pushed, 3);
  EXPECT_LE(pushed, 4);
  int seen = 0;
  r.reader.drain([&](const FragHeader& h, const uint8_t*, size_t len) {
    EXPECT_EQ(h.tag, seen++);
    EXPECT_EQ(len, payload.size());
  });
  EXPECT_EQ(seen, pushed);
  EXPECT_TRUE(r.writer.push(header(99, payload.size()), payload.data(), payload.size()));
}

TEST(Ring, WrapsAroundWithSkipRecords) {
  TestRing r(4096);
  // Sizes that do not divide the ring: records end at odd places and must skip to the start.
  int next_tag = 0, expect_tag = 0;
  for (int round = 0; round < 200; ++round) {
    size_t len = static_cast<size_t>(round * 37 % 900);
    std::vector<uint8_t> payload(len, static_cast<uint8_t>(round));
    while (!r.writer.push(header(next_tag, len), payload.data(), len)) {
      r.reader.drain([&](const FragHeader& h, const uint8_t* p, size_t l) {
        EXPECT_EQ(h.tag, expect_tag++);
        for (size_t i = 0; i < l; ++i) ASSERT_EQ(p[i], static_cast<uint8_t>(h.tag)) << i;
      });
    }
    ++next_tag;
  }
  r.reader.drain(
      [&](const FragHeader& h, const uint8_t*, size_t) { EXPECT_EQ(h.tag, expect_tag++); });
  EXPECT_EQ(expect_tag, next_tag);
}

TEST(Ring, ProducerAndConsumerThreadsAgreeOnEveryByte) {
  TestRing r(8192);
  constexpr int kRecords = 20000;
  std::thread producer([&] {
    std::vector<uint8_t> payload(1500);
    for (int i = 0; i < kRecords; ++i) {
      size_t len = static_cast<size_t>(i % 1500);
      for (size_t k = 0; k < len; ++k) payload[k] = static_cast<uint8_t>(i + k);
      while (!r.writer.push(header(i, len), payload.data(), len)) std::this_thread::yield();
    }
  });
  int expect = 0;
  bool bytes_ok = true;
  while (expect < kRecords) {
    r.reader.drain([&](const FragHeader& h, const uint8_t* p, size_t len) {
      if (h.tag != expect || len != static_cast<size_t>(expect % 1500)) bytes_ok = false;
      for (size_t k = 0; k < len; ++k) {
        if (p[k] != static_cast<uint8_t>(expect + k)) bytes_ok = false;
      }
      ++expect;
    });
  }
  producer.join();
  EXPECT_TRUE(bytes_ok);
}

// The shm transport's host and device queues between two ranks: records go into either ring, and
// the reader takes each ring's records only while they are the stream's next. The numbers start
// just below the prefix's modulus, so they wrap around during the test.
TEST(Ring, TwoRingsCarryOneStreamInOrder) {
  TestRing host(8192), device(4096);
  constexpr int kRecords = 20000;
  const uint64_t first = kSeqMask - 50;
  std::thread producer([&] {
    std::vector<uint8_t> payload(700);
    uint64_t seq = first;
    unsigned pick = 1;
    for (int i = 0; i < kRecords; ++i) {
      pick = pick * 1103515245u + 12345u;
      TestRing& to = (pick >> 16) % 3 == 0 ? host : device;  // runs of either
      size_t len = static_cast<size_t>(i * 13 % 700);
      for (size_t k = 0; k < len; ++k) payload[k] = static_cast<uint8_t>(i + k);
      while (!to.writer.push(header(i, len), payload.data(), len, seq)) std::this_thread::yield();
      ++seq;
    }
  });
  uint64_t next = first;
  int expect = 0;
  bool ok = true;
  auto take = [&](const FragHeader& h, const uint8_t* p, size_t len) {
    if (h.tag != expect || len != static_cast<size_t>(expect * 13 % 700)) ok = false;
    for (size_t k = 0; k < len; ++k) {
      if (p[k] != static_cast<uint8_t>(expect + k)) ok = false;
    }
    ++expect;
  };
  // One record a call from either ring, as the shm transport takes them.
  while (expect < kRecords) {
    if (host.reader.drain(take, &next, 1) == 0) device.reader.drain(take, &next, 1);
    ASSERT_EQ(host.reader.fault(), nullptr);
    ASSERT_EQ(device.reader.fault(), nullptr);
  }
  producer.join();
  EXPECT_TRUE(ok);
  EXPECT_EQ(next, first + kRecords);
  EXPECT_TRUE(host.reader.empty());
  EXPECT_TRUE(device.reader.empty());
}

// A record that is not the stream's next stays where it is, for the other ring to go first.
TEST(Ring, HoldsARecordThatIsNotTheStreamsNext) {
  TestRing r(4096);
  ASSERT_TRUE(r.writer.push(header(1, 0), nullptr, 0, 5));
  uint64_t next = 4;
  int n = r.reader.drain([](const FragHeader&, const uint8_t*, size_t) {}, &next, 8);
  EXPECT_EQ(n, 0);
  EXPECT_FALSE(r.reader.empty());
  next = 5;
  n = r.reader.drain([](const FragHeader& h, const uint8_t*, size_t) { EXPECT_EQ(h.tag, 1); },
                     &next, 8);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(next, 6u);
}

// A drain takes at most as many records as it is allowed, and past that only those that start in
// the cache line it has just read; it leaves the rest, in order.
TEST(Ring, DrainsNoMoreThanItsLimit) {
  int seen = 0;
  auto take = [&](const FragHeader& h, const uint8_t*, size_t) { EXPECT_EQ(h.tag, seen++); };
  {
    // 16-byte payloads: a record a line.
    TestRing r(4096);
    for (int tag = 0; tag < 3; ++tag) {
      ASSERT_TRUE(r.writer.push(header(tag, 16), "0123456789abcdef", 16));
    }
    EXPECT_EQ(r.reader.drain(take, nullptr, 1), 1);
    EXPECT_FALSE(r.reader.empty());
    EXPECT_EQ(r.reader.drain(take), 2);
    EXPECT_EQ(seen, 3);
    EXPECT_TRUE(r.reader.empty());
  }
  {
    // 8-byte payloads: two records a line, taken together.
    TestRing r(4096);
    for (int tag = 3; tag < 6; ++tag) ASSERT_TRUE(r.writer.push(header(tag, 8), "01234567", 8));
    EXPECT_EQ(r.reader.drain(take, nullptr, 1), 2);
    EXPECT_FALSE(r.reader.empty());
    EXPECT_EQ(r.reader.drain(take, nullptr, 1), 1);
    EXPECT_EQ(seen, 6);
    EXPECT_TRUE(r.reader.empty());
  }
}

// An eager message with no request to answer travels in a compact record, whose header the
// reader gives back whole; anything else keeps its full header. Up to 40 payload bytes fit a
// compact record's one cache line, up to 8 half of one.
TEST(Ring, CompactRecordsGiveBackTheWholeHeader) {
  EXPECT_EQ(record_bytes(8, true), 32u);
  EXPECT_EQ(record_bytes(9, true), 64u);
  EXPECT_EQ(record_bytes(40, true), 64u);
  EXPECT_EQ(record_bytes(41, true), 96u);
  EXPECT_EQ(record_bytes(17, false), 96u);
  TestRing r(4096);
  const char payload[40] = "forty bytes of payload, in one line";
  FragHeader compact = header(-7, sizeof payload);
  compact.context = 65535;
  compact.source = 1234567;
  FragHeader full = compact;
  full.sreq = 0xfeedface;
  FragHeader sync = compact;
  sync.flags = 1;
  for (const FragHeader* h : {&compact, &full, &sync}) {
    ASSERT_TRUE(r.writer.push(*h, payload, sizeof payload));
  }
  std::vector<FragHeader> got;
  r.reader.drain([&](const FragHeader& h, const uint8_t* p, size_t len) {
    got.push_back(h);
    ASSERT_EQ(len, sizeof payload);
    EXPECT_EQ(std::memcmp(p, payload, len), 0);
  });
  ASSERT_EQ(got.size(), 3u);
  const FragHeader* want[] = {&compact, &full, &sync};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(std::memcmp(&got[i], want[i], sizeof(FragHeader)), 0) << "record " << i;
  }
  // A ring holds as many 40-byte compact records as 16-byte full ones: a line each.
  TestRing a(4096), b(4096);
  FragHeader answered = header(0, 16);
  answered.sreq = 1;
  int compact_records = 0, full_records = 0;
  while (a.writer.push(compact, payload, sizeof payload)) ++compact_records;
  while (b.writer.push(answered, payload, 16)) ++full_records;
  EXPECT_EQ(compact_records, full_records);
  EXPECT_GT(compact_records, 0);
}

}  // namespace
}  // namespace torusmpi::pml::shm
