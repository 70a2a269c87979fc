// The process group's operations, each one MPI call (backend.h says why). Lists of tensors travel
// through one flat buffer: MPI moves one contiguous block per peer, torch hands out a tensor per
// peer, and a copy per tensor is cheaper than a datatype per call.
#include "backend.h"

#include <sched.h>
#include <torusmpi.h>

#include <array>
#include <climits>
#include <numeric>
#include <sstream>

namespace torusmpi::pt {
namespace {

bool we_initialized = false;

std::string mpi_error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(rc);
  return std::string(text, len);
}

bool mpi_up() {
  int init = 0, fini = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fini);
  return init && !fini;
}

void check_tensor(const char* op, const at::Tensor& t) {
  TORCH_CHECK(t.defined(), "torusmpi ", op, ": undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), "torusmpi ", op, ": tensors must be on the CPU, not ",
              t.device());
  TORCH_CHECK(t.layout() == at::kStrided, "torusmpi ", op, ": dense tensors only, not ",
              t.layout());
}

// The single-tensor forms: an input and an output of one type.
void check_pair(const char* op, const at::Tensor& output, const at::Tensor& input) {
  check_tensor(op, input);
  check_tensor(op, output);
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "torusmpi ", op, ": output of ",
              output.scalar_type(), " for an input of ", input.scalar_type());
}

const at::Tensor& single(const char* op, const std::vector<at::Tensor>& ts) {
  TORCH_CHECK(ts.size() == 1, "torusmpi ", op, ": takes one tensor per process, got ", ts.size());
  check_tensor(op, ts[0]);
  return ts[0];
}

int count_of(const char* op, int64_t n) {
  TORCH_CHECK(n <= INT_MAX, "torusmpi ", op, ": ", n,
              " elements in one block; MPI counts stop at 2^31-1");
  return static_cast<int>(n);
}

// A datatype of one element of `bytes` bytes, for the operations that only move data: torch's
// element sizes are 1, 2, 4, 8 and 16 bytes. Made once, at the first group's first call.
MPI_Datatype element_type(size_t bytes) {
  static const std::array<MPI_Datatype, 17> types = [] {
    std::array<MPI_Datatype, 17> t;
    t.fill(MPI_DATATYPE_NULL);
    t[1] = MPI_BYTE;
    for (int n : {2, 4, 8, 16}) {
      MPI_Type_contiguous(n, MPI_BYTE, &t[n]);
      MPI_Type_commit(&t[n]);
    }
    return t;
  }();
  TORCH_CHECK(bytes < types.size() && types[bytes] != MPI_DATATYPE_NULL, "torusmpi: elements of ",
              bytes, " bytes are not supported");
  return types[bytes];
}

MPI_Datatype element_type(const at::Tensor& t) { return element_type(t.element_size()); }

// The reduction datatype of a scalar type, or MPI_DATATYPE_NULL.
MPI_Datatype reduction_type(at::ScalarType s) {
  switch (s) {
    case at::kFloat:
      return MPI_FLOAT;
    case at::kDouble:
      return MPI_DOUBLE;
    case at::kHalf:
      return MPIX_C_FLOAT16;
    case at::kBFloat16:
      return MPIX_BFLOAT16;
    case at::kByte:
      return MPI_UINT8_T;
    case at::kChar:
      return MPI_INT8_T;
    case at::kShort:
      return MPI_INT16_T;
    case at::kInt:
      return MPI_INT32_T;
    case at::kLong:
      return MPI_INT64_T;
    case at::kBool:
      return MPI_C_BOOL;
    case at::kComplexFloat:
      return MPI_C_FLOAT_COMPLEX;
    case at::kComplexDouble:
      return MPI_C_DOUBLE_COMPLEX;
    default:
      return MPI_DATATYPE_NULL;
  }
}

const char* op_name(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM:
      return "SUM";
    case c10d::ReduceOp::AVG:
      return "AVG";
    case c10d::ReduceOp::PRODUCT:
      return "PRODUCT";
    case c10d::ReduceOp::MIN:
      return "MIN";
    case c10d::ReduceOp::MAX:
      return "MAX";
    case c10d::ReduceOp::BAND:
      return "BAND";
    case c10d::ReduceOp::BOR:
      return "BOR";
    case c10d::ReduceOp::BXOR:
      return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM:
      return "PREMUL_SUM";
    default:
      return "an unknown op";
  }
}

// Flattens tensors (each may be non-contiguous) into one new contiguous 1-D tensor.
at::Tensor flatten(const std::vector<at::Tensor>& ts, const at::TensorOptions& options) {
  int64_t total = 0;
  for (const at::Tensor& t : ts) total += t.numel();
  at::Tensor flat = at::empty({total}, options);
  int64_t off = 0;
  for (const at::Tensor& t : ts) {
    flat.narrow(0, off, t.numel()).view(t.sizes()).copy_(t);
    off += t.numel();
  }
  return flat;
}

// The inverse: copies consecutive slices of flat into each tensor.
void unflatten(const at::Tensor& flat, const std::vector<at::Tensor>& ts) {
  int64_t off = 0;
  for (const at::Tensor& t : ts) {
    const_cast<at::Tensor&>(t).copy_(flat.narrow(0, off, t.numel()).view(t.sizes()));
    off += t.numel();
  }
}

