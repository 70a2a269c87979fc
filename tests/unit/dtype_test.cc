// The datatype engine: each constructor's layout and bounds (the figures Open MPI 4.1 gives for
// the same types), merging into compact layouts, huge counts described in a node or two, packing
// and partial packing at every boundary, element counting, external32 conversion; and random
// nested types checked against a naive model that expands the type map element by element.
#include "dtype/dtype.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace torusmpi::dtype {
namespace {

// Basic elements as the MPI layer would describe them (ids are arbitrary here).
const Basic kChar{1, 1, 1, Encoding::kRaw, 1, 1};
const Basic kShort{2, 2, 2, Encoding::kSigned, 1, 2};
const Basic kInt{3, 4, 4, Encoding::kSigned, 1, 4};
const Basic kLong{4, 8, 8, Encoding::kSigned, 1, 4};  // external32 narrows long to 4 bytes
const Basic kDouble{5, 8, 8, Encoding::kFloat, 1, 8};
const Basic kLongDouble{6, 16, 16, Encoding::kX87, 1, 16};
const Basic kFloatComplex{7, 8, 4, Encoding::kFloat, 2, 8};
const Basic kUnsignedLong{8, 8, 8, Encoding::kUnsigned, 1, 4};

const TypeRef& Int() {
  static const TypeRef t = basic(kInt);
  return t;
}
const TypeRef& Double() {
  static const TypeRef t = basic(kDouble);
  return t;
}
const TypeRef& Char() {
  static const TypeRef t = basic(kChar);
  return t;
}

std::vector<TypeRef> types(std::initializer_list<TypeRef> l) { return l; }

// Packs through the engine, `count` elements from a patterned buffer.
struct Buffer {
  // Element displacements reach below 0: the buffer's "address" is its middle.
  explicit Buffer(int64_t span) : bytes(static_cast<size_t>(2 * span)), origin(span) {
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 3);
  }
  void* at() { return bytes.data() + origin; }
  std::vector<unsigned char> bytes;
  int64_t origin;
};

// ---------------------------------------------------------------------------------------------
// The naive model: the type map expanded entry by entry (what packing must follow), and bounds by
// the rules Open MPI and MPICH apply, copy by copy: each member copy contributes its own lb and ub;
// sticky ones (MPI_LB/MPI_UB markers, resized types) override the others; without a sticky ub the
// extent is padded to the strictest alignment.

struct Entry {
  int64_t disp;
  const Basic* basic;
};

struct Model {
  std::vector<Entry> map;
  bool has_bounds = false, sticky_lb = false, sticky_ub = false;
  int64_t lb = 0, ub = 0;
  uint32_t align = 1;

  int64_t extent() const { return ub - lb; }
  int64_t size() const {
    int64_t s = 0;
    for (const Entry& e : map) s += e.basic->size;
    return s;
  }
  int64_t true_lb() const {
    int64_t m = INT64_MAX;
    for (const Entry& e : map) m = std::min(m, e.disp);
    return map.empty() ? 0 : m;
  }
  int64_t true_ub() const {
    int64_t m = INT64_MIN;
    for (const Entry& e : map) m = std::max(m, e.disp + e.basic->size);
    return map.empty() ? 0 : m;
  }
  int64_t elements() const { return static_cast<int64_t>(map.size()); }

  // `count` elements: element i at i * extent.
  std::vector<unsigned char> pack(const void* buf, int64_t count) const {
    std::vector<unsigned char> out;
    const auto* base = static_cast<const unsigned char*>(buf);
    for (int64_t i = 0; i < count; ++i) {
      for (const Entry& e : map) {
        const unsigned char* p = base + i * extent() + e.disp;
        out.insert(out.end(), p, p + e.basic->size);
      }
    }
    return out;
  }
};

// Builds a model from copies of others.
struct Acc {
  Model m;
  bool has_nat = false, has_slb = false, has_sub = false;
  int64_t nat_lb = 0, nat_ub = 0, slb = 0, sub = 0;

  void copy(const Model& c, int64_t origin) {
    for (Entry e : c.map) {
      e.disp += origin;
      m.map.push_back(e);
    }
    m.align = std::max(m.align, c.align);
    if (!c.has_bounds) return;
    nat_lb = has_nat ? std::min(nat_lb, c.lb + origin) : c.lb + origin;
    nat_ub = has_nat ? std::max(nat_ub, c.ub + origin) : c.ub + origin;
    has_nat = true;
    if (c.sticky_lb) slb = has_slb ? std::min(slb, c.lb + origin) : c.lb + origin, has_slb = true;
    if (c.sticky_ub) sub = has_sub ? std::max(sub, c.ub + origin) : c.ub + origin, has_sub = true;
  }
  Acc& add(const Model& c, int64_t count, int64_t blocklen, int64_t stride, int64_t disp) {
    for (int64_t i = 0; i < count; ++i)
      for (int64_t j = 0; j < blocklen; ++j) copy(c, disp + i * stride + j * c.extent());
    return *this;
  }
  Model done() {
    m.has_bounds = has_nat;
    m.sticky_lb = has_slb;
    m.sticky_ub = has_sub;
    m.lb = has_slb ? slb : nat_lb;
    m.ub = has_sub ? sub : nat_ub;
    int64_t extent = nat_ub - std::min(m.lb, nat_lb);
    if (!has_sub && extent > 0 && extent % m.align != 0) m.ub += m.align - extent % m.align;
    return m;
  }
};

