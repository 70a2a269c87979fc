// The two-phase engine end to end (src/io/coll_io.h), a whole group in one process: each rank's
// io::TwoPhase talks through an in-memory channel (messages matched by source and tag, in order),
// and all of them are stepped in turn until every one is over, as the progress engine would; a
// group that stops moving is a deadlock. Writes go to a real temporary file, which is then read
// with pread and compared with the expected integers; reads of that file give every rank its
// data. Swept: collective buffering enabled, disabled and automatic, 1, 2 and p aggregators,
// cb_buffer_size small enough for many rounds, a 3-D block decomposition (interleaved rows), a
// layout with holes (never written: zeros), and ranks with nothing to do.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "io/coll_io.h"

namespace torusmpi::io {
namespace {

// The messages of a group: sends are buffered (done at once), receives match in posting order.
class Net {
 public:
  struct Op {
    void* buf = nullptr;
    size_t cap = 0;
    bool done = false;
    bool failed = false;
  };
  int send(int from, int to, int tag, const void* buf, size_t bytes) {
    ops_.push_back(Op{nullptr, 0, true, false});
    auto key = std::make_tuple(from, to, tag);
    const char* b = static_cast<const char*>(buf);
    std::vector<char> msg(b, b + bytes);
    auto& w = waiting_[key];
    if (!w.empty()) {
      deliver(w.front(), msg);
      w.pop_front();
    } else {
      mail_[key].push_back(std::move(msg));
    }
    ++messages;
    return static_cast<int>(ops_.size()) - 1;
  }
  int recv(int me, int from, int tag, void* buf, size_t cap) {
    ops_.push_back(Op{buf, cap, false, false});
    int id = static_cast<int>(ops_.size()) - 1;
    auto key = std::make_tuple(from, me, tag);
    auto& m = mail_[key];
    if (!m.empty()) {
      deliver(id, m.front());
      m.pop_front();
    } else {
      waiting_[key].push_back(id);
    }
    return id;
  }
  Op& op(int id) { return ops_[static_cast<size_t>(id)]; }
  bool idle() const {
    for (const auto& [k, v] : mail_)
      if (!v.empty()) return false;
    for (const auto& [k, v] : waiting_)
      if (!v.empty()) return false;
    return true;
  }
  int64_t messages = 0;

 private:
  void deliver(int id, const std::vector<char>& msg) {
    Op& o = op(id);
    if (msg.size() != o.cap) o.failed = true;  // the engine knows every size exactly
    std::memcpy(o.buf, msg.data(), std::min(msg.size(), o.cap));
    o.done = true;
  }
  std::deque<Op> ops_;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<char>>> mail_;
  std::map<std::tuple<int, int, int>, std::deque<int>> waiting_;
};

class MemChannel final : public Channel {
 public:
  MemChannel(Net* net, int rank, int size) : net_(net), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int send(int dest, int tag, const void* buf, size_t bytes) override {
    return net_->send(rank_, dest, tag, buf, bytes);
  }
  int recv(int source, int tag, void* buf, size_t bytes) override {
    return net_->recv(rank_, source, tag, buf, bytes);
  }
  bool test(int id, bool* failed, std::string* error) override {
    const Net::Op& o = net_->op(id);
    if (!o.done) return false;
    if (o.failed) {
      *failed = true;
      *error = "message of the wrong size";
    }
    return true;
  }
  void wait(int id) override { EXPECT_TRUE(net_->op(id).done) << "a wait that would block"; }

 private:
  Net* net_;
  int rank_, size_;
};

int32_t value(int64_t g, int seed) { return static_cast<int32_t>(g * 7 + seed); }

struct Group {
  std::vector<std::vector<Extent>> extents;  // per rank, bytes, whole int32s
  int64_t file_bytes = 0;                    // the highest end
};

// A 3-D block decomposition of px x py x pz blocks of l^3 ints.
Group blocks(int px, int py, int pz, int l) {
  Group g;
  int nx = px * l, ny = py * l, nz = pz * l;
  for (int r = 0; r < px * py * pz; ++r) {
    int cx = r / (py * pz), cy = r / pz % py, cz = r % pz;
    std::vector<Extent> e;
    for (int x = 0; x < l; ++x)
      for (int y = 0; y < l; ++y) {
        int64_t i = (static_cast<int64_t>(cx * l + x) * ny + cy * l + y) * nz + cz * l;
        e.push_back(Extent{i * 4, int64_t{l} * 4});
      }
    g.extents.push_back(e);
  }
  g.file_bytes = int64_t{nx} * ny * nz * 4;
  return g;
}

// Blocks of b ints dealt round-robin with a gap of b ints after each; odd ranks have nothing when
// `empty_odd`.
Group holes(int p, int b, int k, bool empty_odd) {
  Group g;
  g.extents.resize(static_cast<size_t>(p));
  for (int j = 0; j < k; ++j)
    for (int r = 0; r < p; ++r) {
      if (empty_odd && r % 2 == 1) continue;
      int64_t i = (int64_t{j} * p + r) * 2 * b;
      g.extents[r].push_back(Extent{i * 4, int64_t{b} * 4});
      g.file_bytes = std::max(g.file_bytes, (i + b) * 4);
    }
  return g;
}

// Runs every rank's access to the end; false on deadlock.
bool run_group(std::vector<std::unique_ptr<TwoPhase>>& ops) {
  for (int sweep = 0; sweep < 1000000; ++sweep) {
    bool all = true;
    for (auto& op : ops) all = op->step() && all;
    if (all) return true;
  }
  return false;
}

class TmpFile {
 public:
  TmpFile() {
    const char* t = std::getenv("TMPDIR");
    path_ = std::string(t != nullptr ? t : "/tmp") + "/two_phase_test.XXXXXX";
    fd_ = mkstemp(path_.data());
  }
  ~TmpFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  int fd() const { return fd_; }

