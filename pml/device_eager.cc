#include "pml/device_eager.h"

#include "core/progress.h"
#include "device/device.h"

namespace torusmpi::pml {
namespace {

// Room for this many messages of the limit at once (512 KiB of HBM at the default 16 KiB), and for
// about a hundred times as many small ones: a window of small sends (osu_bw's 64) does not run out.
constexpr size_t kLimitMessages = 32;
// Chunks start on a cache line, and the word shares it with the payload's first bytes: the reader,
// which has just read them, stores into a line it holds already (a word of its own line cost the
// reader a second miss, and the sender a third when it takes the chunk back).
constexpr size_t kAlign = 64;

size_t round_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

void DeviceEagerRing::init(size_t limit) {
  limit_ = limit;
  capacity_ = kLimitMessages * round_up(kSlotWordOffset + limit);
}

void DeviceEagerRing::give(Request* r) {
  auto* c = static_cast<DeviceChunk*>(r->user);
  if (c->network) {
    progress::add_work(-1);
    --c->ring->network_out_;
  }
  device::store_word(c->word, 0);
}

void DeviceEagerRing::reclaim() {
  while (count_ > 0 && device::load_word(chunks_[first_].word) == 0) {
    first_ = (first_ + 1) % kMaxChunks;
    --count_;
  }
}

bool DeviceEagerRing::place(size_t need, size_t* at) const {
  if (count_ == kMaxChunks) return false;
  if (count_ == 0) {
    *at = 0;
    return true;
  }
  // Free: [head_, capacity_) and [0, tail) when the head is past the oldest chunk, [head_, tail)
  // when it has wrapped behind it; nothing when they meet with chunks lent.
  const size_t tail = chunks_[first_].offset;
  if (head_ > tail && capacity_ - head_ >= need) {
    *at = head_;
  } else if (head_ > tail && tail >= need) {
    *at = 0;
  } else if (head_ < tail && tail - head_ >= need) {
    *at = head_;
  } else {
    return false;
  }
  return true;
}

DeviceChunk* DeviceEagerRing::take(size_t bytes, bool network) {
  if (bytes > limit_) return nullptr;
  if (mem_ == nullptr) {
    void* mem = nullptr;
    if (capacity_ == 0 || device::alloc(capacity_, &mem) != Status::kOk) return nullptr;
    mem_ = static_cast<uint8_t*>(mem);
    chunks_.resize(kMaxChunks);
  }
  // Taken back only when the ring has no room: a chunk's word was last written by the peer, so
  // reading it costs a cache miss, and many read at once overlap theirs.
  const size_t need = round_up(kSlotWordOffset + bytes);
  size_t at = 0;
  if (!place(need, &at)) {
    reclaim();
    if (!place(need, &at)) return nullptr;
  }
  head_ = at + need;
  DeviceChunk& c = chunks_[(first_ + count_++) % kMaxChunks];
  c.ring = this;
  c.word = mem_ + at;
  c.payload = mem_ + at + kSlotWordOffset;
  c.offset = at;
  c.bytes = need;
  c.network = network;
  c.req.user = &c;
  c.req.on_complete = give;
  device::store_word(c.word, 1);
  if (network) {
    progress::add_work(1);
    ++network_out_;
  }
  return &c;
}

void DeviceEagerRing::clear() {
  chunks_.clear();
  first_ = count_ = 0;
  mem_ = nullptr;
  head_ = 0;
  network_out_ = 0;
}

}  // namespace torusmpi::pml