Model model_basic(const Basic& b) {
  Model m;
  m.map.push_back({0, &b});
  m.has_bounds = true;
  m.ub = b.size;
  m.align = b.align;
  return m;
}

Model model_marker(bool lb) {
  Model m;
  m.has_bounds = true;
  (lb ? m.sticky_lb : m.sticky_ub) = true;
  return m;
}

Model model_copies(const Model& c, int64_t count, int64_t blocklen, int64_t stride, int64_t disp) {
  return Acc().add(c, count, blocklen, stride, disp).done();
}

Model model_resized(Model m, int64_t lb, int64_t extent) {
  m.has_bounds = m.sticky_lb = m.sticky_ub = true;
  m.lb = lb;
  m.ub = lb + extent;
  return m;
}

// A type and its model, built side by side.
struct Pair {
  TypeRef type;
  Model model;
};

void expect_same(const Pair& p, const char* what) {
  SCOPED_TRACE(what);
  SCOPED_TRACE(p.type->describe());
  const Type& t = *p.type;
  const Model& m = p.model;
  ASSERT_EQ(t.size(), m.size());
  EXPECT_EQ(t.lb(), m.lb);
  EXPECT_EQ(t.ub(), m.ub);
  EXPECT_EQ(t.true_lb(), m.true_lb());
  EXPECT_EQ(t.true_ub(), m.true_ub());
  EXPECT_EQ(t.elements(), m.elements());
  for (int64_t count = 0; count <= 3; ++count) {
    int64_t span = 64 + 4 * (std::abs(t.lb()) + std::abs(t.ub()) + std::abs(t.true_lb()) +
                             std::abs(t.true_ub()) + std::abs(t.extent()) * count);
    Buffer in(span);
    std::vector<unsigned char> want = m.pack(in.at(), count);
    std::vector<unsigned char> got(static_cast<size_t>(count * t.size()) + 1, 0xee);
    t.pack(in.at(), count, got.data());
    ASSERT_EQ(got.back(), 0xee) << "pack wrote past its end";
    got.pop_back();
    ASSERT_EQ(got, want) << "count " << count;
    // Unpacking into a clean buffer puts back exactly the bytes the type covers.
    Buffer out(span);
    std::memset(out.bytes.data(), 0, out.bytes.size());
    t.unpack(want.data(), count, out.at());
    EXPECT_EQ(m.pack(out.at(), count), want);
  }
}

// ---------------------------------------------------------------------------------------------

TEST(Dtype, Basic) {
  const TypeRef& t = Int();
  EXPECT_EQ(t->size(), 4);
  EXPECT_EQ(t->lb(), 0);
  EXPECT_EQ(t->extent(), 4);
  EXPECT_EQ(t->describe(), "4@0");
  EXPECT_EQ(t->uniform_id(), kInt.id);
  EXPECT_EQ(t->uniform_count(), 1);
  EXPECT_EQ(t->elements(), 1);
}

TEST(Dtype, ContiguousIsOneBlockWhateverTheCount) {
  TypeRef t = contiguous(1000000, Double());
  EXPECT_EQ(t->describe(), "8000000@0");
  EXPECT_EQ(t->size(), 8000000);
  EXPECT_EQ(t->extent(), 8000000);
  EXPECT_EQ(t->uniform_count(), 1000000);
  int64_t offset = -1;
  EXPECT_TRUE(t->contiguous(1000, &offset));
  EXPECT_EQ(offset, 0);
  EXPECT_EQ(contiguous(0, Int())->extent(), 0);
  EXPECT_EQ(contiguous(0, Int())->describe(), "");
}

TEST(Dtype, VectorOfAMillionDoublesIsOneNode) {
  TypeRef t = hvector(1000000, 1, 16, Double());
  EXPECT_EQ(t->describe(), "1000000x8/16@0");
  EXPECT_EQ(t->extent(), 16 * 999999 + 8);
  // Two of them side by side continue the stride only if the extent allows: it does not (the
  // extent ends right after the last double), so count 2 is a loop over the one node.
  std::vector<double> src(2000000);
  std::iota(src.begin(), src.end(), 0.0);
  std::vector<double> packed(1000000);
  t->pack(src.data(), 1, packed.data());
  for (size_t i = 0; i < packed.size(); ++i) ASSERT_EQ(packed[i], 2.0 * static_cast<double>(i));
  // A resized vector whose extent continues the stride merges across elements.
  TypeRef r = resized(t, 0, 16 * 1000000);
  int64_t offset;
  EXPECT_FALSE(r->contiguous(2, &offset));
}

