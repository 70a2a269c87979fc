// The wire protocol between ranks and torusmpi_switch, the emulated in-network aggregation switch
// (SHARP / Trio style). One UDP datagram per packet, on this machine's loopback; fields in the
// host's byte order (sources and switch share the machine).
//
// A collective's network stage is a run of blocks. A block is aggregated in one switch slot: the
// switch keeps a record per block (job, group, call, block), adds each source's contribution
// into the slot's buffer as it arrives (read-modify-write), and when every source of the group has
// contributed, sends the result to every source. A source keeps at most a window of blocks of a
// run in flight. The switch frees the slot once every source has acknowledged the result.
//
//   source                         switch
//   kContribute(block, data) --->  record found or made; data aggregated; source marked
//                                  (a duplicate: the result again if complete, else ignored)
//                                  no free slot: kBusy (the source sends it again later)
//                            <---  kResult(block, data)  to every source, once all contributed
//                                  (a block with an owner: the result's payload to the owner
//                                  only, the header alone to the others)
//   kAck(block)              --->  source marked; all acknowledged: the slot is free
//                            <---  kError(block, missing sources)  the record did not complete
//                                  within the switch's timeout: to every source that
//                                  contributed, and to any that comes later (the switch
//                                  remembers aged-out blocks for a while)
//   kHello                   --->
//                            <---  kHelloReply(slots, timeout, max payload)
//
// Lost packets: a source sends a contribution again when its result has not come within its
// retransmission timeout; the switch answers a repeated contribution of a complete block with the
// result (the first result or the acknowledgement was lost) and ignores one it already added.
//
// Floors: a switch that dies while it sends a block's result leaves some sources with the result
// and others without, and those get it from the others (coll/sched/rescue.h). So every source
// keeps its results until it knows every source has its own: each contribution carries the
// source's floor (the lowest call of the group it has not finished), the switch keeps the lowest
// floor of a record's contributions, and a result carries it. A source that learns floor F forgets
// the results it kept for calls below F.
#ifndef TORUSMPI_PML_INA_PROTOCOL_H_
#define TORUSMPI_PML_INA_PROTOCOL_H_

#include <cstddef>
#include <cstdint>

namespace torusmpi::pml::ina {

constexpr uint32_t kMagic = 0x54535731;  // "TSW1"
constexpr uint8_t kVersion = 2;

// A datagram's payload stays under loopback's 64 KiB; blocks of a reduction carry at most this.
constexpr uint32_t kMaxPayload = 32768;
// A gathered block: every source's piece, concatenated in source order (sources x piece).
constexpr uint32_t kMaxResult = 60 * 1024;
// Sources per group: the bitmaps below hold this many.
constexpr uint32_t kMaxSources = 256;

enum class PacketType : uint8_t {
  kContribute = 1,
  kResult = 2,
  kAck = 3,
  kError = 4,
  kBusy = 5,
  kHello = 6,
  kHelloReply = 7,
};

// Element types the switch aggregates.
enum class ElemType : uint8_t {
  kNone = 0,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat32,
  kFloat64,
  kBytes,     // kGather, kBarrier: no arithmetic
  kBfloat16,  // core/float16.h's 16-bit floats: each addition in float, rounded back to nearest
  kFloat16,   // even (IEEE binary16)
};

enum class AggOp : uint8_t {
  kNone = 0,
  kSum,  // integers wrap around (two's complement); floats are added as floats, in arrival order
  kMin,
  kMax,
  kBand,  // integers only
  kBor,
  kBxor,
  kGather,   // every source's piece, in source order
  kBarrier,  // no data: the result says every source arrived
};

inline size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::kBfloat16:
    case ElemType::kFloat16:
      return 2;
    case ElemType::kInt32:
    case ElemType::kUint32:
    case ElemType::kFloat32:
      return 4;
    case ElemType::kInt64:
    case ElemType::kUint64:
    case ElemType::kFloat64:
      return 8;
    case ElemType::kBytes:
      return 1;
    case ElemType::kNone:
      break;
  }
  return 0;
}

// A block's owner when every source needs its result (PacketHeader::owner).
constexpr uint16_t kEverySource = 0xffff;

// Every packet starts with this.
struct PacketHeader {
  uint32_t magic = kMagic;
  uint8_t version = kVersion;
  PacketType type = PacketType::kHello;
  ElemType elem = ElemType::kNone;
  AggOp op = AggOp::kNone;
  uint64_t job = 0;      // the job (several jobs may share one switch)
  uint64_t group = 0;    // the aggregation group within the job (the client's choice)
  uint64_t call = 0;     // the run within the group: the same number at every source
  uint32_t block = 0;    // the block within the run
  uint16_t sources = 0;  // how many sources the group has
  uint16_t source = 0;   // the sender's index among them (kContribute, kAck)
  uint32_t count = 0;    // elements of the block (kGather: bytes of one source's piece)
  uint32_t payload = 0;  // bytes that follow the header
  // kContribute: the source's floor (the lowest call of the group it has not finished);
  // kResult: the lowest of the floors the block's sources gave (every source has finished every
  // call below it).
  uint64_t floor = 0;
  // The source that needs the block's result (a reduce-scatter: each source needs its own part of
  // the vector), or kEverySource. The others get a result without payload: the block is done.
  uint16_t owner = kEverySource;
  uint16_t reserved[3] = {};
};
static_assert(sizeof(PacketHeader) == 64, "the header's layout is the wire's");

// kError's payload: which sources had not contributed when the record aged out.
struct ErrorBody {
  uint8_t missing[kMaxSources / 8];  // bit s: source s never contributed
};

// kHelloReply's payload: what the switch is.
struct HelloBody {
  uint32_t slots;
  uint32_t max_payload;
  uint32_t max_result;
  uint32_t timeout_ms;  // a record not complete within this ages out
};

// The result's payload bytes for a block of `count` elements from `sources` sources.
inline size_t result_bytes(const PacketHeader& h) {
  if (h.op == AggOp::kBarrier) return 0;
  if (h.op == AggOp::kGather) return static_cast<size_t>(h.count) * h.sources;
  return static_cast<size_t>(h.count) * elem_size(h.elem);
}

// The contribution's payload bytes.
inline size_t contribution_bytes(const PacketHeader& h) {
  if (h.op == AggOp::kBarrier) return 0;
  if (h.op == AggOp::kGather) return h.count;
  return static_cast<size_t>(h.count) * elem_size(h.elem);
}

}  // namespace torusmpi::pml::ina

#endif  // TORUSMPI_PML_INA_PROTOCOL_H_
