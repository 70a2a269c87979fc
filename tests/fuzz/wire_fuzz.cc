// Fuzz target: fragments as the network transports receive them (pml/ofi, pml/ucx), from a peer
// that may be of another job, version or protocol. Each fragment is split as the transports split
// it (ofi: | Stamp | FragHeader | payload | in one buffer; ucx: an AM header of FragHeader and
// Stamp, the payload apart), put in order by net::PeerOrder (pml/net_peers.h), and checked as
// pml::deliver checks it (fragment_fault, pml/transport.h). A sender rank that is not in the job
// or a fragment whose place is taken must end the job naming the rank (here: an exception from
// the two functions the library has end it); nothing may be read past a fragment.
//
// Input: frames of | flags (1 B: bit 0 ucx) | length (2 B) | bytes |, for rank 1 of a job of 4.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "boot/boot.h"
#include "pml/net_peers.h"
#include "pml/transport.h"

namespace torusmpi::pml::net {

// The library ends the job; here they throw, and the frame loop stops as the job would.
void not_in_job(const char* transport, int rank, int from) {
  throw std::runtime_error(std::string(transport) + ": rank " + std::to_string(rank) +
                           " received a fragment from rank " + std::to_string(from));
}
void out_of_order(const char* transport, int rank, int from, uint32_t seq, uint32_t next,
                  const char* what) {
  throw std::runtime_error(std::string(transport) + ": rank " + std::to_string(rank) +
                           " received fragment " + std::to_string(seq) + " from rank " +
                           std::to_string(from) + " (next " + std::to_string(next) + "): " + what);
}

}  // namespace torusmpi::pml::net

namespace {

using namespace torusmpi;
using namespace torusmpi::pml;

constexpr size_t kWireHeader = sizeof(net::Stamp) + sizeof(FragHeader);

// pml::deliver's check, and a read of every payload byte.
void deliver(int peer, const FragHeader& h, const uint8_t* payload, size_t len) {
  if (peer < 0 || peer >= 4) std::abort();        // PeerOrder let an unchecked rank through
  if (fragment_fault(h, len) != nullptr) return;  // the job ends, naming peer
  volatile uint8_t sum = 0;
  for (size_t i = 0; i < len; ++i) sum += payload[i];
  if (h.type == FragType::kEager && h.size != len) std::abort();
}

// As ofi's take(): the buffer holds stamp, header and payload.
int take_ofi(net::PeerOrder<std::vector<uint8_t>>& order, const uint8_t* wire, size_t len) {
  if (len < kWireHeader) return 0;  // the job ends: "shorter than a header"
  net::Stamp stamp;
  std::memcpy(&stamp, wire, sizeof stamp);
  auto hand_over = [](int peer, const uint8_t* w, size_t n) {
    FragHeader h;
    std::memcpy(&h, w + sizeof(net::Stamp), sizeof h);
    deliver(peer, h, w + kWireHeader, n - kWireHeader);
  };
  if (!order.in_turn(stamp)) {
    order.hold(stamp, std::vector<uint8_t>(wire, wire + len));
    return 0;
  }
  hand_over(stamp.from, wire, len);
  return 1 + order.delivered(stamp.from, [&](const std::vector<uint8_t>& frag) {
    hand_over(stamp.from, frag.data(), frag.size());
  });
}

// As ucx's on_am() and arrived(): the AM header is the FragHeader and the stamp.
struct UcxHeader {
  FragHeader h;
  net::Stamp stamp;
};
struct UcxArrival {
  UcxHeader w;
  std::vector<uint8_t> data;
};
int take_ucx(net::PeerOrder<UcxArrival>& order, const uint8_t* bytes, size_t len) {
  if (len < sizeof(UcxHeader)) return 0;  // the job ends: a header of the wrong size
  UcxArrival a;
  std::memcpy(&a.w, bytes, sizeof a.w);
  a.data.assign(bytes + sizeof a.w, bytes + len);
  if (!order.in_turn(a.w.stamp)) {
    order.hold(a.w.stamp, std::move(a));
    return 0;
  }
  deliver(a.w.stamp.from, a.w.h, a.data.data(), a.data.size());
  return 1 + order.delivered(a.w.stamp.from, [&](const UcxArrival& next) {
    deliver(next.w.stamp.from, next.w.h, next.data.data(), next.data.size());
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  boot::JobInfo job;
  job.rank = 1;
  job.size = 4;
  net::PeerOrder<std::vector<uint8_t>> ofi("ofi", job);
  net::PeerOrder<UcxArrival> ucx("ucx", job);
  size_t at = 0;
  try {
    while (at + 3 <= size) {
      const bool is_ucx = data[at] & 1;
      size_t len = data[at + 1] | data[at + 2] << 8;
      at += 3;
      len = std::min(len, size - at);
      // A copy of exactly the fragment's bytes: a read past it is caught.
      std::vector<uint8_t> frame(data + at, data + at + len);
      at += len;
      if (is_ucx) {
        take_ucx(ucx, frame.data(), frame.size());
      } else {
        take_ofi(ofi, frame.data(), frame.size());
      }
    }
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).find("from rank") == std::string::npos) std::abort();
  }
  ofi.drop_held([](std::vector<uint8_t>&) {});
  ucx.drop_held([](UcxArrival&) {});
  return 0;
}
