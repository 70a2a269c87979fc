// The switch's logic: validation, aggregation kernels, records, ageing (see switch.h).
#include "switch/switch.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/float16.h"

namespace torusmpi::sw {
namespace {

using ina::AggOp;
using ina::ElemType;
using ina::PacketHeader;
using ina::PacketType;

constexpr uint32_t kHeaderBytes = sizeof(PacketHeader);
// Unacknowledged complete records and tombstones live this many timeouts.
constexpr double kLinger = 10.0;

// --- Kernels. Payloads sit at any alignment in the datagram, so elements are read and written with
// memcpy (compiled to plain loads and stores). acc = acc op in, elementwise.

struct Sum {
  template <typename T>
  static T f(T a, T b) {
    return a + b;
  }
};
struct Min {
  template <typename T>
  static T f(T a, T b) {
    return b < a ? b : a;
  }
};
struct Max {
  template <typename T>
  static T f(T a, T b) {
    return a < b ? b : a;
  }
};
struct Band {
  template <typename T>
  static T f(T a, T b) {
    return a & b;
  }
};
struct Bor {
  template <typename T>
  static T f(T a, T b) {
    return a | b;
  }
};
struct Bxor {
  template <typename T>
  static T f(T a, T b) {
    return a ^ b;
  }
};

template <typename T, typename Op>
void combine(uint8_t* acc, const uint8_t* in, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, acc + size_t(i) * sizeof(T), sizeof(T));
    std::memcpy(&b, in + size_t(i) * sizeof(T), sizeof(T));
    a = Op::f(a, b);
    std::memcpy(acc + size_t(i) * sizeof(T), &a, sizeof(T));
  }
}

// Integer sums and bitwise ops run on the unsigned type of the element's width: the same bits as
// two's complement, without signed overflow's undefined behaviour. Min and max need the sign.
template <typename S, typename U>
void combine_integer(AggOp op, uint8_t* acc, const uint8_t* in, uint32_t n) {
  switch (op) {
    case AggOp::kSum:
      return combine<U, Sum>(acc, in, n);
    case AggOp::kMin:
      return combine<S, Min>(acc, in, n);
    case AggOp::kMax:
      return combine<S, Max>(acc, in, n);
    case AggOp::kBand:
      return combine<U, Band>(acc, in, n);
    case AggOp::kBor:
      return combine<U, Bor>(acc, in, n);
    case AggOp::kBxor:
      return combine<U, Bxor>(acc, in, n);
    default:
      return;  // validated before: not reached
  }
}

// Floats are added as floats in arrival order, as SHARP does: no wider accumulator, so the error
// is that of a sequential sum, |error| <= (n-1) u sum|x_i|.
template <typename F>
void combine_float(AggOp op, uint8_t* acc, const uint8_t* in, uint32_t n) {
  switch (op) {
    case AggOp::kSum:
      return combine<F, Sum>(acc, in, n);
    case AggOp::kMin:
      return combine<F, Min>(acc, in, n);
    case AggOp::kMax:
      return combine<F, Max>(acc, in, n);
    default:
      return;
  }
}

// The 16-bit floats: each pair widened to float, combined, and the sum rounded back to nearest
// even (core/float16.h), as the ranks' own kernels do; the accumulator stays in the element's
// format, so a block's sum is the sequential one in arrival order, rounded at every step. Min and
// max keep the winning element's bits.
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void combine_float16(AggOp op, uint8_t* acc, const uint8_t* in, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    uint16_t a, b;
    std::memcpy(&a, acc + size_t(i) * 2, 2);
    std::memcpy(&b, in + size_t(i) * 2, 2);
    const float fa = Widen(a), fb = Widen(b);
    switch (op) {
      case AggOp::kSum:
        a = Narrow(fa + fb);
        break;
      case AggOp::kMin:
        a = fb < fa ? b : a;
        break;
      case AggOp::kMax:
        a = fa < fb ? b : a;
        break;
      default:
        return;  // validated before: not reached
    }
    std::memcpy(acc + size_t(i) * 2, &a, 2);
  }
}

void combine_elements(ElemType elem, AggOp op, uint8_t* acc, const uint8_t* in, uint32_t n) {
  switch (elem) {
    case ElemType::kInt32:
      return combine_integer<int32_t, uint32_t>(op, acc, in, n);
    case ElemType::kUint32:
      return combine_integer<uint32_t, uint32_t>(op, acc, in, n);
    case ElemType::kInt64:
      return combine_integer<int64_t, uint64_t>(op, acc, in, n);
    case ElemType::kUint64:
      return combine_integer<uint64_t, uint64_t>(op, acc, in, n);
    case ElemType::kFloat32:
      return combine_float<float>(op, acc, in, n);
    case ElemType::kFloat64:
      return combine_float<double>(op, acc, in, n);
    case ElemType::kBfloat16:
      return combine_float16<float16::bf16_to_float, float16::float_to_bf16>(op, acc, in, n);
    case ElemType::kFloat16:
      return combine_float16<float16::half_to_float, float16::float_to_half>(op, acc, in, n);
    default:
      return;
  }
}

