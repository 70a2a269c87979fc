// Fuzz target: the address cards of the network transports (pml/net.cc, parse_card): what a peer
// published through the bootstrap, for TORUSMPI_NET=ofi or ucx. A card of the wrong size or with
// no address or pid is an error naming the transport and the peer; a good one gives the address
// bytes as published and the pid only when the peer's host is this one.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "pml/net.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torusmpi;
  const std::vector<uint8_t> value(data, data + size);
  for (const char* host : {"node-a", ""}) {
    pml::net::AddressCard card;
    std::string error;
    const Status s = pml::net::parse_card("ofi", "libfabric", 7, value, host, &card, &error);
    if (s == Status::kOk) {
      if (card.address.empty() || card.address.size() >= size || card.local_pid < 0) std::abort();
    } else if (error.compare(0, 12, "ofi: rank 7 ") != 0) {
      std::abort();
    }
  }
  return 0;
}
