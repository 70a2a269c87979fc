#include "coll/sched/schedule.h"

#include <algorithm>
#include <cstdio>

namespace torusmpi::coll {

void Builder::step() {
  if (!open_) return;
  s_->step_end.push_back(static_cast<uint32_t>(s_->ops.size()));
  open_ = false;
}

BufRef Builder::scratch(uint64_t bytes) {
  uint64_t at = s_->scratch_bytes;
  s_->scratch_bytes = (at + bytes + 63) & ~uint64_t{63};
  return {Buf::kScratch, at};
}

void Builder::aggregate(AggMode mode, uint32_t number, const std::vector<int>& members, int me,
                        BufRef dst, BufRef src, uint64_t bytes, std::vector<uint64_t> parts) {
  AggGroup g;
  g.mode = mode;
  g.number = number;
  g.me = me;
  g.parts = std::move(parts);
  for (int m : members) g.members.push_back(map(m));
  s_->groups.push_back(std::move(g));
  add({OpType::kAggregate, dst.buf, src.buf, static_cast<int32_t>(s_->groups.size() - 1),
       dst.offset, src.offset, mode == AggMode::kBarrier ? 0 : bytes});
}

void Builder::finish() {
  step();
  // Within a step: sends, then receives, then copies and reductions, each in the order given
  // (messages between two ranks match in that order). The executor posts them in one pass and
  // computes while the messages travel. Sends go first because they start the travel: data
  // reaches a rank only when it polls, never while it posts, so a receive posted after the sends
  // still finds its data in place (2-rank 8 B allreduce: a posted receive, ~90 instructions, no
  // longer stands before the send). An aggregation goes out with the sends.
  auto rank = [](const Op& op) {
    return op.type == OpType::kSend || op.type == OpType::kAggregate ? 0
           : op.type == OpType::kRecv                                ? 1
                                                                     : 2;
  };
  for (size_t i = 0; i < s_->steps(); ++i) {
    std::stable_sort(s_->ops.begin() + s_->step_begin(i), s_->ops.begin() + s_->step_end[i],
                     [&](const Op& a, const Op& b) { return rank(a) < rank(b); });
  }
  uint32_t most = 0;
  s_->fans_out.assign(s_->steps(), 0);
  for (size_t i = 0; i < s_->steps(); ++i) {
    uint32_t n = 0, large_sends = 0;
    for (uint32_t k = s_->step_begin(i); k < s_->step_end[i]; ++k) {
      const Op& op = s_->ops[k];
      n += op.type == OpType::kSend || op.type == OpType::kRecv;
      large_sends += op.type == OpType::kSend && op.bytes >= kFanOutBytes;
    }
    most = std::max(most, n);
    s_->fans_out[i] = large_sends >= 2;
  }
  s_->max_step_messages = most;
}

std::string buf_text(BufRef ref) {
  static const char* const kNames[] = {"send", "recv", "scratch"};
  return std::string(kNames[static_cast<int>(ref.buf)]) + "+" + std::to_string(ref.offset);
}

std::string op_text(const Op& op) {
  char text[160];
  switch (op.type) {
    case OpType::kSend:
      std::snprintf(text, sizeof text, "send(%d, %s, %llu)", op.peer,
                    buf_text(op.src_ref()).c_str(), static_cast<unsigned long long>(op.bytes));
      break;
    case OpType::kRecv:
      std::snprintf(text, sizeof text, "recv(%d, %s, %llu)", op.peer,
                    buf_text(op.dst_ref()).c_str(), static_cast<unsigned long long>(op.bytes));
      break;
    case OpType::kAggregate:
      std::snprintf(text, sizeof text, "aggregate(group %d, %s, %s, %llu)", op.peer,
                    buf_text(op.dst_ref()).c_str(), buf_text(op.src_ref()).c_str(),
                    static_cast<unsigned long long>(op.bytes));
      break;
    case OpType::kCopy:
    case OpType::kReduce:
      std::snprintf(text, sizeof text, "%s(%s, %s, %llu)",
                    op.type == OpType::kCopy ? "copy" : "reduce", buf_text(op.dst_ref()).c_str(),
                    buf_text(op.src_ref()).c_str(), static_cast<unsigned long long>(op.bytes));
      break;
  }
  return text;
}

}  // namespace torusmpi::coll