bool is_integer(ElemType e) {
  return e == ElemType::kInt32 || e == ElemType::kUint32 || e == ElemType::kInt64 ||
         e == ElemType::kUint64;
}
bool is_float(ElemType e) {
  return e == ElemType::kFloat32 || e == ElemType::kFloat64 || e == ElemType::kBfloat16 ||
         e == ElemType::kFloat16;
}

bool valid_group(const PacketHeader& h) {
  return h.sources >= 1 && h.sources <= ina::kMaxSources && h.source < h.sources;
}

// Whether a contribution's header describes a block the switch can aggregate. Lenient only where
// the protocol says nothing: a barrier's elem may be kNone or kBytes and its count anything (both
// must still agree across the sources).
bool valid_contribution(const PacketHeader& h) {
  if (!valid_group(h)) return false;
  // Only a reduction's block has an owner (a reduce-scatter's part).
  if (h.owner != ina::kEverySource &&
      (h.owner >= h.sources || h.op == AggOp::kGather || h.op == AggOp::kBarrier))
    return false;
  const uint64_t bytes = uint64_t{h.count} * ina::elem_size(h.elem);
  switch (h.op) {
    case AggOp::kSum:
    case AggOp::kMin:
    case AggOp::kMax:
      if (!is_integer(h.elem) && !is_float(h.elem)) return false;
      break;
    case AggOp::kBand:
    case AggOp::kBor:
    case AggOp::kBxor:
      if (!is_integer(h.elem)) return false;
      break;
    case AggOp::kGather:
      return h.elem == ElemType::kBytes && h.count <= ina::kMaxPayload &&
             uint64_t{h.count} * h.sources <= ina::kMaxResult &&
             h.payload == ina::contribution_bytes(h);
    case AggOp::kBarrier:
      return (h.elem == ElemType::kBytes || h.elem == ElemType::kNone) && h.payload == 0;
    default:
      return false;
  }
  return bytes <= ina::kMaxPayload && h.payload == bytes;
}

}  // namespace

uint32_t Out::add_body(const void* data, size_t len) {
  const uint32_t offset = static_cast<uint32_t>(bodies_.size());
  const auto* p = static_cast<const uint8_t*>(data);
  bodies_.insert(bodies_.end(), p, p + len);
  return offset;
}

void Out::add(const Address& to, const PacketHeader& header, uint32_t body_offset,
              uint32_t body_len) {
  datagrams_.push_back(Datagram{to, header, body_offset, body_len});
}

