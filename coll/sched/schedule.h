// A schedule: one rank's part of one collective, as ordered steps of five kinds of op. Builders
// (one per algorithm, coll/<collective>/<collective>_<algorithm>.cc) emit it; the executor
// (exec.h) runs it over the pml, the simulator (coll/sim) runs every rank's at once to check and
// time it. Buffers are symbolic (BufRef), so a schedule is built once per shape and cached.
//
//   step 0: send(1, recv+0, 8)  recv(1, scratch+0, 8)     ops of a step are independent: they
//   step 1: reduce(recv+0, scratch+0, 8)                  may run in any order, or at once
//   step 2: ...                                           a step starts when the one before ended
//
// Messages between two ranks match in the order each side lists them (the pml is FIFO per pair
// and every message of one call carries the call's tag), so a builder needs no tags of its own.
#ifndef TORUSMPI_COLL_SCHED_SCHEDULE_H_
#define TORUSMPI_COLL_SCHED_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "coll/coll.h"

namespace torusmpi::coll {

enum class OpType : uint8_t {
  kSend,    // bytes at src to peer
  kRecv,    // bytes from peer into dst
  kCopy,    // dst <- src
  kReduce,  // dst <- src op dst, elementwise (MPI_Reduce_local's order: src is the left operand)
  // Through the in-network aggregation switch (pml/ina), among the members of a group (one per
  // instance, this rank among them): dst <- every member's src, reduced (kReduce mode: bytes each)
  // or placed one after another in member order (kGather: bytes each, dst holds members x bytes),
  // or nothing (kBarrier: every member has arrived). `peer` indexes Schedule::groups. src and dst
  // never overlap: a failed aggregation is done again from src over the network (exec.cc).
  kAggregate,
};

// A switch group of a kAggregate op: its members (ranks of the communicator, in source order),
// this rank's index among them, what the switch does, and the group's number (the same at every
// member; the client makes the switch's group id of it and the communicator's).
// kReduceScatter: a reduction whose result each member needs only its part of (parts: each
// member's bytes, in member order, one after another in the vector): the switch sends each member
// its part alone.
enum class AggMode : uint8_t { kReduce, kReduceScatter, kGather, kBarrier };
// Members one aggregation group may have (the switch's bitmaps: pml/ina/protocol.h).
constexpr int kMaxAggregationMembers = 256;
// A failed aggregation is finished over the network (coll/sched/rescue.h): each member sends every
// other a request of this many bytes, and answers each request with a header of this many bytes
// and then its bytes (the simulator prices the same messages).
constexpr uint64_t kRescueRequestBytes = 24;
constexpr uint64_t kRescueAnswerBytes = 16;
struct AggGroup {
  AggMode mode = AggMode::kReduce;
  uint32_t number = 0;
  int32_t me = 0;
  std::vector<int32_t> members;
  std::vector<uint64_t> parts;  // kReduceScatter

  // Where member m's part of a kReduceScatter's vector starts.
  uint64_t part_at(int m) const {
    uint64_t at = 0;
    for (int i = 0; i < m; ++i) at += parts[i];
    return at;
  }
};

struct Op {
  OpType type;
  Buf dst_buf;
  Buf src_buf;
  int32_t peer;  // send, recv: a rank of the communicator
  uint64_t dst;
  uint64_t src;
  uint64_t bytes;

  BufRef dst_ref() const { return {dst_buf, dst}; }
  BufRef src_ref() const { return {src_buf, src}; }
};

// A send of at least this many bytes among others of its step (see Schedule::fans_out).
constexpr uint64_t kFanOutBytes = uint64_t{32} << 10;

struct Schedule {
  std::vector<Op> ops;
  std::vector<uint32_t> step_end;  // step i holds ops [step_end[i-1], step_end[i])
  uint64_t scratch_bytes = 0;
  uint32_t max_step_messages = 0;  // the most sends and receives one step has in flight
  // Per step: whether it sends kFanOutBytes or more to each of two peers or more at once (the
  // executor then sends those by rendezvous when ranks share cores: exec.cc).
  std::vector<uint8_t> fans_out;
  std::vector<AggGroup> groups;  // of the kAggregate ops

  size_t steps() const { return step_end.size(); }
  uint32_t step_begin(size_t i) const { return i == 0 ? 0 : step_end[i - 1]; }
};

// "send(3, recv+128, 64)" and friends, for messages and tests.
std::string op_text(const Op& op);
std::string buf_text(BufRef ref);

class Builder {
 public:
  explicit Builder(Schedule* s) : s_(s) {}
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // Peers are ranks of the group the builder works in (see Group); zero-byte messages are real
  // messages (a barrier is made of them).
  void send(int peer, BufRef src, uint64_t bytes) {
    add({OpType::kSend, src.buf, src.buf, map(peer), 0, src.offset, bytes});
  }
  void recv(int peer, BufRef dst, uint64_t bytes) {
    add({OpType::kRecv, dst.buf, dst.buf, map(peer), dst.offset, 0, bytes});
  }
  // Copies and reductions of nothing are dropped, and so is a copy onto itself.
  void copy(BufRef dst, BufRef src, uint64_t bytes) {
    if (bytes == 0 || (dst.buf == src.buf && dst.offset == src.offset)) return;
    add({OpType::kCopy, dst.buf, src.buf, -1, dst.offset, src.offset, bytes});
  }
  void reduce(BufRef inout, BufRef in, uint64_t bytes) {
    if (bytes == 0) return;
    add({OpType::kReduce, inout.buf, in.buf, -1, inout.offset, in.offset, bytes});
  }
  // Aggregation through the switch among `members` (ranks of the builder's group; this rank is
  // members[me]), `bytes` from each (see OpType::kAggregate); `number` tells the groups of one
  // schedule apart. A kBarrier moves nothing, and is an op all the same.
  void aggregate(AggMode mode, uint32_t number, const std::vector<int>& members, int me, BufRef dst,
                 BufRef src, uint64_t bytes, std::vector<uint64_t> parts = {});
  // Ends the current step; a step with no op is not one.
  void step();

  // Fresh scratch space of `bytes` bytes, 64-byte aligned, for the whole schedule.
  BufRef scratch(uint64_t bytes);

  // Runs a builder on a subset of the ranks: while a Group lives, peers given to the builder are
  // indices into `ranks` (ranks of the enclosing group). Groups nest.
  class Group {
   public:
    Group(Builder& b, const std::vector<int>& ranks) : b_(b), saved_(b.group_) {
      for (int r : ranks) mapped_.push_back(b.map(r));
      b.group_ = &mapped_;
    }
    ~Group() { b_.group_ = saved_; }
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;

   private:
    Builder& b_;
    const std::vector<int>* saved_;
    std::vector<int> mapped_;
  };

  // Closes the last step and works out the schedule's totals.
  void finish();

 private:
  void add(const Op& op) {
    s_->ops.push_back(op);
    open_ = true;
  }
  int map(int peer) const { return group_ == nullptr ? peer : (*group_)[peer]; }

  Schedule* s_;
  bool open_ = false;
  const std::vector<int>* group_ = nullptr;
};

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_SCHED_SCHEDULE_H_
