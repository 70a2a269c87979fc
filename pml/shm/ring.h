// A one-way queue of fragments between two processes in shared memory: one writer, one reader, no
// lock. Positions count bytes since the start and only grow; a record never straddles the end of
// the ring (a skip record fills the gap instead), so the reader hands out payloads in place.
//
//   | head (the reader's cache line) | data: cap bytes, cap a power of 2 |
//   record:  | prefix: valid, kind, len (8 B) | FragHeader (40 B) | payload (len B) | pad to 32 B |
//   compact: | prefix (8 B) | context, source, tag (16 B) | payload (len B) | pad to 32 B |
//
// A compact record carries an eager message that needs no more (no flags, no request to answer,
// one fragment: pml::send_now's), so up to 40 payload bytes take one cache line, not 16, and a
// message of up to 8 bytes takes half of one: a window of them moves half the lines (osu_bw at
// 8 B: 0.92x Open MPI's rate with 64-byte records, 1.00-1.03x with 32).
// Records announce themselves: the writer fills a record, then sets its prefix with a release
// store; the reader polls the prefix at its head and needs no tail word, so a small message costs
// one cache line moving from writer to reader. A
// prefix the reader reaches may hold stale bytes of an earlier lap, so before publishing a record
// the writer clears the prefix of the one after it; one line of the ring is kept free for that.
// The reader frees space with a release store of head, which the writer reads only when its
// cached copy says the ring is full. A writer that found it full says so in the head's line
// (waiting), so that the reader knows to wake it when it frees room.
//
// Two rings may carry one ordered stream (a node's host queue and its device queue between the
// same two ranks): each record then carries the stream's sequence number, and the reader takes a
// ring's records only while they are the next of the stream (drain with `next`).
#ifndef TORUSMPI_PML_SHM_RING_H_
#define TORUSMPI_PML_SHM_RING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/copy.h"
#include "pml/transport.h"

namespace torusmpi::pml::shm {

struct alignas(64) RingControl {
  std::atomic<uint64_t> head{0};
  std::atomic<uint32_t> waiting{0};  // the writer found no room: set and cleared by it
  char pad[64 - sizeof(std::atomic<uint64_t>) - sizeof(std::atomic<uint32_t>)];
};
static_assert(sizeof(RingControl) == 64, "head has its cache line to itself");

// The prefix word: bit 63 says the record is there, bits 40..62 its sequence number (modulo 2^23:
// more records than that never wait in two rings), bits 32..39 its kind, bits 0..31 its length
// (payload bytes; for a skip, the bytes skipped).
constexpr uint64_t kValid = uint64_t{1} << 63;
constexpr uint64_t kSkipKind = uint64_t{1} << 32;
constexpr uint64_t kCompactKind = uint64_t{1} << 33;
constexpr int kSeqShift = 40;
constexpr uint64_t kSeqMask = (uint64_t{1} << 23) - 1;
constexpr size_t kRecordOverhead = sizeof(uint64_t) + sizeof(FragHeader);
// What a compact record keeps of its FragHeader; the rest is implied (kEager, no flags, size = len,
// no sreq or rreq).
struct CompactHeader {
  uint32_t context;
  int32_t source;
  int32_t tag;
  uint32_t reserved;
};
constexpr size_t kCompactOverhead = sizeof(uint64_t) + sizeof(CompactHeader);
constexpr uint64_t kLine = 64;
// Records start on multiples of this: two small messages share a cache line.
constexpr uint64_t kRecordAlign = 32;
// Lines of a record's payload the reader asks for ahead (the hardware's prefetcher follows a
// longer copy by itself).
constexpr uint64_t kPrefetchLines = 8;

inline uint64_t record_bytes(size_t len, bool compact = false) {
  return ((compact ? kCompactOverhead : kRecordOverhead) + len + kRecordAlign - 1) &
         ~(kRecordAlign - 1);
}

inline bool fits_compact(const FragHeader& h, size_t len) {
  return h.type == FragType::kEager && h.flags == 0 && h.reserved == 0 && h.sreq == 0 &&
         h.rreq == 0 && h.size == len;
}

// The largest payload a ring of `cap` bytes takes: a quarter of it, so that several records are
// in flight and a record always fits after waiting.
inline size_t ring_max_payload(uint64_t cap) { return cap / 4 - kRecordOverhead; }

inline std::atomic<uint64_t>* prefix_at(uint8_t* data, uint64_t offset) {
  return reinterpret_cast<std::atomic<uint64_t>*>(data + offset);
}

class RingWriter {
 public:
  void attach(RingControl* ctl, uint8_t* data, uint64_t cap) {
    ctl_ = ctl;
    data_ = data;
    cap_ = cap;
    head_cache_ = ctl->head.load(std::memory_order_acquire);
    tail_ = head_cache_;
  }