// All tensors of a list share the first one's type; returns the total of their elements.
int64_t check_list(const char* op, const std::vector<at::Tensor>& ts, at::ScalarType type) {
  int64_t total = 0;
  for (const at::Tensor& t : ts) {
    check_tensor(op, t);
    TORCH_CHECK(t.scalar_type() == type, "torusmpi ", op, ": tensors of ", t.scalar_type(), " and ",
                type, " in one call");
    total += t.numel();
  }
  return total;
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> displs(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i) displs[i] = displs[i - 1] + counts[i - 1];
  return displs;
}

}  // namespace

// --- Work ---

Work::Work(int rank, c10d::OpType type, const char* op, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type), op_(op), outputs_(std::move(outputs)) {}

Work::~Work() {
  // A handle dropped before its operation ended: the operation still runs to its end (a dropped
  // isend still sends), and its buffers stay alive until then.
  if (issued && !requests.empty() && mpi_up()) {
    keep.insert(keep.end(), outputs_.begin(), outputs_.end());
    Completer::get().adopt(std::move(requests), std::move(keep));
  }
}

void Work::expect(int64_t elements, MPI_Datatype type) {
  on_success.push_back([this, elements, type]() {
    int got = MPI_UNDEFINED;
    MPI_Get_count(&statuses[0], type, &got);
    TORCH_CHECK(got == elements, "torusmpi ", op_, ": received ", got, " elements from rank ",
                statuses[0].MPI_SOURCE, ", expected ", elements);
  });
}

bool Work::poll() {
  c10::intrusive_ptr<c10::ivalue::Future> future;
  {
    std::unique_lock<std::mutex> lock(progress_mu_, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> state(mutex_);
      if (completed_) return true;
    }
    int flag = 0;
    statuses.resize(requests.size());
    int rc =
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag, statuses.data());
    if (rc == MPI_SUCCESS && !flag) return false;
    future = complete(rc);
  }
  settle(future);
  return true;
}

void Work::fail(const std::string& message) {
  c10::intrusive_ptr<c10::ivalue::Future> future;
  {
    std::lock_guard<std::mutex> lock(progress_mu_);
    failure_ = message;
    future = complete(MPI_ERR_OTHER);
  }
  settle(future);
}

c10::intrusive_ptr<c10::ivalue::Future> Work::complete(int mpi_error) {
  std::exception_ptr error;
  if (mpi_error != MPI_SUCCESS) {
    std::string why = failure_;
    if (why.empty()) {
      int rc = mpi_error;
      for (const MPI_Status& s : statuses) {
        if (mpi_error == MPI_ERR_IN_STATUS && s.MPI_ERROR != MPI_SUCCESS &&
            s.MPI_ERROR != MPI_ERR_PENDING) {
          rc = s.MPI_ERROR;
          break;
        }
      }
      why = mpi_error_text(rc);
    }
    error =
        std::make_exception_ptr(std::runtime_error(std::string("torusmpi ") + op_ + ": " + why));
  } else {
    if (wants_source && !statuses.empty()) source_ = statuses[0].MPI_SOURCE;
    try {
      for (auto& step : on_success) step();
    } catch (...) {
      error = std::current_exception();
    }
  }
  requests.clear();
  keep.clear();
  on_success.clear();
  c10::intrusive_ptr<c10::ivalue::Future> future;
  {
    std::lock_guard<std::mutex> state(mutex_);
    completed_ = true;
    exception_ = error;
    future = future_;
  }
  cv_.notify_all();
  if (recordFunctionEndCallback_) {
    recordFunctionEndCallback_();
    recordFunctionEndCallback_ = nullptr;
  }
  return future;
}

void Work::settle(const c10::intrusive_ptr<c10::ivalue::Future>& future) {
  if (!future) return;
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> state(mutex_);
    error = exception_;
  }
  if (error) {
    future->setError(error);
  } else {
    future->markCompleted(c10::IValue(outputs_));
  }
}

bool Work::isCompleted() { return poll() || c10d::Work::isCompleted(); }

