#include "io/worker.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace torusmpi::io {

void run_job(Job* job) {
  job->run();
  job->done_.store(true, std::memory_order_release);
}

namespace {

struct Worker {
  std::mutex m;
  std::condition_variable wake;
  std::deque<Job*> jobs;
  bool started = false;

  void loop() {
    for (;;) {
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(m);
        wake.wait(lock, [this] { return !jobs.empty(); });
        job = jobs.front();
        jobs.pop_front();
      }
      run_job(job);
    }
  }
};

// Never destroyed: the thread sleeps in it until the process ends (a job in flight then is the
// program's own error: MPI wants every request completed before MPI_Finalize).
Worker* worker() {
  static Worker* w = new Worker;
  return w;
}

}  // namespace

void submit(Job* job) {
  Worker* w = worker();
  {
    std::lock_guard<std::mutex> lock(w->m);
    w->jobs.push_back(job);
    if (!w->started) {
      w->started = true;
      std::thread([w] { w->loop(); }).detach();
    }
  }
  w->wake.notify_one();
}

}  // namespace torusmpi::io
