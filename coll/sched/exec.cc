#include "coll/sched/exec.h"

#include <cstring>

#include "core/flight.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "device/device.h"

namespace torusmpi::coll {
namespace {

// Never destroyed: runs may be released by MPI calls made from atexit handlers.
std::vector<Exec*>& g_pool = *new std::vector<Exec*>;
std::vector<Exec*>& g_active = *new std::vector<Exec*>;
int g_poll_id = 0;

// Scratch kept by a pooled run beyond this goes to the spare below when released.
constexpr size_t kKeepScratch = size_t{4} << 20;

// The largest host scratch a released run gave up, for the next large run. Fresh memory costs a
// page fault per 4 KiB page when first written: on a virtual machine 48 MiB of fresh scratch per
// call made a 64 MiB allreduce ten times slower than a 32 MiB one. One spare per process: what is
// kept is the largest scratch a call needed, as the caller's own buffers are kept.
std::unique_ptr<uint8_t[]>& g_spare = *new std::unique_ptr<uint8_t[]>;
size_t g_spare_bytes = 0;

// The device's reduction kernels run the host kernel on the device layer's view of the bytes.
void apply_reduction(void* ctx, void* inout, const void* in, size_t count) {
  static_cast<const Reduction*>(ctx)->apply(inout, in, count);
}

// What the switch makes of a predefined reduction (kNone: it cannot).
pml::ina::ElemType agg_elem(Elem e) {
  switch (e) {
    case Elem::kI32:
      return pml::ina::ElemType::kInt32;
    case Elem::kU32:
      return pml::ina::ElemType::kUint32;
    case Elem::kI64:
      return pml::ina::ElemType::kInt64;
    case Elem::kU64:
      return pml::ina::ElemType::kUint64;
    case Elem::kF32:
      return pml::ina::ElemType::kFloat32;
    case Elem::kF64:
      return pml::ina::ElemType::kFloat64;
    case Elem::kBfloat16:
      return pml::ina::ElemType::kBfloat16;
    case Elem::kFloat16:
      return pml::ina::ElemType::kFloat16;
    default:
      return pml::ina::ElemType::kNone;
  }
}
pml::ina::AggOp agg_op(ReduceOp o) {
  switch (o) {
    case ReduceOp::kSum:
      return pml::ina::AggOp::kSum;
    case ReduceOp::kMin:
      return pml::ina::AggOp::kMin;
    case ReduceOp::kMax:
      return pml::ina::AggOp::kMax;
    case ReduceOp::kBand:
      return pml::ina::AggOp::kBand;
    case ReduceOp::kBor:
      return pml::ina::AggOp::kBor;
    case ReduceOp::kBxor:
      return pml::ina::AggOp::kBxor;
    default:
      return pml::ina::AggOp::kNone;
  }
}

// Bytes of an aggregation's result, and of the largest answer to it (result or contribution).
size_t result_bytes(const Op& op, const AggGroup& g) {
  return g.mode == AggMode::kGather    ? op.bytes * g.members.size()
         : g.mode == AggMode::kBarrier ? 0
                                       : op.bytes;
}
size_t contribution_bytes(const Op& op, const AggGroup& g) {
  return g.mode == AggMode::kBarrier ? 0 : op.bytes;
}

}  // namespace

int poll_runs(void*) {
  int events = 0;
  for (size_t i = 0; i < g_active.size();) {
    Exec* e = g_active[i];
    if (e->pending_ == 0 && e->advance()) {
      g_active[i] = g_active.back();
      g_active.pop_back();
      e->listed_ = false;
      progress::add_work(-1);
      ++events;
      if (e->on_complete_ != nullptr) e->on_complete_(e, e->on_complete_ctx_);
    } else {
      ++i;
    }
  }
  return events;
}

void exec_init() {
  if (g_poll_id == 0) g_poll_id = progress::add(poll_runs, nullptr);
}

void exec_finalize() {
  rescue::finalize();
  if (g_poll_id != 0) progress::remove(g_poll_id);
  g_poll_id = 0;
  g_spare.reset();
  g_spare_bytes = 0;
  for (Exec* e : g_pool) {
    if (e->device_scratch_ != nullptr) device::free(e->device_scratch_);
    e->device_scratch_ = nullptr;
    e->device_scratch_bytes_ = 0;
    if (e->fallback_device_ != nullptr) device::free(e->fallback_device_);
    e->fallback_device_ = nullptr;
  }
}

size_t exec_active() { return g_active.size(); }

Exec* Exec::make() {
  Exec* e;
  if (g_pool.empty()) {
    e = new Exec;
  } else {
    e = g_pool.back();
    g_pool.pop_back();
  }
  return e;
}

void Exec::bind(const Schedule* s, const RunArgs& args) {
  s_ = s;
  args_ = args;
  step_ = 0;
  pending_ = 0;
  __atomic_store_n(&done_, false, __ATOMIC_RELAXED);
  error_ = Status::kOk;
  blocking_ = false;
  on_device_ = device::in_device_range(args.send) || device::in_device_range(args.recv);
  on_complete_ = nullptr;
  failed_.clear();
  fallback_posted_ = false;
  // A run that ended in its fallback's failure left its space.
  if (fallback_device_ != nullptr) device::free(fallback_device_);
  fallback_device_ = nullptr;
  if (reqs_.size() < s->max_step_messages) reqs_.resize(s->max_step_messages);
  base_[static_cast<int>(Buf::kSend)] = static_cast<uint8_t*>(const_cast<void*>(args.send));
  base_[static_cast<int>(Buf::kRecv)] = static_cast<uint8_t*>(args.recv);
  base_[static_cast<int>(Buf::kScratch)] = scratch_for(s->scratch_bytes);
}

uint8_t* Exec::grow_scratch(size_t bytes) {
  if (bytes > 0 && on_device_) {
    if (device_scratch_bytes_ >= bytes) return static_cast<uint8_t*>(device_scratch_);
    if (device_scratch_ != nullptr) device::free(device_scratch_);
    device_scratch_ = nullptr;
    device_scratch_bytes_ = 0;
    if (device::alloc(bytes, &device_scratch_) == Status::kOk) {
      device_scratch_bytes_ = bytes;
      return static_cast<uint8_t*>(device_scratch_);
    }
    // HBM is full: host scratch, whose device bytes count as staged.
    log::warn("collective: no %zu B of device memory for scratch: host memory used instead", bytes);
  }
  if (scratch_bytes_ < bytes) {
    if (g_spare_bytes >= bytes) {
      std::swap(scratch_, g_spare);
      std::swap(scratch_bytes_, g_spare_bytes);
    } else {
      scratch_.reset(new uint8_t[bytes]);
      scratch_bytes_ = bytes;
    }
  }
  return scratch_.get();
}

void Exec::release(Exec* e) {
  e->keep_.reset();
  if (e->scratch_bytes_ > kKeepScratch) {
    if (e->scratch_bytes_ > g_spare_bytes) {
      g_spare = std::move(e->scratch_);
      g_spare_bytes = e->scratch_bytes_;
    }
    e->scratch_.reset();
    e->scratch_bytes_ = 0;
  }
  if (e->device_scratch_bytes_ > kKeepScratch) {
    device::free(e->device_scratch_);
    e->device_scratch_ = nullptr;
    e->device_scratch_bytes_ = 0;
  }
  g_pool.push_back(e);
}

void Exec::message_done(pml::Request* r) {
  auto* e = static_cast<Exec*>(r->user);
  if (r->error != Status::kOk && e->error_ == Status::kOk) e->error_ = r->error;
  --e->pending_;
}

void Exec::reduce_bytes(void* inout, const void* in, size_t bytes) {
  if (__builtin_expect(device::in_device_range(inout) || device::in_device_range(in), 0)) {
    device::reduce(apply_reduction, const_cast<Reduction*>(&args_.reduce), inout, in,
                   bytes / args_.elem, args_.elem);
  } else {
    args_.reduce.apply(inout, in, bytes / args_.elem);
  }
}

bool in_network(const Reduction* r) {
  return pml::ina::in_use() &&
         (r == nullptr || pml::ina::supports(agg_elem(r->elem), agg_op(r->op)));
}

void Exec::start_aggregate(uint32_t k) {
  const Op& op = s_->ops[k];
  const AggGroup& g = s_->groups[op.peer];
  if (aggs_used_ == aggs_.size()) aggs_.emplace_back();
  pml::ina::Aggregation& a = aggs_[aggs_used_++];
  a.group = group_of(k);
  a.call = call_of(k);
  // Members that a dying switch leaves without a result ask the others (rescue.h).
  if (g.members.size() > 1) rescue::listen(*args_.comm);
  a.sources = static_cast<uint16_t>(g.members.size());
  a.source = static_cast<uint16_t>(g.me);
  a.parts = nullptr;
  switch (g.mode) {
    case AggMode::kReduceScatter:
      a.parts = g.parts.data();
      [[fallthrough]];
    case AggMode::kReduce:
      a.elem = agg_elem(args_.reduce.elem);
      a.op = agg_op(args_.reduce.op);
      break;
    case AggMode::kGather:
      a.elem = pml::ina::ElemType::kBytes;
      a.op = pml::ina::AggOp::kGather;
      break;
    case AggMode::kBarrier:
      a.elem = pml::ina::ElemType::kBytes;
      a.op = pml::ina::AggOp::kBarrier;
      break;
  }
  // The NIC reads and writes device memory where it is (its DMA view): no host copy.
  a.src = static_cast<const uint8_t*>(device::dma_view(resolve(op.src_buf, op.src)));
  a.dst = static_cast<uint8_t*>(device::dma_view(resolve(op.dst_buf, op.dst)));
  a.bytes = op.bytes;
  a.on_complete = aggregate_done;
  a.user = this;
  ++pending_;
  // start() says why it could not (the switch is gone); a pooled aggregation keeps no old text.
  if (!pml::ina::supports(a.elem, a.op)) {
    a.error = Status::kErrTimeout;
    a.why = "the switch cannot aggregate this op and type";
    aggregate_done(&a);
  } else if (pml::ina::start(&a) != Status::kOk) {
    aggregate_done(&a);
  }
}

void Exec::aggregate_done(pml::ina::Aggregation* a) {
  auto* e = static_cast<Exec*>(a->user);
  if (a->error != Status::kOk) {
    const uint32_t k = static_cast<uint32_t>(a->call & 0xffffff);
    e->failed_.push_back(k);
    pml::ina::note_fallback();
    TORUSMPI_DEBUG(kSelect,
                   "switch aggregation of %llu B among %u members: %s; done over the "
                   "network instead",
                   static_cast<unsigned long long>(a->bytes), a->sources, a->why.c_str());
  } else {
    rescue::settled(a->group, a->call);  // members that asked before the result came
  }
  --e->pending_;
}

// The switch's id of op k's group: the communicator's collective context and the group's number,
// the same at every member.
uint64_t Exec::group_of(uint32_t k) const {
  return pml::ina::group_id(args_.comm->coll_context(), s_->groups[s_->ops[k].peer].number);
}

// The step's failed aggregations (rescue.h): this member offers its contribution, asks every
// other member, and waits for an answer from each.
void Exec::post_fallback() {
  const uint32_t context = args_.comm->coll_context();
  size_t msgs = 0, answers = 0, temp = 0;
  for (uint32_t k : failed_) {
    const AggGroup& g = s_->groups[s_->ops[k].peer];
    const size_t others = g.members.size() - 1;
    msgs += 3 * others;
    answers += others;
    temp += result_bytes(s_->ops[k], g) * others;
  }
  fallback_reqs_.assign(msgs, pml::Request{});
  asks_.assign(failed_.size(), rescue::Request{});
  answers_.assign(answers, rescue::Answer{});
  uint8_t* base = nullptr;
  if (temp > 0 && on_device_ && device::alloc(temp, &fallback_device_) == Status::kOk) {
    base = static_cast<uint8_t*>(fallback_device_);
  } else if (temp > 0) {
    fallback_host_.resize(temp);
    base = fallback_host_.data();
  }
  pml::Request* req = fallback_reqs_.data();
  rescue::Answer* answer = answers_.data();
  pending_ = 1;
  fallback_posted_ = true;
  auto post = [&](bool send, int member, void* buf, size_t bytes, int tag) {
    req->user = this;
    req->on_complete = message_done;
    ++pending_;
    const Status st = send ? pml::isend(*args_.comm, context, buf, bytes, member, tag,
                                        pml::SendMode::kStandard, req)
                           : pml::irecv(*args_.comm, context, buf, bytes, member, tag, req);
    ++req;
    if (st != Status::kOk) {
      --pending_;
      if (error_ == Status::kOk) error_ = st;
    }
  };
  for (size_t i = 0; i < failed_.size(); ++i) {
    const uint32_t k = failed_[i];
    const Op& op = s_->ops[k];
    const AggGroup& g = s_->groups[op.peer];
    const size_t slot = result_bytes(op, g);
    asks_[i] = rescue::Request{group_of(k), call_of(k), args_.tag};
    rescue::offer(asks_[i].group, asks_[i].call, resolve(op.src_buf, op.src),
                  contribution_bytes(op, g));
    const int n = static_cast<int>(g.members.size());
    for (int m = 0; m < n; ++m) {
      if (m == g.me) continue;
      post(false, g.members[m], answer++, sizeof(rescue::Answer), args_.tag);
      post(false, g.members[m], base, slot, args_.tag);
      base += slot;
    }
    for (int m = 0; m < n; ++m) {
      if (m != g.me) post(true, g.members[m], &asks_[i], sizeof(rescue::Request), rescue::kTag);
    }
  }
  --pending_;
}

// Uses the answers once every member that failed too has been answered (false until then): a
// result from anyone, else every contribution, reduced in member order.
bool Exec::combine_fallback() {
  std::vector<int> askers;
  const rescue::Answer* answer = answers_.data();
  for (size_t i = 0; i < failed_.size(); ++i) {
    const AggGroup& g = s_->groups[s_->ops[failed_[i]].peer];
    askers.clear();
    for (int m = 0, o = 0; m < static_cast<int>(g.members.size()); ++m) {
      if (m == g.me) continue;
      if (answer[o++].kind == rescue::Kind::kContribution) askers.push_back(g.members[m]);
    }
    answer += g.members.size() - 1;
    if (!rescue::finished(asks_[i].group, asks_[i].call, askers.data(), askers.size()))
      return false;
  }
  uint8_t* base =
      fallback_device_ != nullptr ? static_cast<uint8_t*>(fallback_device_) : fallback_host_.data();
  answer = answers_.data();
  for (size_t i = 0; i < failed_.size() && error_ == Status::kOk; ++i) {
    const Op& op = s_->ops[failed_[i]];
    const AggGroup& g = s_->groups[op.peer];
    const size_t slot = result_bytes(op, g), n = g.members.size();
    const uint8_t* src = resolve(op.src_buf, op.src);
    uint8_t* dst = resolve(op.dst_buf, op.dst);
    const uint8_t* result = nullptr;
    for (size_t o = 0; o + 1 < n; ++o) {
      const rescue::Kind kind = answer[o].kind;
      const size_t want =
          kind == rescue::Kind::kResult ? slot
          : kind == rescue::Kind::kContribution || kind == rescue::Kind::kKeptContribution
              ? contribution_bytes(op, g)
              : SIZE_MAX;
      const int member = g.members[o < static_cast<size_t>(g.me) ? o : o + 1];
      if (answer[o].kind == rescue::Kind::kGone) {
        log::warn(
            "collective: the switch died leaving this rank without a result that rank %d "
            "had already forgotten (TORUSMPI_SWITCH_KEEP=%zu B is too small)",
            member, static_cast<size_t>(params::switch_keep()));
        error_ = Status::kErrTimeout;
      } else if (answer[o].bytes != want) {
        log::warn("collective: rank %d answered with %llu B instead of %zu B", member,
                  static_cast<unsigned long long>(answer[o].bytes), want);
        error_ = Status::kErrInternal;
      } else if (answer[o].kind == rescue::Kind::kResult && result == nullptr) {
        result = base + o * slot;
      }
    }
    if (error_ != Status::kOk) break;
    auto part = [&](size_t m) -> const uint8_t* {
      return m == static_cast<size_t>(g.me)
                 ? src
                 : base + (m < static_cast<size_t>(g.me) ? m : m - 1) * slot;
    };
    if (result != nullptr) {
      device::copy(dst, result, slot);
      pml::ina::note_rescued();
    } else if (g.mode == AggMode::kReduce || g.mode == AggMode::kReduceScatter) {
      device::copy(dst, part(0), op.bytes);
      for (size_t m = 1; m < n; ++m) reduce_bytes(dst, part(m), op.bytes);
    } else if (g.mode == AggMode::kGather) {
      for (size_t m = 0; m < n; ++m) device::copy(dst + m * op.bytes, part(m), op.bytes);
    }
    base += slot * (n - 1);
    answer += n - 1;
  }
  end_fallback();
  return true;
}

void Exec::end_fallback() {
  for (uint32_t k : failed_) {
    rescue::withdraw(group_of(k), call_of(k));
    pml::ina::settle(group_of(k), call_of(k));
  }
  asks_.clear();
  failed_.clear();
  fallback_posted_ = false;
  if (fallback_device_ != nullptr) device::free(fallback_device_);
  fallback_device_ = nullptr;
}

void Exec::post_step() {
  const uint32_t begin = s_->step_begin(step_), end = s_->step_end[step_];
  const uint32_t context = args_.comm->coll_context();
  if (blocking_) flight::step(static_cast<int>(step_) + 1, static_cast<int>(s_->steps()));
  pml::Request* req = reqs_.data();
  aggs_used_ = 0;
  // One for the posting: a message that completes at once must not look like the step's end.
  pending_ = 1;
  // Ranks that share cores send a step's large messages to several peers by rendezvous: each
  // receiver then reads its message in one copy whenever it runs, where eager messages through
  // the queues stall while their reader waits for a core (4 ranks on 2 cores, alltoall of 32 and
  // 64 KiB blocks, medians of 5 alternating runs: 17.4 and 28.2 us against 19.8 and 43.3 eager).
  // One send alone, as in a ring, stays eager: its exchange is quicker that way.
  // The builder ordered the step: sends, receives, then local work (Builder::finish).
  for (uint32_t k = begin; k < end; ++k) {
    const Op& op = s_->ops[k];
    Status st = Status::kOk;
    bool read = false;
    switch (op.type) {
      case OpType::kSend:
        read = op.bytes >= kFanOutBytes && s_->fans_out[step_] != 0 && progress::oversubscribed();
        // A small message the transport takes now is done: no request, nothing to wait for.
        if (!read && pml::send_now(*args_.comm, context, resolve(op.src_buf, op.src), op.bytes,
                                   op.peer, args_.tag)) {
          break;
        }
        [[fallthrough]];
      case OpType::kRecv:
        req->user = this;
        req->on_complete = message_done;
        ++pending_;
        st = op.type == OpType::kRecv
                 ? pml::irecv(*args_.comm, context, resolve(op.dst_buf, op.dst), op.bytes, op.peer,
                              args_.tag, req)
                 : pml::isend(*args_.comm, context, resolve(op.src_buf, op.src), op.bytes, op.peer,
                              args_.tag, read ? pml::SendMode::kRead : pml::SendMode::kStandard,
                              req);
        ++req;
        if (st != Status::kOk) {
          --pending_;
          if (error_ == Status::kOk) error_ = st;
        }
        break;
      case OpType::kCopy:
        // Host to host stays a memcpy behind the device range compares (device.h). Host scratch
        // is the library's host memory: device bytes copied there are staged.
        if (op.dst_buf == Buf::kScratch) {
          device::stage(resolve(op.dst_buf, op.dst), resolve(op.src_buf, op.src), op.bytes);
        } else {
          device::copy(resolve(op.dst_buf, op.dst), resolve(op.src_buf, op.src), op.bytes);
        }
        break;
      case OpType::kReduce:
        reduce_bytes(resolve(op.dst_buf, op.dst), resolve(op.src_buf, op.src), op.bytes);
        break;
      case OpType::kAggregate:
        start_aggregate(k);
        break;
    }
  }
  --pending_;
  ++step_;
}

bool Exec::advance() {
  progress::Lock lock;
  while (!done_ && pending_ == 0) {
    // A step's failed aggregations are done again over the network before the next step.
    if (!failed_.empty() && error_ == Status::kOk) {
      if (!fallback_posted_) {
        post_fallback();
        continue;
      }
      if (!combine_fallback()) break;  // a member that failed too has not been answered yet
    }
    if (!failed_.empty()) end_fallback();  // the run failed before or in its fallback
    // A failed message ends the run once the rest of its step is done: the pml holds requests of
    // this run until then.
    if (error_ != Status::kOk || step_ == s_->steps()) {
      if (args_.finish != nullptr) args_.finish(args_.finish_ctx, error_);
      __atomic_store_n(&done_, true, __ATOMIC_RELEASE);
      break;
    }
    post_step();
  }
  return done_;
}

void Exec::start() {
  // The caller's record may not have begun yet (Team::run): these steps are reported after it
  // (blocking_ is false from bind()).
  advance();
  blocking_ = true;
}

void Exec::report_step() const {
  if (!done_) flight::step(static_cast<int>(step_), static_cast<int>(s_->steps()));
}

void Exec::wait() {
  progress::wait_until([this] { return advance(); });
}

void Exec::start_nonblocking() {
  progress::Lock lock;
  // A run on device buffers is the chip's engine's from the start when that runs (the CC cores
  // take a collective from a queue): the call returns at once, and the application's computation
  // is not held up by its first steps (a third of a 1 MiB allreduce's time at 2 ranks).
  if (!(on_device_ && progress::async())) advance();
  if (!done_) {
    listed_ = true;
    g_active.push_back(this);
    progress::add_work(1);
  } else if (on_complete_ != nullptr) {
    on_complete_(this, on_complete_ctx_);
  }
}

}  // namespace torusmpi::coll