bool Work::wait(std::chrono::milliseconds timeout) {
  c10::intrusive_ptr<c10::ivalue::Future> future;
  {
    std::lock_guard<std::mutex> lock(progress_mu_);
    bool done;
    {
      std::lock_guard<std::mutex> state(mutex_);
      done = completed_;
    }
    if (!done && timeout == kNoTimeout) {
      statuses.resize(requests.size());
      int rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data());
      future = complete(rc);
    } else if (!done) {
      const auto deadline = std::chrono::steady_clock::now() + timeout;
      statuses.resize(requests.size());
      for (int idle = 0;; ++idle) {
        int flag = 0;
        int rc =
            MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag, statuses.data());
        if (rc != MPI_SUCCESS || flag) {
          future = complete(rc);
          break;
        }
        TORCH_CHECK(std::chrono::steady_clock::now() < deadline, "torusmpi ", op_,
                    ": not complete after ", timeout.count(), " ms");
        if (idle > 64) std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }
  settle(future);
  std::lock_guard<std::mutex> state(mutex_);
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

int Work::sourceRank() const {
  TORCH_CHECK(wants_source, "torusmpi ", op_,
              ": sourceRank() is only for a receive from any source");
  std::lock_guard<std::mutex> state(mutex_);
  TORCH_CHECK(completed_, "torusmpi ", op_, ": sourceRank() before the receive completed");
  return source_;
}

std::vector<at::Tensor> Work::result() { return outputs_; }

c10::intrusive_ptr<c10::ivalue::Future> Work::getFuture() {
  bool done;
  c10::intrusive_ptr<c10::ivalue::Future> future;
  {
    std::lock_guard<std::mutex> state(mutex_);
    if (future_) return future_;
    future_ =
        c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
    future = future_;
    done = completed_;
  }
  // Outside the lock: completing the future runs its callbacks, which may ask this work again.
  if (done) {
    settle(future);
  } else {
    Completer::get().track(c10::intrusive_ptr<Work>::reclaim_copy(this));
  }
  return future;
}

void Work::abort() {
  TORCH_CHECK(false, "torusmpi ", op_,
              ": abort() is not supported (MPI cannot cancel a collective)");
}

// --- Completer ---

Completer& Completer::get() {
  static Completer* completer = new Completer;  // never destroyed: stop() ends the thread
  return *completer;
}

void Completer::track(c10::intrusive_ptr<Work> work) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  works_.push_back(std::move(work));
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  cv_.notify_one();
}

void Completer::adopt(std::vector<MPI_Request> requests, std::vector<at::Tensor> keep) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  orphans_.push_back(Orphan{std::move(requests), std::move(keep)});
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  cv_.notify_one();
}

void Completer::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  works_.clear();
  orphans_.clear();
}

void Completer::run() {
  int idle = 0;
  for (;;) {
    std::vector<c10::intrusive_ptr<Work>> works;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !works_.empty() || !orphans_.empty(); });
      if (stopping_) return;
      works = works_;
    }
    // Polled without mu_: a completed future's callbacks may start and track more work.
    std::vector<Work*> done;
    for (auto& w : works) {
      if (w->poll()) done.push_back(w.get());
    }
    bool progressed = !done.empty();
    {
      std::lock_guard<std::mutex> lock(mu_);
      works_.erase(std::remove_if(works_.begin(), works_.end(),
                                  [&](const c10::intrusive_ptr<Work>& w) {
                                    return std::find(done.begin(), done.end(), w.get()) !=
                                           done.end();
                                  }),
                   works_.end());
      for (auto it = orphans_.begin(); it != orphans_.end();) {
        int flag = 0;
        MPI_Testall(static_cast<int>(it->requests.size()), it->requests.data(), &flag,
                    MPI_STATUSES_IGNORE);
        progressed = progressed || flag;
        it = flag ? orphans_.erase(it) : it + 1;
      }
    }
    // The waiter sleeps on the future meanwhile: spin briefly, then yield the core for a while,
    // then sleep, so ranks sharing cores are not starved.
    idle = progressed ? 0 : idle + 1;
    if (idle > 2000) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    } else if (idle > 32) {
      sched_yield();
    }
  }
}

// --- ProcessGroup ---

ProcessGroup::ProcessGroup(const std::vector<int64_t>& ranks, int rank, int size,
                           std::chrono::milliseconds timeout)
    : c10d::ProcessGroup(rank, size), timeout_(timeout) {
  ensure_mpi();
  int rc;
  if (ranks.empty()) {
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  } else {
    std::vector<int> members(ranks.begin(), ranks.end());
    MPI_Group world, group;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    rc = MPI_Group_incl(world, static_cast<int>(members.size()), members.data(), &group);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_create_group(MPI_COMM_WORLD, group, 0, &comm_);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
  }
  TORCH_CHECK(rc == MPI_SUCCESS,
              "torusmpi: cannot make the group's communicator: ", mpi_error_text(rc));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  int r = -1, n = -1;
  MPI_Comm_rank(comm_, &r);
  MPI_Comm_size(comm_, &n);
  TORCH_CHECK(r == rank && n == size, "torusmpi: torch gives rank ", rank, " of ", size,
              ", MPI rank ", r, " of ", n, " (launch with mpirun, one process per rank)");
  MPI_Comm_dup(comm_, &monitor_);
  int* ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  if (flag) tag_ub_ = *ub;
  init();
}

ProcessGroup::~ProcessGroup() {
  if (!mpi_up()) return;  // torch frees its groups after MPI_Finalize, at interpreter exit
  MPI_Comm_free(&monitor_);
  MPI_Comm_free(&comm_);
}

c10::intrusive_ptr<Work> ProcessGroup::make_work(c10d::OpType type, const char* op,
                                                 std::vector<at::Tensor> outputs) {
  return c10::make_intrusive<Work>(rank_, type, op, std::move(outputs));
}

void ProcessGroup::issue(Work& work, const char* call, int rc) {
  if (rc == MPI_SUCCESS) {
    work.issued = true;
    return;
  }
  // A call refused as issued: nothing is in flight, and the op's name leads the message.
  work.requests.clear();
  std::string message = std::string(call) + " failed: " + mpi_error_text(rc);
  work.fail(message);
  TORCH_CHECK(false, "torusmpi ", work.op(), ": ", message);
}

