// The switch's logic (src/switch/switch.h) without sockets: datagrams from fake addresses at fake
// times, checking what it answers. Every op on every element type, integer sums exact with
// wraparound, float sums within the sequential sum's bound and equal to the sum in arrival order
// (bfloat16 and binary16 rounded back at each step), gather order, barrier, results exactly once,
// duplicates, acknowledgements freeing slots, kBusy, ageing and tombstones, unacknowledged
// records, malformed datagrams (and random bytes), hello.
#include "switch/switch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/float16.h"
#include "half_reference.h"

namespace torusmpi::sw {
namespace {

using ina::AggOp;
using ina::ElemType;
using ina::PacketHeader;
using ina::PacketType;

Address addr(int source) {
  return Address{0x0100007f, static_cast<uint16_t>(20000 + source)};  // 127.0.0.1
}

PacketHeader contribution(ElemType elem, AggOp op, uint32_t count, uint16_t sources,
                          uint16_t source, uint64_t call = 7, uint32_t block = 3) {
  PacketHeader h;
  h.type = PacketType::kContribute;
  h.elem = elem;
  h.op = op;
  h.job = 42;
  h.group = 5;
  h.call = call;
  h.block = block;
  h.sources = sources;
  h.source = source;
  h.count = count;
  h.payload = static_cast<uint32_t>(ina::contribution_bytes(h));
  return h;
}

PacketHeader ack_of(const PacketHeader& c) {
  PacketHeader h = c;
  h.type = PacketType::kAck;
  h.payload = 0;
  return h;
}

std::vector<uint8_t> wire(const PacketHeader& h, const void* payload, size_t len) {
  std::vector<uint8_t> bytes(sizeof(h) + len);
  std::memcpy(bytes.data(), &h, sizeof(h));
  if (len > 0) std::memcpy(bytes.data() + sizeof(h), payload, len);
  return bytes;
}

// Sends h (its payload field says how many bytes of payload follow) from source h.source.
void send(Switch* sw, const PacketHeader& h, const void* payload, double now, Out* out) {
  const std::vector<uint8_t> bytes = wire(h, payload, h.payload);
  sw->handle(bytes.data(), bytes.size(), addr(h.source), now, out);
}

std::vector<const Datagram*> of_type(const Out& out, PacketType type) {
  std::vector<const Datagram*> found;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].header.type == type) found.push_back(&out[i]);
  }
  return found;
}

// Runs one block: source s contributes data[s] (count elements of T), in `order`. Checks that the
// result goes to every source exactly once, at its address, with the same bytes, and returns it.
template <typename T>
std::vector<T> run_block(Switch* sw, ElemType elem, AggOp op,
                         const std::vector<std::vector<T>>& data, const std::vector<int>& order,
                         uint64_t call = 7) {
  const auto sources = static_cast<uint16_t>(data.size());
  const auto count = static_cast<uint32_t>(data[0].size());
  Out out;
  for (size_t i = 0; i < order.size(); ++i) {
    const int s = order[i];
    send(sw, contribution(elem, op, count, sources, static_cast<uint16_t>(s), call), data[s].data(),
         0, &out);
    if (i + 1 < order.size()) {
      EXPECT_TRUE(out.empty()) << "a result before every source came";
    }
  }
  std::vector<T> result(count);
  std::vector<int> got(sources, 0);
  EXPECT_EQ(out.size(), sources);
  for (size_t i = 0; i < out.size(); ++i) {
    const Datagram& d = out[i];
    EXPECT_EQ(d.header.type, PacketType::kResult);
    EXPECT_EQ(d.header.magic, ina::kMagic);
    EXPECT_EQ(d.header.call, call);
    EXPECT_EQ(d.header.count, count);
    EXPECT_EQ(d.body_len, count * sizeof(T));
    EXPECT_EQ(d.header.payload, d.body_len);
    EXPECT_LT(d.header.source, sources);
    if (d.header.source >= sources) continue;
    EXPECT_EQ(d.to, addr(d.header.source));
    ++got[d.header.source];
    if (i == 0) {
      std::memcpy(result.data(), out.body(d), d.body_len);
    } else {
      EXPECT_EQ(std::memcmp(result.data(), out.body(d), d.body_len), 0);
    }
  }
  for (int s = 0; s < sources; ++s) EXPECT_EQ(got[s], 1) << "source " << s;
  // Acknowledge, so that the next block has the slots.
  out.clear();
  for (int s = 0; s < sources; ++s) {
    PacketHeader a = ack_of(contribution(elem, op, count, sources, static_cast<uint16_t>(s), call));
    send(sw, a, nullptr, 0, &out);
  }
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(sw->stats().slots_used, 0u);
  return result;
}

std::vector<int> in_order(int n) {
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  return order;
}

TEST(Switch, Int32SumWrapsAround) {
  Switch sw(4, 1.0);
  const std::vector<std::vector<int32_t>> data = {
      {INT32_MAX, INT32_MIN, -1, 5}, {1, -1, -1, 7}, {INT32_MAX, INT32_MIN, INT32_MIN, -12}};
  const std::vector<int32_t> r = run_block(&sw, ElemType::kInt32, AggOp::kSum, data, in_order(3));
  for (size_t i = 0; i < r.size(); ++i) {
    uint32_t expected = 0;
    for (const auto& d : data) expected += static_cast<uint32_t>(d[i]);
    EXPECT_EQ(static_cast<uint32_t>(r[i]), expected) << i;
  }
  EXPECT_EQ(r[0], INT32_MIN + INT32_MAX);  // MAX + 1 + MAX wraps to -1
  EXPECT_EQ(sw.stats().blocks, 1u);
}

