#include "pml/self.h"

#include <cstring>

#include "device/device.h"
#include "pml/net_peers.h"

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

bool SelfTransport::read_device(int, uint64_t addr, void* dst, size_t len) {
  device::copy(dst, reinterpret_cast<const void*>(addr), len);
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

// Nothing of its own to wait on: the other transport's descriptor, or the time.
void SelfTransport::sleep(int64_t us, int also) { net::sleep_on(-1, also, us); }

}  // namespace torusmpi::pml
