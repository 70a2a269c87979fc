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

// How long a send waits for its reader before it copies its payload into the chunk. A reader in
// MPI comes within a few microseconds; one that computes, or has lost its core, may not for
// milliseconds, and the copy costs about a microsecond.
constexpr double kMoveAfterUs = 10;
// Of the polls that find nothing, one in this many looks at every lent chunk
// (DeviceEagerRing::poll).
constexpr unsigned kFullPollEvery = 8;

size_t round_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

void DeviceEagerRing::init(size_t limit, void (*complete)(Request*)) {
  limit_ = limit;
  complete_ = complete;
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
  // A lent chunk read is taken back once poll has completed its send.
  while (count_ > 0 && chunks_[first_].lent == nullptr &&
         device::load_word(chunks_[first_].word) == kChunkFree) {
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
  c.lent = nullptr;
  if (network) {
    progress::add_work(1);
    ++network_out_;
  }
  return &c;
}

void DeviceEagerRing::fill(DeviceChunk* c, const void* buf, size_t bytes) {
  device::copy(c->payload, buf, bytes);
  device::store_word(c->word, kChunkCopied);
}

void DeviceEagerRing::lend(DeviceChunk* c, const void* buf, Request* send) {
  device::store_word(c->word, kChunkLent);
  c->lent = send;
  c->source = buf;
  c->found_lent_at = 0;
  ++lent_;
}

Request* DeviceEagerRing::unlend(DeviceChunk& c) {
  Request* send = c.lent;
  c.lent = nullptr;
  --lent_;
  return send;
}

bool DeviceEagerRing::move(DeviceChunk& c) {
  if (!device::exchange_word(c.word, kChunkLent, kChunkMoving)) return false;
  device::copy(c.payload, c.source, c.req.capacity_);  // the message's size (take's caller)
  device::store_word(c.word, kChunkCopied);
  complete_(unlend(c));
  return true;
}

int DeviceEagerRing::poll(bool idle) {
  // Readers mostly read in order: the oldest lent chunks first, as far as they are read.
  // The oldest chunk, found free, is taken back at once: reclaim() would look at its word again
  // (a miss, since the reader wrote it last).
  int done = 0;
  size_t i = 0;
  while (i < count_ && lent_ > 0) {
    DeviceChunk& c = chunks_[(first_ + i) % kMaxChunks];
    if (c.lent == nullptr) {
      ++i;
      continue;
    }
    if (device::load_word(c.word) != kChunkFree) break;
    Request* send = unlend(c);
    if (i == 0) {
      first_ = (first_ + 1) % kMaxChunks;
      --count_;
    } else {
      ++i;
    }
    complete_(send);  // may send again, and take chunks
    ++done;
  }
  // The rest (read out of order, or lent too long) only now and then while this rank waits: each
  // look at a word the reader has written is a cache miss.
  if (done > 0 || !idle || lent_ == 0 || ++idle_polls_ % kFullPollEvery != 0) return done;
  const double now = progress::now_seconds();
  for (; i < count_ && lent_ > 0; ++i) {
    DeviceChunk& c = chunks_[(first_ + i) % kMaxChunks];
    if (c.lent == nullptr) continue;
    const uint64_t word = device::load_word(c.word);
    if (word == kChunkFree) {
      complete_(unlend(c));
      ++done;
    } else if (word == kChunkLent) {
      if (c.found_lent_at == 0) {
        c.found_lent_at = now;
      } else if ((now - c.found_lent_at) * 1e6 >= kMoveAfterUs && move(c)) {
        ++done;
      }
    }
  }
  return done;
}

void DeviceEagerRing::settle(Request* r) {
  if (chunks_.empty()) return;
  const auto at = reinterpret_cast<uintptr_t>(r);
  const auto first = reinterpret_cast<uintptr_t>(chunks_.data());
  if (at < first || at >= first + chunks_.size() * sizeof(DeviceChunk)) return;
  DeviceChunk& c = *static_cast<DeviceChunk*>(r->user);
  // Its reader asked for a push: it reads nothing of this rank's HBM, so the move is never raced.
  if (c.lent != nullptr) move(c);
}

void DeviceEagerRing::move_all() {
  for (size_t i = 0; i < count_ && lent_ > 0; ++i) {
    DeviceChunk& c = chunks_[(first_ + i) % kMaxChunks];
    // Not moved: its reader has just read it (poll sees the word free).
    if (c.lent == nullptr || move(c)) continue;
    progress::wait_until([&c] { return c.lent == nullptr; });
  }
}

void DeviceEagerRing::clear() {
  chunks_.clear();
  first_ = count_ = 0;
  mem_ = nullptr;
  head_ = 0;
  network_out_ = 0;
  lent_ = 0;
}

}  // namespace torusmpi::pml
