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

// bytes from `Word` to twice its size, as two words that overlap when bytes is less: both read
// before either is written.
template <class Word>
inline void copy_two_words(unsigned char* d, const unsigned char* s, size_t bytes) {
  Word head, tail;
  std::memcpy(&head, s, sizeof(Word));
  std::memcpy(&tail, s + bytes - sizeof(Word), sizeof(Word));
  std::memcpy(d, &head, sizeof(Word));
  std::memcpy(d + bytes - sizeof(Word), &tail, sizeof(Word));
}

// memcpy(dst, src, bytes), inline from 4 to 16 bytes.
inline void copy_bytes(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (bytes >= 8 && bytes <= 16) {
    copy_two_words<uint64_t>(d, s, bytes);
  } else if (bytes >= 4 && bytes < 8) {
    copy_two_words<uint32_t>(d, s, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

}  // namespace torusmpi

#endif  // TORUSMPI_CORE_COPY_H_
