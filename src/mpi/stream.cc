// Stream-ordered calls (torusmpi.h): MPIX_Stream_*, the MPIX_*_enqueue calls in the shape of
// MPICH's stream extension, and device copies, fills and host functions in stream order.
//
// A stream is a queue of entries on the rank's emulated chip. The chip's engine (the progress
// thread, standing in for the CC cores) runs the head of every stream each time round: a copy, a
// fill or a host function runs to its end; a collective is started as its nonblocking twin and
// the stream waits for it; point-to-point is a persistent request made at the enqueue call (so
// its arguments are checked there) and started by the engine when its turn comes. The
// application's thread only appends, and waits in synchronize.
//
// Errors of an entry cannot reach the application when they happen (it is elsewhere, maybe
// computing): the engine runs entries under DeferErrors and keeps the first error with its message;
// synchronize raises it on MPI_COMM_WORLD's handler, naming the entry.
//
// Everything here runs under the library's lock: the enqueue calls hold it as MPI calls do, and
// the engine's step is run with it held (progress::set_engine_step).
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/progress.h"
#include "device/device.h"
#include "mpi/datatype.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/p2p.h"
#include "mpi/runtime.h"

#pragma GCC visibility push(default)
#include "include/torusmpi.h"
#pragma GCC visibility pop

namespace torusmpi::mpi {

struct Stream {
  struct Entry {
    enum class Kind : uint8_t { kCopy, kFill, kHostFn, kColl, kStart, kWait };
    Entry(Kind k, const char* f) : kind(k), fn(f) {}
    Kind kind;
    const char* fn;  // the enqueue call, for messages
    void* dst = nullptr;
    const void* src = nullptr;
    size_t bytes = 0;
    int value = 0;
    int (*host)(void*) = nullptr;
    void* arg = nullptr;
    // kColl: starts the nonblocking collective; `running` is its request once started.
    std::function<int(MPI_Request*)> start;
    MPI_Request running = MPI_REQUEST_NULL;
    // kStart, kWait: the persistent request; kWait writes *status and frees the request.
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Status* status = MPI_STATUS_IGNORE;
    // Derived datatypes the entry uses, kept alive until it has run.
    std::vector<MPI_Datatype> types;
  };

