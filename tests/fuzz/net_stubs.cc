// What pml/net.cc calls besides parse_card, for net_card_fuzz: the bootstrap and the transports
// are not part of the card's decoding, so these stand in for them and are never reached.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "boot/boot.h"
#include "pml/net.h"
#include "pml/transport.h"

namespace torusmpi {
namespace boot {
Status put(const std::string&, const void*, size_t) { std::abort(); }
Status get(int, const std::string&, std::vector<uint8_t>*) { std::abort(); }
}  // namespace boot
namespace pml {
void set_transport(int, Transport*) { std::abort(); }
int peer_count() { std::abort(); }
int add_peer(Transport*) { std::abort(); }
namespace ofi {
Status open(const boot::JobInfo&, std::unique_ptr<net::NetworkTransport>*, std::vector<uint8_t>*,
            std::string*) {
  std::abort();
}
}  // namespace ofi
namespace ucx {
Status open(const boot::JobInfo&, std::unique_ptr<net::NetworkTransport>*, std::vector<uint8_t>*,
            std::string*) {
  std::abort();
}
}  // namespace ucx
}  // namespace pml
}  // namespace torusmpi