void ProcessGroup::reduction_types(const char* op, const at::Tensor& t, const c10d::ReduceOp& rop,
                                   MPI_Datatype* type, MPI_Op* mpi_op) const {
  const at::ScalarType s = t.scalar_type();
  *type = reduction_type(s);
  TORCH_CHECK(*type != MPI_DATATYPE_NULL, "torusmpi ", op, ": cannot reduce ", s);
  const bool is_bool = s == at::kBool;
  const bool is_float = at::isFloatingType(s);
  const bool is_complex = at::isComplexType(s);
  const auto o = rop.op_;
  const char* refusal = nullptr;
  switch (o) {
    case c10d::ReduceOp::SUM:
      *mpi_op = is_bool ? MPI_LOR : MPI_SUM;
      break;
    case c10d::ReduceOp::AVG:
      *mpi_op = MPI_SUM;
      if (is_bool) refusal = "bool";
      break;
    case c10d::ReduceOp::PRODUCT:
      *mpi_op = is_bool ? MPI_LAND : MPI_PROD;
      break;
    case c10d::ReduceOp::MIN:
      *mpi_op = is_bool ? MPI_LAND : MPI_MIN;
      if (is_complex) refusal = "complex types";
      break;
    case c10d::ReduceOp::MAX:
      *mpi_op = is_bool ? MPI_LOR : MPI_MAX;
      if (is_complex) refusal = "complex types";
      break;
    case c10d::ReduceOp::BAND:
      *mpi_op = is_bool ? MPI_LAND : MPI_BAND;
      if (is_float || is_complex) refusal = "floating-point types";
      break;
    case c10d::ReduceOp::BOR:
      *mpi_op = is_bool ? MPI_LOR : MPI_BOR;
      if (is_float || is_complex) refusal = "floating-point types";
      break;
    case c10d::ReduceOp::BXOR:
      *mpi_op = is_bool ? MPI_LXOR : MPI_BXOR;
      if (is_float || is_complex) refusal = "floating-point types";
      break;
    default:
      TORCH_CHECK(false, "torusmpi ", op, ": ReduceOp ", op_name(o),
                  " is not supported (it carries NCCL-only factors)");
  }
  TORCH_CHECK(refusal == nullptr, "torusmpi ", op, ": ReduceOp ", op_name(o),
              " is not defined for ", refusal, " (", s, ")");
}

at::Tensor ProcessGroup::staged(Work& work, const at::Tensor& t, bool copy_back) {
  if (t.is_contiguous()) {
    work.keep.push_back(t);
    return t;
  }
  at::Tensor flat = t.contiguous();
  work.keep.push_back(flat);
  if (copy_back) {
    work.on_success.push_back([t, flat]() mutable { t.copy_(flat); });
  }
  return flat;
}

void ProcessGroup::average_after(Work& work, const c10d::ReduceOp& rop, at::Tensor t) {
  if (rop.op_ != c10d::ReduceOp::AVG) return;
  const int64_t n = size_;
  if (at::isIntegralType(t.scalar_type(), /*includeBool=*/false)) {
    // As NCCL averages integers: the sum divided, rounded toward zero.
    work.on_success.push_back([t, n]() mutable { t.div_(n, "trunc"); });
  } else {
    work.on_success.push_back([t, n]() mutable { t.div_(n); });
  }
}

void ProcessGroup::check_root(const char* op, int64_t root) const {
  TORCH_CHECK(root >= 0 && root < size_, "torusmpi ", op, ": root ", root,
              " is not a rank of the group (size ", size_, ")");
}

void ProcessGroup::check_tag(const char* op, int tag) const {
  TORCH_CHECK(tag >= 0 && tag <= tag_ub_, "torusmpi ", op, ": tag ", tag, " is outside MPI's 0..",
              tag_ub_);
}

