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

void Exec::post_step() {
  const uint32_t begin = s_->step_begin(step_), end = s_->step_end[step_];
  const uint32_t context = args_.comm->coll_context();
  if (blocking_) flight::step(static_cast<int>(step_) + 1, static_cast<int>(s_->steps()));
  pml::Request* req = reqs_.data();
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
      case OpType::kReduce: {
        void* inout = resolve(op.dst_buf, op.dst);
        const void* in = resolve(op.src_buf, op.src);
        if (__builtin_expect(device::in_device_range(inout) || device::in_device_range(in), 0)) {
          device::reduce(apply_reduction, const_cast<Reduction*>(&args_.reduce), inout, in,
                         op.bytes / args_.elem, args_.elem);
        } else {
          args_.reduce.apply(inout, in, op.bytes / args_.elem);
        }
        break;
      }
    }
  }
  --pending_;
  ++step_;
}

bool Exec::advance() {
  progress::Lock lock;
  while (!done_ && pending_ == 0) {
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