  // Appends one record, number seq of its stream; false when the ring has no room for it now.
  bool push(const FragHeader& h, const void* payload, size_t len, uint64_t seq = 0) {
    const bool compact = fits_compact(h, len);
    uint64_t need = record_bytes(len, compact);
    uint64_t off = tail_ & (cap_ - 1);
    uint64_t gap = cap_ - off;                                   // bytes to the end of the ring
    uint64_t total = (need <= gap ? need : gap + need) + kLine;  // + the line cleared ahead
    if (tail_ + total - head_cache_ > cap_) {
      head_cache_ = ctl_->head.load(std::memory_order_acquire);
      if (tail_ + total - head_cache_ > cap_) {
        if (!waiting_) ctl_->waiting.store(1, std::memory_order_relaxed);
        waiting_ = true;
        return false;
      }
    }
    if (__builtin_expect(waiting_, 0)) {
      ctl_->waiting.store(0, std::memory_order_relaxed);
      waiting_ = false;
    }
    if (need > gap) {
      publish(off, 0, kSkipKind | gap);
      tail_ += gap;
      off = 0;
    }
    uint8_t* rec = data_ + off;
    uint64_t word = (seq & kSeqMask) << kSeqShift | len;
    if (compact) {
      const CompactHeader c{h.context, h.source, h.tag, 0};
      std::memcpy(rec + sizeof(uint64_t), &c, sizeof c);
      if (len > 0) copy_bytes(rec + kCompactOverhead, payload, len);
      word |= kCompactKind;
    } else {
      std::memcpy(rec + sizeof(uint64_t), &h, sizeof h);
      if (len > 0) std::memcpy(rec + kRecordOverhead, payload, len);
    }
    publish(off, need, word);
    tail_ += need;
    return true;
  }

  // True when a push found no room and the reader has freed some since: checked before sleeping,
  // after the sleeper's flag is up (the reader wakes a waiting writer only once it sees that).
  bool room_freed() const {
    return waiting_ && ctl_->head.load(std::memory_order_acquire) != head_cache_;
  }

 private:
  // Clears the prefix after the record at off (`bytes` long), then sets the record's own: the
  // release orders both the clear and the record's bytes before the reader can see it.
  void publish(uint64_t off, uint64_t bytes, uint64_t word) {
    uint64_t next = (off + (bytes == 0 ? (word & 0xffffffffu) : bytes)) & (cap_ - 1);
    prefix_at(data_, next)->store(0, std::memory_order_relaxed);
    prefix_at(data_, off)->store(kValid | word, std::memory_order_release);
  }

  RingControl* ctl_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t cap_ = 0;
  uint64_t tail_ = 0;
  uint64_t head_cache_ = 0;
  bool waiting_ = false;  // the last push found no room
};

class RingReader {
 public:
  void attach(RingControl* ctl, uint8_t* data, uint64_t cap) {
    ctl_ = ctl;
    data_ = data;
    cap_ = cap;
    head_ = ctl->head.load(std::memory_order_relaxed);
    fault_ = head_ % kRecordAlign != 0 ? "a head off a record boundary" : nullptr;
  }

  // Not empty when faulty: the next drain() stops at once and the caller reports the fault.
  bool empty() const {
    if (fault_ != nullptr) return false;
    return (prefix_at(data_, head_ & (cap_ - 1))->load(std::memory_order_acquire) & kValid) == 0;
  }

