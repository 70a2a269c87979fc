// NeuronLink emulation for the shared-memory transport: which emulated links a fragment between
// two local ranks crosses, how many payload bytes each link carried, and, with
// TORUSMPI_LINK_PACING=1, when the fragment may arrive.
//
// Shaped for a hot path that must stay cheap: routes are looked up once, at attach, into a flat
// array of link ids per peer (both directions: a single-copy read moves bytes from the peer to
// the reader), so charging a fragment is a few additions to this process's own counters, with no
// atomics and no sharing. The job-wide totals are made once, at finalize, when every rank adds
// its counters to the slots in the shared segment. A host-model job (no emulation) has no routes
// and the transport skips all of this behind one flag.
//
// Pacing follows the machine's timing model (topo/timing.h), the simulator's: each link is a
// first-come, first-served server whose busy-until time sits in its shared slot (one cache line
// per link, so senders on different links do not share a line). A fragment of b bytes offered at
// time t on a route of h links of latency a and bandwidth B passes each link, for b/B, as soon
// as that link is free from t on (each slot: atomic max-then-add), and
//   arrival = (when the last link is done with it) + h*a      (t + b/B + h*a on an idle route)
// Until its arrival the fragment stays with the sender: the transport refuses it and the pml
// offers it again after polling, so the caller never blocks and a waiting rank sleeps until the
// earliest arrival (next_due) instead of spinning. Chunks of one pipelined message are ready
// together on the hardware, so a chunk offered right behind its predecessor is ready when that
// predecessor left the first link, not when the pml got round to offering it: streams run at
// link bandwidth, with the route's latency paid once. Same-chip fragments are not paced: two
// cores of one chip exchange through shared memory at least as fast as the emulated chip would.
#ifndef TORUSMPI_PML_SHM_LINKS_H_
#define TORUSMPI_PML_SHM_LINKS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "pml/transport.h"
#include "topo/machine.h"

namespace torusmpi::pml::shm {

// One directed link's state, shared by the node's ranks.
struct alignas(64) LinkSlot {
  std::atomic<uint64_t> bytes;       // payload bytes of every rank that has published
  std::atomic<uint64_t> busy_until;  // CLOCK_MONOTONIC ns at which the link is next free
};
static_assert(sizeof(LinkSlot) == 64, "one cache line per link");

// Slots a segment holds for machine m: every link of every instance (0 for host).
int link_slots(const topo::Machine& m);

uint64_t now_ns();

class Links {
 public:
  // Builds the routes between job rank `me` and each local peer (job ranks, local order) on
  // machine m. `slots` (nslots of them) are the segment's; nullptr when there is none.
  void attach(const topo::Machine& m, int me, const std::vector<int>& local_peers, LinkSlot* slots,
              int nslots, bool pacing);

  // Some local peer sits on another chip of this rank's instance: there is something to count.
  bool accounting() const { return accounting_; }
  bool pacing() const { return pacing_; }
  int hops_to(int j) const { return to_begin_[j + 1] - to_begin_[j]; }

  // Payload bytes sent to local peer j, or read from it.
  void charge_to(int j, size_t bytes) {
    for (int i = to_begin_[j]; i < to_begin_[j + 1]; ++i) counts_[to_ids_[i]] += bytes;
  }
  void charge_from(int j, size_t bytes) {
    for (int i = from_begin_[j]; i < from_begin_[j + 1]; ++i) counts_[from_ids_[i]] += bytes;
  }

  // Pacing: true when the fragment (len payload bytes) to local peer j may be handed over now;
  // false when it must wait (the first call takes its turn on its route's links and fixes its
  // arrival; the calls after it, for the same fragment, compare the clock). sent(j) once it is
  // handed.
  bool may_send(int j, const FragHeader& h, size_t len);
  // Pacing of a copy this rank makes itself (a one-sided put or get of len bytes to or from
  // local peer j's memory): takes its turn on the route's links as a fragment does and returns
  // when it arrives (ns); now for a peer on this chip.
  uint64_t copy_arrival(int j, size_t len, bool to_peer);
  void sent(int j) {
    held_[j] = 0;
    --held_count_;
  }
  // Earliest arrival (ns) of a held fragment; 0 when none is held.
  uint64_t next_due() const;
  bool holding() const { return held_count_ > 0; }

  // Adds this process's counts to the slots' totals; once, after its last message.
  void publish();
  // One line per link, in id order (all instances), from the slots' totals (or this process's
  // own counts when it has no segment: it is alone on its node, and nothing crossed a link).
  void print(FILE* out) const;

 private:
  // When len bytes offered at `ready` on the route of `hops` links `ids` arrive, each link taken
  // in turn (its busy-until slot moved on); *first_done: when the first link is done with them.
  uint64_t arrival(const uint32_t* ids, int hops, uint64_t ready, size_t len, uint64_t* first_done);

  topo::Machine m_;
  LinkSlot* slots_ = nullptr;
  bool accounting_ = false;
  bool pacing_ = false;
  bool published_ = false;
  std::vector<uint64_t> counts_;  // this process's bytes per slot
  std::vector<uint32_t> to_ids_, from_ids_;
  std::vector<int> to_begin_, from_begin_;  // per local peer, into *_ids_ (n + 1 entries)
  // Pacing, per local peer: the held fragment's arrival, and the pipelined message (its
  // receiver's request) whose last chunk left the first link at stream_free_.
  double ns_per_byte_ = 0;
  uint64_t hop_ns_ = 0;
  std::vector<uint8_t> held_;
  std::vector<uint64_t> due_;
  std::vector<uint64_t> stream_rreq_;
  std::vector<uint64_t> stream_free_;
  int held_count_ = 0;
};

}  // namespace torusmpi::pml::shm

#endif  // TORUSMPI_PML_SHM_LINKS_H_