TEST(Switch, IntegerSumsAreExact) {
  Switch sw(4, 1.0);
  std::mt19937_64 rng(11);
  for (int round = 0; round < 50; ++round) {
    const int sources = 1 + round % 9;
    std::vector<std::vector<int64_t>> i64(sources, std::vector<int64_t>(33));
    std::vector<std::vector<uint64_t>> u64(sources, std::vector<uint64_t>(17));
    std::vector<std::vector<uint32_t>> u32(sources, std::vector<uint32_t>(65));
    for (auto& v : i64) {
      for (auto& x : v) x = static_cast<int64_t>(rng());
    }
    for (auto& v : u64) {
      for (auto& x : v) x = rng();
    }
    for (auto& v : u32) {
      for (auto& x : v) x = static_cast<uint32_t>(rng());
    }
    std::vector<int> order = in_order(sources);
    std::shuffle(order.begin(), order.end(), rng);
    const auto r1 = run_block(&sw, ElemType::kInt64, AggOp::kSum, i64, order, round * 3);
    const auto r2 = run_block(&sw, ElemType::kUint64, AggOp::kSum, u64, order, round * 3 + 1);
    const auto r3 = run_block(&sw, ElemType::kUint32, AggOp::kSum, u32, order, round * 3 + 2);
    for (size_t i = 0; i < r1.size(); ++i) {
      uint64_t e = 0;
      for (const auto& d : i64) e += static_cast<uint64_t>(d[i]);
      EXPECT_EQ(static_cast<uint64_t>(r1[i]), e);
    }
    for (size_t i = 0; i < r2.size(); ++i) {
      uint64_t e = 0;
      for (const auto& d : u64) e += d[i];
      EXPECT_EQ(r2[i], e);
    }
    for (size_t i = 0; i < r3.size(); ++i) {
      uint32_t e = 0;
      for (const auto& d : u32) e += d[i];
      EXPECT_EQ(r3[i], e);
    }
  }
}

// Min and max compare signed types as signed: -1 is the least int32, the greatest uint32.
TEST(Switch, MinMaxAndBitwise) {
  Switch sw(2, 1.0);
  const std::vector<std::vector<int32_t>> s32 = {{-1, 3, 0x0f0f}, {1, -3, 0x00ff}, {0, 2, 0x1234}};
  EXPECT_EQ(run_block(&sw, ElemType::kInt32, AggOp::kMin, s32, in_order(3), 1),
            (std::vector<int32_t>{-1, -3, 0x00ff}));
  EXPECT_EQ(run_block(&sw, ElemType::kInt32, AggOp::kMax, s32, in_order(3), 2),
            (std::vector<int32_t>{1, 3, 0x1234}));
  EXPECT_EQ(run_block(&sw, ElemType::kInt32, AggOp::kBand, s32, in_order(3), 3),
            (std::vector<int32_t>{-1 & 1 & 0, 3 & -3 & 2, 0x0f0f & 0x00ff & 0x1234}));
  EXPECT_EQ(run_block(&sw, ElemType::kInt32, AggOp::kBor, s32, in_order(3), 4),
            (std::vector<int32_t>{-1, -1, 0x0f0f | 0x00ff | 0x1234}));
  EXPECT_EQ(run_block(&sw, ElemType::kInt32, AggOp::kBxor, s32, in_order(3), 5),
            (std::vector<int32_t>{-2, 3 ^ -3 ^ 2, 0x0f0f ^ 0x00ff ^ 0x1234}));

  const std::vector<std::vector<uint32_t>> u32 = {{0xffffffffu, 4}, {1, 0xfffffffeu}};
  EXPECT_EQ(run_block(&sw, ElemType::kUint32, AggOp::kMin, u32, in_order(2), 6),
            (std::vector<uint32_t>{1, 4}));
  EXPECT_EQ(run_block(&sw, ElemType::kUint32, AggOp::kMax, u32, in_order(2), 7),
            (std::vector<uint32_t>{0xffffffffu, 0xfffffffeu}));

  const std::vector<std::vector<int64_t>> s64 = {{INT64_MIN, 5}, {INT64_MAX, -5}};
  EXPECT_EQ(run_block(&sw, ElemType::kInt64, AggOp::kMin, s64, in_order(2), 8),
            (std::vector<int64_t>{INT64_MIN, -5}));
  EXPECT_EQ(run_block(&sw, ElemType::kInt64, AggOp::kMax, s64, in_order(2), 9),
            (std::vector<int64_t>{INT64_MAX, 5}));
  EXPECT_EQ(run_block(&sw, ElemType::kInt64, AggOp::kBxor, s64, in_order(2), 10),
            (std::vector<int64_t>{-1, 5 ^ -5}));

  const std::vector<std::vector<uint64_t>> u64 = {{~0ull, 0xf0}, {1, 0x3c}};
  EXPECT_EQ(run_block(&sw, ElemType::kUint64, AggOp::kMin, u64, in_order(2), 11),
            (std::vector<uint64_t>{1, 0x3c}));
  EXPECT_EQ(run_block(&sw, ElemType::kUint64, AggOp::kBand, u64, in_order(2), 12),
            (std::vector<uint64_t>{1, 0x30}));
  EXPECT_EQ(run_block(&sw, ElemType::kUint64, AggOp::kBor, u64, in_order(2), 13),
            (std::vector<uint64_t>{~0ull, 0xfc}));

  const std::vector<std::vector<float>> f32 = {{-1.5f, 2.0f}, {3.25f, -7.0f}, {0.0f, 1e30f}};
  EXPECT_EQ(run_block(&sw, ElemType::kFloat32, AggOp::kMin, f32, in_order(3), 14),
            (std::vector<float>{-1.5f, -7.0f}));
  EXPECT_EQ(run_block(&sw, ElemType::kFloat32, AggOp::kMax, f32, in_order(3), 15),
            (std::vector<float>{3.25f, 1e30f}));
  const std::vector<std::vector<double>> f64 = {{-1e300, 2.5}, {1e300, -2.5}};
  EXPECT_EQ(run_block(&sw, ElemType::kFloat64, AggOp::kMin, f64, in_order(2), 16),
            (std::vector<double>{-1e300, -2.5}));
  EXPECT_EQ(run_block(&sw, ElemType::kFloat64, AggOp::kMax, f64, in_order(2), 17),
            (std::vector<double>{1e300, 2.5}));
}

