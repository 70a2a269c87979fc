#include "pml/net_peers.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include "core/progress.h"

namespace torusmpi::pml::net {

void not_in_job(const char* transport, int rank, int from) {
  boot::abort_job(1, std::string(transport) + ": rank " + std::to_string(rank) +
                         " received a fragment from rank " + std::to_string(from) +
                         ", which is not in this job");
}

void out_of_order(const char* transport, int rank, int from, uint32_t seq, uint32_t next,
                  const char* what) {
  boot::abort_job(1, std::string(transport) + ": rank " + std::to_string(rank) +
                         " received fragment " + std::to_string(seq) + " from rank " +
                         std::to_string(from) + ", whose place " + what +
                         " (next due: " + std::to_string(next) + ")");
}

Bell::Bell() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

Bell::~Bell() {
  if (fd_ >= 0) close(fd_);
}

// Neither can fail in a way that matters: a full counter (2^64 - 2 rings unread) is a ring
// pending too, and an empty one is nothing to take.
void Bell::ring() {
  const uint64_t one = 1;
  if (fd_ < 0) return;
  ssize_t ignored = write(fd_, &one, sizeof one);
  (void)ignored;
}

void Bell::drain() {
  uint64_t rings;
  if (fd_ < 0) return;
  ssize_t ignored = read(fd_, &rings, sizeof rings);
  (void)ignored;
}

void sleep_on(int fd, int also, int64_t us, Bell* bell) {
  timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
  pollfd fds[3];
  nfds_t n = 0;
  if (fd >= 0) fds[n++] = pollfd{fd, POLLIN, 0};
  if (also >= 0) fds[n++] = pollfd{also, POLLIN, 0};
  if (bell != nullptr && bell->fd() >= 0) fds[n++] = pollfd{bell->fd(), POLLIN, 0};
  {
    // The progress thread sleeps here holding the library's lock: the application gets it
    // meanwhile.
    progress::Unlocked unlocked;
    if (n == 0) {
      nanosleep(&ts, nullptr);
    } else {
      ppoll(fds, n, &ts, nullptr);
    }
  }
  // After the sleep: a ring that comes later ends the next one.
  if (bell != nullptr) bell->drain();
}

void flush(const std::function<bool()>& done, const std::function<int()>& progress) {
  const double deadline = progress::now_seconds() + kFlushTimeoutS;
  while (!done() && progress::now_seconds() < deadline) {
    if (progress() <= 0) {
      timespec ts{0, 100000};
      nanosleep(&ts, nullptr);
    }
  }
}

}  // namespace torusmpi::pml::net
