// A thread of the process that makes the file calls of nonblocking independent accesses
// (MPI_File_iread_at, iwrite_at, iread, iwrite, iread_shared, iwrite_shared), so that the caller
// returns at once and computes while the kernel copies: the I/O proceeds whatever the caller
// does, without it calling MPI. The thread starts with the first job and then sleeps whenever it
// has none. It calls no MPI and touches no library state: a job holds everything its file call
// needs (descriptor, ranges, the staged bytes), and whoever waits for it (the MPI layer's poll
// function, under the library's lock) finishes it (unstaging, errors, the request) once done()
// says so. Jobs run one at a time, in the order they came: a job blocked in the kernel (a file
// lock another process holds) holds up the ones after it.
#ifndef TORUSMPI_IO_WORKER_H_
#define TORUSMPI_IO_WORKER_H_

#include <atomic>

namespace torusmpi::io {

class Job {
 public:
  virtual ~Job() = default;
  // The file call(s), on the worker thread.
  virtual void run() = 0;
  // Whether run() has returned (its results are then visible to the caller's thread).
  bool done() const { return done_.load(std::memory_order_acquire); }

 private:
  friend void run_job(Job* job);
  std::atomic<bool> done_{false};
};

// Queues job for the worker (started on first use). The job must live until done().
void submit(Job* job);

}  // namespace torusmpi::io

#endif  // TORUSMPI_IO_WORKER_H_