// Float sums: exactly the sequential sum in arrival order, in the element's own precision (the
// switch's documented choice), hence within |computed - exact| <= (n-1) u sum|x_i|. The exact sum
// is taken in long double, whose own error (at most (n-1) 2^-64 sum|x_i|) the bound allows for.
template <typename F>
void float_sums(ElemType elem, double u) {
  Switch sw(8, 1.0);
  std::mt19937_64 rng(sizeof(F) * 1000 + 3);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  double worst = 0;  // the largest error seen, as a fraction of the bound
  for (int block = 0; block < 300; ++block) {
    const int sources = 2 + static_cast<int>(rng() % 31);
    const uint32_t count = 1 + static_cast<uint32_t>(rng() % 64);
    std::vector<std::vector<F>> data(sources, std::vector<F>(count));
    for (auto& v : data) {
      for (auto& x : v) {
        const double sign = (rng() & 1) ? -1.0 : 1.0;
        x = static_cast<F>(sign * std::ldexp(mantissa(rng), exponent(rng)));
      }
    }
    std::vector<int> order = in_order(sources);
    std::shuffle(order.begin(), order.end(), rng);
    const std::vector<F> r = run_block(&sw, elem, AggOp::kSum, data, order, block);
    for (uint32_t i = 0; i < count; ++i) {
      F sequential = data[order[0]][i];
      long double exact = 0, magnitude = 0;
      for (int k = 0; k < sources; ++k) {
        if (k > 0) sequential = sequential + data[order[k]][i];
        exact += data[order[k]][i];
        magnitude += std::fabs(static_cast<long double>(data[order[k]][i]));
      }
      EXPECT_EQ(r[i], sequential) << "block " << block << " element " << i;
      const long double error = std::fabs(static_cast<long double>(r[i]) - exact);
      const long double bound = (sources - 1) * (u + std::ldexp(1.0L, -63)) * magnitude;
      EXPECT_LE(error, bound) << "block " << block << " element " << i;
      if (bound > 0) worst = std::max(worst, static_cast<double>(error / bound));
    }
  }
  EXPECT_GT(worst, 0) << "the data should make rounding errors";
}

TEST(Switch, Float32SumsWithinBound) {
  float_sums<float>(ElemType::kFloat32, std::ldexp(1.0, -24));
}
TEST(Switch, Float64SumsWithinBound) {
  float_sums<double>(ElemType::kFloat64, std::ldexp(1.0, -53));
}