TEST(Dtype, VectorBlocksAndNesting) {
  EXPECT_EQ(hvector(5, 3, 20, Int())->describe(), "5x12/20@0");
  // Blocks that touch are one block.
  EXPECT_EQ(hvector(5, 3, 12, Int())->describe(), "60@0");
  // Negative strides.
  TypeRef neg = hvector(3, 2, -16, Int());
  EXPECT_EQ(neg->describe(), "3x8/-16@0");
  EXPECT_EQ(neg->lb(), -32);  // Open MPI: vector(3,2,-4,int) lb -32 extent 40
  EXPECT_EQ(neg->extent(), 40);
  // A vector of vectors is a loop over the inner one, unless the strides line up.
  TypeRef inner = hvector(4, 1, 8, Int());
  EXPECT_EQ(hvector(3, 1, 100, inner)->describe(), "3x(4x4/8@0)/100@0");
  EXPECT_EQ(hvector(3, 1, 32, inner)->describe(), "12x4/8@0");
  // contiguous(2, vector) steps by the vector's extent (28): no merge.
  EXPECT_EQ(contiguous(2, inner)->describe(), "2x(4x4/8@0)/28@0");
}

TEST(Dtype, IndexedMergesTouchingAndRegularBlocks) {
  EXPECT_EQ(hindexed({1, 1, 1}, {0, 4, 8}, Int())->describe(), "12@0");
  EXPECT_EQ(hindexed({1, 1, 1}, {0, 16, 32}, Int())->describe(), "3x4/16@0");
  EXPECT_EQ(hindexed({2, 1}, {0, 100}, Int())->describe(), "8@0 4@100");
  EXPECT_EQ(hindexed_block(2, {8, 24, 40, 56}, Int())->describe(), "4x8/16@8");
  // Zero-length blocks count for nothing, bounds included (Open MPI: lb 12 extent 4).
  TypeRef t = hindexed({1, 0}, {12, 20}, Int());
  EXPECT_EQ(t->lb(), 12);
  EXPECT_EQ(t->extent(), 4);
  TypeRef empty = hindexed({0, 0}, {12, 20}, Int());
  EXPECT_EQ(empty->lb(), 0);
  EXPECT_EQ(empty->extent(), 0);
  EXPECT_EQ(empty->size(), 0);
}

TEST(Dtype, StructAlignmentPadding) {
  // Open MPI 4.1's figures for the same structs.
  TypeRef a = structure({1, 1}, {0, 8}, types({Double(), Char()}));
  EXPECT_EQ(a->size(), 9);
  EXPECT_EQ(a->extent(), 16);
  EXPECT_EQ(a->true_extent(), 9);
  EXPECT_EQ(a->describe(), "9@0");
  TypeRef b = structure({1, 1}, {4, 8}, types({Int(), Char()}));
  EXPECT_EQ(b->lb(), 4);
  EXPECT_EQ(b->extent(), 8);
  EXPECT_EQ(b->true_extent(), 5);
  TypeRef c = hindexed({1, 1}, {0, 9}, Double());
  EXPECT_EQ(c->extent(), 24);
  EXPECT_EQ(c->true_extent(), 17);
  EXPECT_EQ(c->uniform_id(), kDouble.id);
  EXPECT_EQ(c->uniform_count(), 2);
  // A member's padding counts: its ub, not its last byte (Open MPI: 24, not 16).
  TypeRef nested = structure({1, 1}, {0, 1}, types({Char(), a}));
  EXPECT_EQ(nested->extent(), 24);
  EXPECT_EQ(nested->true_extent(), 10);
  TypeRef ld = structure({1, 1}, {0, 1}, types({Char(), basic(kLongDouble)}));
  EXPECT_EQ(ld->extent(), 32);
  EXPECT_EQ(ld->uniform_id(), -1);
}

TEST(Dtype, Markers) {
  // struct {MPI_LB at -8, int at 0, MPI_UB at 20}
  TypeRef t = structure({1, 1, 1}, {-8, 0, 20}, types({lb_marker(), Int(), ub_marker()}));
  EXPECT_EQ(t->lb(), -8);
  EXPECT_EQ(t->extent(), 28);
  EXPECT_EQ(t->true_lb(), 0);
  EXPECT_EQ(t->true_extent(), 4);
  TypeRef two = contiguous(2, t);
  EXPECT_EQ(two->lb(), -8);
  EXPECT_EQ(two->extent(), 56);
  EXPECT_EQ(two->true_extent(), 32);
  EXPECT_EQ(two->describe(), "2x4/28@0");
  // An LB marker below the data pads the extent from the marker (Open MPI: extent 16); data
  // below the marker pads from the data (Open MPI: lb 3, extent 5).
  TypeRef low = structure({1, 1}, {-3, 0}, types({lb_marker(), Double()}));
  EXPECT_EQ(low->lb(), -3);
  EXPECT_EQ(low->extent(), 16);
  TypeRef high = structure({1, 1}, {0, 3}, types({Double(), lb_marker()}));
  EXPECT_EQ(high->lb(), 3);
  EXPECT_EQ(high->extent(), 5);
  // An UB marker takes the padding away.
  TypeRef up = structure({1, 1}, {0, 3}, types({Char(), ub_marker()}));
  EXPECT_EQ(up->extent(), 3);
  EXPECT_EQ(contiguous(3, up)->extent(), 9);
  EXPECT_EQ(contiguous(3, up)->true_extent(), 7);
}