  std::deque<Entry> queue;
  uint64_t enqueued = 0;  // entries so far: the number of the head is enqueued - queue.size()
  bool freed = false;     // MPIX_Stream_free: communicators made on it may still name it
  bool in_host_fn = false;
  int error = MPI_SUCCESS;  // the first error since the last synchronize
  std::string error_text;
};

namespace {

// Every stream made, freed or not (a freed one stays while communicators may point at it), until
// MPI_Finalize.
std::vector<std::unique_ptr<Stream>> g_streams;

constexpr const char* kCreate = "MPIX_Stream_create";

Stream* find(MPIX_Stream handle) {
  for (auto& s : g_streams) {
    if (reinterpret_cast<MPIX_Stream>(s.get()) == handle) return s.get();
  }
  return nullptr;
}

int check_stream(const char* fn, MPIX_Stream handle, Stream** out) {
  if (int err = require_active(fn)) return err;
  Stream* s = find(handle);
  if (s == nullptr || s->freed) {
    return raise_error(nullptr, MPI_ERR_ARG, fn, "stream argument %p is not a stream%s",
                       static_cast<void*>(handle), s != nullptr ? " (it was freed)" : "");
  }
  *out = s;
  return MPI_SUCCESS;
}

// The stream of an enqueue call's communicator.
int comm_stream(const char* fn, MPI_Comm comm, Stream** out) {
  if (int err = require_active(fn)) return err;
  Comm* c;
  if (int err = check_comm(fn, comm, &c)) return err;
  if (c->stream == nullptr || c->stream->freed) {
    return raise_error(comm, MPI_ERR_ARG, fn,
                       "comm argument (%s) has no stream%s: MPIX_Stream_comm_create makes one "
                       "that has",
                       c->label().c_str(), c->stream != nullptr ? " (its stream was freed)" : "");
  }
  *out = c->stream;
  return MPI_SUCCESS;
}

void append(Stream* s, Stream::Entry e) {
  for (MPI_Datatype t : e.types) retain_type(t);
  s->queue.push_back(std::move(e));
  ++s->enqueued;
  progress::add_work(1);
}

void fail(Stream* s, const Stream::Entry& e, int err, const std::string& text) {
  if (s->error != MPI_SUCCESS) return;
  s->error = err;
  s->error_text = std::string(e.fn) + " (entry " +
                  std::to_string(s->enqueued - s->queue.size() + 1) + " of the stream): " + text;
}

// Runs or advances the head entry; true when it is done.
bool advance(Stream* s, Stream::Entry& e) {
  DeferErrors defer;
  int err = MPI_SUCCESS;
  switch (e.kind) {
    case Stream::Entry::Kind::kCopy:
      device::copy(e.dst, e.src, e.bytes);
      return true;
    case Stream::Entry::Kind::kFill:
      device::fill(e.dst, e.value, e.bytes);
      return true;
    case Stream::Entry::Kind::kHostFn: {
      // The function runs without the lock: the application may call MPI meanwhile (appending to
      // this stream too; a deque's push_back keeps e where it is).
      int rc;
      s->in_host_fn = true;
      {
        progress::Unlocked unlocked;
        rc = e.host(e.arg);
      }
      s->in_host_fn = false;
      if (rc != 0) fail(s, e, MPI_ERR_OTHER, "the host function returned " + std::to_string(rc));
      return true;
    }
    case Stream::Entry::Kind::kColl: {
      if (e.running == MPI_REQUEST_NULL) {
        err = e.start(&e.running);
        if (err != MPI_SUCCESS) break;
      }
      Request* r = request_impl(e.running);
      if (r != nullptr && !r->complete()) return false;
      err = PMPI_Wait(&e.running, MPI_STATUS_IGNORE);
      break;
    }
    case Stream::Entry::Kind::kStart:
      err = PMPI_Start(&e.request);
      break;
    case Stream::Entry::Kind::kWait: {
      Request* r = request_impl(e.request);
      if (r != nullptr && r->active && !r->complete()) return false;
      err = PMPI_Wait(&e.request, e.status);
      if (e.request != MPI_REQUEST_NULL) PMPI_Request_free(&e.request);
      break;
    }
  }
  if (err != MPI_SUCCESS) fail(s, e, err, last_error_text());
  return true;
}

// The engine's step: every stream's entries in order, as far as they go now.
int step(void*) {
  int events = 0;
  // By index: a host function runs unlocked, and the application may make a stream meanwhile.
  for (size_t i = 0; i < g_streams.size(); ++i) {
    Stream* s = g_streams[i].get();
    while (!s->queue.empty() && !s->in_host_fn) {
      Stream::Entry& e = s->queue.front();
      if (!advance(s, e)) break;
      for (MPI_Datatype t : s->queue.front().types) release_type(t);
      s->queue.pop_front();
      progress::add_work(-1);
      ++events;
    }
  }
  return events;
}

int synchronize(const char* fn, Stream* s) {
  progress::wait_until([s] { return s->queue.empty(); });
  if (s->error == MPI_SUCCESS) return MPI_SUCCESS;
  const int err = s->error;
  const std::string text = s->error_text;
  s->error = MPI_SUCCESS;
  s->error_text.clear();
  return raise_error(nullptr, err, fn, "an entry failed: %s", text.c_str());
}

// A collective entry: `start` is called by the engine with the request to fill.
int enqueue_coll(const char* fn, MPI_Comm comm, std::initializer_list<MPI_Datatype> types,
                 std::function<int(MPI_Request*)> start) {
  progress::Lock lock;
  Stream* s;
  if (int err = comm_stream(fn, comm, &s)) return err;
  Stream::Entry e(Stream::Entry::Kind::kColl, fn);
  e.start = std::move(start);
  e.types = types;  // derived ones are kept alive until the entry has run
  append(s, std::move(e));
  return MPI_SUCCESS;
}

// Point-to-point: `init` made the persistent request (checking the arguments); the engine starts
// it in turn.
int enqueue_start(const char* fn, Stream* s, MPI_Request request) {
  Stream::Entry e(Stream::Entry::Kind::kStart, fn);
  e.request = request;
  append(s, std::move(e));
  return MPI_SUCCESS;
}

int enqueue_wait(const char* fn, Stream* s, MPI_Request request, MPI_Status* status) {
  Stream::Entry e(Stream::Entry::Kind::kWait, fn);
  e.request = request;
  e.status = status;
  append(s, std::move(e));
  return MPI_SUCCESS;
}

// The stream of a request MPIX_Isend_enqueue or MPIX_Irecv_enqueue gave.
int request_stream(const char* fn, MPI_Request request, const char* arg, Stream** out) {
  Request* r = request_impl(request);
  Comm* c = r != nullptr && r->persistent ? comm_impl(r->comm) : nullptr;
  if (c == nullptr || c->stream == nullptr || c->stream->freed) {
    return raise_error(nullptr, MPI_ERR_REQUEST, fn,
                       "%s is not a request of MPIX_Isend_enqueue or MPIX_Irecv_enqueue", arg);
  }
  *out = c->stream;
  return MPI_SUCCESS;
}

int check_range(const char* fn, const char* arg, const void* p, size_t bytes) {
  if (bytes == 0 || device::kind(p, bytes) != device::Kind::kInvalid) return MPI_SUCCESS;
  return raise_error(nullptr, MPI_ERR_BUFFER, fn,
                     "%s argument %p (%zu B) is neither host memory nor device memory of this job",
                     arg, p, bytes);
}

}  // namespace

void streams_finalize() {
  for (auto& s : g_streams) progress::wait_until([&s] { return s->queue.empty(); });
  progress::set_engine_step(nullptr, nullptr);
  g_streams.clear();
}

}  // namespace torusmpi::mpi