// The 16-bit floats: each sum of the running total and a contribution is done in float and
// rounded back to the format, in arrival order, so a block's result is that sequential sum
// (binary16's reference is the compiler's own _Float16, half_reference.h: without it that part is
// not checked and the case reports itself skipped); min and max pick an element.
TEST(Switch, Float16SumsInArrivalOrder) {
  Switch sw(4, 1.0);
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> value(-3000.0f, 3000.0f);
  for (int block = 0; block < 40; ++block) {
    const int sources = 2 + block % 7;
    const uint32_t count = 1 + static_cast<uint32_t>(block * 37 % 200);
    std::vector<std::vector<uint16_t>> half(sources, std::vector<uint16_t>(count));
    std::vector<std::vector<uint16_t>> bf16 = half;
    for (int s = 0; s < sources; ++s) {
      for (uint32_t i = 0; i < count; ++i) {
        const float x = value(rng) * (i % 3 == 0 ? 1e-6f : 1.0f);  // some in half's subnormals
        half[s][i] = float16::float_to_half(x);
        bf16[s][i] = float16::float_to_bf16(x * 1e30f);
      }
    }
    std::vector<int> order = in_order(sources);
    std::shuffle(order.begin(), order.end(), rng);
    const auto h = run_block(&sw, ElemType::kFloat16, AggOp::kSum, half, order, 2 * block);
    const auto b = run_block(&sw, ElemType::kBfloat16, AggOp::kSum, bf16, order, 2 * block + 1);
    for (uint32_t i = 0; i < count; ++i) {
      uint16_t hs = half[order[0]][i];
      float bs = float16::bf16_to_float(bf16[order[0]][i]);
      for (int k = 1; k < sources; ++k) {
        if (float16::kHalfReference) {
          hs = float16::ref_float_to_half(float16::ref_half_to_float(hs) +
                                          float16::ref_half_to_float(half[order[k]][i]));
        }
        bs = float16::bf16_to_float(
            float16::float_to_bf16(bs + float16::bf16_to_float(bf16[order[k]][i])));
      }
      if (float16::kHalfReference) {
        EXPECT_EQ(h[i], hs) << "block " << block << " element " << i;
      }
      EXPECT_EQ(b[i], float16::float_to_bf16(bs)) << "block " << block << " element " << i;
    }
  }
  const std::vector<std::vector<uint16_t>> h = {{0x3c00, 0xc000, 0x7bff}, {0xbc00, 0x4000, 0x0001}};
  EXPECT_EQ(run_block(&sw, ElemType::kFloat16, AggOp::kMin, h, in_order(2), 100),
            (std::vector<uint16_t>{0xbc00, 0xc000, 0x0001}));  // -1, -2, 2^-24
  EXPECT_EQ(run_block(&sw, ElemType::kFloat16, AggOp::kMax, h, in_order(2), 101),
            (std::vector<uint16_t>{0x3c00, 0x4000, 0x7bff}));
  const std::vector<std::vector<uint16_t>> b = {{0x3f80, 0xff80}, {0xbf80, 0x0001}};
  EXPECT_EQ(run_block(&sw, ElemType::kBfloat16, AggOp::kMin, b, in_order(2), 102),
            (std::vector<uint16_t>{0xbf80, 0xff80}));  // -1, -infinity
  EXPECT_EQ(run_block(&sw, ElemType::kBfloat16, AggOp::kMax, b, in_order(2), 103),
            (std::vector<uint16_t>{0x3f80, 0x0001}));
  if (!float16::kHalfReference) {
    GTEST_SKIP() << "bfloat16, min and max checked; " << float16::kNoHalfReference;
  }
}

TEST(Switch, GatherIsInSourceOrder) {
  Switch sw(2, 1.0);
  const int sources = 5;
  const uint32_t piece = 7;
  Out out;
  for (int s : {3, 0, 4, 1, 2}) {
    std::vector<uint8_t> bytes(piece);
    for (uint32_t i = 0; i < piece; ++i) bytes[i] = static_cast<uint8_t>(s * 16 + i);
    send(&sw, contribution(ElemType::kBytes, AggOp::kGather, piece, sources, s), bytes.data(), 0,
         &out);
  }
  ASSERT_EQ(out.size(), size_t(sources));
  for (size_t k = 0; k < out.size(); ++k) {
    ASSERT_EQ(out[k].body_len, piece * sources);
    ASSERT_EQ(out[k].header.payload, piece * sources);
    const uint8_t* body = out.body(out[k]);
    for (int s = 0; s < sources; ++s) {
      for (uint32_t i = 0; i < piece; ++i) EXPECT_EQ(body[s * piece + i], s * 16 + i);
    }
  }
}

TEST(Switch, Barrier) {
  Switch sw(2, 1.0);
  Out out;
  for (uint16_t s = 0; s < 3; ++s) {
    EXPECT_TRUE(out.empty());
    send(&sw, contribution(ElemType::kBytes, AggOp::kBarrier, 0, 3, s), nullptr, 0, &out);
  }
  ASSERT_EQ(out.size(), 3u);
  for (size_t k = 0; k < out.size(); ++k) {
    EXPECT_EQ(out[k].header.type, PacketType::kResult);
    EXPECT_EQ(out[k].header.payload, 0u);
    EXPECT_EQ(out[k].body_len, 0u);
    EXPECT_EQ(out[k].to, addr(out[k].header.source));
  }
  // A single source completes at once.
  out.clear();
  send(&sw, contribution(ElemType::kBytes, AggOp::kBarrier, 0, 1, 0, 8), nullptr, 0, &out);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(sw.stats().blocks, 2u);
}

// A duplicate of an incomplete block is ignored (and not added twice); of a complete block it gets
// the result again, to its sender only.
TEST(Switch, Duplicates) {
  Switch sw(2, 1.0);
  Out out;
  const int32_t one = 1;
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 3, 0), &one, 0, &out);
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 3, 0), &one, 0.1, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(sw.stats().duplicates, 1u);
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 3, 1), &one, 0.2, &out);
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 3, 2), &one, 0.3, &out);
  ASSERT_EQ(out.size(), 3u);
  int32_t sum = 0;
  std::memcpy(&sum, out.body(out[0]), 4);
  EXPECT_EQ(sum, 3);
  out.clear();
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 3, 1), &one, 0.4, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].header.type, PacketType::kResult);
  EXPECT_EQ(out[0].header.source, 1);
  EXPECT_EQ(out[0].to, addr(1));
  std::memcpy(&sum, out.body(out[0]), 4);
  EXPECT_EQ(sum, 3);
  EXPECT_EQ(sw.stats().duplicates, 2u);
  EXPECT_EQ(sw.stats().blocks, 1u);
}

