#include "coll/sched/exec.h"

#include <cstring>

#include "core/flight.h"
#include "core/log.h"
#include "core/progress.h"
#include "device/device.h"

namespace torusmpi::coll {
namespace {

// Never destroyed: runs may be released by MPI calls made from atexit handlers.
std::vector<Exec*>& g_pool = *new std::vector<Exec*>;
std::vector<Exec*>& g_active = *new std::vector<Exec*>;
int g_poll_id = 0;

// Scratch kept by a pooled run beyond this is given back to the system.
constexpr size_t kKeepScratch = size_t{4} << 20;

// The device's reduction kernels run the host kernel on the device layer's view of the bytes.
void apply_reduction(void* ctx, void* inout, const void* in, size_t count) {
  static_cast<const Reduction*>(ctx)->apply(inout, in, count);
}

// Where member m's contribution sits among the other members' in a fallback's temporary space.
uint64_t other_at(int m, int me, uint64_t bytes) {
  return static_cast<uint64_t>(m < me ? m : m - 1) * bytes;
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

// The switch's id of a schedule's group: the communicator's collective context and the group's
// number, the same at every member.
uint64_t switch_group(uint32_t context, uint32_t number) {
  return (static_cast<uint64_t>(context) << 32 | number) * 0x9e3779b97f4a7c15ull;
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
  if (g_poll_id != 0) progress::remove(g_poll_id);
  g_poll_id = 0;
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

uint8_t* Exec::scratch_for(size_t bytes) {
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
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

void Exec::release(Exec* e) {
  e->keep_.reset();
  if (e->scratch_.capacity() > kKeepScratch) std::vector<uint8_t>().swap(e->scratch_);
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
  return pml::ina::available() &&
         (r == nullptr || pml::ina::supports(agg_elem(r->elem), agg_op(r->op)));
}

void Exec::start_aggregate(uint32_t k) {
  const Op& op = s_->ops[k];
  const AggGroup& g = s_->groups[op.peer];
  if (aggs_used_ == aggs_.size()) aggs_.emplace_back();
  pml::ina::Aggregation& a = aggs_[aggs_used_++];
  a.group = switch_group(args_.comm->coll_context(), g.number);
  // The call's tag is the same at every member, and so is the op's place in the schedule.
  a.call = static_cast<uint64_t>(static_cast<uint32_t>(args_.tag)) << 24 | k;
  a.sources = static_cast<uint16_t>(g.members.size());
  a.source = static_cast<uint16_t>(g.me);
  switch (g.mode) {
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
  }
  --e->pending_;
}

// Every member of a failed group sends its contribution to every other (the switch's outcome
// is the same at all of them, so all do this, in the same step); combine_fallback then reduces
// them in member order, so every member gets the same bytes.
void Exec::post_fallback() {
  const uint32_t context = args_.comm->coll_context();
  size_t msgs = 0, temp = 0;
  for (uint32_t k : failed_) {
    const AggGroup& g = s_->groups[s_->ops[k].peer];
    msgs += 2 * (g.members.size() - 1);
    if (g.mode == AggMode::kReduce) temp += s_->ops[k].bytes * (g.members.size() - 1);
  }
  fallback_reqs_.assign(msgs, pml::Request{});
  uint8_t* base = nullptr;
  if (temp > 0 && on_device_ && device::alloc(temp, &fallback_device_) == Status::kOk) {
    base = static_cast<uint8_t*>(fallback_device_);
  } else if (temp > 0) {
    fallback_host_.resize(temp);
    base = fallback_host_.data();
  }
  pml::Request* req = fallback_reqs_.data();
  pending_ = 1;
  fallback_posted_ = true;
  auto post = [&](bool send, int member, void* buf, size_t bytes) {
    req->user = this;
    req->on_complete = message_done;
    ++pending_;
    const Status st = send ? pml::isend(*args_.comm, context, buf, bytes, member, args_.tag,
                                        pml::SendMode::kStandard, req)
                           : pml::irecv(*args_.comm, context, buf, bytes, member, args_.tag, req);
    ++req;
    if (st != Status::kOk) {
      --pending_;
      if (error_ == Status::kOk) error_ = st;
    }
  };
  for (uint32_t k : failed_) {
    const Op& op = s_->ops[k];
    const AggGroup& g = s_->groups[op.peer];
    uint8_t* src = resolve(op.src_buf, op.src);
    uint8_t* dst = resolve(op.dst_buf, op.dst);
    const int n = static_cast<int>(g.members.size());
    for (int m = 0; m < n; ++m) {
      if (m == g.me) continue;
      void* into = g.mode == AggMode::kGather   ? dst + m * op.bytes
                   : g.mode == AggMode::kReduce ? base + other_at(m, g.me, op.bytes)
                                                : nullptr;
      post(false, g.members[m], into, op.bytes);
    }
    for (int m = 0; m < n; ++m) {
      if (m != g.me) post(true, g.members[m], src, op.bytes);
    }
    if (g.mode == AggMode::kGather) device::copy(dst + g.me * op.bytes, src, op.bytes);
    if (g.mode == AggMode::kReduce) base += op.bytes * (n - 1);
  }
  --pending_;
}

void Exec::combine_fallback() {
  uint8_t* base =
      fallback_device_ != nullptr ? static_cast<uint8_t*>(fallback_device_) : fallback_host_.data();
  for (uint32_t k : failed_) {
    const Op& op = s_->ops[k];
    const AggGroup& g = s_->groups[op.peer];
    if (g.mode != AggMode::kReduce) continue;
    const uint8_t* src = resolve(op.src_buf, op.src);
    uint8_t* dst = resolve(op.dst_buf, op.dst);
    const int n = static_cast<int>(g.members.size());
    auto part = [&](int m) -> const uint8_t* {
      return m == g.me ? src : base + other_at(m, g.me, op.bytes);
    };
    device::copy(dst, part(0), op.bytes);
    for (int m = 1; m < n; ++m) reduce_bytes(dst, part(m), op.bytes);
    base += op.bytes * (n - 1);
  }
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
  // The builder ordered the step: receives, sends, then local work (Builder::finish).
  for (uint32_t k = begin; k < end; ++k) {
    const Op& op = s_->ops[k];
    Status st = Status::kOk;
    switch (op.type) {
      case OpType::kRecv:
      case OpType::kSend:
        req->user = this;
        req->on_complete = message_done;
        ++pending_;
        st = op.type == OpType::kRecv
                 ? pml::irecv(*args_.comm, context, resolve(op.dst_buf, op.dst), op.bytes, op.peer,
                              args_.tag, req)
                 : pml::isend(*args_.comm, context, resolve(op.src_buf, op.src), op.bytes, op.peer,
                              args_.tag, pml::SendMode::kStandard, req);
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
      combine_fallback();
    }
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
  blocking_ = true;
  advance();
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
