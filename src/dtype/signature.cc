// The type signature: counting basic elements in a stream (MPI_Get_elements,
// MPI_Status_set_elements) and converting packed data to and from the canonical big-endian form
// (MPI's "external32"), element run by element run.
#include <algorithm>
#include <cstring>

#include "dtype/internal.h"

namespace torusmpi::dtype {
namespace {

// Basic elements wholly inside the first `bytes` bytes of one pass of s, or -1 when `bytes` ends
// inside an element. 0 <= bytes <= s.bytes.
int64_t elements_before(const Sig& s, int64_t bytes) {
  if (bytes == s.bytes) return s.elements;
  const SigNode* x = std::upper_bound(s.nodes.data(), s.nodes.data() + s.nodes.size(), bytes,
                                      [](int64_t v, const SigNode& n) { return v < n.start; }) -
                     1;
  int64_t off = bytes - x->start;
  int64_t k = off / x->unit_bytes, rest = off % x->unit_bytes;
  int64_t whole = x->first + k * x->unit_elements;
  if (rest == 0) return whole;
  if (x->basic != nullptr) return -1;
  int64_t inner = elements_before(*x->sub, rest);
  return inner < 0 ? -1 : whole + inner;
}

// Packed bytes of the first n basic elements of one pass of s. 0 <= n <= s.elements.
int64_t bytes_before(const Sig& s, int64_t n) {
  if (n == s.elements) return s.bytes;
  const SigNode* x =
      std::upper_bound(s.nodes.data(), s.nodes.data() + s.nodes.size(), n,
                       [](int64_t v, const SigNode& node) { return v < node.first; }) -
      1;
  int64_t off = n - x->first;
  int64_t k = off / x->unit_elements, rest = off % x->unit_elements;
  int64_t bytes = x->start + k * x->unit_bytes;
  return rest == 0 ? bytes : bytes + bytes_before(*x->sub, rest);
}

// Unsigned big-endian integers of 1 to 8 bytes, whatever the host's byte order.
uint64_t load_be(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}
void store_be(unsigned char* p, int n, uint64_t v) {
  for (int i = n - 1; i >= 0; --i, v >>= 8) p[i] = static_cast<unsigned char>(v);
}

// Native integers of 1, 2, 4 or 8 bytes, as 64-bit values.
uint64_t load_native(const unsigned char* p, int n, bool sign) {
  switch (n) {
    case 1: {
      uint8_t v;
      std::memcpy(&v, p, 1);
      return sign ? static_cast<uint64_t>(static_cast<int8_t>(v)) : v;
    }
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return sign ? static_cast<uint64_t>(static_cast<int16_t>(v)) : v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return sign ? static_cast<uint64_t>(static_cast<int32_t>(v)) : v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}
void store_native(unsigned char* p, int n, uint64_t v) {
  switch (n) {
    case 1: {
      uint8_t x = static_cast<uint8_t>(v);
      std::memcpy(p, &x, 1);
      break;
    }
    case 2: {
      uint16_t x = static_cast<uint16_t>(v);
      std::memcpy(p, &x, 2);
      break;
    }
    case 4: {
      uint32_t x = static_cast<uint32_t>(v);
      std::memcpy(p, &x, 4);
      break;
    }
    default:
      std::memcpy(p, &v, 8);
  }
}

// Sign-extends the low `bytes` bytes of v.
uint64_t extend(uint64_t v, int bytes, bool sign) {
  if (bytes >= 8) return v;
  int bits = 8 * bytes;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  if (sign && (v >> (bits - 1)) != 0) v |= ~mask;
  return v;
}

// An IEEE value of n bytes (4, 8, 16) in native order <-> big-endian: the bytes reversed on a
// little-endian host.
void swap_float(const unsigned char* in, unsigned char* out, int n) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (int i = 0; i < n; ++i) out[i] = in[n - 1 - i];
#else
  std::memcpy(out, in, n);
#endif
}

// x87 80-bit extended precision (significand with an explicit integer bit, then sign and a
// 15-bit exponent, in 16 bytes) <-> IEEE binary128 big-endian. Exponent bias and range are the
// same; the 63 fraction bits become the top of binary128's 112 (an external value loses its
// lowest 49 fraction bits on the way back).
void x87_to_external(const unsigned char* in, unsigned char* out) {
  uint64_t significand;
  uint16_t sign_exp;
  std::memcpy(&significand, in, 8);
  std::memcpy(&sign_exp, in + 8, 2);
  uint64_t fraction = significand & ~(uint64_t{1} << 63);
  uint64_t hi = uint64_t{sign_exp} << 48 | fraction >> 15;
  uint64_t lo = (fraction & 0x7fff) << 49;
  store_be(out, 8, hi);
  store_be(out + 8, 8, lo);
}

void x87_from_external(const unsigned char* in, unsigned char* out) {
  uint64_t hi = load_be(in, 8), lo = load_be(in + 8, 8);
  uint16_t sign_exp = static_cast<uint16_t>(hi >> 48);
  uint64_t fraction = (hi & ((uint64_t{1} << 48) - 1)) << 15 | lo >> 49;
  // The integer bit is implicit in binary128: 1 except for zeros and subnormals.
  uint64_t integer_bit = (sign_exp & 0x7fff) != 0 ? uint64_t{1} << 63 : 0;
  uint64_t significand = integer_bit | fraction;
  std::memcpy(out, &significand, 8);
  std::memcpy(out + 8, &sign_exp, 2);
  std::memset(out + 10, 0, 6);
}

// n elements of b: native -> external (kOut) or back. in and out advance.
template <bool kOut>
void convert(const Basic& b, int64_t n, const unsigned char*& in, unsigned char*& out) {
  const int native = static_cast<int>(b.size), external = static_cast<int>(b.external_size);
  const int parts = std::max<int>(b.parts, 1);
  const int native_part = native / parts, external_part = external / parts;
  const int64_t in_step = kOut ? native : external, out_step = kOut ? external : native;
  if (b.encoding == Encoding::kRaw) {
    size_t bytes = static_cast<size_t>(n * std::min(native, external));
    std::memcpy(out, in, bytes);
    in += n * in_step;
    out += n * out_step;
    return;
  }
  for (int64_t i = 0; i < n * parts; ++i) {
    const int in_part = kOut ? native_part : external_part;
    const int out_part = kOut ? external_part : native_part;
    switch (b.encoding) {
      case Encoding::kSigned:
      case Encoding::kUnsigned: {
        bool sign = b.encoding == Encoding::kSigned;
        if (kOut) {
          store_be(out, out_part, load_native(in, in_part, sign));
        } else {
          store_native(out, out_part, extend(load_be(in, in_part), in_part, sign));
        }
        break;
      }
      case Encoding::kFloat:
        swap_float(in, out, in_part);
        break;
      case Encoding::kX87:
        if (kOut) {
          x87_to_external(in, out);
        } else {
          x87_from_external(in, out);
        }
        break;
      case Encoding::kRaw:
        break;
    }
    in += in_part;
    out += out_part;
  }
}

template <bool kOut>
void convert_sig(const Sig& s, const unsigned char*& in, unsigned char*& out) {
  for (const SigNode& x : s.nodes) {
    if (x.basic != nullptr) {
      convert<kOut>(*x.basic, x.count, in, out);
    } else {
      for (int64_t k = 0; k < x.count; ++k) convert_sig<kOut>(*x.sub, in, out);
    }
  }
}

}  // namespace

int64_t Type::elements_in(int64_t bytes) const {
  if (size_ == 0) return 0;
  int64_t whole = bytes / size_;
  int64_t rest = elements_before(*sig_, bytes % size_);
  return rest < 0 ? -1 : whole * sig_->elements + rest;
}

int64_t Type::bytes_of_elements(int64_t n) const {
  if (sig_->elements == 0) return 0;
  return n / sig_->elements * size_ + bytes_before(*sig_, n % sig_->elements);
}

void Type::to_external(const void* packed, int64_t count, void* external) const {
  auto in = static_cast<const unsigned char*>(packed);
  auto out = static_cast<unsigned char*>(external);
  for (int64_t i = 0; i < count; ++i) convert_sig<true>(*sig_, in, out);
}

void Type::from_external(const void* external, int64_t count, void* packed) const {
  auto in = static_cast<const unsigned char*>(external);
  auto out = static_cast<unsigned char*>(packed);
  for (int64_t i = 0; i < count; ++i) convert_sig<false>(*sig_, in, out);
}

}  // namespace torusmpi::dtype
