// Packing: a walk over a range of the packed stream, node by node. A node's packed bytes are
// known (count * len), so the walk finds where `from` falls by division and binary search instead
// of stepping, and copying a range costs the same wherever it starts: what chunked transfers of
// large messages need.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "dtype/internal.h"

namespace torusmpi::dtype {
namespace {

// A memory address in the walk: an integer, made a pointer only where bytes are copied or handed
// out. With MPI_BOTTOM the buffer is null and the displacements are absolute addresses, and adding
// an offset to a null pointer is undefined (UBSan's pointer-overflow check reports it); unsigned
// arithmetic wraps, so a negative displacement or stride (converted) subtracts as it should.
using Addr = std::uintptr_t;
char* at(Addr a) { return reinterpret_cast<char*>(a); }
Addr addr_of(const void* p) { return reinterpret_cast<Addr>(p); }

// Copies between memory and the packed stream, which advances with each piece.
template <bool kPack>
struct Copy {
  char* stream;

  void piece(Addr mem, int64_t len) {
    switch (len) {
      case 4:
        return fixed<4>(mem, 0, 1);
      case 8:
        return fixed<8>(mem, 0, 1);
      default:
        if (kPack) {
          std::memcpy(stream, at(mem), static_cast<size_t>(len));
        } else {
          std::memcpy(at(mem), stream, static_cast<size_t>(len));
        }
        stream += len;
    }
  }

  // n blocks of kLen bytes: a constant length lets the compiler turn each copy into a move.
  template <int64_t kLen>
  void fixed(Addr mem, int64_t stride, int64_t n) {
    char* s = stream;
    for (int64_t i = 0; i < n; ++i, mem += stride, s += kLen) {
      if (kPack) {
        std::memcpy(s, at(mem), kLen);
      } else {
        std::memcpy(at(mem), s, kLen);
      }
    }
    stream = s;
  }

  // n whole blocks of len bytes at mem, mem + stride, ...
  void blocks(Addr mem, int64_t len, int64_t stride, int64_t n) {
    switch (len) {
      case 1:
        return fixed<1>(mem, stride, n);
      case 2:
        return fixed<2>(mem, stride, n);
      case 4:
        return fixed<4>(mem, stride, n);
      case 8:
        return fixed<8>(mem, stride, n);
      case 12:
        return fixed<12>(mem, stride, n);
      case 16:
        return fixed<16>(mem, stride, n);
      case 24:
        return fixed<24>(mem, stride, n);
      case 32:
        return fixed<32>(mem, stride, n);
      default:
        for (int64_t i = 0; i < n; ++i, mem += stride) piece(mem, len);
    }
  }
};

// Hands out memory pieces, joining those that touch (the passes of a loop often do).
struct Visit {
  Type::BlockFn fn;
  void* ctx;
  Addr pending = 0;
  int64_t pending_len = 0;

  void piece(Addr mem, int64_t len) {
    if (pending_len > 0 && mem == pending + pending_len) {
      pending_len += len;
      return;
    }
    flush();
    pending = mem;
    pending_len = len;
  }
  void blocks(Addr mem, int64_t len, int64_t stride, int64_t n) {
    for (int64_t i = 0; i < n; ++i, mem += stride) piece(mem, len);
  }
  void flush() {
    if (pending_len > 0) fn(ctx, at(pending), static_cast<size_t>(pending_len));
    pending_len = 0;
  }
};

template <class Op>
void walk_program(const Program& p, Addr origin, int64_t lo, int64_t hi, Op& op);

// One whole pass over p: no range to find, the common case inside loops.
template <class Op>
void walk_whole(const Program& p, Addr origin, Op& op) {
  for (const Node& x : p.nodes) {
    Addr mem = origin + x.disp;
    if (x.kind == Node::kBlock) {
      if (x.count == 1) {
        op.piece(mem, x.len);
      } else {
        op.blocks(mem, x.len, x.stride, x.count);
      }
    } else {
      for (int64_t k = 0; k < x.count; ++k, mem += x.stride) walk_whole(*x.sub, mem, op);
    }
  }
}

// The packed bytes [lo, hi) of node x (0 <= lo < hi <= x.bytes()), whose enclosing pass starts at
// origin.
template <class Op>
void walk_node(const Node& x, Addr origin, int64_t lo, int64_t hi, Op& op) {
  int64_t k = lo / x.len;
  int64_t off = lo - k * x.len;
  Addr mem = origin + x.disp + k * x.stride;
  if (x.kind == Node::kBlock) {
    if (off != 0) {  // the end of a block
      int64_t n = std::min(x.len - off, hi - lo);
      op.piece(mem + off, n);
      lo += n;
      mem += x.stride;
    }
    int64_t whole = (hi - lo) / x.len;
    if (whole > 0) {
      op.blocks(mem, x.len, x.stride, whole);
      lo += whole * x.len;
      mem += whole * x.stride;
    }
    if (lo < hi) op.piece(mem, hi - lo);  // the start of a block
    return;
  }
  while (lo < hi) {
    int64_t end = std::min(x.len, off + (hi - lo));
    if (off == 0 && end == x.len) {
      walk_whole(*x.sub, mem, op);
    } else {
      walk_program(*x.sub, mem, off, end, op);
    }
    lo += end - off;
    off = 0;
    mem += x.stride;
  }
}

template <class Op>
void walk_program(const Program& p, Addr origin, int64_t lo, int64_t hi, Op& op) {
  const Node* first = p.nodes.data();
  const Node* last = first + p.nodes.size();
  // The node holding byte lo: the last one starting at or before it.
  const Node* x = lo == 0 ? first : std::upper_bound(first, last, lo, [](int64_t v, const Node& n) {
                                      return v < n.start;
                                    }) - 1;
  for (; x != last && x->start < hi; ++x) {
    walk_node(*x, origin, std::max<int64_t>(lo - x->start, 0), std::min(hi - x->start, x->bytes()),
              op);
  }
}

}  // namespace

// The walks below treat `count` elements as the one node they form (Type::repeated), so a
// contiguous type is one memcpy whatever the count, and a vector repeated is one longer vector.
void Type::pack_range(const void* buf, int64_t count, int64_t from, int64_t to,
                      void* packed) const {
  if (from >= to || size_ == 0 || count == 0) return;
  Node top = repeated(count);
  Copy<true> op{static_cast<char*>(packed)};
  walk_node(top, addr_of(buf), from, to, op);
}

void Type::unpack_range(const void* packed, int64_t count, int64_t from, int64_t to,
                        void* buf) const {
  if (from >= to || size_ == 0 || count == 0) return;
  Node top = repeated(count);
  Copy<false> op{static_cast<char*>(const_cast<void*>(packed))};
  walk_node(top, addr_of(buf), from, to, op);
}

void Type::pack(const void* buf, int64_t count, void* packed) const {
  pack_range(buf, count, 0, count * size_, packed);
}

void Type::unpack(const void* packed, int64_t count, void* buf) const {
  unpack_range(packed, count, 0, count * size_, buf);
}

void Type::for_each_block(const void* buf, int64_t count, int64_t from, int64_t to, BlockFn fn,
                          void* ctx) const {
  if (from >= to || size_ == 0 || count == 0) return;
  Node top = repeated(count);
  Visit op{fn, ctx};
  walk_node(top, addr_of(buf), from, to, op);
  op.flush();
}

}  // namespace torusmpi::dtype
