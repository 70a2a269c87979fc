// The logic of torusmpi_switch, the emulated in-network aggregation switch (SHARP / Trio style),
// without sockets or clocks: Switch takes one datagram (bytes, sender, time) and appends what to
// send back to an Out; age() applies the timeouts. torusmpi_switch.cc owns the UDP socket, the
// loss simulation and the signals. The wire protocol is pml/ina/protocol.h.
//
// State: a fixed number of slots, each with a buffer of kMaxResult bytes allocated once. A block
// (job, group, call, block) gets a record in a free slot at its first contribution; the record is
// found again through an open-addressing hash table sized at twice the slots, so that a packet in
// the steady state allocates nothing. Records not yet complete sit on the pending list in creation
// order, complete ones on the done list in completion order: age() looks only at the lists' heads.
// A record aged out leaves a tombstone (key and missing sources) for 10 timeouts, which answers a
// straggler's or a retransmitted contribution with kError instead of starting a new record.
//
// A record is forgotten once every source has acknowledged: a contribution delayed past that
// point (a retransmission overtaken by its result) starts a new record, which ages out and sends
// kError to a source that is done with the block; sources ignore answers for blocks not in flight.
//
// Every datagram is validated before it touches state (valid_contribution() in switch.cc); a bad
// one is counted and dropped, never answered, so that the switch neither crashes on nor amplifies
// garbage.
#ifndef TORUSMPI_SWITCH_SWITCH_H_
#define TORUSMPI_SWITCH_SWITCH_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "pml/ina/protocol.h"

namespace torusmpi::sw {

namespace ina = ::torusmpi::pml::ina;

// A UDP endpoint. The fields are those of sockaddr_in (network byte order): the switch only
// compares and copies them.
struct Address {
  uint32_t ip = 0;
  uint16_t port = 0;
};
inline bool operator==(const Address& a, const Address& b) {
  return a.ip == b.ip && a.port == b.port;
}

// One datagram to send: the header, then body_len bytes of the Out's body store. Headers differ
// per destination (the source field); bodies are shared, so a result goes to every source with
// one copy of its payload.
struct Datagram {
  Address to;
  ina::PacketHeader header;
  uint32_t body_offset = 0;
  uint32_t body_len = 0;
};

// What a call of Switch::handle or Switch::age asks to send. Keeps its capacity across clear(), so
// that the steady state does not allocate.
class Out {
 public:
  void clear() {
    datagrams_.clear();
    bodies_.clear();
  }
  bool empty() const { return datagrams_.empty(); }
  size_t size() const { return datagrams_.size(); }
  const Datagram& operator[](size_t i) const { return datagrams_[i]; }
  const uint8_t* body(const Datagram& d) const { return bodies_.data() + d.body_offset; }

  // Stores len bytes and returns their offset, for add().
  uint32_t add_body(const void* data, size_t len);
  void add(const Address& to, const ina::PacketHeader& header, uint32_t body_offset,
           uint32_t body_len);
  // Drops the datagrams after the first n (torusmpi_switch --die-after).
  void keep_first(size_t n) {
    if (n < datagrams_.size()) datagrams_.resize(n);
  }

 private:
  std::vector<Datagram> datagrams_;
  std::vector<uint8_t> bodies_;
};

struct Stats {
  uint64_t blocks = 0;          // records completed
  uint64_t bytes_in = 0;        // payload bytes received, header intact
  uint64_t bytes_out = 0;       // payload bytes of the datagrams sent
  uint64_t duplicates = 0;      // contributions from a source already added
  uint64_t busy = 0;            // kBusy answers: no free slot for a new record
  uint64_t timeouts = 0;        // records aged out before completion
  uint64_t unacked = 0;         // complete records freed without every acknowledgement
  uint64_t bad = 0;             // datagrams dropped as malformed or inconsistent
  uint64_t slots_used = 0;      // records now
  uint64_t slots_used_max = 0;  // the most records at once
};

class Switch {
 public:
  static constexpr uint32_t kMaxSlots = 16384;  // kMaxResult each: 960 MiB of address space