// A source that moved (a new port) gets its resent result at its new address.
TEST(Switch, ResultGoesWhereTheSourceIsNow) {
  Switch sw(2, 1.0);
  Out out;
  const int32_t one = 1;
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 0), &one, 0, &out);
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 1), &one, 0, &out);
  out.clear();
  const Address moved{0x0100007f, 999};
  const auto bytes = wire(contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 1), &one, 4);
  sw.handle(bytes.data(), bytes.size(), moved, 0.1, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, moved);
}

// Jobs, groups, calls and blocks are separate records.
TEST(Switch, KeysAreSeparate) {
  Switch sw(8, 1.0);
  Out out;
  const int32_t v = 1;
  PacketHeader base = contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 0);
  for (int field = 0; field < 5; ++field) {
    PacketHeader h = base;
    if (field == 1) h.job += 1;
    if (field == 2) h.group += 1;
    if (field == 3) h.call += 1;
    if (field == 4) h.block += 1;
    send(&sw, h, &v, 0, &out);
  }
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(sw.stats().slots_used, 5u);
}

// Every slot in use: kBusy for a new block (not for one that has a record). Acknowledged by every
// source, the slots are free again, as often as wanted.
TEST(Switch, AcksFreeSlotsAndBusy) {
  const uint32_t slots = 8;
  Switch sw(slots, 1.0);
  Out out;
  const uint64_t v = 9;
  for (int round = 0; round < 3; ++round) {
    for (uint32_t b = 0; b < slots; ++b) {
      send(&sw, contribution(ElemType::kUint64, AggOp::kSum, 1, 2, 0, round, b), &v, 0, &out);
    }
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(sw.stats().slots_used, slots);
    PacketHeader extra = contribution(ElemType::kUint64, AggOp::kSum, 1, 2, 1, round, slots);
    send(&sw, extra, &v, 0, &out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].header.type, PacketType::kBusy);
    EXPECT_EQ(out[0].header.block, slots);
    EXPECT_EQ(out[0].header.payload, 0u);
    EXPECT_EQ(out[0].to, addr(1));
    EXPECT_EQ(sw.stats().busy, uint64_t(round) + 1);
    out.clear();
    for (uint32_t b = 0; b < slots; ++b) {
      send(&sw, contribution(ElemType::kUint64, AggOp::kSum, 1, 2, 1, round, b), &v, 0, &out);
    }
    EXPECT_EQ(of_type(out, PacketType::kResult).size(), 2 * slots);
    out.clear();
    for (uint32_t b = 0; b < slots; ++b) {
      for (uint16_t s = 0; s < 2; ++s) {
        send(&sw, ack_of(contribution(ElemType::kUint64, AggOp::kSum, 1, 2, s, round, b)), nullptr,
             0, &out);
        // A retransmitted acknowledgement changes nothing.
        send(&sw, ack_of(contribution(ElemType::kUint64, AggOp::kSum, 1, 2, s, round, b)), nullptr,
             0, &out);
      }
    }
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(sw.stats().slots_used, 0u);
  }
  EXPECT_EQ(sw.stats().slots_used_max, slots);
  EXPECT_EQ(sw.stats().blocks, 3 * slots);
  EXPECT_EQ(sw.stats().bad, 0u);
}

// An acknowledgement before the block is complete is a protocol error.
TEST(Switch, AckBeforeResultIsBad) {
  Switch sw(2, 1.0);
  Out out;
  const int32_t v = 1;
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 0), &v, 0, &out);
  send(&sw, ack_of(contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 0)), nullptr, 0, &out);
  EXPECT_EQ(sw.stats().bad, 1u);
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 1), &v, 0, &out);
  EXPECT_EQ(of_type(out, PacketType::kResult).size(), 2u);
}

ina::ErrorBody missing_of(std::initializer_list<int> sources) {
  ina::ErrorBody body{};
  for (int s : sources) body.missing[s / 8] |= static_cast<uint8_t>(1u << (s % 8));
  return body;
}

TEST(Switch, AgeingSendsErrorsAndKeepsATombstone) {
  Switch sw(4, 1.0);
  Out out;
  const int32_t v = 1;
  const uint16_t sources = 12;
  for (uint16_t s : {0, 2, 9}) {
    send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, sources, s), &v, 0.25, &out);
  }
  sw.age(1.0, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(sw.stats().slots_used, 1u);
  sw.age(1.25, &out);
  const ina::ErrorBody expected = missing_of({1, 3, 4, 5, 6, 7, 8, 10, 11});
  ASSERT_EQ(out.size(), 3u);
  std::vector<int> to;
  for (size_t k = 0; k < out.size(); ++k) {
    EXPECT_EQ(out[k].header.type, PacketType::kError);
    EXPECT_EQ(out[k].header.call, 7u);
    EXPECT_EQ(out[k].header.block, 3u);
    ASSERT_EQ(out[k].body_len, sizeof(ina::ErrorBody));
    EXPECT_EQ(out[k].header.payload, sizeof(ina::ErrorBody));
    EXPECT_EQ(std::memcmp(out.body(out[k]), &expected, sizeof(expected)), 0);
    EXPECT_EQ(out[k].to, addr(out[k].header.source));
    to.push_back(out[k].header.source);
  }
  std::sort(to.begin(), to.end());
  EXPECT_EQ(to, (std::vector<int>{0, 2, 9}));
  EXPECT_EQ(sw.stats().timeouts, 1u);
  EXPECT_EQ(sw.stats().slots_used, 0u);
  EXPECT_EQ(sw.tombstones(), 1u);

  // The straggler, and a retransmission: kError to the sender only, no new record.
  for (uint16_t s : {5, 0}) {
    out.clear();
    send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, sources, s), &v, 5.0, &out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].header.type, PacketType::kError);
    EXPECT_EQ(out[0].to, addr(s));
    EXPECT_EQ(std::memcmp(out.body(out[0]), &expected, sizeof(expected)), 0);
    EXPECT_EQ(sw.stats().slots_used, 0u);
  }
  // Kept for 10 timeouts, then forgotten: the key makes a record again.
  out.clear();
  sw.age(11.0, &out);
  EXPECT_EQ(sw.tombstones(), 1u);
  sw.age(11.25, &out);
  EXPECT_EQ(sw.tombstones(), 0u);
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, sources, 5), &v, 11.5, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(sw.stats().slots_used, 1u);
}