using torusmpi::mpi::Stream;
namespace mpi = torusmpi::mpi;
namespace progress = torusmpi::progress;

int MPIX_Stream_create(MPI_Info info, MPIX_Stream* stream) {
  progress::Lock lock;
  if (int err = mpi::require_active(mpi::kCreate)) return err;
  (void)info;
  if (stream == nullptr) {
    return mpi::raise_error(nullptr, MPI_ERR_ARG, mpi::kCreate, "stream argument is NULL");
  }
  mpi::g_streams.push_back(std::make_unique<Stream>());
  *stream = reinterpret_cast<MPIX_Stream>(mpi::g_streams.back().get());
  // The engine runs streams whatever TORUSMPI_DEVICE_ENGINE says: nothing else would.
  progress::set_engine_step(mpi::step, nullptr);
  if (!progress::async()) progress::start_async();
  return MPI_SUCCESS;
}

int MPIX_Stream_free(MPIX_Stream* stream) {
  progress::Lock lock;
  constexpr const char* kFn = "MPIX_Stream_free";
  if (stream == nullptr)
    return mpi::raise_error(nullptr, MPI_ERR_ARG, kFn, "stream argument is NULL");
  Stream* s;
  if (int err = mpi::check_stream(kFn, *stream, &s)) return err;
  const int err = mpi::synchronize(kFn, s);
  s->freed = true;
  *stream = MPIX_STREAM_NULL;
  return err;
}

int MPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm* newcomm) {
  progress::Lock lock;
  constexpr const char* kFn = "MPIX_Stream_comm_create";
  Stream* s = nullptr;
  if (stream != MPIX_STREAM_NULL) {
    if (int err = mpi::check_stream(kFn, stream, &s)) return err;
  }
  if (int err = PMPI_Comm_dup(comm, newcomm)) return err;
  mpi::comm_impl(*newcomm)->stream = s;
  return MPI_SUCCESS;
}