  // slots in 1..kMaxSlots, timeout_seconds > 0 (the caller checks).
  Switch(uint32_t slots, double timeout_seconds);

  // One received datagram from `from` at time `now` (seconds, never decreasing between calls):
  // appends the answers to *out. Any bytes are accepted.
  void handle(const uint8_t* data, size_t len, const Address& from, double now, Out* out);
  // Ages records out (kError to their contributors), frees complete records left unacknowledged
  // for 10 timeouts, forgets expired tombstones. Call it every few milliseconds.
  void age(double now, Out* out);

  const Stats& stats() const { return stats_; }
  uint32_t slots() const { return slots_; }
  double timeout() const { return timeout_; }
  size_t tombstones() const { return tombstones_.size(); }

 private:
  struct Key {
    uint64_t job = 0;
    uint64_t group = 0;
    uint64_t call = 0;
    uint32_t block = 0;
    bool operator==(const Key& o) const {
      return job == o.job && group == o.group && call == o.call && block == o.block;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  // One bit per source.
  struct Bitmap {
    uint64_t w[ina::kMaxSources / 64] = {};
    bool test(uint32_t s) const { return (w[s / 64] >> (s % 64)) & 1; }
    void set(uint32_t s) { w[s / 64] |= uint64_t{1} << (s % 64); }
  };
  struct Record {
    Key key;
    ina::ElemType elem = ina::ElemType::kNone;
    ina::AggOp op = ina::AggOp::kNone;
    bool complete = false;
    uint16_t sources = 0;
    uint16_t seen_count = 0;
    uint16_t acked_count = 0;
    uint32_t count = 0;
    uint32_t result_len = 0;  // bytes of the result payload
    uint64_t floor = 0;       // the lowest floor of the contributions (protocol.h)
    uint16_t owner = ina::kEverySource;
    Bitmap seen;
    Bitmap acked;
    double created = 0;
    double completed = 0;
    int32_t prev = -1;  // neighbours on the pending or the done list
    int32_t next = -1;
    Address addr[ina::kMaxSources];  // valid for the sources seen
  };
  struct List {
    int32_t head = -1;
    int32_t tail = -1;
  };
  struct Tombstone {
    ina::ErrorBody missing;
    double expires;
  };

  void hello(const ina::PacketHeader& h, const Address& from, Out* out);
  void contribute(const ina::PacketHeader& h, const uint8_t* payload, const Address& from,
                  double now, Out* out);
  void ack(const ina::PacketHeader& h, const Address& from);
  void aggregate(int32_t slot, uint16_t source, const uint8_t* payload);
  void complete(int32_t slot, double now, Out* out);
  void send_result(const Record& r, uint32_t body, uint16_t source, Out* out);
  void age_out(int32_t slot, double now, Out* out);
  void free_slot(int32_t slot);

  uint8_t* buffer(int32_t slot) { return buffers_.get() + size_t(slot) * ina::kMaxResult; }
  ina::PacketHeader header_of(const Record& r, ina::PacketType type, uint16_t source,
                              uint32_t payload) const;

  // The hash table: slot numbers, -1 for empty.
  int32_t find(const Key& k) const;
  void insert(int32_t slot);
  void erase(int32_t slot);
  size_t home(const Key& k) const { return KeyHash()(k) & mask_; }

  void push_back(List* l, int32_t slot);
  void unlink(List* l, int32_t slot);

  uint32_t slots_;
  double timeout_;
  std::vector<Record> records_;
  std::unique_ptr<uint8_t[]> buffers_;  // not value-initialized: pages are touched when used
  std::vector<int32_t> free_;           // a stack of free slots
  std::vector<int32_t> table_;
  size_t mask_ = 0;
  List pending_;
  List done_;
  std::unordered_map<Key, Tombstone, KeyHash> tombstones_;
  std::deque<std::pair<Key, double>> tombstone_order_;  // by expiry
  Stats stats_;
};

}  // namespace torusmpi::sw

#endif  // TORUSMPI_SWITCH_SWITCH_H_
