// NeuronLink emulation: routes per peer, byte counts per link, pacing (see links.h).
#include "pml/shm/links.h"

#include <time.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>

#include "topo/timing.h"

namespace torusmpi::pml::shm {

int link_slots(const topo::Machine& m) {
  return m.emulated() ? topo::link_count(m) * m.instances : 0;
}

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void Links::attach(const topo::Machine& m, int me, const std::vector<int>& local_peers,
                   LinkSlot* slots, int nslots, bool pacing) {
  m_ = m;
  const int n = static_cast<int>(local_peers.size());
  to_begin_.assign(n + 1, 0);
  from_begin_.assign(n + 1, 0);
  counts_.assign(static_cast<size_t>(link_slots(m)), 0);
  slots_ = nslots == link_slots(m) && nslots > 0 ? slots : nullptr;
  if (m.emulated() && me < m.ranks()) {
    const int per_instance = topo::link_count(m);
    const topo::Place mine = topo::place(m, me);
    std::vector<topo::Link> route;
    for (int j = 0; j < n; ++j) {
      const int peer = local_peers[j];
      // Ranks beyond the model (it checked the job's size at load) or in another instance
      // (EFA, not NeuronLink) cross no link of ours.
      if (peer != me && peer < m.ranks()) {
        const topo::Place other = topo::place(m, peer);
        if (other.instance == mine.instance) {
          const uint32_t base = static_cast<uint32_t>(mine.instance * per_instance);
          topo::route(m, mine.chip, other.chip, &route);
          for (const topo::Link& l : route) to_ids_.push_back(base + topo::link_id(m, l));
          topo::route(m, other.chip, mine.chip, &route);
          for (const topo::Link& l : route) from_ids_.push_back(base + topo::link_id(m, l));
        }
      }
      to_begin_[j + 1] = static_cast<int>(to_ids_.size());
      from_begin_[j + 1] = static_cast<int>(from_ids_.size());
    }
  }
  accounting_ = !to_ids_.empty();
  pacing_ = pacing && accounting_ && slots_ != nullptr && m.neuronlink.bandwidth > 0;
  ns_per_byte_ = pacing_ ? 1e9 / m.neuronlink.bandwidth : 0;
  hop_ns_ = pacing_ ? static_cast<uint64_t>(std::llround(m.neuronlink.latency * 1e9)) : 0;
  held_.assign(n, 0);
  due_.assign(n, 0);
  stream_rreq_.assign(n, 0);
  stream_free_.assign(n, 0);
  held_count_ = 0;
}

bool Links::may_send(int j, const FragHeader& h, size_t len) {
  const int hops = hops_to(j);
  if (hops == 0) return true;  // same chip: not paced
  const uint64_t now = now_ns();
  if (held_[j]) return now >= due_[j];
  uint64_t ready = now;
  const bool chunk = h.type == FragType::kData;
  if (chunk && h.size > 0 && h.rreq == stream_rreq_[j]) ready = std::min(now, stream_free_[j]);
  uint64_t first_done = ready;
  due_[j] = arrival(&to_ids_[to_begin_[j]], hops, ready, len, &first_done);
  stream_rreq_[j] = chunk ? h.rreq : 0;
  stream_free_[j] = first_done;
  held_[j] = 1;
  ++held_count_;
  return now >= due_[j];
}

uint64_t Links::arrival(const uint32_t* ids, int hops, uint64_t ready, size_t len,
                        uint64_t* first_done) {
  const uint64_t busy = static_cast<uint64_t>(std::ceil(static_cast<double>(len) * ns_per_byte_));
  // A fragment without payload (a match header, a control) occupies no link: it pays the hops.
  uint64_t through = ready;
  *first_done = ready;
  if (busy > 0) {
    through = topo::pass_route(
        hops, ready, busy, [&](int i) { return &slots_[ids[i]].busy_until; }, first_done);
  }
  return through + hop_ns_ * static_cast<uint64_t>(hops);
}

uint64_t Links::copy_arrival(int j, size_t len, bool to_peer) {
  const std::vector<int>& begin = to_peer ? to_begin_ : from_begin_;
  const int hops = begin[j + 1] - begin[j];
  const uint64_t now = now_ns();
  if (hops == 0) return now;
  uint64_t first_done;
  return arrival(&(to_peer ? to_ids_ : from_ids_)[begin[j]], hops, now, len, &first_done);
}

uint64_t Links::next_due() const {
  if (held_count_ == 0) return 0;
  uint64_t due = UINT64_MAX;
  for (size_t j = 0; j < held_.size(); ++j) {
    if (held_[j]) due = std::min(due, due_[j]);
  }
  return due;
}

void Links::publish() {
  if (slots_ == nullptr || published_) return;
  published_ = true;
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) slots_[i].bytes.fetch_add(counts_[i], std::memory_order_acq_rel);
  }
}

void Links::print(FILE* out) const {
  if (!m_.emulated()) return;
  const int per_instance = topo::link_count(m_);
  for (int s = 0; s < link_slots(m_); ++s) {
    const topo::Link l = topo::link_of(m_, s % per_instance);
    const int chip_base = (s / per_instance) * m_.chips();
    const uint64_t bytes =
        slots_ != nullptr ? slots_[s].bytes.load(std::memory_order_acquire) : counts_[s];
    std::fprintf(out, "torusmpi-stats link %d-%d bytes=%" PRIu64 "\n", chip_base + l.from,
                 chip_base + l.to, bytes);
  }
}

}  // namespace torusmpi::pml::shm