size_t Switch::KeyHash::operator()(const Key& k) const {
  // splitmix64's finalizer over each field: clients number calls and blocks 0, 1, 2...
  auto mix = [](uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  uint64_t h = mix(k.job + 0x9e3779b97f4a7c15ULL);
  h = mix(h ^ k.group);
  h = mix(h ^ k.call);
  return static_cast<size_t>(mix(h ^ k.block));
}

Switch::Switch(uint32_t slots, double timeout_seconds)
    : slots_(slots),
      timeout_(timeout_seconds),
      records_(slots),
      buffers_(new uint8_t[size_t(slots) * ina::kMaxResult]) {
  free_.reserve(slots);
  // Lowest slot first: a lightly used switch keeps its records in a few pages.
  for (uint32_t s = slots; s > 0; --s) free_.push_back(static_cast<int32_t>(s - 1));
  size_t capacity = 16;
  while (capacity < 2 * size_t(slots)) capacity *= 2;
  table_.assign(capacity, -1);
  mask_ = capacity - 1;
}

void Switch::handle(const uint8_t* data, size_t len, const Address& from, double now, Out* out) {
  PacketHeader h;
  if (len < kHeaderBytes) {
    ++stats_.bad;
    return;
  }
  std::memcpy(&h, data, kHeaderBytes);
  if (h.magic != ina::kMagic || h.version != ina::kVersion || h.payload != len - kHeaderBytes) {
    ++stats_.bad;
    return;
  }
  stats_.bytes_in += h.payload;
  switch (h.type) {
    case PacketType::kHello:
      return hello(h, from, out);
    case PacketType::kContribute:
      return contribute(h, data + kHeaderBytes, from, now, out);
    case PacketType::kAck:
      return ack(h, from);
    default:  // what only the switch sends, or no type at all
      ++stats_.bad;
      return;
  }
}

void Switch::hello(const PacketHeader& h, const Address& from, Out* out) {
  ina::HelloBody body{};
  body.slots = slots_;
  body.max_payload = ina::kMaxPayload;
  body.max_result = ina::kMaxResult;
  body.timeout_ms = static_cast<uint32_t>(std::max(1.0, std::round(timeout_ * 1000)));
  PacketHeader reply = h;
  reply.type = PacketType::kHelloReply;
  reply.payload = sizeof(body);
  out->add(from, reply, out->add_body(&body, sizeof(body)), sizeof(body));
  stats_.bytes_out += sizeof(body);
}

void Switch::contribute(const PacketHeader& h, const uint8_t* payload, const Address& from,
                        double now, Out* out) {
  if (!valid_contribution(h)) {
    ++stats_.bad;
    return;
  }
  const Key key{h.job, h.group, h.call, h.block};
  int32_t slot = find(key);
  if (slot >= 0) {
    Record& r = records_[slot];
    if (r.elem != h.elem || r.op != h.op || r.count != h.count || r.sources != h.sources ||
        r.owner != h.owner) {
      ++stats_.bad;
      return;
    }
    r.addr[h.source] = from;  // a source that moved is answered where it is now
    if (r.seen.test(h.source)) {
      // The result or the source's contribution was lost, or the source was just early with its
      // retransmission: only a complete record has something to say.
      ++stats_.duplicates;
      if (r.complete) {
        send_result(r, out->add_body(buffer(slot), r.result_len), h.source, out);
      }
      return;
    }
    aggregate(slot, h.source, payload);
    r.floor = std::min(r.floor, h.floor);
    if (r.seen_count == r.sources) complete(slot, now, out);
    return;
  }

  auto tomb = tombstones_.find(key);
  if (tomb != tombstones_.end()) {
    // A straggler, or a retransmission of an aged-out block: it failed for everyone.
    PacketHeader reply = h;
    reply.type = PacketType::kError;
    reply.payload = sizeof(ina::ErrorBody);
    const ina::ErrorBody& body = tomb->second.missing;
    out->add(from, reply, out->add_body(&body, sizeof(body)), sizeof(body));
    stats_.bytes_out += sizeof(body);
    return;
  }

  if (free_.empty()) {
    ++stats_.busy;
    PacketHeader reply = h;
    reply.type = PacketType::kBusy;
    reply.payload = 0;  // the header only: the contribution is not echoed
    out->add(from, reply, 0, 0);
    return;
  }

  slot = free_.back();
  free_.pop_back();
  Record& r = records_[slot];
  r.key = key;
  r.elem = h.elem;
  r.op = h.op;
  r.count = h.count;
  r.sources = h.sources;
  r.result_len = static_cast<uint32_t>(ina::result_bytes(h));  // validated: <= kMaxResult
  r.complete = false;
  r.seen_count = 0;
  r.acked_count = 0;
  r.seen = Bitmap();
  r.acked = Bitmap();
  r.created = now;
  r.completed = 0;
  r.floor = h.floor;
  r.owner = h.owner;
  r.addr[h.source] = from;
  insert(slot);
  push_back(&pending_, slot);
  ++stats_.slots_used;
  if (stats_.slots_used > stats_.slots_used_max) stats_.slots_used_max = stats_.slots_used;

  aggregate(slot, h.source, payload);
  if (r.seen_count == r.sources) complete(slot, now, out);
}

// Read-modify-write of one contribution into the slot's buffer.
void Switch::aggregate(int32_t slot, uint16_t source, const uint8_t* payload) {
  Record& r = records_[slot];
  uint8_t* buf = buffer(slot);
  switch (r.op) {
    case AggOp::kBarrier:
      break;
    case AggOp::kGather:
      std::memcpy(buf + size_t(source) * r.count, payload, r.count);
      break;
    default:
      if (r.seen_count == 0) {
        std::memcpy(buf, payload, size_t(r.count) * ina::elem_size(r.elem));
      } else {
        combine_elements(r.elem, r.op, buf, payload, r.count);
      }
  }
  r.seen.set(source);
  ++r.seen_count;
}

void Switch::complete(int32_t slot, double now, Out* out) {
  Record& r = records_[slot];
  r.complete = true;
  r.completed = now;
  unlink(&pending_, slot);
  push_back(&done_, slot);
  ++stats_.blocks;
  const uint32_t body = out->add_body(buffer(slot), r.result_len);
  for (uint16_t s = 0; s < r.sources; ++s) send_result(r, body, s, out);
}

void Switch::send_result(const Record& r, uint32_t body, uint16_t source, Out* out) {
  // A block with an owner: the others learn only that it is done.
  const uint32_t len = r.owner == ina::kEverySource || r.owner == source ? r.result_len : 0;
  out->add(r.addr[source], header_of(r, PacketType::kResult, source, len), body, len);
  stats_.bytes_out += len;
}

void Switch::ack(const PacketHeader& h, const Address& from) {
  if (!valid_group(h) || h.payload != 0) {
    ++stats_.bad;
    return;
  }
  const int32_t slot = find(Key{h.job, h.group, h.call, h.block});
  // No record: the slot was freed already (a retransmitted acknowledgement) or the block aged out.
  if (slot < 0) return;
  Record& r = records_[slot];
  if (r.sources != h.sources || !r.complete) {  // nobody can have a result to acknowledge yet
    ++stats_.bad;
    return;
  }
  r.addr[h.source] = from;
  if (r.acked.test(h.source)) return;
  r.acked.set(h.source);
  if (++r.acked_count == r.sources) {
    unlink(&done_, slot);
    free_slot(slot);
  }
}

void Switch::age(double now, Out* out) {
  while (pending_.head >= 0 && now - records_[pending_.head].created >= timeout_) {
    age_out(pending_.head, now, out);
  }
  // Some source never got its result or its acknowledgements were all lost; it has given up.
  while (done_.head >= 0 && now - records_[done_.head].completed >= kLinger * timeout_) {
    ++stats_.unacked;
    const int32_t slot = done_.head;
    unlink(&done_, slot);
    free_slot(slot);
  }
  while (!tombstone_order_.empty() && tombstone_order_.front().second <= now) {
    // A key aged out twice has a newer tombstone than this entry: keep that one.
    auto it = tombstones_.find(tombstone_order_.front().first);
    if (it != tombstones_.end() && it->second.expires <= now) tombstones_.erase(it);
    tombstone_order_.pop_front();
  }
}

void Switch::age_out(int32_t slot, double now, Out* out) {
  Record& r = records_[slot];
  ++stats_.timeouts;
  ina::ErrorBody body{};
  for (uint32_t s = 0; s < r.sources; ++s) {
    if (!r.seen.test(s)) body.missing[s / 8] |= static_cast<uint8_t>(1u << (s % 8));
  }
  const uint32_t offset = out->add_body(&body, sizeof(body));
  for (uint16_t s = 0; s < r.sources; ++s) {
    if (!r.seen.test(s)) continue;
    out->add(r.addr[s], header_of(r, PacketType::kError, s, sizeof(body)), offset, sizeof(body));
    stats_.bytes_out += sizeof(body);
  }
  const double expires = now + kLinger * timeout_;
  tombstones_[r.key] = Tombstone{body, expires};
  tombstone_order_.emplace_back(r.key, expires);
  unlink(&pending_, slot);
  free_slot(slot);
}

// The slot is off both lists already.
void Switch::free_slot(int32_t slot) {
  erase(slot);
  free_.push_back(slot);
  --stats_.slots_used;
}

PacketHeader Switch::header_of(const Record& r, PacketType type, uint16_t source,
                               uint32_t payload) const {
  PacketHeader h;
  h.type = type;
  h.elem = r.elem;
  h.op = r.op;
  h.job = r.key.job;
  h.group = r.key.group;
  h.call = r.key.call;
  h.block = r.key.block;
  h.sources = r.sources;
  h.source = source;
  h.count = r.count;
  h.payload = payload;
  h.floor = r.floor;
  h.owner = r.owner;
  return h;
}

int32_t Switch::find(const Key& k) const {
  for (size_t i = home(k);; i = (i + 1) & mask_) {
    const int32_t slot = table_[i];
    if (slot < 0 || records_[slot].key == k) return slot;
  }
}

void Switch::insert(int32_t slot) {
  size_t i = home(records_[slot].key);
  while (table_[i] >= 0) i = (i + 1) & mask_;
  table_[i] = slot;
}

// Linear probing's deletion without markers: entries after the hole that may move back into it
// (their home is not cyclically within (hole, position]) do, so every probe chain stays unbroken.
void Switch::erase(int32_t slot) {
  size_t hole = home(records_[slot].key);
  while (table_[hole] != slot) hole = (hole + 1) & mask_;
  table_[hole] = -1;
  for (size_t j = (hole + 1) & mask_; table_[j] >= 0; j = (j + 1) & mask_) {
    const size_t h = home(records_[table_[j]].key);
    const bool stays = hole < j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (stays) continue;
    table_[hole] = table_[j];
    table_[j] = -1;
    hole = j;
  }
}

void Switch::push_back(List* l, int32_t slot) {
  Record& r = records_[slot];
  r.prev = l->tail;
  r.next = -1;
  if (l->tail >= 0) {
    records_[l->tail].next = slot;
  } else {
    l->head = slot;
  }
  l->tail = slot;
}

void Switch::unlink(List* l, int32_t slot) {
  Record& r = records_[slot];
  if (r.prev >= 0) {
    records_[r.prev].next = r.next;
  } else {
    l->head = r.next;
  }
  if (r.next >= 0) {
    records_[r.next].prev = r.prev;
  } else {
    l->tail = r.prev;
  }
  r.prev = r.next = -1;
}

}  // namespace torusmpi::sw
