// MPI-IO below MPI (src/io): a filetype's flattening, the view's map from stream bytes to file
// ranges against a naive model that walks the filetype byte by byte, byte offsets and stream
// positions, the views make() refuses, the sieving planner's windows, and reads and writes of
// range lists on a real file with sieving on and off (nothing written outside the ranges).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dtype/dtype.h"
#include "io/posix.h"
#include "io/view.h"

namespace torusmpi::io {
namespace {

const dtype::Basic kInt{3, 4, 4, dtype::Encoding::kSigned, 1, 4};
const dtype::Basic kByte{1, 1, 1, dtype::Encoding::kRaw, 1, 1};

dtype::TypeRef Int() {
  static const dtype::TypeRef t = dtype::basic(kInt);
  return t;
}
dtype::TypeRef Byte() {
  static const dtype::TypeRef t = dtype::basic(kByte);
  return t;
}

// The file byte of each of the first `n` stream bytes, from the engine's packing alone: a buffer
// whose byte b holds one byte of the number b, packed through the filetype, gives that byte of
// every stream byte's offset within its instance; four such planes give the offsets.
std::vector<int64_t> naive_offsets(int64_t disp, const dtype::Type& ft, int64_t n) {
  const int64_t span = ft.true_ub();
  std::vector<int64_t> within(static_cast<size_t>(ft.size()), 0);
  for (int plane = 0; plane < 4; ++plane) {
    std::vector<unsigned char> src(static_cast<size_t>(span));
    for (int64_t b = 0; b < span; ++b)
      src[static_cast<size_t>(b)] = static_cast<unsigned char>(b >> (8 * plane));
    std::vector<unsigned char> packed(static_cast<size_t>(ft.size()));
    ft.pack(src.data(), 1, packed.data());
    for (size_t i = 0; i < packed.size(); ++i) within[i] |= int64_t{packed[i]} << (8 * plane);
  }
  std::vector<int64_t> out;
  for (int64_t k = 0; static_cast<int64_t>(out.size()) < n; ++k) {
    for (int64_t w : within) {
      if (static_cast<int64_t>(out.size()) == n) break;
      out.push_back(disp + k * ft.extent() + w);
    }
  }
  return out;
}

// The view's ranges for stream [pos, pos + bytes), expanded to one offset per byte.
std::vector<int64_t> view_offsets(const View& v, int64_t pos, int64_t bytes) {
  std::vector<Extent> r;
  v.map(pos, bytes, &r);
  std::vector<int64_t> out;
  for (size_t i = 0; i < r.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(r[i - 1].end(), r[i].off) << "adjacent ranges are merged";
    }
    for (int64_t b = 0; b < r[i].len; ++b) out.push_back(r[i].off + b);
  }
  return out;
}

TEST(Flatten, MergesAdjacentBlocks) {
  auto v = dtype::hvector(3, 2, 8, Int());  // 8 bytes every 8: contiguous
  std::vector<Extent> f = flatten(*v);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].off, 0);
  EXPECT_EQ(f[0].len, 24);
  auto holes = dtype::hvector(3, 1, 12, Int());
  f = flatten(*holes);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[2].off, 24);
  EXPECT_EQ(f[2].len, 4);
}

TEST(View, DefaultIsTheFileAsBytes) {
  View v;
  EXPECT_TRUE(v.contiguous());
  std::vector<Extent> r;
  v.map(10, 100, &r);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].off, 10);
  EXPECT_EQ(r[0].len, 100);
}