TEST(Dtype, Resized) {
  TypeRef r = resized(Int(), -4, 16);
  EXPECT_EQ(r->lb(), -4);
  EXPECT_EQ(r->extent(), 16);
  EXPECT_EQ(r->true_lb(), 0);
  EXPECT_EQ(r->true_extent(), 4);
  TypeRef two = contiguous(2, r);  // Open MPI: lb -4 extent 32 true_lb 0 true_extent 20
  EXPECT_EQ(two->lb(), -4);
  EXPECT_EQ(two->extent(), 32);
  EXPECT_EQ(two->true_extent(), 20);
  EXPECT_EQ(two->describe(), "2x4/16@0");
  // A zero extent repeats the same bytes.
  TypeRef zero = contiguous(3, resized(Double(), 0, 0));
  EXPECT_EQ(zero->extent(), 0);
  EXPECT_EQ(zero->true_extent(), 8);
  // Markers of the old type are dropped: the new bounds are exact.
  TypeRef t = structure({1, 1, 1}, {-8, 0, 20}, types({lb_marker(), Int(), ub_marker()}));
  TypeRef shrunk = resized(contiguous(2, t), 0, 4);
  EXPECT_EQ(shrunk->lb(), 0);
  EXPECT_EQ(shrunk->extent(), 4);
  EXPECT_EQ(shrunk->true_extent(), 32);
  // A struct with a resized member: its UB marker wins over later data (Open MPI: extent 9).
  TypeRef s = structure({1, 1}, {0, 9}, types({resized(Double(), 0, 9), Char()}));
  EXPECT_EQ(s->extent(), 9);
  EXPECT_EQ(s->true_extent(), 10);
}

TEST(Dtype, ResizedVectorContinuesItsStrideAcrossElements) {
  TypeRef v = resized(hvector(4, 1, 16, Double()), 0, 64);
  int64_t offset;
  EXPECT_FALSE(v->contiguous(3, &offset));
  std::vector<double> src(64);
  std::iota(src.begin(), src.end(), 0.0);
  std::vector<double> out(12);
  v->pack(src.data(), 3, out.data());
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], 2.0 * i);
}

TEST(Dtype, StructOfNonTouchingMembersRepeatedIsOneLoop) {
  TypeRef s = structure({1, 1}, {0, 8}, types({Int(), Double()}));
  EXPECT_EQ(s->describe(), "4@0 8@8");
  TypeRef v = contiguous(1000000, s);
  EXPECT_EQ(v->describe(), "1000000x(4@0 8@8)/16@0");
  EXPECT_EQ(v->program().nodes.size(), 1u);
  EXPECT_EQ(v->describe_signature(), "1000000x(1x#3 1x#5)");
  EXPECT_EQ(v->elements(), 2000000);
}

TEST(Dtype, BigProgramsAreSharedNotCopied) {
  std::vector<int64_t> lens(1000, 1), displs(1000);
  for (int i = 0; i < 1000; ++i) displs[i] = 12 * i * i % 100000;
  TypeRef big = hindexed(lens, displs, Int());
  size_t nodes = big->program().nodes.size();
  EXPECT_GT(nodes, 100u);
  // An indexed type of it: one loop per block, each sharing big's program.
  TypeRef outer = hindexed({1, 2, 1}, {0, 1 << 20, 1 << 22}, big);
  EXPECT_LE(outer->program().nodes.size(), 3u);
  EXPECT_EQ(outer->program().nodes[0].sub.get(), &big->program());
  Pair p{outer, {}};
  Acc ab;
  for (int i = 0; i < 1000; ++i) ab.add(model_basic(kInt), 1, 1, 0, displs[i]);
  Model mb = ab.done();
  p.model = Acc().add(mb, 1, 1, 0, 0).add(mb, 1, 2, 0, 1 << 20).add(mb, 1, 1, 0, 1 << 22).done();
  expect_same(p, "indexed of a big indexed type");
}

TEST(Dtype, HugeCountsStayCompact) {
  // 2^40 doubles: described, sized, never expanded.
  TypeRef t = contiguous(int64_t{1} << 20, hvector(int64_t{1} << 20, 1, 16, Double()));
  EXPECT_EQ(t->size(), int64_t{8} << 40);
  EXPECT_EQ(t->describe(), "1048576x(1048576x8/16@0)/16777208@0");
  EXPECT_EQ(t->elements(), int64_t{1} << 40);
  EXPECT_EQ(t->elements_in(int64_t{8} << 39), int64_t{1} << 39);
  // Sizes that overflow 63 bits are refused.
  EXPECT_EQ(contiguous(int64_t{1} << 62, Double()), nullptr);
  EXPECT_EQ(contiguous(int64_t{1} << 30, contiguous(int64_t{1} << 30, Double())), nullptr);
}

