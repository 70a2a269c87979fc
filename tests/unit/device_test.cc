// The emulated device: its allocator and pointer kinds, the DMA engine's counters (what counts
// as staged), the DMA view, and peer HBM (this process maps its own arena as a peer's, the way a
// rank of its node would).
#include "device/device.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "topo/machine.h"

namespace torusmpi::device {
namespace {

class DeviceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string error;
    ASSERT_EQ(topo::load(1, &error), Status::kOk) << error;
    ASSERT_EQ(init(0, &error), Status::kOk) << error;
  }
  static void TearDownTestSuite() { finalize(); }
};

TEST_F(DeviceTest, KindsOfPointers) {
  void* d = nullptr;
  ASSERT_EQ(alloc(1000, &d), Status::kOk);
  EXPECT_TRUE(in_device_range(d));
  EXPECT_EQ(kind(d, 1000), Kind::kDevice);
  EXPECT_EQ(kind(d, 1025), Kind::kInvalid);  // past the (64-byte rounded) block
  std::vector<char> host(16);
  EXPECT_EQ(kind(host.data(), host.size()), Kind::kHost);
  EXPECT_EQ(free(d), Status::kOk);
  EXPECT_EQ(kind(d, 1), Kind::kInvalid);  // freed
  EXPECT_EQ(free(d), Status::kErrArg);
  // A smaller block where the freed one was: the last answer about that address is not reused.
  void* small = nullptr;
  ASSERT_EQ(alloc(64, &small), Status::kOk);
  EXPECT_EQ(kind(small, 64), Kind::kDevice);
  EXPECT_EQ(kind(small, 1000), Kind::kInvalid);
  EXPECT_EQ(free(small), Status::kOk);
}

// Only copies out of device memory into the library's host memory are staging; copies a user
// asked for (any direction) and device to device are not.
TEST_F(DeviceTest, StagedCountsOnlyDeviceToLibraryHost) {
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(alloc(256, &a), Status::kOk);
  ASSERT_EQ(alloc(256, &b), Status::kOk);
  std::vector<unsigned char> h(256), back(256);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<unsigned char>(i * 7);
  const Counters before = counters();
  copy(a, h.data(), 256);      // h2d
  copy(b, a, 256);             // d2d
  stage(back.data(), b, 200);  // d2h into library memory: staged
  stage(a, h.data(), 100);     // into device memory: a plain copy
  std::vector<unsigned char> plain(256);
  stage(plain.data(), h.data(), 256);  // host to host
  const Counters& after = counters();
  EXPECT_EQ(after.staged - before.staged, 200u);
  EXPECT_EQ(after.h2d - before.h2d, 356u);
  EXPECT_EQ(after.d2d - before.d2d, 256u);
  EXPECT_EQ(after.d2h - before.d2h, 200u);
  EXPECT_EQ(std::memcmp(back.data(), h.data(), 200), 0);
  EXPECT_EQ(std::memcmp(plain.data(), h.data(), 256), 0);
  free(a);
  free(b);
}

TEST_F(DeviceTest, DmaViewReachesTheSameBytes) {
  void* d = nullptr;
  ASSERT_EQ(alloc(64, &d), Status::kOk);
  const char text[] = "hbm bytes";
  copy(d, text, sizeof text);
  void* view = dma_view(d);
  EXPECT_NE(view, d);
  EXPECT_FALSE(in_device_range(view));
  EXPECT_EQ(std::memcmp(view, text, sizeof text), 0);  // what a NIC would read
  std::vector<char> host(8);
  EXPECT_EQ(dma_view(host.data()), host.data());
  free(d);
}