TEST(View, EveryLayoutAgainstTheNaiveModel) {
  std::vector<std::pair<std::string, dtype::TypeRef>> types = {
      {"vector", dtype::hvector(4, 2, 20, Int())},
      {"resized", dtype::resized(dtype::contiguous(3, Int()), 0, 40)},
      {"subarray", dtype::subarray({5, 7}, {2, 3}, {1, 2}, dtype::Order::kC, Int())},
      {"darray",
       dtype::darray(1, {9, 8}, {dtype::Distribution::kCyclic, dtype::Distribution::kBlock},
                     {2, dtype::kDefaultDarg}, {2, 2}, dtype::Order::kFortran, Int())},
      {"indexed", dtype::hindexed({1, 3, 2}, {0, 12, 40}, Int())},
      {"struct", dtype::resized(dtype::structure({2, 1}, {4, 20}, {Int(), Int()}), 0, 32)},
  };
  for (const auto& [name, ft] : types) {
    for (int64_t disp : {0, 6, 1000}) {
      View v;
      ASSERT_EQ(View::make(disp, Int(), ft, &v), "") << name;
      const int64_t n = 3 * ft->size() + 5;
      std::vector<int64_t> want = naive_offsets(disp, *ft, n);
      // Every start and length, including starts inside blocks and across instances.
      for (int64_t pos = 0; pos < ft->size() + 3; pos += 1) {
        for (int64_t len : {int64_t{1}, int64_t{5}, ft->size(), 2 * ft->size() + 1}) {
          if (pos + len > n) continue;
          std::vector<int64_t> got = view_offsets(v, pos, len);
          std::vector<int64_t> sub(want.begin() + pos, want.begin() + pos + len);
          ASSERT_EQ(got, sub) << name << " disp " << disp << " pos " << pos << " len " << len;
        }
        EXPECT_EQ(v.file_offset(pos), want[static_cast<size_t>(pos)]) << name;
      }
      // stream_position inverts file_offset at the start of every stream byte.
      for (int64_t pos = 0; pos < n; ++pos) {
        EXPECT_EQ(v.stream_position(want[static_cast<size_t>(pos)]), pos) << name << " " << pos;
      }
    }
  }
}

TEST(View, Refused) {
  View v;
  EXPECT_NE(View::make(-1, Int(), Int(), &v), "");
  // 6 bytes of filetype with 4-byte etypes.
  EXPECT_NE(View::make(0, Int(), dtype::contiguous(6, Byte()), &v), "");
  // Decreasing displacements.
  EXPECT_NE(View::make(0, Int(), dtype::hindexed({1, 1}, {8, 0}, Int()), &v), "");
  // A filetype without data is a view of nothing.
  EXPECT_EQ(View::make(0, Int(), dtype::contiguous(0, Int()), &v), "");
  EXPECT_TRUE(v.empty());
  std::vector<Extent> r;
  v.map(0, 100, &r);
  EXPECT_TRUE(r.empty());
}

TEST(View, ExtentEndingBeforeItsData) {
  // Parallel HDF5's shape: one instance a call, through a filetype resized to a small extent.
  View v;
  ASSERT_EQ(View::make(0, Int(), dtype::resized(dtype::contiguous(4, Int()), 0, 8), &v), "");
  EXPECT_EQ(v.data_end(), 16);
  EXPECT_TRUE(v.increasing(0, 16));
  EXPECT_TRUE(v.increasing(16, 16));  // the second instance alone, at byte 8
  EXPECT_FALSE(v.increasing(12, 8));  // crosses back from byte 16 to byte 8
  std::vector<Extent> r;
  v.map(16, 16, &r);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].off, 8);
  EXPECT_EQ(r[0].len, 16);
  // An ordinary filetype crosses instances freely.
  ASSERT_EQ(View::make(0, Int(), dtype::resized(dtype::contiguous(4, Int()), 0, 32), &v), "");
  EXPECT_EQ(v.data_end(), 0);
  EXPECT_TRUE(v.increasing(12, 8));
}