int MPIX_Send_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm) {
  progress::Lock lock;
  constexpr const char* kFn = "MPIX_Send_enqueue";
  Stream* s;
  if (int err = mpi::comm_stream(kFn, comm, &s)) return err;
  MPI_Request r;
  if (int err = PMPI_Send_init(buf, count, datatype, dest, tag, comm, &r)) return err;
  mpi::enqueue_start(kFn, s, r);
  return mpi::enqueue_wait(kFn, s, r, MPI_STATUS_IGNORE);
}

int MPIX_Recv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, MPI_Status* status) {
  progress::Lock lock;
  constexpr const char* kFn = "MPIX_Recv_enqueue";
  Stream* s;
  if (int err = mpi::comm_stream(kFn, comm, &s)) return err;
  MPI_Request r;
  if (int err = PMPI_Recv_init(buf, count, datatype, source, tag, comm, &r)) return err;
  mpi::enqueue_start(kFn, s, r);
  return mpi::enqueue_wait(kFn, s, r, status);
}

int MPIX_Isend_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, MPI_Request* request) {
  progress::Lock lock;
  constexpr const char* kFn = "MPIX_Isend_enqueue";
  Stream* s;
  if (int err = mpi::comm_stream(kFn, comm, &s)) return err;
  if (int err = PMPI_Send_init(buf, count, datatype, dest, tag, comm, request)) return err;
  return mpi::enqueue_start(kFn, s, *request);
}

int MPIX_Irecv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, MPI_Request* request) {
  progress::Lock lock;
  constexpr const char* kFn = "MPIX_Irecv_enqueue";
  Stream* s;
  if (int err = mpi::comm_stream(kFn, comm, &s)) return err;
  if (int err = PMPI_Recv_init(buf, count, datatype, source, tag, comm, request)) return err;
  return mpi::enqueue_start(kFn, s, *request);
}

int MPIX_Wait_enqueue(MPI_Request* request, MPI_Status* status) {
  progress::Lock lock;
  return MPIX_Waitall_enqueue(1, request, status);
}

int MPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[],
                         MPI_Status array_of_statuses[]) {
  progress::Lock lock;
  constexpr const char* kFn = "MPIX_Waitall_enqueue";
  if (int err = mpi::require_active(kFn)) return err;
  if (count < 0) {
    return mpi::raise_error(nullptr, MPI_ERR_COUNT, kFn, "count argument is %d", count);
  }
  if (count > 0 && array_of_requests == nullptr) {
    return mpi::raise_error(nullptr, MPI_ERR_ARG, kFn, "array_of_requests argument is NULL");
  }
  // All checked before any is enqueued: an error leaves the stream as it was.
  std::vector<Stream*> streams(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const std::string arg = "array_of_requests[" + std::to_string(i) + "]";
    if (int err = mpi::request_stream(kFn, array_of_requests[i], arg.c_str(), &streams[i]))
      return err;
  }
  for (int i = 0; i < count; ++i) {
    MPI_Status* st =
        array_of_statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &array_of_statuses[i];
    mpi::enqueue_wait(kFn, streams[i], array_of_requests[i], st);
    array_of_requests[i] = MPI_REQUEST_NULL;
  }
  return MPI_SUCCESS;
}

int MPIX_Allreduce_enqueue(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm) {
  progress::Lock lock;
  return mpi::enqueue_coll("MPIX_Allreduce_enqueue", comm, {datatype}, [=](MPI_Request* r) {
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, r);
  });
}

int MPIX_Allgather_enqueue(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  progress::Lock lock;
  return mpi::enqueue_coll(
      "MPIX_Allgather_enqueue", comm, {sendtype, recvtype}, [=](MPI_Request* r) {
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
      });
}

int MPIX_Reduce_scatter_enqueue(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  // The counts are the caller's array, which may be gone when the entry runs: a copy goes.
  std::vector<int> counts;
  {
    progress::Lock lock;
    mpi::Comm* c = mpi::comm_impl(comm);
    if (c != nullptr && recvcounts != nullptr) {
      counts.assign(recvcounts, recvcounts + c->size);
    }
  }
  const bool null_counts = recvcounts == nullptr;
  return mpi::enqueue_coll("MPIX_Reduce_scatter_enqueue", comm, {datatype},
                           [=, counts = std::move(counts)](MPI_Request* r) {
                             return PMPI_Ireduce_scatter(sendbuf, recvbuf,
                                                         null_counts ? nullptr : counts.data(),
                                                         datatype, op, comm, r);
                           });
}