 private:
  std::string path_;
  int fd_;
};

// Writes the group's data with the engine, checks the file with pread, reads it back with the
// engine and checks every rank's buffer. Returns the file calls of all ranks (write, read).
std::pair<int64_t, int64_t> round_trip(const Group& g, CbMode mode, std::vector<int> aggs,
                                       int64_t cb, int seed, bool expect_aggregated,
                                       std::vector<Scratch>* scratch = nullptr) {
  const int p = static_cast<int>(g.extents.size());
  TmpFile file;
  EXPECT_GE(file.fd(), 0);
  Net net;
  std::vector<std::unique_ptr<MemChannel>> ch;
  for (int r = 0; r < p; ++r) ch.push_back(std::make_unique<MemChannel>(&net, r, p));
  // Each rank's data: its ints in extent order, value of their global index.
  std::vector<std::vector<int32_t>> data(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r)
    for (const Extent& e : g.extents[r])
      for (int64_t b = 0; b < e.len; b += 4) data[r].push_back(value((e.off + b) / 4, seed));
  std::pair<int64_t, int64_t> calls{0, 0};
  for (int write = 1; write >= 0; --write) {
    if (!write) {
      for (auto& d : data) std::fill(d.begin(), d.end(), -1);
    }
    std::vector<std::unique_ptr<TwoPhase>> ops;
    for (int r = 0; r < p; ++r) {
      TwoPhaseArgs a;
      a.channel = ch[r].get();
      a.tag = 40;
      a.fd = file.fd();
      a.write = write == 1;
      a.extents = g.extents[r];
      a.data = reinterpret_cast<char*>(data[r].data());
      a.aggregators = aggs;
      a.cb_buffer_size = cb;
      a.mode = mode;
      if (scratch != nullptr) a.scratch = &(*scratch)[r];
      ops.push_back(std::make_unique<TwoPhase>(a));
    }
    EXPECT_TRUE(run_group(ops)) << "deadlock";
    EXPECT_TRUE(net.idle()) << "a message was left unreceived";
    for (int r = 0; r < p; ++r) {
      const TwoPhaseResult& res = ops[r]->result();
      EXPECT_TRUE(res.ok) << res.what;
      EXPECT_EQ(res.transferred, static_cast<int64_t>(data[r].size() * 4)) << "rank " << r;
      EXPECT_EQ(res.aggregated, expect_aggregated);
      (write ? calls.first : calls.second) += res.file_calls;
    }
    if (write) {
      // The file: every int written where it belongs, holes zero, nothing past the end.
      std::vector<int32_t> want(static_cast<size_t>(g.file_bytes / 4), 0);
      for (int r = 0; r < p; ++r)
        for (const Extent& e : g.extents[r])
          for (int64_t b = 0; b < e.len; b += 4)
            want[(e.off + b) / 4] = value((e.off + b) / 4, seed);
      std::vector<int32_t> got(want.size() + 16, -5);
      ssize_t n = pread(file.fd(), got.data(), got.size() * 4, 0);
      EXPECT_EQ(n, g.file_bytes);
      got.resize(want.size());
      EXPECT_EQ(got, want);
    } else {
      for (int r = 0; r < p; ++r) {
        size_t i = 0;
        bool same = true;
        for (const Extent& e : g.extents[r])
          for (int64_t b = 0; b < e.len; b += 4)
            same = same && data[r][i++] == value((e.off + b) / 4, seed);
        EXPECT_TRUE(same) << "rank " << r << " read wrong data";
      }
    }
  }
  return calls;
}

TEST(IoTwoPhase, BlockDecompositionEveryModeAndAggregatorCount) {
  Group g = blocks(2, 2, 1, 16);  // 4 ranks, rows of 16 ints interleaved
  int seed = 1;
  for (std::vector<int> aggs :
       {std::vector<int>{0}, std::vector<int>{0, 2}, std::vector<int>{0, 1, 2, 3}}) {
    for (int64_t cb : {int64_t{256}, int64_t{4096}, int64_t{1} << 20}) {
      SCOPED_TRACE(testing::Message() << aggs.size() << " aggregators, cb " << cb);
      auto calls = round_trip(g, CbMode::kEnable, aggs, cb, ++seed, true);
      // Full coverage: one pwrite per round, one pread per round.
      Domains d = split_domains(0, g.file_bytes, static_cast<int>(aggs.size()), cb);
      int64_t rounds = 0;
      for (int a = 0; a < d.count(); ++a) rounds += d.rounds(a);
      EXPECT_EQ(calls.first, rounds);
      EXPECT_EQ(calls.second, rounds);
      round_trip(g, CbMode::kAutomatic, aggs, cb, ++seed, true);  // interleaved: aggregates
    }
  }
  // Disabled: each rank its own rows; a rank's rows of one x plane are adjacent (the z extent is
  // whole), so one call per plane: 16 per rank.
  auto calls = round_trip(g, CbMode::kDisable, {0}, 4096, 99, false);
  EXPECT_EQ(calls.first, 4 * 16);
  // 2 x 2 x 2: rows of 16 of 32 ints, none adjacent: one call per row.
  Group g8 = blocks(2, 2, 2, 16);
  calls = round_trip(g8, CbMode::kDisable, {0}, 4096, 98, false);
  EXPECT_EQ(calls.first, 8 * 16 * 16);
  calls = round_trip(g8, CbMode::kEnable, {0, 4}, 1 << 16, 97, true);
  EXPECT_EQ(calls.first, 2);  // 128 KiB in two domains of one round each
}

TEST(IoTwoPhase, HolesAndEmptyRanks) {
  int seed = 200;
  for (bool empty_odd : {false, true}) {
    Group g = holes(5, 3, 11, empty_odd);
    for (std::vector<int> aggs : {std::vector<int>{0}, std::vector<int>{1, 3}}) {
      for (int64_t cb : {int64_t{64}, int64_t{1000}, int64_t{1} << 20}) {
        SCOPED_TRACE(testing::Message() << "empty odd " << empty_odd << ", " << aggs.size()
                                        << " aggregators, cb " << cb);
        round_trip(g, CbMode::kEnable, aggs, cb, ++seed, true);
        round_trip(g, CbMode::kDisable, aggs, cb, ++seed, false);
      }
    }
  }
}

TEST(IoTwoPhase, AutomaticLeavesSeparateRangesAlone) {
  // Each rank one contiguous block of its own: nothing interleaves, nothing to aggregate.
  Group g;
  for (int r = 0; r < 3; ++r) g.extents.push_back({Extent{r * 4000, 4000}});
  g.file_bytes = 12000;
  auto calls = round_trip(g, CbMode::kAutomatic, {0}, 1 << 20, 7, false);
  EXPECT_EQ(calls.first, 3);
  EXPECT_EQ(calls.second, 3);
  // Writes in calls of at most cb_buffer_size bytes (4000 = 3 x 1024 + 928); reads whole.
  calls = round_trip(g, CbMode::kAutomatic, {0}, 1024, 8, false);
  EXPECT_EQ(calls.first, 3 * 4);
  EXPECT_EQ(calls.second, 3);
}

TEST(IoTwoPhase, ScratchKeptFromCallToCall) {
  // Each rank keeps its buffers (as a file does for its blocking calls): calls of other sizes,
  // rounds and holes find them as the last call left them.
  std::vector<Scratch> scratch(5);
  int seed = 300;
  for (int64_t cb : {int64_t{1} << 16, int64_t{512}, int64_t{1} << 20, int64_t{64}}) {
    round_trip(blocks(5, 1, 1, 8), CbMode::kEnable, {0, 3}, cb, ++seed, true, &scratch);
    round_trip(holes(5, 3, 11, true), CbMode::kEnable, {1}, cb, ++seed, true, &scratch);
  }
}

TEST(IoTwoPhase, ARefusingRankFailsEveryRankAndNothingMoves) {
  // One rank's arguments were wrong (an MPI class, 13 here): every rank's call ends, failed with
  // that class and rank, no byte is written, and no message (the lists the others sent the
  // aggregators) is left behind; in every mode, refused by an aggregator or by another rank.
  Group g = blocks(2, 2, 1, 16);
  for (CbMode mode : {CbMode::kEnable, CbMode::kAutomatic, CbMode::kDisable}) {
    for (int refuser : {0, 1, 3}) {
      SCOPED_TRACE(testing::Message()
                   << "mode " << static_cast<int>(mode) << ", rank " << refuser << " refuses");
      TmpFile file;
      Net net;
      std::vector<std::unique_ptr<MemChannel>> ch;
      std::vector<std::vector<char>> data;
      std::vector<std::unique_ptr<TwoPhase>> ops;
      for (int r = 0; r < 4; ++r) {
        ch.push_back(std::make_unique<MemChannel>(&net, r, 4));
        int64_t bytes = 0;
        for (const Extent& e : g.extents[r]) bytes += e.len;
        data.emplace_back(static_cast<size_t>(bytes), 'x');
      }
      for (int r = 0; r < 4; ++r) {
        TwoPhaseArgs a;
        a.channel = ch[r].get();
        a.tag = 8;
        a.fd = file.fd();
        a.write = true;
        if (r == refuser) {
          a.refused = 13;
        } else {
          a.extents = g.extents[r];
          a.data = data[r].data();
        }
        a.aggregators = {0, 2};
        a.mode = mode;
        ops.push_back(std::make_unique<TwoPhase>(a));
      }
      EXPECT_TRUE(run_group(ops)) << "deadlock";
      EXPECT_TRUE(net.idle()) << "a message was left unreceived";
      for (int r = 0; r < 4; ++r) {
        const TwoPhaseResult& res = ops[r]->result();
        EXPECT_FALSE(res.ok) << "rank " << r;
        EXPECT_EQ(res.refused, 13) << "rank " << r;
        EXPECT_EQ(res.refused_by, refuser) << "rank " << r;
        EXPECT_EQ(res.file_calls, 0) << "rank " << r;
      }
      struct stat st;
      ASSERT_EQ(fstat(file.fd(), &st), 0);
      EXPECT_EQ(st.st_size, 0);
    }
  }
}

TEST(IoTwoPhase, ReadsCountTheBytesBeforeTheEndOfFile) {
  // A 1000-byte file; rank 0 reads [0, 600), rank 1 [600, 1400) in two extents, rank 2 [1200,
  // 1300): counts 600, 400 and 0, aggregated or not, the bytes that are there read right.
  TmpFile file;
  std::vector<char> content(1000);
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 + 1);
  ASSERT_EQ(pwrite(file.fd(), content.data(), content.size(), 0), 1000);
  std::vector<std::vector<Extent>> ext = {
      {Extent{0, 600}}, {Extent{600, 300}, Extent{900, 500}}, {Extent{1200, 100}}};
  for (CbMode mode : {CbMode::kDisable, CbMode::kEnable}) {
    SCOPED_TRACE(testing::Message() << "mode " << static_cast<int>(mode));
    Net net;
    std::vector<std::unique_ptr<MemChannel>> ch;
    std::vector<std::vector<char>> data;
    std::vector<std::unique_ptr<TwoPhase>> ops;
    for (int r = 0; r < 3; ++r) {
      ch.push_back(std::make_unique<MemChannel>(&net, r, 3));
      int64_t bytes = 0;
      for (const Extent& e : ext[r]) bytes += e.len;
      data.emplace_back(static_cast<size_t>(bytes), 'z');
    }
    for (int r = 0; r < 3; ++r) {
      TwoPhaseArgs a;
      a.channel = ch[r].get();
      a.tag = 16;
      a.fd = file.fd();
      a.extents = ext[r];
      a.data = data[r].data();
      a.aggregators = {0, 2};
      a.cb_buffer_size = 256;
      a.mode = mode;
      ops.push_back(std::make_unique<TwoPhase>(a));
    }
    EXPECT_TRUE(run_group(ops)) << "deadlock";
    EXPECT_TRUE(net.idle());
    const int64_t want[3] = {600, 400, 0};
    for (int r = 0; r < 3; ++r) {
      EXPECT_TRUE(ops[r]->result().ok) << ops[r]->result().what;
      EXPECT_EQ(ops[r]->result().aggregated, mode == CbMode::kEnable);
      EXPECT_EQ(ops[r]->result().transferred, want[r]) << "rank " << r;
    }
    EXPECT_EQ(std::string(data[0].data(), 600), std::string(content.data(), 600));
    EXPECT_EQ(std::string(data[1].data(), 400), std::string(content.data() + 600, 400));
  }
}

TEST(IoTwoPhase, NobodyMovesAByte) {
  Group g;
  g.extents.resize(3);
  round_trip(g, CbMode::kEnable, {0}, 4096, 3, false);
}

}  // namespace
}  // namespace torusmpi::io
