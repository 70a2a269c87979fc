// The executor: runs one rank's schedule of one call over the pml. A step's receives are posted
// first (so that arriving data lands in place rather than in the unexpected queue), then its
// sends, then its copies and reductions run while the messages travel; the next step starts when
// every message of the step has completed. Blocking calls drive their run from their wait; runs
// of nonblocking calls are progressed by every poll of the progress engine (any MPI call that
// waits or tests).
#ifndef TORUSMPI_COLL_SCHED_EXEC_H_
#define TORUSMPI_COLL_SCHED_EXEC_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "coll/ops/ops.h"
#include "coll/sched/rescue.h"
#include "coll/sched/schedule.h"
#include "core/status.h"
#include "pml/ina/client.h"
#include "pml/pml.h"

namespace torusmpi::coll {

class Exec;

// What a run needs besides its schedule: where the symbolic buffers are, how to reduce, and the
// messages' communicator, context and tag.
struct RunArgs {
  const void* send = nullptr;
  void* recv = nullptr;
  Reduction reduce;  // reductions only
  size_t elem = 1;   // bytes per element of reduce
  const pml::Comm* comm = nullptr;
  int tag = 0;
  uint64_t call = 0;  // the call's number on the communicator (the switch's records name it)
  // Runs once as the run ends (status: how it went), before done() turns true, under the
  // progress lock: the MPI layer unpacks staged data here, so a request tested from another
  // thread never sees the run done before the caller's buffers are.
  void (*finish)(void* ctx, Status status) = nullptr;
  void* finish_ctx = nullptr;
};

class Exec {
 public:
  // Takes a run from the pool, then binds it to a schedule and the call's buffers. The schedule
  // must outlive the run: a blocking call's cache entry does; a nonblocking run keeps a share.
  static Exec* make();
  void bind(const Schedule* s, const RunArgs& args);
  void keep(std::shared_ptr<const Schedule> s) { keep_ = std::move(s); }
  // Back to the pool (once done()).
  static void release(Exec* e);

  // Posts the first steps of a blocking call's run; a schedule of local steps only is done on
  // return. The steps after them are the flight recorder's: report_step() names the first.
  void start();
  void report_step() const;
  // Advances as far as completed messages allow; true when the whole schedule is done.
  bool advance();
  // Drives progress until done (a blocking call's wait).
  void wait();

  // Acquire: pairs with the release in advance(), for a request tested from another thread.
  bool done() const { return __atomic_load_n(&done_, __ATOMIC_ACQUIRE); }
  Status error() const { return error_; }

  // Nonblocking runs: registered, they advance on every progress poll; on_complete (when set)
  // runs once when done, and may release the run.
  void set_on_complete(void (*fn)(Exec*, void*), void* ctx) {
    on_complete_ = fn;
    on_complete_ctx_ = ctx;
  }
  void start_nonblocking();

 private:
  Exec() = default;
  void post_step();
  // kAggregate: starts op k of the schedule at the switch; a failed one is finished over the
  // network once the step's other work is done (rescue.h: post_fallback asks the other members,
  // combine_fallback uses their answers once every asker is answered too).
  void start_aggregate(uint32_t k);
  static void aggregate_done(pml::ina::Aggregation* a);
  uint64_t group_of(uint32_t k) const;
  uint64_t call_of(uint32_t k) const { return args_.call << 24 | k; }
  void post_fallback();
  bool combine_fallback();
  void end_fallback();
  // inout <- in op inout over `bytes`, on host or device memory.
  void reduce_bytes(void* inout, const void* in, size_t bytes);
  uint8_t* resolve(Buf buf, uint64_t offset) const { return base_[static_cast<int>(buf)] + offset; }
  static void message_done(pml::Request* r);

  const Schedule* s_ = nullptr;
  std::shared_ptr<const Schedule> keep_;
  RunArgs args_;
  uint8_t* base_[kBufCount] = {};
  // Host scratch, kept across uses of the pooled run (no malloc per call) and never zero-filled.
  std::unique_ptr<uint8_t[]> scratch_;
  size_t scratch_bytes_ = 0;
  // A run on device buffers works in device memory, as the chip's collective engine would: its
  // scratch is HBM, so none of its bytes pass through host memory.
  void* device_scratch_ = nullptr;
  size_t device_scratch_bytes_ = 0;
  // Scratch of at least `bytes`: inline when the host scratch the pooled run has is enough (most
  // calls), else grow_scratch (device runs, larger calls).
  uint8_t* scratch_for(size_t bytes) {
    return !on_device_ && scratch_bytes_ >= bytes ? scratch_.get() : grow_scratch(bytes);
  }
  uint8_t* grow_scratch(size_t bytes);
  std::vector<pml::Request> reqs_;
  // The step's aggregations (most steps: none); a deque, since the client holds them by address.
  std::deque<pml::ina::Aggregation> aggs_;
  size_t aggs_used_ = 0;
  std::vector<uint32_t> failed_;  // the step's aggregations that failed: ops of the schedule
  bool fallback_posted_ = false;
  std::vector<pml::Request> fallback_reqs_;
  std::vector<rescue::Request> asks_;    // a request per failed aggregation
  std::vector<rescue::Answer> answers_;  // each other member's answer, per failed aggregation
  std::vector<uint8_t> fallback_host_;   // and its bytes: host runs
  void* fallback_device_ = nullptr;      // device runs
  size_t step_ = 0;
  int pending_ = 0;
  bool done_ = false;
  bool listed_ = false;
  bool blocking_ = false;   // a blocking call's run: its steps are the flight recorder's
  bool on_device_ = false;  // its buffers are device memory
  Status error_ = Status::kOk;
  void (*on_complete_)(Exec*, void*) = nullptr;
  void* on_complete_ctx_ = nullptr;

  friend int poll_runs(void*);
  friend void exec_finalize();
};

// Whether the in-network aggregation switch can run a call's aggregations (Args::in_network): it
// answers, and it knows the reduction (nullptr: a call that reduces nothing).
bool in_network(const Reduction* r);

// Registers the executor's poll with the progress engine (at MPI_Init) and removes it.
void exec_init();
void exec_finalize();
// Runs of nonblocking calls still in progress.
size_t exec_active();

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_SCHED_EXEC_H_