TEST(Dtype, Subarray) {
  // Open MPI: 4x5 ints, 2x3 from (1,1): size 24, lb 0, extent 80; true lb/extent 24/32 (C) and
  // 20/40 (Fortran).
  TypeRef c = subarray({4, 5}, {2, 3}, {1, 1}, Order::kC, Int());
  EXPECT_EQ(c->size(), 24);
  EXPECT_EQ(c->lb(), 0);
  EXPECT_EQ(c->extent(), 80);
  EXPECT_EQ(c->true_lb(), 24);
  EXPECT_EQ(c->true_extent(), 32);
  EXPECT_EQ(c->describe(), "2x12/20@24");
  TypeRef f = subarray({4, 5}, {2, 3}, {1, 1}, Order::kFortran, Int());
  EXPECT_EQ(f->true_lb(), 20);
  EXPECT_EQ(f->true_extent(), 40);
  EXPECT_EQ(f->describe(), "3x8/16@20");
  TypeRef r = subarray({4, 5}, {2, 3}, {1, 1}, Order::kC, resized(Int(), -4, 12));
  EXPECT_EQ(r->extent(), 240);
  EXPECT_EQ(r->true_lb(), 72);
  EXPECT_EQ(r->true_extent(), 88);
  // A 3-d block of a big array: two nodes deep at most.
  TypeRef cube = subarray({100, 100, 100}, {10, 10, 10}, {5, 5, 5}, Order::kC, Double());
  EXPECT_EQ(cube->describe(), "10x(10x80/800@0)/80000@404040");
  std::vector<double> a(1000000);
  std::iota(a.begin(), a.end(), 0.0);
  std::vector<double> out(1000);
  cube->pack(a.data(), 1, out.data());
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j)
      for (int k = 0; k < 10; ++k)
        ASSERT_EQ(out[(i * 10 + j) * 10 + k], ((i + 5) * 100 + (j + 5)) * 100 + (k + 5));
}

TEST(Dtype, Darray) {
  // Open MPI: 10x7 ints, BLOCK x CYCLIC(2) on a 2x2 grid.
  const int64_t sizes[4] = {80, 60, 80, 60}, true_lbs[4] = {0, 8, 140, 148},
                true_extents[4] = {136, 132, 136, 132};
  for (int rank = 0; rank < 4; ++rank) {
    TypeRef t = darray(rank, {10, 7}, {Distribution::kBlock, Distribution::kCyclic},
                       {kDefaultDarg, 2}, {2, 2}, Order::kC, Int());
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->size(), sizes[rank]) << rank;
    EXPECT_EQ(t->lb(), 0);
    EXPECT_EQ(t->extent(), 280);
    EXPECT_EQ(t->true_lb(), true_lbs[rank]) << rank;
    EXPECT_EQ(t->true_extent(), true_extents[rank]) << rank;
  }
  // Every element of a 1-d cyclic(3) distribution of 20 over 3 processes, in order.
  for (int rank = 0; rank < 3; ++rank) {
    TypeRef t = darray(rank, {20}, {Distribution::kCyclic}, {3}, {3}, Order::kFortran, Int());
    std::vector<int> a(20);
    std::iota(a.begin(), a.end(), 0);
    std::vector<int> want;
    for (int i = 0; i < 20; ++i)
      if (i / 3 % 3 == rank) want.push_back(i);
    std::vector<int> got(static_cast<size_t>(t->size() / 4));
    t->pack(a.data(), 1, got.data());
    EXPECT_EQ(got, want) << rank;
  }
  EXPECT_EQ(darray_error(4, 0, {10}, {Distribution::kBlock}, {2}, {4}),
            "dargs[0] is 2: 4 blocks of 2 cover 8 of gsizes[0] = 10");
  EXPECT_EQ(darray_error(4, 0, {10}, {Distribution::kBlock}, {kDefaultDarg}, {3}),
            "the product of psizes is 3, not size = 4");
  EXPECT_EQ(darray_error(4, 4, {10}, {Distribution::kBlock}, {kDefaultDarg}, {4}),
            "rank argument is 4, not in [0, 4)");
  EXPECT_NE(darray_error(2, 0, {10}, {Distribution::kNone}, {kDefaultDarg}, {2}), "");
  EXPECT_EQ(darray_error(2, 1, {10, 3}, {Distribution::kCyclic, Distribution::kNone},
                         {kDefaultDarg, 7}, {2, 1}),
            "");
}

