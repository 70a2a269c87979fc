// torch.distributed's process group on torusmpi: every operation is one nonblocking MPI call on the
// group's own communicator, issued on the caller's thread in program order (so every rank issues a
// group's collectives in the same order, as MPI wants), and completed by whoever asks first: the
// caller's wait() or is_completed(), or the completion thread once a future is asked for.
//
// Written from PyTorch 1.13's documented c10d::ProcessGroup interface (ProcessGroup.hpp, Work.hpp).
// Like any MPI program, this file sees torusmpi only through <mpi.h> and <torusmpi.h>.
#pragma once

#include <mpi.h>

#include <climits>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

namespace torusmpi::pt {

// One operation in flight: its MPI requests, the tensors it must keep alive, and what to do once
// the requests are done (copy staged results back, divide for AVG, ...).
class Work : public c10d::Work {
 public:
  Work(int rank, c10d::OpType type, const char* op, std::vector<at::Tensor> outputs);
  ~Work() override;

  // Filled by the process group before the work is handed out.
  std::vector<MPI_Request> requests;
  std::vector<MPI_Status> statuses;
  std::vector<at::Tensor> keep;          // staging buffers and inputs, alive until completion
  std::vector<std::vector<int>> counts;  // count and displacement arrays MPI reads until the end
  std::vector<std::function<void()>> on_success;  // in order, once, on the completing thread
  bool wants_source = false;  // a receive from any source: sourceRank() is its sender
  bool issued = false;        // the MPI call returned its requests (ProcessGroup::issue)

  // A receive: fails unless exactly `elements` of `type` arrived (torch's tensors are exact).
  void expect(int64_t elements, MPI_Datatype type);

  bool isCompleted() override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  int sourceRank() const override;
  std::vector<at::Tensor> result() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  void abort() override;

  // Tests the requests once; completes the work when they are done. True when complete. Never
  // blocks for the network; returns false at once when another thread is completing the work.
  bool poll();

  // Marks the work failed (an MPI call failed as it was issued).
  void fail(const std::string& message);

  const char* op() const { return op_; }

 private:
  // Runs after the requests completed (or failed), with progress_mu_ held: the success steps,
  // then wakes the waiters. Returns the future to settle once progress_mu_ is released (its
  // callbacks may call this work again), if one was asked for.
  c10::intrusive_ptr<c10::ivalue::Future> complete(int mpi_error);
  // Completes future (if any) with the outputs, or with the work's error.
  void settle(const c10::intrusive_ptr<c10::ivalue::Future>& future);

  const char* op_;
  std::string failure_;  // why, when the work failed before MPI could say
  std::vector<at::Tensor> outputs_;
  std::mutex progress_mu_;  // one thread at a time tests or waits on the requests
  int source_ = -1;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// A thread that completes the works whose futures were asked for, so their callbacks run without a
// wait(): DistributedDataParallel's reducer chains on the allreduce futures.
class Completer {
 public:
  static Completer& get();
  void track(c10::intrusive_ptr<Work> work);
  // The requests of a work whose handle was dropped before they ended, with the tensors they use.
  void adopt(std::vector<MPI_Request> requests, std::vector<at::Tensor> keep);
  void stop();

 private:
  struct Orphan {
    std::vector<MPI_Request> requests;
    std::vector<at::Tensor> keep;
  };
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<c10::intrusive_ptr<Work>> works_;
  std::vector<Orphan> orphans_;
  std::thread thread_;
  bool stopping_ = false;
};

class ProcessGroup : public c10d::ProcessGroup {
 public:
  // ranks: the group's members as ranks of MPI_COMM_WORLD, in group-rank order (empty: all).
  ProcessGroup(const std::vector<int64_t>& ranks, int rank, int size,
               std::chrono::milliseconds timeout);
  ~ProcessGroup() override;

  const std::string getBackendName() const override { return "torusmpi"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits,
                                               std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) override;

 private:
  // A work for op, whose result() is outputs.
  c10::intrusive_ptr<Work> make_work(c10d::OpType type, const char* op,
                                     std::vector<at::Tensor> outputs);
  // Issues one MPI call for work: on failure the work carries the MPI error, named after the call.
  void issue(Work& work, const char* call, int rc);
  // An in-place reduction of tensor (allreduce, reduce): the reduction's datatype and op.
  void reduction_types(const char* op, const at::Tensor& t, const c10d::ReduceOp& rop,
                       MPI_Datatype* type, MPI_Op* mpi_op) const;
  // The tensor itself when it is contiguous, else a contiguous copy written back on success.
  at::Tensor staged(Work& work, const at::Tensor& t, bool copy_back);
  // After a SUM that stands for AVG: divide by the group's size.
  void average_after(Work& work, const c10d::ReduceOp& rop, at::Tensor t);
  void check_root(const char* op, int64_t root) const;
  void check_peer(const char* op, int peer) const;
  void check_tag(const char* op, int tag) const;

  MPI_Comm comm_ = MPI_COMM_NULL;     // the group's collectives and point-to-point
  MPI_Comm monitor_ = MPI_COMM_NULL;  // monitoredBarrier's messages, apart from the user's tags
  std::chrono::milliseconds timeout_;
  int tag_ub_ = INT_MAX;  // MPI_TAG_UB, read once
};

// MPI_Init_thread(MPI_THREAD_MULTIPLE) unless MPI is up already; throws when MPI is finalized or
// runs without MPI_THREAD_MULTIPLE.
void ensure_mpi();
// True when ensure_mpi() initialized MPI (so this module finalizes it).
bool mpi_is_ours();

}  // namespace torusmpi::pt