  // Calls fn(header, payload, len) for each record written so far, in order; the payload is
  // valid during the call only. Returns the number of records. A prefix no writer makes (the
  // segment is another process's to scribble on) stops the ring: fault() then says what it was.
  template <class Fn>
  int drain(Fn&& fn) {
    return drain(fn, nullptr, std::numeric_limits<int>::max());
  }
  // At most `max` records. With `next`, records are taken only while they are number *next of
  // their stream, which counts up.
  //
  // Why a limit: the line after a record is the writer's (it cleared that prefix when it wrote
  // the record), so looking there costs a transfer between cores, about as long as the message
  // itself took here. A waiter that one record completes should not pay it before it sees that:
  // the shm transport takes one record per poll, and a 2-rank 8 B allreduce got 15% faster; a
  // window of small messages got faster too (the reader no longer takes the line the writer is
  // filling). Past the limit, a record that starts in the line just read is taken too: that line
  // is here already (a window of 8 B sends puts two records in a line: osu_bw 8 B 99.5 against
  // 93.2 MB/s, medians of 8 alternating runs; the 8 B allreduce the same).
  template <class Fn>
  int drain(Fn&& fn, uint64_t* next, int max) {
    int n = 0;
    while (fault_ == nullptr && (n < max || (head_ & (kLine - 1)) != 0)) {
      const uint64_t off = head_ & (cap_ - 1);
      uint8_t* rec = data_ + off;
      uint64_t word = prefix_at(data_, off)->load(std::memory_order_acquire);
      if ((word & kValid) == 0) return n;
      size_t len = static_cast<size_t>(word & 0xffffffffu);
      if ((fault_ = record_fault(off, word)) != nullptr) return n;
      if (word & kSkipKind) {
        head_ += len;
        continue;
      }
      if (next != nullptr) {
        if ((word >> kSeqShift & kSeqMask) != (*next & kSeqMask)) return n;
        ++*next;
      }
      const bool compact = (word & kCompactKind) != 0;
      const size_t overhead = compact ? kCompactOverhead : kRecordOverhead;
      // The payload's other lines start coming while fn matches the header: a payload past the
      // first line cost a second transfer, after the first, before.
      for (uint64_t at = kLine; at < overhead + len && at <= kPrefetchLines * kLine; at += kLine) {
        __builtin_prefetch(rec + at);
      }
      FragHeader h;
      if (compact) {
        CompactHeader c;
        std::memcpy(&c, rec + sizeof(uint64_t), sizeof c);
        h.type = FragType::kEager;
        h.flags = 0;
        h.reserved = 0;
        h.context = c.context;
        h.source = c.source;
        h.tag = c.tag;
        h.size = len;
        h.sreq = 0;
        h.rreq = 0;
      } else {
        std::memcpy(&h, rec + sizeof(uint64_t), sizeof h);
      }
      fn(h, rec + overhead, len);
      head_ += record_bytes(len, compact);
      // Freed record by record: a writer waiting for room starts as early as possible.
      ctl_->head.store(head_, std::memory_order_release);
      ++n;
    }
    return n;
  }

  // Why the ring stopped, or nullptr.
  const char* fault() const { return fault_; }

  // The writer found the ring full: after freeing room the reader must wake it.
  bool writer_waiting() const { return ctl_->waiting.load(std::memory_order_relaxed) != 0; }

 private:
  // A writer's prefix at offset off (a multiple of kRecordAlign: head_ starts on one and moves
  // by whole records): a skip runs from a record's place to the end of the ring, a record is at
  // most ring_max_payload() and never straddles the end.
  const char* record_fault(uint64_t off, uint64_t word) const {
    const uint64_t len = word & 0xffffffffu;
    if ((word & ~(kValid | kSeqMask << kSeqShift | kSkipKind | kCompactKind | 0xffffffffu)) != 0 ||
        (word & kSkipKind && word & kCompactKind)) {
      return "a record of unknown kind";
    }
    if (word & kSkipKind) {
      return off != 0 && len == cap_ - off ? nullptr : "a skip that does not end the ring";
    }
    if (len > ring_max_payload(cap_) ||
        record_bytes(len, (word & kCompactKind) != 0) > cap_ - off) {
      return "a record longer than the ring allows";
    }
    return nullptr;
  }

  RingControl* ctl_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t cap_ = 0;
  uint64_t head_ = 0;
  const char* fault_ = nullptr;
};

}  // namespace torusmpi::pml::shm

#endif  // TORUSMPI_PML_SHM_RING_H_