TEST(Sieving, Windows) {
  std::vector<Extent> r = {{0, 4}, {8, 4}, {16, 4}, {100, 4}, {108, 200}, {400, 4}};
  std::vector<Window> w = plan_windows(r, 64, true);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_TRUE(w[0].sieved);
  EXPECT_EQ(w[0].first, 0u);
  EXPECT_EQ(w[0].last, 2u);
  EXPECT_EQ(w[0].off, 0);
  EXPECT_EQ(w[0].len, 20);    // ends with the last range: nothing past it
  EXPECT_FALSE(w[1].sieved);  // {100, 4} alone: the next range is bigger than the buffer
  EXPECT_EQ(w[2].first, 4u);
  EXPECT_FALSE(w[2].sieved);
  EXPECT_EQ(w[3].off, 400);
  // Without sieving every range is a window.
  w = plan_windows(r, 64, false);
  ASSERT_EQ(w.size(), r.size());
  for (const Window& x : w) EXPECT_FALSE(x.sieved);
  // Windows never exceed the buffer.
  std::mt19937 rng(5);
  for (int round = 0; round < 100; ++round) {
    std::vector<Extent> rs;
    int64_t at = 0;
    for (int i = 0; i < 50; ++i) {
      at += rng() % 30;
      int64_t len = 1 + rng() % 40;
      rs.push_back({at, len});
      at += len;
    }
    int64_t buffer = 16 + rng() % 200;
    size_t next = 0;
    for (const Window& x : plan_windows(rs, buffer, true)) {
      EXPECT_EQ(x.first, next);
      next = x.last + 1;
      EXPECT_EQ(x.off, rs[x.first].off);
      EXPECT_EQ(x.len, rs[x.last].end() - x.off);
      if (x.sieved) {
        EXPECT_LE(x.len, buffer);
      }
    }
    EXPECT_EQ(next, rs.size());
  }
}

TEST(Sieving, Automatic) {
  std::vector<Extent> dense = {{0, 4}, {8, 4}, {16, 4}};
  std::vector<Extent> sparse = {{0, 4}, {100000, 4}};
  EXPECT_TRUE(want_sieving(dense, Toggle::kAutomatic));
  EXPECT_FALSE(want_sieving(sparse, Toggle::kAutomatic));
  EXPECT_TRUE(want_sieving(sparse, Toggle::kEnable));
  EXPECT_FALSE(want_sieving(dense, Toggle::kDisable));
  EXPECT_FALSE(want_sieving({{0, 4}}, Toggle::kEnable));
}

// Writes and reads of range lists on a file: the bytes between ranges stay as they were, the file
// ends where the last range does, a read past the end counts what it got.
TEST(PosixFile, RangesWithAndWithoutSieving) {
  for (Toggle ds : {Toggle::kEnable, Toggle::kDisable}) {
    char path[] = "/tmp/io_test.XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    std::vector<char> old(300, 'o');
    ssize_t wrote = write(fd, old.data(), 100);
    close(fd);
    if (wrote != 100) unlink(path);
    ASSERT_EQ(wrote, 100);
    PosixFile f;
    const char* op = nullptr;
    ASSERT_EQ(f.open(path, O_RDWR, &op), 0);
    unlink(path);  // gone with the descriptor, whatever the test's outcome
    Hints h;
    h.ds_read = h.ds_write = ds;
    h.ind_rd_buffer_size = h.ind_wr_buffer_size = 64;
    std::vector<Extent> r = {{10, 5}, {20, 5}, {30, 5}, {90, 20}, {150, 3}};
    // 38 bytes: the ranges' total.
    std::string data = "abcdefghijklmnopqrstuvwxyz0123456789AB";
    ASSERT_EQ(f.write(r, data.data(), h, false, &op), 0);
    int64_t size = 0;
    ASSERT_EQ(f.size(&size, &op), 0);
    EXPECT_EQ(size, 153);
    std::vector<char> all(153);
    int64_t got = 0;
    ASSERT_EQ(f.read({{0, 153}}, all.data(), h, false, &got, &op), 0);
    EXPECT_EQ(got, 153);
    size_t k = 0;
    for (int64_t b = 0; b < 153; ++b) {
      bool in = false;
      for (const Extent& e : r) in = in || (b >= e.off && b < e.end());
      char want = in ? data[k++] : (b < 100 ? 'o' : '\0');
      ASSERT_EQ(all[static_cast<size_t>(b)], want) << "byte " << b;
    }
    std::vector<char> back(data.size());
    ASSERT_EQ(f.read(r, back.data(), h, false, &got, &op), 0);
    EXPECT_EQ(got, static_cast<int64_t>(data.size()));
    EXPECT_EQ(std::string(back.begin(), back.end()), data);
    // Past the end: a range half in the file, then one beyond it.
    std::vector<Extent> past = {{140, 10}, {151, 4}, {200, 4}};
    ASSERT_EQ(f.read(past, back.data(), h, false, &got, &op), 0);
    EXPECT_EQ(got, 12);
    ASSERT_EQ(f.close(&op), 0);
  }
}

}  // namespace
}  // namespace torusmpi::io
