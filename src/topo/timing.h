// The emulated machine's timing model, the one the simulator (coll/sim) and link pacing
// (pml/shm/links) both use: when the bytes of a message get through the machine.
//
// Every directed link and each side (send, receive) of every chip's network interface is a
// first-come, first-served server, known by the time it is next free. A message of b bytes
// that may start at t
//   - within an instance crosses the links of its dimension-order route (route()); its bytes pass
//     each link, for b / link bandwidth, as soon as that link is free from t on (they flow through
//     the route pipelined), and the last link to be done with them decides; it arrives then plus
//     hops * link latency. An idle route gives t + b / bandwidth + hops * latency.
//   - between instances leaves through the sender's chip's interface and enters through the
//     receiver's, each a server of its own passing the bytes as soon as it is free; the later
//     decides, plus the network's latency.
//   - within a chip takes b / intra_chip bandwidth + intra_chip latency and no server.
// Why each server on its own: waiting until every server of the route is free at one instant
// leaves links idle behind a message held up elsewhere; with the thousands of small messages of a
// direct algorithm that convoy overstated the time fourfold.
//
// The rule is written once, over the server's storage: serve() on a plain busy-until (one process
// keeps all of them: the simulator's Fabric below) or on an atomic one in shared memory (the
// node's ranks share the links' slots: pml/shm's pacing), and pass_route() over either.
#ifndef TORUSMPI_TOPO_TIMING_H_
#define TORUSMPI_TOPO_TIMING_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "topo/machine.h"

namespace torusmpi::topo {

// Work of `busy` offered to a server at `start` begins when the server is free, at or after
// `start`, and holds it for `busy`. Returns when it ends, the server's new busy-until.
inline double serve(double* free_at, double start, double busy) {
  *free_at = std::max(*free_at, start) + busy;
  return *free_at;
}
// The same on a busy-until the node's processes share (nanoseconds): an atomic max-then-add,
// so senders that reach the server at once queue one behind the other.
inline uint64_t serve(std::atomic<uint64_t>* free_at, uint64_t start, uint64_t busy) {
  uint64_t seen = free_at->load(std::memory_order_acquire);
  while (!free_at->compare_exchange_weak(seen, std::max(seen, start) + busy,
                                         std::memory_order_acq_rel, std::memory_order_acquire)) {
  }
  return std::max(seen, start) + busy;
}

// A message's bytes through the `hops` links of its route, each holding them for `busy` as soon
// as it is free from `start` on; link(i) gives the busy-until of the route's i-th link. Returns
// when the last link is done with them (start + busy on an idle route): the message arrives
// then plus hops * link latency. `first_done`, when given, is when the first link is done: a
// stream's next chunk may enter the route then.
template <typename Time, typename LinkAt>
Time pass_route(int hops, Time start, Time busy, LinkAt link, Time* first_done = nullptr) {
  Time done = start + busy;
  for (int i = 0; i < hops; ++i) {
    const Time end = serve(link(i), start, busy);
    if (i == 0 && first_done != nullptr) *first_done = end;
    done = std::max(done, end);
  }
  return done;
}

// Seconds `bytes` take at `bandwidth` bytes/s (0 when the bandwidth is not given: unbounded).
inline double seconds(uint64_t bytes, double bandwidth) {
  return bandwidth > 0 ? static_cast<double>(bytes) / bandwidth : 0;
}

// The runtime's own cost of one collective call whose ranks sit on `chips` chips (all instances
// together) of `instances` instances: Machine::call's fixed part, plus its part per chip and per
// instance beyond the first. It precedes the call's messages: the simulator adds it to a call's
// time and the cost model to every algorithm's (the same for all, it never changes a choice).
inline double call_time(const Machine& m, int chips, int instances) {
  return m.call.fixed + m.call.per_chip * std::max(0, chips - 1) +
         m.call.per_instance * std::max(0, instances - 1);
}

// A chip of the job: its instance and its index within it (place()).
struct ChipAt {
  int instance = 0;
  int chip = 0;
  bool operator==(const ChipAt& o) const { return instance == o.instance && chip == o.chip; }
};

// Every server of `instances` instances of an emulated machine, for a run that keeps them all in
// one process (the simulator), in seconds; and the bytes each link carried.
class Fabric {
 public:
  Fabric() = default;
  Fabric(const Machine& m, int instances);  // m must outlive the Fabric

  // When a message of `bytes` from chip `from` to chip `to`, that may start at `start`, has
  // arrived, with `software` seconds (the software's own cost per message) on top; the links or
  // network interfaces it passes are taken as the model above says, and each link counts it.
  double deliver(ChipAt from, ChipAt to, uint64_t bytes, double start, double software);
  // Seconds `bytes` hold one server on the way from `from` to `to`: a link, a network interface,
  // or within a chip the copy itself.
  double wire(ChipAt from, ChipAt to, uint64_t bytes) const;
  // The link ids (within one instance: link_id()) a message from chip a to chip b crosses, in
  // order; worked out once per pair.
  const std::vector<int>& route(int a, int b);
  // Bytes each directed link carried, indexed by instance * link_count() + link_id().
  const std::vector<uint64_t>& link_bytes() const { return link_bytes_; }

 private:
  const Machine* m_ = nullptr;
  int chips_ = 0, links_ = 0;
  std::vector<double> link_free_, nic_out_free_, nic_in_free_;
  std::vector<uint64_t> link_bytes_;
  std::vector<std::vector<int>> routes_;
  std::vector<bool> routed_;
};

// Adds `bytes` of payload that chip `to` received from another instance through its network
// interface to `received`, indexed by instance * chips + chip (`chips` per instance; a host
// instance is one chip), grown up to the last chip that received any: what TORUSMPI_STATS=1
// counts.
void count_received(std::vector<uint64_t>* received, int chips, ChipAt to, uint64_t bytes);

}  // namespace torusmpi::topo

#endif  // TORUSMPI_TOPO_TIMING_H_