// Packing any byte range gives that slice of the whole stream; unpacking slices one by one
// rebuilds the buffer.
void check_every_range(const TypeRef& t, int64_t count) {
  SCOPED_TRACE(t->describe());
  int64_t span = 64 + 2 * (std::abs(t->lb()) + std::abs(t->true_ub()) + t->extent() * count +
                           std::abs(t->true_lb()));
  Buffer in(span);
  const int64_t total = t->size() * count;
  std::vector<unsigned char> whole(static_cast<size_t>(total));
  t->pack(in.at(), count, whole.data());
  for (int64_t from = 0; from <= total; ++from) {
    for (int64_t to = from; to <= total; ++to) {
      std::vector<unsigned char> part(static_cast<size_t>(to - from) + 1, 0xee);
      t->pack_range(in.at(), count, from, to, part.data());
      ASSERT_EQ(part.back(), 0xee);
      ASSERT_TRUE(std::equal(part.begin(), part.end() - 1, whole.begin() + from))
          << "[" << from << ", " << to << ")";
    }
  }
  // Unpack in chunks of every size.
  for (int64_t chunk = 1; chunk <= total; ++chunk) {
    Buffer out(span);
    std::memset(out.bytes.data(), 0, out.bytes.size());
    for (int64_t from = 0; from < total; from += chunk) {
      int64_t to = std::min(total, from + chunk);
      t->unpack_range(whole.data() + from, count, from, to, out.at());
    }
    std::vector<unsigned char> again(static_cast<size_t>(total));
    t->pack(out.at(), count, again.data());
    ASSERT_EQ(again, whole) << "chunk " << chunk;
  }
}

TEST(Dtype, PartialPackingAtEveryBoundary) {
  TypeRef s = structure({1, 2, 1}, {0, 8, 40}, types({Char(), Int(), Double()}));
  check_every_range(s, 3);
  check_every_range(hvector(3, 2, 5, basic(kShort)), 2);
  check_every_range(hvector(2, 1, 64, contiguous(2, s)), 2);
  check_every_range(subarray({4, 5, 3}, {2, 2, 2}, {1, 2, 1}, Order::kC, Int()), 1);
  check_every_range(resized(hvector(3, 1, -12, Int()), -24, 40), 3);
}

TEST(Dtype, ContiguousQuery) {
  int64_t offset = -1;
  EXPECT_TRUE(hindexed({3}, {16}, Int())->contiguous(1, &offset));
  EXPECT_EQ(offset, 16);
  // Its extent is its data: consecutive elements continue the block.
  EXPECT_TRUE(hindexed({3}, {16}, Int())->contiguous(5, &offset));
  EXPECT_EQ(offset, 16);
  TypeRef padded = resized(Int(), 0, 8);
  EXPECT_TRUE(padded->contiguous(1, &offset));
  EXPECT_FALSE(padded->contiguous(2, &offset));
  EXPECT_FALSE(hvector(2, 1, 8, Int())->contiguous(1, &offset));
  EXPECT_TRUE(contiguous(0, Int())->contiguous(7, &offset));
  EXPECT_EQ(offset, 0);
}

TEST(Dtype, ForEachBlockJoinsTouchingPieces) {
  std::vector<std::pair<int64_t, size_t>> pieces;
  auto fn = [](void* ctx, char* p, size_t n) {
    static_cast<std::vector<std::pair<int64_t, size_t>>*>(ctx)->push_back(
        {reinterpret_cast<intptr_t>(p), n});
  };
  TypeRef v = hvector(3, 1, 8, Int());
  v->for_each_block(nullptr, 1, 0, 12, fn, &pieces);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[1].first, 8);
  // A loop whose passes touch: struct {int@0, double@4} repeated, extent 16 but 12 bytes used.
  pieces.clear();
  TypeRef r = resized(structure({1, 1}, {0, 4}, types({Int(), Double()})), 0, 12);
  EXPECT_EQ(r->describe(), "12@0");
  r->for_each_block(nullptr, 4, 2, 46, fn, &pieces);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].first, 2);
  EXPECT_EQ(pieces[0].second, 44u);
}

// MPI_BOTTOM: a null buffer and absolute addresses for displacements, as a type built from
// MPI_Get_address gives. The walk adds them in integers (no offset on a null pointer, which UBSan
// reports), partial ranges and vectors with negative strides included.
TEST(Dtype, AbsoluteAddressesFromANullBuffer) {
  std::vector<int> a = {1, 2, 3, 4, 5, 6};
  std::vector<double> b = {7.5, 8.5};
  const int64_t a_addr = static_cast<int64_t>(reinterpret_cast<intptr_t>(a.data()));
  const int64_t b_addr = static_cast<int64_t>(reinterpret_cast<intptr_t>(b.data()));
  // a[5], a[3], a[1] (a vector stepping back), then b whole.
  TypeRef t = structure({1, 2}, {a_addr + 20, b_addr}, types({hvector(3, 1, -8, Int()), Double()}));
  ASSERT_EQ(t->size(), 28);
  std::vector<unsigned char> packed(28);
  t->pack(nullptr, 1, packed.data());
  int ints[3];
  double doubles[2];
  std::memcpy(ints, packed.data(), sizeof ints);
  std::memcpy(doubles, packed.data() + 12, sizeof doubles);
  EXPECT_EQ(ints[0], 6);
  EXPECT_EQ(ints[1], 4);
  EXPECT_EQ(ints[2], 2);
  EXPECT_EQ(doubles[0], 7.5);
  EXPECT_EQ(doubles[1], 8.5);
  // Back, a range at a time, across the boundary between the two members.
  std::fill(a.begin(), a.end(), 0);
  std::fill(b.begin(), b.end(), 0.0);
  t->unpack_range(packed.data(), 1, 0, 10, nullptr);
  t->unpack_range(packed.data() + 10, 1, 10, 28, nullptr);
  EXPECT_EQ(a, (std::vector<int>{0, 2, 0, 4, 0, 6}));
  EXPECT_EQ(b, (std::vector<double>{7.5, 8.5}));
}