// Records age in creation order; complete ones do not time out.
TEST(Switch, AgeingOrder) {
  Switch sw(8, 1.0);
  Out out;
  const int32_t v = 1;
  for (uint32_t b = 0; b < 4; ++b) {
    send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 0, 7, b), &v, b * 0.5, &out);
  }
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 1, 7, 1), &v, 1.6, &out);  // done
  out.clear();
  sw.age(2.0, &out);  // block 0 (created 0.0); block 1 is complete; block 2 created at 1.0
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].header.block, 0u);
  EXPECT_EQ(out[1].header.block, 2u);
  out.clear();
  sw.age(2.4, &out);
  EXPECT_TRUE(out.empty());
  sw.age(2.5, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].header.block, 3u);
  EXPECT_EQ(sw.stats().timeouts, 3u);
  EXPECT_EQ(sw.stats().slots_used, 1u);
}

// A complete block whose acknowledgements do not all come is freed 10 timeouts after it completed.
TEST(Switch, UnacknowledgedRecordsAreFreed) {
  Switch sw(2, 0.5);
  Out out;
  const int32_t v = 1;
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 0), &v, 1.0, &out);
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 1), &v, 1.0, &out);
  send(&sw, ack_of(contribution(ElemType::kInt32, AggOp::kSum, 1, 2, 0)), nullptr, 1.0, &out);
  out.clear();
  sw.age(5.9, &out);
  EXPECT_EQ(sw.stats().slots_used, 1u);
  sw.age(6.0, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(sw.stats().slots_used, 0u);
  EXPECT_EQ(sw.stats().unacked, 1u);
  EXPECT_EQ(sw.stats().timeouts, 0u);
}

TEST(Switch, Hello) {
  Switch sw(77, 0.25);
  Out out;
  PacketHeader h;
  h.type = PacketType::kHello;
  h.job = 123;
  h.group = 4;
  const auto bytes = wire(h, nullptr, 0);
  sw.handle(bytes.data(), bytes.size(), addr(3), 0, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to, addr(3));
  EXPECT_EQ(out[0].header.type, PacketType::kHelloReply);
  EXPECT_EQ(out[0].header.job, 123u);
  EXPECT_EQ(out[0].header.group, 4u);
  ASSERT_EQ(out[0].body_len, sizeof(ina::HelloBody));
  EXPECT_EQ(out[0].header.payload, sizeof(ina::HelloBody));
  ina::HelloBody body;
  std::memcpy(&body, out.body(out[0]), sizeof(body));
  EXPECT_EQ(body.slots, 77u);
  EXPECT_EQ(body.max_payload, ina::kMaxPayload);
  EXPECT_EQ(body.max_result, ina::kMaxResult);
  EXPECT_EQ(body.timeout_ms, 250u);
}

// A result carries the lowest floor its contributions gave (protocol.h): every source has finished
// every call below it, so the sources forget the results they kept for those.
TEST(Switch, ResultsCarryTheLowestFloor) {
  Switch sw(4, 1.0);
  Out out;
  const int32_t one[4] = {1, 2, 3, 4};
  const uint64_t floors[3] = {9, 5, 8};
  for (uint16_t s = 0; s < 3; ++s) {
    PacketHeader h = contribution(ElemType::kInt32, AggOp::kSum, 4, 3, s, 9);
    h.floor = floors[s];
    send(&sw, h, one, 0, &out);
  }
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].header.type, PacketType::kResult);
    EXPECT_EQ(out[i].header.floor, 5u);
  }
  // A repeated contribution of the complete block is answered with the same floor.
  out.clear();
  PacketHeader again = contribution(ElemType::kInt32, AggOp::kSum, 4, 3, 2, 9);
  again.floor = 9;
  send(&sw, again, one, 0, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].header.floor, 5u);
}