int MPIX_Reduce_scatter_block_enqueue(const void* sendbuf, void* recvbuf, int recvcount,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  progress::Lock lock;
  return mpi::enqueue_coll(
      "MPIX_Reduce_scatter_block_enqueue", comm, {datatype}, [=](MPI_Request* r) {
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, r);
      });
}

int MPIX_Alltoall_enqueue(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  progress::Lock lock;
  return mpi::enqueue_coll(
      "MPIX_Alltoall_enqueue", comm, {sendtype, recvtype}, [=](MPI_Request* r) {
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
      });
}

int MPIX_Bcast_enqueue(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  progress::Lock lock;
  return mpi::enqueue_coll("MPIX_Bcast_enqueue", comm, {datatype}, [=](MPI_Request* r) {
    return PMPI_Ibcast(buffer, count, datatype, root, comm, r);
  });
}

namespace {

// The device calls in stream order: checked now, run by the engine.
int enqueue_device(const char* fn, MPIX_Stream stream, Stream::Entry e) {
  progress::Lock lock;
  Stream* s;
  if (int err = mpi::check_stream(fn, stream, &s)) return err;
  if (e.kind != Stream::Entry::Kind::kHostFn) {
    if (int err = mpi::check_range(fn, "dst", e.dst, e.bytes)) return err;
  }
  if (e.kind == Stream::Entry::Kind::kCopy) {
    if (int err = mpi::check_range(fn, "src", e.src, e.bytes)) return err;
  }
  if (e.kind == Stream::Entry::Kind::kHostFn && e.host == nullptr) {
    return mpi::raise_error(nullptr, MPI_ERR_ARG, fn, "fn argument is NULL");
  }
  mpi::append(s, std::move(e));
  return MPI_SUCCESS;
}

}  // namespace

int torusmpi_stream_memcpy(MPIX_Stream stream, void* dst, const void* src, size_t bytes) {
  progress::Lock lock;
  Stream::Entry e(Stream::Entry::Kind::kCopy, "torusmpi_stream_memcpy");
  e.dst = dst;
  e.src = src;
  e.bytes = bytes;
  return enqueue_device(e.fn, stream, std::move(e));
}

int torusmpi_stream_memset(MPIX_Stream stream, void* dst, int value, size_t bytes) {
  progress::Lock lock;
  Stream::Entry e(Stream::Entry::Kind::kFill, "torusmpi_stream_memset");
  e.dst = dst;
  e.value = value;
  e.bytes = bytes;
  return enqueue_device(e.fn, stream, std::move(e));
}

int torusmpi_stream_host_fn(MPIX_Stream stream, int (*fn)(void* arg), void* arg) {
  progress::Lock lock;
  Stream::Entry e(Stream::Entry::Kind::kHostFn, "torusmpi_stream_host_fn");
  e.host = fn;
  e.arg = arg;
  return enqueue_device(e.fn, stream, std::move(e));
}

int torusmpi_stream_synchronize(MPIX_Stream stream) {
  progress::Lock lock;
  constexpr const char* kFn = "torusmpi_stream_synchronize";
  Stream* s;
  if (int err = mpi::check_stream(kFn, stream, &s)) return err;
  return mpi::synchronize(kFn, s);
}

int torusmpi_stream_query(MPIX_Stream stream, int* idle) {
  progress::Lock lock;
  constexpr const char* kFn = "torusmpi_stream_query";
  Stream* s;
  if (int err = mpi::check_stream(kFn, stream, &s)) return err;
  if (idle == nullptr) return mpi::raise_error(nullptr, MPI_ERR_ARG, kFn, "idle argument is NULL");
  *idle = s->queue.empty() ? 1 : 0;
  return MPI_SUCCESS;
}
