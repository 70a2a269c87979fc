// Copies of a few bytes without a call. A small message's payload is copied three or four times
// in a call (into the ring, out of it, into the result, a reduction's operand), and libc's memcpy
// costs a call and a size dispatch each time: a 2-rank 8 B allreduce spent 36 of its ~1,750
// instructions there.
#ifndef TORUSMPI_CORE_COPY_H_
#define TORUSMPI_CORE_COPY_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace torusmpi {

// memcpy(dst, src, bytes), inline from 4 to 16 bytes: two words that overlap when bytes is not
// twice their size, both read before either is written.
inline void copy_bytes(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (bytes >= 8 && bytes <= 16) {
    uint64_t head, tail;
    std::memcpy(&head, s, 8);
    std::memcpy(&tail, s + bytes - 8, 8);
    std::memcpy(d, &head, 8);
    std::memcpy(d + bytes - 8, &tail, 8);
  } else if (bytes >= 4 && bytes < 8) {
    uint32_t head, tail;
    std::memcpy(&head, s, 4);
    std::memcpy(&tail, s + bytes - 4, 4);
    std::memcpy(d, &head, 4);
    std::memcpy(d + bytes - 4, &tail, 4);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

}  // namespace torusmpi

#endif  // TORUSMPI_CORE_COPY_H_