// A block with an owner (a reduce-scatter's part): its result's payload goes to the owner only,
// the others get the header alone; a contribution naming another owner is bad.
TEST(Switch, OwnedBlockGoesToItsOwner) {
  Switch sw(4, 1.0);
  Out out;
  const int32_t one[4] = {1, 2, 3, 4};
  for (uint16_t s = 0; s < 3; ++s) {
    PacketHeader h = contribution(ElemType::kInt32, AggOp::kSum, 4, 3, s);
    h.owner = 1;
    send(&sw, h, one, 0, &out);
  }
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].header.type, PacketType::kResult);
    EXPECT_EQ(out[i].header.owner, 1u);
    EXPECT_EQ(out[i].header.payload, out[i].header.source == 1 ? 16u : 0u) << i;
    EXPECT_EQ(out[i].body_len, out[i].header.payload);
  }
  int32_t sum[4];
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].header.source != 1) continue;
    std::memcpy(sum, out.body(out[i]), sizeof sum);
    EXPECT_EQ(sum[3], 12);
  }
  out.clear();
  const uint64_t bad = sw.stats().bad;
  PacketHeader other = contribution(ElemType::kInt32, AggOp::kSum, 4, 3, 0, 8);
  other.owner = 1;
  send(&sw, other, one, 0, &out);
  other.source = 1;
  other.owner = 2;  // the record's owner is 1
  send(&sw, other, one, 0, &out);
  other.owner = 3;  // not a source
  send(&sw, other, one, 0, &out);
  EXPECT_EQ(sw.stats().bad, bad + 2);
  EXPECT_TRUE(out.empty());
}

// Each of these is dropped, counted once as bad, and answered with nothing.
TEST(Switch, MalformedDatagramsAreBad) {
  Switch sw(4, 1.0);
  Out out;
  std::vector<std::vector<uint8_t>> bad;
  const PacketHeader good = contribution(ElemType::kInt32, AggOp::kSum, 4, 2, 0);
  const std::vector<uint8_t> data(64 * 1024, 0x5a);
  const auto full = wire(good, data.data(), good.payload);
  for (size_t len = 0; len < sizeof(PacketHeader); ++len) {
    bad.emplace_back(full.begin(), full.begin() + len);  // truncated headers
  }
  bad.emplace_back(full.begin(), full.end() - 1);  // truncated payload
  auto with = [&](auto edit, size_t payload) {
    PacketHeader h = good;
    edit(h);
    bad.push_back(wire(h, data.data(), payload));
  };
  const size_t n = good.payload;
  with([](PacketHeader& h) { h.magic ^= 1; }, n);
  with([](PacketHeader& h) { h.version = ina::kVersion + 1; }, n);
  with([](PacketHeader& h) { h.payload += 4; }, n);  // says more than follows
  with([](PacketHeader& h) { h.payload = 0; }, n);   // says less
  with([](PacketHeader& h) { h.count = 8; }, n);     // payload disagrees with count
  with([](PacketHeader& h) { h.type = PacketType::kResult; }, n);
  with([](PacketHeader& h) { h.type = PacketType::kError; }, n);
  with([](PacketHeader& h) { h.type = PacketType::kBusy; }, n);
  with([](PacketHeader& h) { h.type = PacketType::kHelloReply; }, n);
  with([](PacketHeader& h) { h.type = static_cast<PacketType>(0); }, n);
  with([](PacketHeader& h) { h.type = static_cast<PacketType>(200); }, n);
  with([](PacketHeader& h) { h.sources = 0; }, n);
  with([](PacketHeader& h) { h.sources = 257; }, n);
  with([](PacketHeader& h) { h.source = 2; }, n);
  with([](PacketHeader& h) { h.op = AggOp::kNone; }, n);
  with([](PacketHeader& h) { h.op = static_cast<AggOp>(99); }, n);
  with([](PacketHeader& h) { h.elem = ElemType::kNone; }, n);
  with([](PacketHeader& h) { h.elem = ElemType::kBytes; }, n);  // a sum of bytes
  with([](PacketHeader& h) { h.elem = static_cast<ElemType>(99); }, n);
  with(
      [](PacketHeader& h) {
        h.elem = ElemType::kFloat32;
        h.op = AggOp::kBand;
      },
      n);
  with(
      [](PacketHeader& h) {
        h.elem = ElemType::kFloat64;
        h.op = AggOp::kBxor;
        h.payload = 8 * 4;
      },
      8 * 4);
  with(
      [](PacketHeader& h) {
        h.elem = ElemType::kBfloat16;
        h.op = AggOp::kBor;
        h.payload = 2 * 4;
      },
      2 * 4);
  with(
      [](PacketHeader& h) {
        h.elem = ElemType::kFloat16;  // 4 elements are 8 bytes, not 16
        h.op = AggOp::kSum;
      },
      n);
  with(
      [](PacketHeader& h) {
        h.count = ina::kMaxPayload / 4 + 1;  // over kMaxPayload, consistent otherwise
        h.payload = h.count * 4;
      },
      (ina::kMaxPayload / 4 + 1) * 4);
  with(
      [](PacketHeader& h) {
        h.count = 0x40000001;  // count * 4 wraps to 4 in 32 bits
        h.payload = 4;
      },
      4);
  with(
      [](PacketHeader& h) {
        h.op = AggOp::kGather;  // 256 sources x 256 bytes > kMaxResult
        h.elem = ElemType::kBytes;
        h.sources = 256;
        h.count = 256;
        h.payload = 256;
      },
      256);
  with(
      [](PacketHeader& h) {
        h.op = AggOp::kGather;
        h.elem = ElemType::kInt32;
        h.count = 16;
        h.payload = 16;
      },
      16);
  with(
      [](PacketHeader& h) {
        h.op = AggOp::kBarrier;  // a barrier carries no data
        h.elem = ElemType::kBytes;
        h.payload = 4;
      },
      4);
  with(
      [](PacketHeader& h) {
        h.type = PacketType::kAck;  // an acknowledgement carries no data
        h.payload = 4;
      },
      4);
  with(
      [](PacketHeader& h) {
        h.type = PacketType::kAck;
        h.payload = 0;
        h.source = 5;
      },
      0);

  for (size_t i = 0; i < bad.size(); ++i) {
    const uint64_t before = sw.stats().bad;
    sw.handle(bad[i].data(), bad[i].size(), addr(0), 0, &out);
    EXPECT_EQ(sw.stats().bad, before + 1) << "case " << i;
    EXPECT_TRUE(out.empty()) << "case " << i;
    EXPECT_EQ(sw.stats().slots_used, 0u) << "case " << i;
  }

  // A contribution that disagrees with the record's shape.
  send(&sw, good, data.data(), 0, &out);
  const uint64_t before = sw.stats().bad;
  for (int field = 0; field < 4; ++field) {
    PacketHeader h = contribution(ElemType::kInt32, AggOp::kSum, 4, 2, 1);
    if (field == 0) h.elem = ElemType::kUint32;
    if (field == 1) h.op = AggOp::kMax;
    if (field == 2) {
      h.count = 2;
      h.payload = 8;
    }
    if (field == 3) h.sources = 3;
    send(&sw, h, data.data(), 0, &out);
  }
  EXPECT_EQ(sw.stats().bad, before + 4);
  EXPECT_TRUE(out.empty());
  // An acknowledgement with another group size.
  PacketHeader a = ack_of(good);
  a.sources = 3;
  send(&sw, a, nullptr, 0, &out);
  EXPECT_EQ(sw.stats().bad, before + 5);
  EXPECT_EQ(sw.stats().duplicates, 0u);
  // The record is intact: the right contribution completes it.
  send(&sw, contribution(ElemType::kInt32, AggOp::kSum, 4, 2, 1), data.data(), 0, &out);
  EXPECT_EQ(out.size(), 2u);
}