TEST(Dtype, ElementsAndPartialElements) {
  // A pair type as MPI_DOUBLE_INT: double at 0, int at 8, extent 16, uniform as itself.
  TypeRef pair = named(structure({1, 1}, {0, 8}, types({Double(), Int()})), 42);
  EXPECT_EQ(pair->size(), 12);
  EXPECT_EQ(pair->extent(), 16);
  EXPECT_EQ(pair->elements(), 2);
  TypeRef three = contiguous(3, pair);
  EXPECT_EQ(three->uniform_id(), 42);
  EXPECT_EQ(three->uniform_count(), 3);
  // Open MPI: 32 bytes of contiguous(3, MPI_DOUBLE_INT) are 5 elements; 34 bytes end inside one.
  EXPECT_EQ(three->elements_in(32), 5);
  EXPECT_EQ(three->elements_in(34), -1);
  EXPECT_EQ(three->elements_in(0), 0);
  EXPECT_EQ(three->elements_in(36 + 8), 7);  // one whole type and a double
  EXPECT_EQ(three->bytes_of_elements(2), 12);
  EXPECT_EQ(three->bytes_of_elements(7), 44);
  EXPECT_EQ(three->bytes_of_elements(0), 0);
  for (int64_t n = 0; n < 20; ++n) EXPECT_EQ(three->elements_in(three->bytes_of_elements(n)), n);
  // Mixed kinds are not uniform; types without data count nothing.
  EXPECT_EQ(structure({1, 1}, {0, 8}, types({Double(), Int()}))->uniform_id(), -1);
  EXPECT_EQ(contiguous(0, Int())->elements_in(4), 0);
  EXPECT_EQ(contiguous(0, Int())->uniform_id(), -1);
  // Markers do not break uniformity.
  EXPECT_EQ(structure({1, 1}, {0, 64}, types({Int(), ub_marker()}))->uniform_id(), kInt.id);
}

std::vector<unsigned char> external(const TypeRef& t, const void* buf, int64_t count) {
  std::vector<unsigned char> packed(static_cast<size_t>(t->size() * count));
  t->pack(buf, count, packed.data());
  std::vector<unsigned char> out(static_cast<size_t>(t->external_size() * count));
  t->to_external(packed.data(), count, out.data());
  return out;
}

using Bytes = std::vector<unsigned char>;

