// Intercommunicator collectives (coll/inter): the simulator runs every rank of both groups of
// each collective's schedule and checks every output against the descriptor, for groups of 1, 2,
// 3 and 5 ranks in every pairing (unequal ones included), counts of 0, 1, 7 and a prime, every
// root of both groups, commutative and not, and uneven v/w layouts with zeros and gaps.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll/inter/inter.h"
#include "coll/sim/sim.h"

namespace torusmpi::coll {
namespace {

const int kSizes[] = {1, 2, 3, 5};
const size_t kCounts[] = {0, 1, 7, 1031};

// One call on the row of groups of p (first) and q ranks; its arrays live here.
struct RowCall {
  std::vector<Args> args;
  std::vector<std::vector<size_t>> arrays;

  const size_t* keep(std::vector<size_t> v) {
    arrays.push_back(std::move(v));
    return arrays.back().data();
  }
};

// Per-block sizes that every rank derives alike: uneven, some zero.
size_t block_of(int u, size_t count) { return count == 0 ? 0 : (u * 5 + count) % 11; }
size_t pair_of(int from, int to, size_t count) {
  return count == 0 ? 0 : (from * 7 + to * 3 + count) % 9;
}

// Displacements for blocks of `counts`: reversed (the last block first) with a gap of 3 after
// each, or in order with a gap of 1.
std::vector<size_t> layout(const std::vector<size_t>& counts, bool reversed) {
  std::vector<size_t> d(counts.size());
  size_t at = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const size_t j = reversed ? counts.size() - 1 - k : k;
    d[j] = at;
    at += counts[j] + (reversed ? 3 : 1);
  }
  return d;
}

// The own group's reduce_scatter counts: they add up to `total`, the first is 0 in groups of more
// than one, the last takes the remainder.
std::vector<size_t> split_counts(int g, size_t total) {
  std::vector<size_t> c(g, 0);
  size_t left = total;
  for (int i = g > 1 ? 1 : 0; i < g - 1; ++i) {
    c[i] = total / g;
    left -= c[i];
  }
  c[g - 1] = left;
  return c;
}

RowCall make_row_call(Coll coll, int p, int q, size_t count, int root, bool commutative) {
  RowCall call;
  const int n = p + q;
  call.arrays.reserve(8 * n);
  for (int r = 0; r < n; ++r) {
    Args a;
    a.coll = coll;
    a.rank = r;
    a.size = n;
    a.split = p;
    a.commutative = commutative;
    a.elem = coll_reduces(coll) ? 4 : 1;
    a.count = count;
    const inter::Sides s = inter::sides(a);
    if (coll_rooted(coll)) {
      const bool root_group = root >= s.own_first && root < s.own_first + s.own_size;
      a.root = root_group && root != r ? -1 : root;
    }
    std::vector<size_t> other(s.other_size);
    for (int j = 0; j < s.other_size; ++j) other[j] = block_of(s.other_first + j, count);
    switch (coll) {
      case Coll::kAllgatherv:
        a.count = block_of(r, count);
        a.counts = call.keep(other);
        a.displs = call.keep(layout(other, true));
        break;
      case Coll::kGatherv:
      case Coll::kScatterv:
        a.count = block_of(r, count);
        if (a.root == r) {
          a.counts = call.keep(other);
          a.displs = call.keep(layout(other, true));
        }
        break;
      case Coll::kAlltoallv:
      case Coll::kAlltoallw: {
        std::vector<size_t> sc(s.other_size), rc(s.other_size);
        for (int j = 0; j < s.other_size; ++j) {
          sc[j] = pair_of(r, s.other_first + j, count);
          rc[j] = pair_of(s.other_first + j, r, count);
        }
        a.scounts = call.keep(sc);
        a.sdispls = call.keep(layout(sc, true));
        a.rcounts = call.keep(rc);
        a.rdispls = call.keep(layout(rc, false));
        break;
      }
      case Coll::kReduceScatter:
        a.counts = call.keep(split_counts(s.own_size, count * 3));
        break;
      case Coll::kReduceScatterBlock:
        // Each group's vector (own size * the block) must be as long as the other's.
        a.count = count * s.other_size;
        break;
      default:
        break;
    }
    call.args.push_back(a);
  }
  return call;
}

// Roots to try: every rank of both groups (the row numbers them all).
std::vector<int> roots_of(Coll c, int p, int q) {
  std::vector<int> roots;
  if (!coll_rooted(c)) return {0};
  for (int r = 0; r < p + q; ++r) roots.push_back(r);
  return roots;
}

const Coll kAll[] = {Coll::kBarrier,   Coll::kBcast,         Coll::kReduce,
                     Coll::kAllreduce, Coll::kAllgather,     Coll::kAllgatherv,
                     Coll::kAlltoall,  Coll::kAlltoallv,     Coll::kAlltoallw,
                     Coll::kGather,    Coll::kGatherv,       Coll::kScatter,
                     Coll::kScatterv,  Coll::kReduceScatter, Coll::kReduceScatterBlock};

TEST(CollInter, EveryCollectiveEveryGroupPairing) {
  int runs = 0;
  for (Coll c : kAll) {
    ASSERT_TRUE(inter::supported(c)) << coll_name(c);
    for (int p : kSizes) {
      for (int q : kSizes) {
        for (size_t count : kCounts) {
          for (int root : roots_of(c, p, q)) {
            for (bool commutative : {true, false}) {
              if (!commutative && !coll_reduces(c)) continue;
              RowCall call = make_row_call(c, p, q, count, root, commutative);
              sim::Result r = sim::run(call.args, inter::build, inter::descriptor(c));
              ASSERT_TRUE(r.ok) << inter::descriptor(c).name << " groups " << p << "+" << q
                                << " count " << count << " root " << root
                                << (commutative ? "" : " non-commutative") << ": " << r.error;
              ++runs;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 1000);
}

TEST(CollInter, NoScansNorNeighbourhoods) {
  EXPECT_FALSE(inter::supported(Coll::kScan));
  EXPECT_FALSE(inter::supported(Coll::kExscan));
  EXPECT_FALSE(inter::supported(Coll::kNeighborAlltoallw));
}

TEST(CollInter, RowSides) {
  Args a;
  a.size = 5;
  a.split = 2;
  a.rank = 3;
  inter::Sides s = inter::sides(a);
  EXPECT_EQ(s.own_first, 2);
  EXPECT_EQ(s.own_size, 3);
  EXPECT_EQ(s.other_first, 0);
  EXPECT_EQ(s.other_size, 2);
  EXPECT_EQ(s.local, 1);
  a.rank = 1;
  s = inter::sides(a);
  EXPECT_EQ(s.other_first, 2);
  EXPECT_EQ(s.other_size, 3);
  EXPECT_EQ(s.local, 1);
}

// The check has teeth: a rank keeping its own data is caught, and so is a barrier whose groups
// never talk.
TEST(CollInter, WrongSchedulesAreCaught) {
  RowCall call = make_row_call(Coll::kAllreduce, 2, 3, 7, 0, true);
  // Each rank keeps its own vector: what a group of one would get from an intracommunicator
  // allreduce, never the other group's reduction.
  auto own_data = [](Builder& b, const Args& a) { b.copy(a.recv, a.send, a.count * a.elem); };
  sim::Result r = sim::run(call.args, own_data, inter::descriptor(Coll::kAllreduce));
  EXPECT_FALSE(r.ok);

  RowCall barrier = make_row_call(Coll::kBarrier, 3, 2, 0, 0, true);
  auto groups_apart = [](Builder& b, const Args& a) {
    const inter::Sides s = inter::sides(a);
    const BufRef none = b.scratch(0);
    for (int i = 0; i < s.own_size; ++i) {
      if (i == s.local) continue;
      b.send(s.own_first + i, none, 0);
      b.recv(s.own_first + i, none, 0);
    }
  };
  r = sim::run(barrier.args, groups_apart, inter::descriptor(Coll::kBarrier));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("barrier"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace torusmpi::coll
