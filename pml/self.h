// The loopback: fragments a rank sends to itself. They wait in a queue until the next poll, so a
// send never runs the receive side inside the sender's call, and the single copy of a rendezvous
// is a memcpy within this process.
#ifndef TORUSMPI_PML_SELF_H_
#define TORUSMPI_PML_SELF_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "pml/transport.h"

namespace torusmpi::pml {

class SelfTransport final : public Transport {
 public:
  explicit SelfTransport(int self) : self_(self) {}
  const char* name() const override { return "self"; }
  bool send(int peer, const FragHeader& h, const void* payload, size_t len) override;
  size_t max_payload() const override { return SIZE_MAX; }
  bool read_remote(int peer, uint64_t addr, void* dst, size_t len, const void* key,
                   size_t key_len) override;
  bool device_reach(int) const override { return true; }
  bool read_device(int peer, uint64_t addr, void* dst, size_t len) override;
  int poll() override;
  bool pending() const override { return !queue_.empty(); }
  void sleep(int64_t us, int also) override;

 private:
  struct Frag {
    FragHeader h;
    std::vector<uint8_t> payload;
  };
  int self_;
  std::deque<Frag> queue_;
};

}  // namespace torusmpi::pml

#endif  // TORUSMPI_PML_SELF_H_