TEST(Dtype, External32) {
  int32_t i = 0x01020304;
  EXPECT_EQ(external(Int(), &i, 1), (Bytes{1, 2, 3, 4}));
  double d = 1.0;
  EXPECT_EQ(external(Double(), &d, 1), (Bytes{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}));
  // long is 4 bytes in external32: the low bytes, sign-extended back.
  int64_t l[2] = {0x0102030405060708, -2};
  TypeRef tl = basic(kLong);
  Bytes el = external(tl, l, 2);
  EXPECT_EQ(el, (Bytes{5, 6, 7, 8, 0xff, 0xff, 0xff, 0xfe}));
  int64_t back[2];
  tl->from_external(el.data(), 2, back);
  EXPECT_EQ(back[0], 0x05060708);
  EXPECT_EQ(back[1], -2);
  uint64_t ul = 0xfffffffe;
  TypeRef tul = basic(kUnsignedLong);
  Bytes eul = external(tul, &ul, 1);
  uint64_t ul_back = 0;
  tul->from_external(eul.data(), 1, &ul_back);
  EXPECT_EQ(ul_back, 0xfffffffeu);
  // long double: x87 extended to IEEE binary128, and back.
  long double ld[3] = {1.5L, -0.0L, 3.0e-4000L};
  TypeRef tld = basic(kLongDouble);
  Bytes eld = external(tld, ld, 3);
  EXPECT_EQ(Bytes(eld.begin(), eld.begin() + 16),
            (Bytes{0x3f, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(eld[16], 0x80);
  long double ld_back[3];
  tld->from_external(eld.data(), 3, ld_back);
  EXPECT_EQ(ld_back[0], 1.5L);
  EXPECT_TRUE(ld_back[1] == 0.0L && std::signbit(ld_back[1]));
  EXPECT_EQ(ld_back[2], 3.0e-4000L);  // subnormal in binary64, normal in both extended forms
  // complex: each half on its own.
  float c[2] = {1.0f, -2.0f};
  EXPECT_EQ(external(basic(kFloatComplex), c, 1), (Bytes{0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0}));
  // A struct: packed order, each element converted, no padding.
  struct {
    char ch;
    int32_t n;
    int64_t l;
  } s = {'x', 7, -1};
  TypeRef ts = structure({1, 1, 1}, {0, 4, 8}, types({Char(), Int(), tl}));
  EXPECT_EQ(ts->external_size(), 9);
  EXPECT_EQ(external(ts, &s, 1), (Bytes{'x', 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff}));
}

// ---------------------------------------------------------------------------------------------
// Random nested types against the model.

struct Gen {
  std::mt19937 rng{12345};
  int pick(int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); }
  int64_t range(int64_t lo, int64_t hi) { return lo + pick(static_cast<int>(hi - lo + 1)); }

  Pair leaf() {
    static const Basic* const kLeaves[] = {&kChar, &kShort, &kInt, &kDouble};
    const Basic* b = kLeaves[pick(4)];
    return {basic(*b), model_basic(*b)};
  }

  Pair make(int depth) {
    if (depth == 0) return leaf();
    Pair c = make(depth - 1);
    const int64_t e = std::max<int64_t>(c.type->extent(), 1);
    switch (pick(8)) {
      case 0: {
        int64_t n = range(0, 4);
        return {contiguous(n, c.type), model_copies(c.model, 1, n, 0, 0)};
      }
      case 1: {
        int64_t n = range(1, 4), bl = range(0, 3), stride = range(-3, 4) * e + range(-1, 1);
        return {hvector(n, bl, stride, c.type), model_copies(c.model, n, bl, stride, 0)};
      }
      case 2: {
        int64_t n = range(1, 4), bl = range(1, 3), stride = bl * e;  // regular: must merge
        return {hvector(n, bl, stride, c.type), model_copies(c.model, n, bl, stride, 0)};
      }
      case 3: {
        int n = static_cast<int>(range(1, 4));
        std::vector<int64_t> lens, displs;
        Acc m;
        for (int i = 0; i < n; ++i) {
          lens.push_back(range(0, 3));
          displs.push_back(range(-2, 6) * e / 2);
          m.add(c.model, 1, lens.back(), 0, displs.back());
        }
        return {hindexed(lens, displs, c.type), m.done()};
      }
      case 4: {
        int n = static_cast<int>(range(1, 3));
        std::vector<int64_t> lens, displs;
        std::vector<TypeRef> ts;
        Acc m;
        int64_t at = range(-8, 8);
        for (int i = 0; i < n; ++i) {
          Pair p = i == 0 ? c : make(depth - 1);
          int kind = pick(10);
          if (kind == 0) p = {lb_marker(), model_marker(true)};
          if (kind == 1) p = {ub_marker(), model_marker(false)};
          lens.push_back(range(0, 2));
          displs.push_back(at);
          ts.push_back(p.type);
          m.add(p.model, 1, lens.back(), 0, at);
          at += lens.back() * std::max<int64_t>(p.type->extent(), 0) + range(0, 8);
        }
        return {structure(lens, displs, ts), m.done()};
      }
      case 5: {
        int64_t lb = range(-8, 8), extent = range(0, 3) * e + range(0, 5);
        return {resized(c.type, lb, extent), model_resized(c.model, lb, extent)};
      }
      case 6: {
        int64_t bl = range(1, 2);
        std::vector<int64_t> displs;
        Acc m;
        for (int i = 0, n = static_cast<int>(range(1, 4)); i < n; ++i) {
          displs.push_back(range(0, 3) * bl * e);
          m.add(c.model, 1, bl, 0, displs.back());
        }
        return {hindexed_block(bl, displs, c.type), m.done()};
      }
      default: {
        // A subarray of a small 2-d array of c.
        int64_t rows = range(1, 3), cols = range(1, 3);
        int64_t sr = range(1, rows), sc = range(1, cols);
        int64_t r0 = range(0, rows - sr), c0 = range(0, cols - sc);
        Order order = pick(2) ? Order::kC : Order::kFortran;
        int64_t ext = c.type->extent();
        // C: (r, c) at r * cols + c, the last index fastest; Fortran: at r + c * rows, the
        // first index fastest.
        Acc m;
        if (order == Order::kC) {
          for (int64_t i = 0; i < sr; ++i)
            for (int64_t j = 0; j < sc; ++j)
              m.add(c.model, 1, 1, 0, ((r0 + i) * cols + c0 + j) * ext);
        } else {
          for (int64_t j = 0; j < sc; ++j)
            for (int64_t i = 0; i < sr; ++i)
              m.add(c.model, 1, 1, 0, (r0 + i + (c0 + j) * rows) * ext);
        }
        return {subarray({rows, cols}, {sr, sc}, {r0, c0}, order, c.type),
                model_resized(m.done(), 0, rows * cols * ext)};
      }
    }
  }
};

TEST(Dtype, RandomTypesMatchTheNaiveModel) {
  Gen g;
  for (int i = 0; i < 1500; ++i) {
    Pair p = g.make(1 + i % 3);
    ASSERT_NE(p.type, nullptr);
    expect_same(p, ("random type " + std::to_string(i)).c_str());
    if (HasFatalFailure()) return;
  }
}

TEST(Dtype, RandomTypesPackInRanges) {
  Gen g;
  g.rng.seed(777);
  for (int i = 0; i < 150; ++i) {
    TypeRef t = g.make(1 + i % 3).type;
    if (t->size() * 2 > 200) continue;  // keeps the all-ranges check quick
    check_every_range(t, 2);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace torusmpi::dtype