TEST_F(DeviceTest, PeerArenaIsOneCopy) {
  std::string error;
  EXPECT_FALSE(peer_mapped(3));
  char scratch[64];
  EXPECT_FALSE(copy_from_peer(3, scratch, range_base, 8));  // not mapped: the pml pipelines
  // This process's own arena, mapped as rank 3's.
  ASSERT_EQ(map_peer(3, arena_card(), &error), Status::kOk) << error;
  EXPECT_TRUE(peer_mapped(3));
  void *src = nullptr, *dst = nullptr;
  ASSERT_EQ(alloc(4096, &src), Status::kOk);
  ASSERT_EQ(alloc(4096, &dst), Status::kOk);
  std::vector<int> v(1024);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i * 3 - 500);
  copy(src, v.data(), 4096);
  const Counters before = counters();
  const auto addr = reinterpret_cast<uint64_t>(src);
  ASSERT_TRUE(copy_from_peer(3, dst, addr, 4096));  // HBM to HBM
  std::vector<int> got(1024), host(1024);
  ASSERT_TRUE(copy_from_peer(3, host.data(), addr, 4096));  // HBM to a host buffer
  copy(got.data(), dst, 4096);
  EXPECT_EQ(got, v);
  EXPECT_EQ(host, v);
  EXPECT_EQ(counters().peer - before.peer, 8192u);
  EXPECT_EQ(counters().staged, before.staged);
  // A range that leaves the peer's arena is refused, not read.
  EXPECT_FALSE(copy_from_peer(3, host.data(), range_base + range_bytes - 8, 16));
  EXPECT_FALSE(copy_from_peer(3, host.data(), range_base - 8, 8));
  // The word a reader stores into a peer's HBM (the pml's device slots) is what the owner loads.
  store_word(src, 1);
  EXPECT_EQ(load_word(src), 1u);
  ASSERT_TRUE(store_to_peer(3, addr, 0));
  EXPECT_EQ(load_word(src), 0u);
  EXPECT_FALSE(store_to_peer(3, addr + 4, 0));  // unaligned
  EXPECT_FALSE(store_to_peer(3, range_base + range_bytes, 0));
  EXPECT_FALSE(store_to_peer(4, addr, 0));  // not mapped
  free(src);
  free(dst);
}

void add_ints(void*, void* dst, const void* src, size_t count) {
  for (size_t i = 0; i < count; ++i) static_cast<int*>(dst)[i] += static_cast<const int*>(src)[i];
}

TEST_F(DeviceTest, PeerArenaIsWrittenAndReducedInPlace) {
  std::string error;
  ASSERT_EQ(map_peer(3, arena_card(), &error), Status::kOk) << error;
  void *win = nullptr, *dev = nullptr;
  ASSERT_EQ(alloc(4096, &win), Status::kOk);
  ASSERT_EQ(alloc(4096, &dev), Status::kOk);
  const auto addr = reinterpret_cast<uint64_t>(win);
  std::vector<int> v(1024), twice(1024), got(1024);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i * 7) - 3000;
  for (size_t i = 0; i < v.size(); ++i) twice[i] = 2 * v[i];
  const Counters before = counters();
  ASSERT_TRUE(copy_to_peer(3, addr, v.data(), 4096));  // a host buffer into the peer's HBM
  copy(got.data(), win, 4096);
  EXPECT_EQ(got, v);
  copy(dev, v.data(), 4096);
  ASSERT_TRUE(reduce_at_peer(add_ints, nullptr, 3, addr, dev, 1024, sizeof(int)));  // HBM + HBM
  copy(got.data(), win, 4096);
  EXPECT_EQ(got, twice);
  ASSERT_TRUE(copy_to_peer(3, addr, dev, 4096));  // HBM to HBM
  copy(got.data(), win, 4096);
  EXPECT_EQ(got, v);
  EXPECT_EQ(counters().peer - before.peer, 8192u);
  EXPECT_EQ(counters().reduced - before.reduced, 4096u);
  EXPECT_EQ(counters().staged, before.staged);
  // Past the peer's arena, or a peer not mapped: refused, nothing written.
  EXPECT_FALSE(copy_to_peer(3, range_base + range_bytes - 8, v.data(), 16));
  EXPECT_FALSE(reduce_at_peer(add_ints, nullptr, 3, range_base + range_bytes - 8, dev, 4, 4));
  EXPECT_FALSE(copy_to_peer(4, addr, v.data(), 4));
  copy(got.data(), win, 4096);
  EXPECT_EQ(got, v);
  free(win);
  free(dev);
}

TEST_F(DeviceTest, PeerCardThatLiesIsRefused) {
  std::string error;
  ArenaCard card = arena_card();
  card.bytes += 4096;  // not what the memfd holds
  EXPECT_NE(map_peer(5, card, &error), Status::kOk);
  EXPECT_NE(error.find("card says"), std::string::npos) << error;
  card = arena_card();
  card.fd = 987654;  // no such descriptor
  EXPECT_NE(map_peer(6, card, &error), Status::kOk);
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  EXPECT_FALSE(peer_mapped(5));
  EXPECT_FALSE(peer_mapped(6));
}

}  // namespace
}  // namespace torusmpi::device