void ProcessGroup::check_peer(const char* op, int peer) const {
  TORCH_CHECK(peer >= 0 && peer < size_, "torusmpi ", op, ": peer ", peer,
              " is not a rank of the group (size ", size_, ")");
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::broadcast(std::vector<at::Tensor>& tensors,
                                                       const c10d::BroadcastOptions& opts) {
  const char* op = "broadcast";
  const at::Tensor& t = single(op, tensors);
  check_root(op, opts.rootRank);
  TORCH_CHECK(opts.rootTensor == 0, "torusmpi ", op, ": rootTensor must be 0");
  auto work = make_work(c10d::OpType::BROADCAST, op, tensors);
  const int root = static_cast<int>(opts.rootRank);
  at::Tensor buf = staged(*work, t, rank_ != root);
  work->requests.resize(1);
  issue(*work, "MPI_Ibcast",
        MPI_Ibcast(buf.data_ptr(), count_of(op, buf.numel()), element_type(buf), root, comm_,
                   &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::allreduce(std::vector<at::Tensor>& tensors,
                                                       const c10d::AllreduceOptions& opts) {
  const char* op = "all_reduce";
  const at::Tensor& t = single(op, tensors);
  MPI_Datatype type;
  MPI_Op mpi_op;
  reduction_types(op, t, opts.reduceOp, &type, &mpi_op);
  auto work = make_work(c10d::OpType::ALLREDUCE, op, tensors);
  at::Tensor buf = staged(*work, t, true);
  average_after(*work, opts.reduceOp, t);
  work->requests.resize(1);
  issue(*work, "MPI_Iallreduce",
        MPI_Iallreduce(MPI_IN_PLACE, buf.data_ptr(), count_of(op, buf.numel()), type, mpi_op, comm_,
                       &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  const char* op = "all_reduce_coalesced";
  TORCH_CHECK(!tensors.empty(), "torusmpi ", op, ": no tensors");
  check_list(op, tensors, tensors[0].scalar_type());
  MPI_Datatype type;
  MPI_Op mpi_op;
  reduction_types(op, tensors[0], opts.reduceOp, &type, &mpi_op);
  auto work = make_work(c10d::OpType::ALLREDUCE_COALESCED, op, tensors);
  at::Tensor flat = flatten(tensors, tensors[0].options());
  work->keep.push_back(flat);
  average_after(*work, opts.reduceOp, flat);
  work->on_success.push_back([flat, tensors]() { unflatten(flat, tensors); });
  work->requests.resize(1);
  issue(*work, "MPI_Iallreduce",
        MPI_Iallreduce(MPI_IN_PLACE, flat.data_ptr(), count_of(op, flat.numel()), type, mpi_op,
                       comm_, &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::reduce(std::vector<at::Tensor>& tensors,
                                                    const c10d::ReduceOptions& opts) {
  const char* op = "reduce";
  const at::Tensor& t = single(op, tensors);
  check_root(op, opts.rootRank);
  TORCH_CHECK(opts.rootTensor == 0, "torusmpi ", op, ": rootTensor must be 0");
  MPI_Datatype type;
  MPI_Op mpi_op;
  reduction_types(op, t, opts.reduceOp, &type, &mpi_op);
  const int root = static_cast<int>(opts.rootRank);
  auto work = make_work(c10d::OpType::REDUCE, op, tensors);
  at::Tensor buf = staged(*work, t, rank_ == root);
  if (rank_ == root) average_after(*work, opts.reduceOp, t);
  work->requests.resize(1);
  const int n = count_of(op, buf.numel());
  issue(*work, "MPI_Ireduce",
        rank_ == root ? MPI_Ireduce(MPI_IN_PLACE, buf.data_ptr(), n, type, mpi_op, root, comm_,
                                    &work->requests[0])
                      : MPI_Ireduce(buf.data_ptr(), nullptr, n, type, mpi_op, root, comm_,
                                    &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  const char* op = "all_gather";
  const at::Tensor& in = single(op, inputs);
  TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(size_), "torusmpi ",
              op, ": needs one output list of ", size_, " tensors");
  check_list(op, outputs[0], in.scalar_type());
  for (const at::Tensor& o : outputs[0]) {
    TORCH_CHECK(o.numel() == in.numel(), "torusmpi ", op, ": output tensors of ", o.numel(),
                " elements for an input of ", in.numel());
  }
  auto work = make_work(c10d::OpType::ALLGATHER, op, outputs[0]);
  at::Tensor src = staged(*work, in, false);
  at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
  work->keep.push_back(flat);
  std::vector<at::Tensor> outs = outputs[0];
  work->on_success.push_back([flat, outs]() { unflatten(flat, outs); });
  const int n = count_of(op, in.numel());
  work->requests.resize(1);
  issue(*work, "MPI_Iallgather",
        MPI_Iallgather(src.data_ptr(), n, element_type(in), flat.data_ptr(), n, element_type(in),
                       comm_, &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                             const c10d::AllgatherOptions&) {
  const char* op = "_allgather_base";
  check_pair(op, output, input);
  TORCH_CHECK(output.numel() == size_ * input.numel(), "torusmpi ", op, ": output of ",
              output.numel(), " elements; needs ", size_, " x ", input.numel());
  auto work = make_work(c10d::OpType::_ALLGATHER_BASE, op, {output});
  at::Tensor src = staged(*work, input, false);
  at::Tensor dst = staged(*work, output, true);
  const int n = count_of(op, input.numel());
  work->requests.resize(1);
  issue(*work, "MPI_Iallgather",
        MPI_Iallgather(src.data_ptr(), n, element_type(input), dst.data_ptr(), n,
                       element_type(input), comm_, &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  const char* op = "all_gather_coalesced";
  TORCH_CHECK(!inputs.empty(), "torusmpi ", op, ": no tensors");
  const at::ScalarType type = inputs[0].scalar_type();
  const int64_t total = check_list(op, inputs, type);
  TORCH_CHECK(outputs.size() == static_cast<size_t>(size_), "torusmpi ", op, ": needs ", size_,
              " output lists");
  std::vector<at::Tensor> outs;
  for (auto& list : outputs) {
    TORCH_CHECK(check_list(op, list, type) == total && list.size() == inputs.size(), "torusmpi ",
                op, ": each output list must mirror the inputs");
    outs.insert(outs.end(), list.begin(), list.end());
  }
  auto work = make_work(c10d::OpType::ALLGATHER_COALESCED, op, outs);
  at::Tensor src = flatten(inputs, inputs[0].options());
  at::Tensor flat = at::empty({size_ * total}, inputs[0].options());
  work->keep.push_back(src);
  work->keep.push_back(flat);
  work->on_success.push_back([flat, outs]() { unflatten(flat, outs); });
  const int n = count_of(op, total);
  work->requests.resize(1);
  issue(*work, "MPI_Iallgather",
        MPI_Iallgather(src.data_ptr(), n, element_type(src), flat.data_ptr(), n, element_type(src),
                       comm_, &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                    std::vector<at::Tensor>& inputs,
                                                    const c10d::GatherOptions& opts) {
  const char* op = "gather";
  const at::Tensor& in = single(op, inputs);
  check_root(op, opts.rootRank);
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> outs;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(size_), "torusmpi ",
                op, ": the root needs one output list of ", size_, " tensors");
    check_list(op, outputs[0], in.scalar_type());
    for (const at::Tensor& o : outputs[0]) {
      TORCH_CHECK(o.numel() == in.numel(), "torusmpi ", op, ": output tensors of ", o.numel(),
                  " elements for an input of ", in.numel());
    }
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()), "torusmpi ", op,
                ": only the root takes output tensors");
  }
  auto work = make_work(c10d::OpType::GATHER, op, outs);
  at::Tensor src = staged(*work, in, false);
  at::Tensor flat;
  if (rank_ == root) {
    flat = at::empty({size_ * in.numel()}, in.options());
    work->keep.push_back(flat);
    work->on_success.push_back([flat, outs]() { unflatten(flat, outs); });
  }
  const int n = count_of(op, in.numel());
  work->requests.resize(1);
  issue(*work, "MPI_Igather",
        MPI_Igather(src.data_ptr(), n, element_type(in), rank_ == root ? flat.data_ptr() : nullptr,
                    n, element_type(in), root, comm_, &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::scatter(std::vector<at::Tensor>& outputs,
                                                     std::vector<std::vector<at::Tensor>>& inputs,
                                                     const c10d::ScatterOptions& opts) {
  const char* op = "scatter";
  const at::Tensor& out = single(op, outputs);
  check_root(op, opts.rootRank);
  const int root = static_cast<int>(opts.rootRank);
  auto work = make_work(c10d::OpType::SCATTER, op, outputs);
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(size_), "torusmpi ",
                op, ": the root needs one input list of ", size_, " tensors");
    check_list(op, inputs[0], out.scalar_type());
    for (const at::Tensor& i : inputs[0]) {
      TORCH_CHECK(i.numel() == out.numel(), "torusmpi ", op, ": input tensors of ", i.numel(),
                  " elements for an output of ", out.numel());
    }
    flat = flatten(inputs[0], out.options());
    work->keep.push_back(flat);
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()), "torusmpi ", op,
                ": only the root takes input tensors");
  }
  at::Tensor dst = staged(*work, out, true);
  const int n = count_of(op, out.numel());
  work->requests.resize(1);
  issue(*work, "MPI_Iscatter",
        MPI_Iscatter(rank_ == root ? flat.data_ptr() : nullptr, n, element_type(out),
                     dst.data_ptr(), n, element_type(out), root, comm_, &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  const char* op = "reduce_scatter";
  const at::Tensor& out = single(op, outputs);
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(size_), "torusmpi ", op,
              ": needs one input list of ", size_, " tensors");
  check_list(op, inputs[0], out.scalar_type());
  TORCH_CHECK(inputs[0][rank_].numel() == out.numel(), "torusmpi ", op, ": this rank's input of ",
              inputs[0][rank_].numel(), " elements for an output of ", out.numel());
  MPI_Datatype type;
  MPI_Op mpi_op;
  reduction_types(op, out, opts.reduceOp, &type, &mpi_op);
  auto work = make_work(c10d::OpType::REDUCE_SCATTER, op, outputs);
  at::Tensor flat = flatten(inputs[0], out.options());
  work->keep.push_back(flat);
  at::Tensor dst = staged(*work, out, true);
  average_after(*work, opts.reduceOp, out);
  // MPI reads the counts until the call completes: the work holds them.
  work->counts.emplace_back();
  for (const at::Tensor& i : inputs[0]) work->counts.back().push_back(count_of(op, i.numel()));
  work->requests.resize(1);
  issue(*work, "MPI_Ireduce_scatter",
        MPI_Ireduce_scatter(flat.data_ptr(), dst.data_ptr(), work->counts.back().data(), type,
                            mpi_op, comm_, &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  const char* op = "_reduce_scatter_base";
  check_pair(op, output, input);
  TORCH_CHECK(input.numel() == size_ * output.numel(), "torusmpi ", op, ": input of ",
              input.numel(), " elements; needs ", size_, " x ", output.numel());
  MPI_Datatype type;
  MPI_Op mpi_op;
  reduction_types(op, output, opts.reduceOp, &type, &mpi_op);
  auto work = make_work(c10d::OpType::_REDUCE_SCATTER_BASE, op, {output});
  at::Tensor src = staged(*work, input, false);
  at::Tensor dst = staged(*work, output, true);
  average_after(*work, opts.reduceOp, output);
  work->requests.resize(1);
  issue(*work, "MPI_Ireduce_scatter_block",
        MPI_Ireduce_scatter_block(src.data_ptr(), dst.data_ptr(), count_of(op, output.numel()),
                                  type, mpi_op, comm_, &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                           std::vector<int64_t>& output_splits,
                                                           std::vector<int64_t>& input_splits,
                                                           const c10d::AllToAllOptions&) {
  const char* op = "all_to_all_single";
  check_pair(op, output, input);
  auto work = make_work(c10d::OpType::ALLTOALL_BASE, op, {output});
  at::Tensor src = staged(*work, input, false);
  at::Tensor dst = staged(*work, output, true);
  const MPI_Datatype et = element_type(input);
  work->requests.resize(1);
  if (output_splits.empty() && input_splits.empty()) {
    TORCH_CHECK(input.numel() % size_ == 0 && output.numel() == input.numel(), "torusmpi ", op,
                ": without splits, input and output must hold the same number of elements, a "
                "multiple of the group's size");
    const int n = count_of(op, input.numel() / size_);
    issue(*work, "MPI_Ialltoall",
          MPI_Ialltoall(src.data_ptr(), n, et, dst.data_ptr(), n, et, comm_, &work->requests[0]));
    return work;
  }
  // Splits count rows (slices along dim 0); no splits means even ones.
  auto counts = [&](const at::Tensor& t, const std::vector<int64_t>& splits, const char* which) {
    TORCH_CHECK(t.dim() >= 1 || t.numel() == 0, "torusmpi ", op, ": the ", which,
                " needs a first dimension to split");
    const int64_t rows = t.dim() >= 1 ? t.size(0) : 0;
    const int64_t row = rows ? t.numel() / rows : 0;
    std::vector<int> c(size_);
    if (splits.empty()) {
      TORCH_CHECK(rows % size_ == 0, "torusmpi ", op, ": the ", which, "'s ", rows,
                  " rows do not split evenly over ", size_, " ranks");
      for (int i = 0; i < size_; ++i) c[i] = count_of(op, rows / size_ * row);
    } else {
      TORCH_CHECK(splits.size() == static_cast<size_t>(size_), "torusmpi ", op, ": ", which,
                  " splits has ", splits.size(), " entries for ", size_, " ranks");
      TORCH_CHECK(std::accumulate(splits.begin(), splits.end(), int64_t{0}) == rows, "torusmpi ",
                  op, ": ", which, " splits do not add up to its ", rows, " rows");
      for (int i = 0; i < size_; ++i) c[i] = count_of(op, splits[i] * row);
    }
    return c;
  };
  work->counts.push_back(counts(input, input_splits, "input"));
  work->counts.push_back(displacements(work->counts[0]));
  work->counts.push_back(counts(output, output_splits, "output"));
  work->counts.push_back(displacements(work->counts[2]));
  auto& c = work->counts;
  issue(*work, "MPI_Ialltoallv",
        MPI_Ialltoallv(src.data_ptr(), c[0].data(), c[1].data(), et, dst.data_ptr(), c[2].data(),
                       c[3].data(), et, comm_, &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::alltoall(std::vector<at::Tensor>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const c10d::AllToAllOptions&) {
  const char* op = "all_to_all";
  TORCH_CHECK(
      inputs.size() == static_cast<size_t>(size_) && outputs.size() == static_cast<size_t>(size_),
      "torusmpi ", op, ": needs ", size_, " input and ", size_, " output tensors");
  const at::ScalarType type = inputs[0].scalar_type();
  check_list(op, inputs, type);
  check_list(op, outputs, type);
  auto work = make_work(c10d::OpType::ALLTOALL, op, outputs);
  at::Tensor src = flatten(inputs, inputs[0].options());
  std::vector<at::Tensor> outs = outputs;
  int64_t total = 0;
  for (const at::Tensor& o : outs) total += o.numel();
  at::Tensor flat = at::empty({total}, inputs[0].options());
  work->keep.push_back(src);
  work->keep.push_back(flat);
  work->on_success.push_back([flat, outs]() { unflatten(flat, outs); });
  work->counts.resize(4);
  auto& c = work->counts;
  for (const at::Tensor& i : inputs) c[0].push_back(count_of(op, i.numel()));
  for (const at::Tensor& o : outs) c[2].push_back(count_of(op, o.numel()));
  c[1] = displacements(c[0]);
  c[3] = displacements(c[2]);
  const MPI_Datatype et = element_type(src);
  work->requests.resize(1);
  issue(*work, "MPI_Ialltoallv",
        MPI_Ialltoallv(src.data_ptr(), c[0].data(), c[1].data(), et, flat.data_ptr(), c[2].data(),
                       c[3].data(), et, comm_, &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::send(std::vector<at::Tensor>& tensors, int dst,
                                                  int tag) {
  const char* op = "send";
  const at::Tensor& t = single(op, tensors);
  check_peer(op, dst);
  check_tag(op, tag);
  auto work = make_work(c10d::OpType::SEND, op, {});
  at::Tensor buf = staged(*work, t, false);
  work->requests.resize(1);
  issue(*work, "MPI_Isend",
        MPI_Isend(buf.data_ptr(), count_of(op, buf.numel()), element_type(buf), dst, tag, comm_,
                  &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::recv(std::vector<at::Tensor>& tensors, int src,
                                                  int tag) {
  const char* op = "recv";
  const at::Tensor& t = single(op, tensors);
  check_peer(op, src);
  check_tag(op, tag);
  auto work = make_work(c10d::OpType::RECV, op, tensors);
  at::Tensor buf = staged(*work, t, true);
  work->expect(buf.numel(), element_type(buf));
  work->requests.resize(1);
  issue(*work, "MPI_Irecv",
        MPI_Irecv(buf.data_ptr(), count_of(op, buf.numel()), element_type(buf), src, tag, comm_,
                  &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::recvAnysource(std::vector<at::Tensor>& tensors,
                                                           int tag) {
  const char* op = "recv";
  const at::Tensor& t = single(op, tensors);
  check_tag(op, tag);
  auto work = make_work(c10d::OpType::RECVANYSOURCE, op, tensors);
  work->wants_source = true;
  at::Tensor buf = staged(*work, t, true);
  work->expect(buf.numel(), element_type(buf));
  work->requests.resize(1);
  issue(*work, "MPI_Irecv",
        MPI_Irecv(buf.data_ptr(), count_of(op, buf.numel()), element_type(buf), MPI_ANY_SOURCE, tag,
                  comm_, &work->requests[0]));
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroup::barrier(const c10d::BarrierOptions&) {
  auto work = make_work(c10d::OpType::BARRIER, "barrier", {});
  work->requests.resize(1);
  issue(*work, "MPI_Ibarrier", MPI_Ibarrier(comm_, &work->requests[0]));
  return work;
}

// Every rank reports to rank 0, which releases them all once each has; a rank missing at the
// deadline is named (every missing one with wait_all_ranks). Its own communicator keeps these
// messages apart from the user's.
void ProcessGroup::monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) {
  const auto limit = opts.timeout == c10d::kUnsetTimeout ? timeout_ : opts.timeout;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  constexpr int kArrive = 1, kRelease = 2;
  std::vector<MPI_Request> reqs;
  std::vector<int> peers;
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) {
      reqs.emplace_back();
      peers.push_back(r);
      MPI_Irecv(nullptr, 0, MPI_BYTE, r, kArrive, monitor_, &reqs.back());
    }
  } else {
    reqs.resize(2);
    peers = {0, 0};
    MPI_Isend(nullptr, 0, MPI_BYTE, 0, kArrive, monitor_, &reqs[0]);
    MPI_Irecv(nullptr, 0, MPI_BYTE, 0, kRelease, monitor_, &reqs[1]);
  }
  std::vector<int> done(reqs.size(), 0);
  for (int idle = 0;; ++idle) {
    bool all = true;
    for (size_t i = 0; i < reqs.size(); ++i) {
      if (!done[i]) MPI_Test(&reqs[i], &done[i], MPI_STATUS_IGNORE);
      all = all && done[i];
    }
    if (all) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      std::ostringstream missing;
      int named = 0;
      for (size_t i = 0; i < reqs.size(); ++i) {
        if (done[i]) continue;
        MPI_Cancel(&reqs[i]);
        MPI_Request_free(&reqs[i]);
        if (rank_ == 0 && (wait_all_ranks || named == 0)) {
          missing << (named++ ? ", " : "") << peers[i];
        }
      }
      if (rank_ == 0) {
        TORCH_CHECK(false, "torusmpi monitored_barrier: rank", named > 1 ? "s " : " ",
                    missing.str(), named > 1 ? " have" : " has", " not reached the barrier within ",
                    limit.count(), " ms");
      }
      TORCH_CHECK(false, "torusmpi monitored_barrier: rank 0 did not release rank ", rank_,
                  " within ", limit.count(), " ms");
    }
    if (idle > 64) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (rank_ == 0) {
    std::vector<MPI_Request> releases(size_ - 1);
    for (int r = 1; r < size_; ++r) {
      MPI_Isend(nullptr, 0, MPI_BYTE, r, kRelease, monitor_, &releases[r - 1]);
    }
    MPI_Waitall(size_ - 1, releases.data(), MPI_STATUSES_IGNORE);
  }
}

// --- Start and end ---

void ensure_mpi() {
  int init = 0, fini = 0;
  MPI_Finalized(&fini);
  TORCH_CHECK(!fini, "torusmpi: MPI is finalized already");
  MPI_Initialized(&init);
  int provided = MPI_THREAD_SINGLE;
  if (!init) {
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    TORCH_CHECK(rc == MPI_SUCCESS, "torusmpi: MPI_Init_thread failed: ", mpi_error_text(rc));
    we_initialized = true;
  } else {
    MPI_Query_thread(&provided);
  }
  // Completions and the store's server run on threads of their own.
  TORCH_CHECK(provided == MPI_THREAD_MULTIPLE,
              "torusmpi: MPI was initialized without MPI_THREAD_MULTIPLE (level ", provided,
              "); torch.distributed needs it");
}

bool mpi_is_ours() { return we_initialized; }

}  // namespace torusmpi::pt