// The largest blocks the protocol allows are accepted.
TEST(Switch, LargestBlocks) {
  Switch sw(2, 1.0);
  Out out;
  const std::vector<uint8_t> data(ina::kMaxPayload, 1);
  send(&sw, contribution(ElemType::kUint64, AggOp::kSum, ina::kMaxPayload / 8, 1, 0), data.data(),
       0, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].body_len, ina::kMaxPayload);
  out.clear();
  const uint16_t sources = 256;
  const uint32_t piece = ina::kMaxResult / sources;
  for (uint16_t s = 0; s < sources; ++s) {
    send(&sw, contribution(ElemType::kBytes, AggOp::kGather, piece, sources, s, 2), data.data(), 0,
         &out);
  }
  ASSERT_EQ(out.size(), size_t(sources));
  EXPECT_EQ(out[0].body_len, ina::kMaxResult);
  EXPECT_EQ(sw.stats().bad, 0u);
}

// Random bytes, and valid datagrams with random bytes changed, from random addresses at increasing
// times: nothing crashes (run it under the sanitizers), every answer is well formed and goes to a
// sender, and the slot accounting stays consistent.
TEST(Switch, RandomDatagrams) {
  Switch sw(16, 0.01);
  Out out;
  std::mt19937_64 rng(2024);
  std::vector<uint8_t> bytes;
  double now = 0;
  uint64_t answers = 0;
  for (int i = 0; i < 200000; ++i) {
    const int kind = static_cast<int>(rng() % 4);
    if (kind == 0) {
      bytes.resize(rng() % 200);
      for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    } else {
      // Small keys and groups, so that records meet, complete and collide.
      const ElemType elem = static_cast<ElemType>(rng() % 8);
      const AggOp op = static_cast<AggOp>(rng() % 9);
      const uint16_t sources = static_cast<uint16_t>(1 + rng() % 4);
      PacketHeader h = contribution(elem, op, static_cast<uint32_t>(rng() % 5), sources,
                                    static_cast<uint16_t>(rng() % sources), rng() % 3, rng() % 3);
      if (rng() % 4 == 0) h.type = static_cast<PacketType>(rng() % 9);
      if (h.type == PacketType::kAck) h.payload = 0;
      bytes = wire(h, std::vector<uint8_t>(h.payload, 7).data(), h.payload);
      if (kind == 1) {
        for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
      }
    }
    const Address from{0x0100007f, static_cast<uint16_t>(rng() % 8)};
    now += 0.0001;
    sw.handle(bytes.data(), bytes.size(), from, now, &out);
    if (i % 16 == 0) sw.age(now, &out);
    for (size_t k = 0; k < out.size(); ++k) {
      const Datagram& d = out[k];
      ASSERT_EQ(d.header.magic, ina::kMagic);
      ASSERT_EQ(d.header.payload, d.body_len);
      ASSERT_LE(d.body_len, ina::kMaxResult);
      ASSERT_EQ(d.to.ip, 0x0100007fu);
      ASSERT_LT(d.to.port, 8);
    }
    answers += out.size();
    out.clear();
    ASSERT_LE(sw.stats().slots_used, 16u);
  }
  sw.age(now + 100, &out);  // ages every record out, leaving tombstones
  sw.age(now + 200, &out);
  EXPECT_EQ(sw.stats().slots_used, 0u);
  EXPECT_EQ(sw.tombstones(), 0u);
  EXPECT_GT(sw.stats().bad, 0u);
  EXPECT_GT(sw.stats().blocks, 0u);
  EXPECT_GT(answers, 0u);
}

}  // namespace
}  // namespace torusmpi::sw
