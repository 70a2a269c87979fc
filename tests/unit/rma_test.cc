// The shm transport's one-sided mechanics (pml/shm/rma.h): window segments made, opened by
// another mapping and released (memfd and named), lock words (exclusive excludes everyone, shared
// holders share, the try-locks fail under a conflicting holder), counters awaited, and the
// single copy through process_vm_readv/writev over scattered blocks.
#include "pml/shm/rma.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/params.h"

namespace torusmpi::pml::shm::rma {
namespace {

TEST(RmaSegment, MemfdSegmentIsSharedBetweenMappings) {
  Segment made, opened;
  SegmentCard card;
  std::string error;
  ASSERT_EQ(segment_create("unit", 8192, &made, &card, &error), Status::kOk) << error;
  EXPECT_EQ(card.name[0], '\0');
  EXPECT_EQ(card.bytes, 8192u);
  ASSERT_EQ(segment_open(card, &opened, &error), Status::kOk) << error;
  segment_release_name(&made);
  EXPECT_EQ(made.fd, -1);
  static_cast<char*>(made.base)[100] = 42;
  EXPECT_EQ(static_cast<char*>(opened.base)[100], 42);
  EXPECT_EQ(static_cast<char*>(opened.base)[8191], 0);  // a fresh segment is zero
  segment_close(&opened);
  segment_close(&made);
  EXPECT_EQ(made.base, nullptr);
}

// The parameters as the environment says (params::load reads it again).
void load_params() {
  std::vector<std::string> errors, warnings;
  ASSERT_EQ(params::load(&errors, &warnings), Status::kOk);
}

TEST(RmaSegment, NamedSegmentLeavesNoNameOnceReleased) {
  setenv("TORUSMPI_SHM_NAMED", "1", 1);
  load_params();
  Segment made, opened;
  SegmentCard card;
  std::string error;
  Status s = segment_create("unit", 4096, &made, &card, &error);
  unsetenv("TORUSMPI_SHM_NAMED");
  load_params();
  ASSERT_EQ(s, Status::kOk) << error;
  ASSERT_NE(card.name[0], '\0');
  const std::string path = std::string("/dev/shm") + card.name;
  EXPECT_EQ(access(path.c_str(), F_OK), 0);
  ASSERT_EQ(segment_open(card, &opened, &error), Status::kOk) << error;
  segment_release_name(&made);
  EXPECT_NE(access(path.c_str(), F_OK), 0);
  segment_close(&opened);
  segment_close(&made);
}

TEST(RmaSegment, OpeningAGoneSegmentSaysWhy) {
  SegmentCard card;
  card.pid = getpid();
  card.fd = 1 << 20;  // no such descriptor
  card.bytes = 4096;
  Segment seg;
  std::string error;
  EXPECT_NE(segment_open(card, &seg, &error), Status::kOk);
  EXPECT_NE(error.find("cannot open the window segment"), std::string::npos) << error;
}

TEST(RmaLock, ExclusiveHoldersNeverOverlap) {
  std::atomic<uint32_t> word{0};
  int inside = 0, overlaps = 0;
  long total = 0;
  auto worker = [&] {
    for (int i = 0; i < 2000; ++i) {
      lock_exclusive(&word);
      if (++inside != 1) ++overlaps;
      ++total;
      --inside;
      unlock_exclusive(&word);
    }
  };
  std::thread a(worker), b(worker), c(worker);
  a.join();
  b.join();
  c.join();
  EXPECT_EQ(overlaps, 0);
  EXPECT_EQ(total, 6000);
  EXPECT_EQ(word.load(), 0u);
}

TEST(RmaLock, SharedHoldersShareAndExcludeTheExclusive) {
  std::atomic<uint32_t> word{0};
  lock_shared(&word);
  EXPECT_TRUE(try_lock_shared(&word));
  EXPECT_EQ(word.load(), 2u);
  std::atomic<bool> got{false};
  std::thread t([&] {
    lock_exclusive(&word);
    got = true;
    unlock_exclusive(&word);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(got.load());
  unlock_shared(&word);
  unlock_shared(&word);
  t.join();
  EXPECT_TRUE(got.load());
  lock_exclusive(&word);
  EXPECT_FALSE(try_lock_shared(&word));
  unlock_exclusive(&word);
  EXPECT_TRUE(try_lock_shared(&word));
  unlock_shared(&word);
  EXPECT_EQ(word.load(), 0u);
}

// What a window's service across nodes uses (it never waits): the exclusive try-lock fails under
// any holder and succeeds on a free word.
TEST(RmaLock, TryLockExclusiveNeverWaitsAndNeverOverlaps) {
  std::atomic<uint32_t> word{0};
  EXPECT_TRUE(try_lock_exclusive(&word));
  EXPECT_EQ(word.load(), kExclusive);
  EXPECT_FALSE(try_lock_exclusive(&word));
  EXPECT_FALSE(try_lock_shared(&word));
  unlock_exclusive(&word);
  EXPECT_TRUE(try_lock_shared(&word));
  EXPECT_FALSE(try_lock_exclusive(&word));
  unlock_shared(&word);
  EXPECT_TRUE(try_lock_exclusive(&word));
  unlock_exclusive(&word);
  EXPECT_EQ(word.load(), 0u);
}

TEST(RmaLock, WaitAtLeastSurvivesWrapAround) {
  std::atomic<uint32_t> counter{0xfffffffeu};
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    counter.fetch_add(3);  // wraps to 1
  });
  wait_at_least(&counter, 0xffffffffu + 2u);  // 1, after the wrap
  t.join();
  EXPECT_EQ(counter.load(), 1u);
}

TEST(RmaPeer, ScatteredBlocksAreOneCopyEachWay) {
  // This process as its own peer: the same calls another rank makes.
  std::vector<int> target(3000, -1);
  std::vector<Block> blocks;
  for (int i = 0; i < 1500; ++i) {  // more blocks than one call takes (IOV_MAX)
    blocks.push_back({reinterpret_cast<uintptr_t>(&target[2 * i]), sizeof(int)});
  }
  std::vector<int> packed(1500);
  for (int i = 0; i < 1500; ++i) packed[i] = i;
  std::string error;
  ASSERT_EQ(peer_write(getpid(), blocks, packed.data(), &error), Status::kOk) << error;
  for (int i = 0; i < 1500; ++i) {
    ASSERT_EQ(target[2 * i], i);
    ASSERT_EQ(target[2 * i + 1], -1);
  }
  std::vector<int> back(1500, 0);
  ASSERT_EQ(peer_read(getpid(), blocks, back.data(), &error), Status::kOk) << error;
  EXPECT_EQ(back, packed);
}

TEST(RmaPeer, AnUnmappedAddressIsAnErrorNotACrash) {
  void* hole = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(hole, MAP_FAILED);
  munmap(hole, 4096);
  std::vector<Block> blocks{{reinterpret_cast<uintptr_t>(hole), 16}};
  char buf[16];
  std::string error;
  EXPECT_NE(peer_read(getpid(), blocks, buf, &error), Status::kOk);
  EXPECT_NE(error.find("cannot read the memory of process"), std::string::npos) << error;
}

}  // namespace
}  // namespace torusmpi::pml::shm::rma
