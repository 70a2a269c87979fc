// A one-way queue of fragments between two processes in shared memory: one writer, one reader, no
// lock. Positions count bytes since the start and only grow; a record never straddles the end of
// the ring (a skip record fills the gap instead), so the reader hands out payloads in place.
//
//   | tail (writer's cache line) | head (reader's cache line) | data: cap bytes, cap a power of 2 |
//   record: | len:u32 kind:u32 | FragHeader (48 B) | payload (len B) | padding to 64 B |
//
// The writer publishes a record with a release store of tail; the reader frees it with a release
// store of head. Each side keeps its own position and a cached copy of the other's, so the hot
// path touches the other side's cache line only when the ring looks full (writer) or empty
// (reader).
#ifndef TORUSMPI_PML_SHM_RING_H_
#define TORUSMPI_PML_SHM_RING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pml/transport.h"

namespace torusmpi::pml::shm {

struct alignas(64) RingControl {
  std::atomic<uint64_t> tail{0};
  char pad0[64 - sizeof(std::atomic<uint64_t>)];
  std::atomic<uint64_t> head{0};
  char pad1[64 - sizeof(std::atomic<uint64_t>)];
};
static_assert(sizeof(RingControl) == 128, "tail and head live on separate cache lines");

struct RecordPrefix {
  uint32_t len;   // payload bytes (kSkip: bytes skipped, prefix included)
  uint32_t kind;  // kFragment or kSkip
};
constexpr uint32_t kFragment = 1;
constexpr uint32_t kSkip = 2;
constexpr size_t kRecordOverhead = sizeof(RecordPrefix) + sizeof(FragHeader);

inline uint64_t record_bytes(size_t len) { return (kRecordOverhead + len + 63) & ~uint64_t{63}; }

// The largest payload a ring of `cap` bytes takes: a quarter of it, so that several records are
// in flight and a record always fits after waiting.
inline size_t ring_max_payload(uint64_t cap) { return cap / 4 - kRecordOverhead; }

class RingWriter {
 public:
  void attach(RingControl* ctl, uint8_t* data, uint64_t cap) {
    ctl_ = ctl;
    data_ = data;
    cap_ = cap;
    tail_ = ctl->tail.load(std::memory_order_relaxed);
    head_cache_ = ctl->head.load(std::memory_order_acquire);
  }

  // Appends one record; false when the ring has no room for it now.
  bool push(const FragHeader& h, const void* payload, size_t len) {
    uint64_t need = record_bytes(len);
    uint64_t off = tail_ & (cap_ - 1);
    uint64_t gap = cap_ - off;  // bytes to the end of the ring
    uint64_t total = need <= gap ? need : gap + need;
    if (tail_ + total - head_cache_ > cap_) {
      head_cache_ = ctl_->head.load(std::memory_order_acquire);
      if (tail_ + total - head_cache_ > cap_) return false;
    }
    if (need > gap) {
      auto* skip = reinterpret_cast<RecordPrefix*>(data_ + off);
      skip->len = static_cast<uint32_t>(gap);
      skip->kind = kSkip;
      tail_ += gap;
      off = 0;
    }
    uint8_t* rec = data_ + off;
    auto* prefix = reinterpret_cast<RecordPrefix*>(rec);
    prefix->len = static_cast<uint32_t>(len);
    prefix->kind = kFragment;
    std::memcpy(rec + sizeof(RecordPrefix), &h, sizeof h);
    if (len > 0) std::memcpy(rec + kRecordOverhead, payload, len);
    tail_ += need;
    ctl_->tail.store(tail_, std::memory_order_release);
    return true;
  }

 private:
  RingControl* ctl_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t cap_ = 0;
  uint64_t tail_ = 0;
  uint64_t head_cache_ = 0;
};

class RingReader {
 public:
  void attach(RingControl* ctl, uint8_t* data, uint64_t cap) {
    ctl_ = ctl;
    data_ = data;
    cap_ = cap;
    head_ = ctl->head.load(std::memory_order_relaxed);
    tail_cache_ = head_;
  }

  bool empty() const { return ctl_->tail.load(std::memory_order_acquire) == head_; }

  // Calls fn(header, payload, len) for each record written so far, in order; the payload is
  // valid during the call only. Returns the number of records.
  template <class Fn>
  int drain(Fn&& fn) {
    if (tail_cache_ == head_) {
      tail_cache_ = ctl_->tail.load(std::memory_order_acquire);
      if (tail_cache_ == head_) return 0;
    }
    int n = 0;
    while (head_ != tail_cache_) {
      uint8_t* rec = data_ + (head_ & (cap_ - 1));
      const auto* prefix = reinterpret_cast<const RecordPrefix*>(rec);
      if (prefix->kind == kSkip) {
        head_ += prefix->len;
        continue;
      }
      FragHeader h;
      std::memcpy(&h, rec + sizeof(RecordPrefix), sizeof h);
      size_t len = prefix->len;
      fn(h, rec + kRecordOverhead, len);
      head_ += record_bytes(len);
      // Freed record by record: a writer waiting for room starts as early as possible.
      ctl_->head.store(head_, std::memory_order_release);
      ++n;
    }
    return n;
  }

 private:
  RingControl* ctl_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t cap_ = 0;
  uint64_t head_ = 0;
  uint64_t tail_cache_ = 0;
};

}  // namespace torusmpi::pml::shm

#endif  // TORUSMPI_PML_SHM_RING_H_
