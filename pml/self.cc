#include "pml/self.h"

#include <poll.h>
#include <time.h>

#include <cstring>

namespace torusmpi::pml {

bool SelfTransport::send(int, const FragHeader& h, const void* payload, size_t len) {
  const auto* p = static_cast<const uint8_t*>(payload);
  queue_.push_back(Frag{h, std::vector<uint8_t>(p, p + len)});
  return true;
}

bool SelfTransport::read_remote(int, uint64_t addr, void* dst, size_t len, const void*, size_t) {
  std::memcpy(dst, reinterpret_cast<const void*>(addr), len);
  return true;
}

int SelfTransport::poll() {
  // Only what is queued now: delivering may queue more (an acknowledgement to ourselves).
  size_t n = queue_.size();
  for (size_t i = 0; i < n; ++i) {
    Frag f = std::move(queue_.front());
    queue_.pop_front();
    deliver(self_, f.h, f.payload.data(), f.payload.size());
  }
  return static_cast<int>(n);
}

void SelfTransport::sleep(int64_t us, int also) {
  timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
  if (also >= 0) {
    pollfd fd{also, POLLIN, 0};
    ppoll(&fd, 1, &ts, nullptr);
    return;
  }
  nanosleep(&ts, nullptr);
}

}  // namespace torusmpi::pml
