// Fuzz target: the records of a shared-memory ring (pml/shm/ring.h) as a reader finds them. The
// ring's bytes are another process's to write, so the reader must take any bytes: records it
// cannot trust stop the ring with a fault (shm.cc then ends the job naming the writer), and no
// record is read past the ring. Every record handed out goes through the pml's check
// (fragment_fault), as pml::deliver does.
//
// Input: byte 0 picks the mode. Mode even: bytes 1..8 are the reader's head, the rest the ring's
// data (4 KiB, zero-filled). Mode odd: the rest are payload lengths (2 bytes each) that a writer
// pushes and the reader drains, in turns; what comes out must be what went in.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "pml/shm/ring.h"
#include "pml/transport.h"

namespace {

using namespace torusmpi::pml;
using namespace torusmpi::pml::shm;

constexpr uint64_t kCap = 4096;

// A reader over `ring` (exactly kCap bytes, so that a read past it is caught).
int drain_all(RingReader& reader) {
  int records = 0;
  reader.drain([&](const FragHeader& h, const uint8_t* payload, size_t len) {
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < len; ++i) sum += payload[i];
    (void)fragment_fault(h, len);
    ++records;
  });
  return records;
}

void hostile(const uint8_t* data, size_t size) {
  RingControl ctl;
  uint64_t head = 0;
  if (size >= 8) std::memcpy(&head, data, 8);
  ctl.head.store(head);
  auto ring = std::make_unique<uint8_t[]>(kCap);
  std::memset(ring.get(), 0, kCap);
  std::memcpy(ring.get(), data + std::min<size_t>(size, 8),
              std::min<size_t>(kCap, size - std::min<size_t>(size, 8)));
  RingReader reader;
  reader.attach(&ctl, ring.get(), kCap);
  drain_all(reader);
  if (reader.fault() != nullptr && drain_all(reader) != 0) std::abort();  // stopped for good
}

void round_trip(const uint8_t* data, size_t size) {
  RingControl ctl;
  auto ring = std::make_unique<uint8_t[]>(kCap);
  std::memset(ring.get(), 0, kCap);
  RingWriter writer;
  RingReader reader;
  writer.attach(&ctl, ring.get(), kCap);
  reader.attach(&ctl, ring.get(), kCap);
  std::vector<uint8_t> payload(ring_max_payload(kCap));
  uint64_t sent = 0, received = 0;
  for (size_t i = 0; i + 1 < size; i += 2) {
    const size_t len = (data[i] | data[i + 1] << 8) % (payload.size() + 1);
    FragHeader h{};
    h.type = FragType::kEager;
    h.size = len;
    h.sreq = sent;
    std::memset(payload.data(), static_cast<int>(sent & 0xff), len);
    if (!writer.push(h, payload.data(), len)) {
      // Full: the reader empties it, then there is room.
      reader.drain([&](const FragHeader& g, const uint8_t* p, size_t n) {
        if (g.sreq != received++ || g.size != n || (n > 0 && p[n - 1] != (g.sreq & 0xff))) {
          std::abort();
        }
      });
      if (!writer.push(h, payload.data(), len)) std::abort();
    }
    ++sent;
  }
  reader.drain([&](const FragHeader& g, const uint8_t*, size_t n) {
    if (g.sreq != received++ || g.size != n) std::abort();
  });
  if (received != sent || reader.fault() != nullptr) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] & 1) {
    round_trip(data + 1, size - 1);
  } else {
    hostile(data + 1, size - 1);
  }
  return 0;
}
