// The emulated machine's timing model (see timing.h).
#include "topo/timing.h"

namespace torusmpi::topo {

Fabric::Fabric(const Machine& m, int instances) : m_(&m), chips_(m.chips()), links_(link_count(m)) {
  link_free_.assign(static_cast<size_t>(links_) * instances, 0);
  link_bytes_.assign(link_free_.size(), 0);
  nic_out_free_.assign(static_cast<size_t>(chips_) * instances, 0);
  nic_in_free_.assign(nic_out_free_.size(), 0);
  routes_.assign(static_cast<size_t>(chips_) * chips_, {});
  routed_.assign(routes_.size(), false);
}

const std::vector<int>& Fabric::route(int a, int b) {
  const size_t k = static_cast<size_t>(a) * chips_ + b;
  if (!routed_[k]) {
    std::vector<Link> hops;
    topo::route(*m_, a, b, &hops);
    for (const Link& l : hops) routes_[k].push_back(link_id(*m_, l));
    routed_[k] = true;
  }
  return routes_[k];
}

double Fabric::wire(ChipAt from, ChipAt to, uint64_t bytes) const {
  if (from.instance != to.instance) return seconds(bytes, m_->efa.bandwidth);
  if (from.chip == to.chip) return seconds(bytes, m_->intra_chip.bandwidth);
  return seconds(bytes, m_->neuronlink.bandwidth);
}

double Fabric::deliver(ChipAt from, ChipAt to, uint64_t bytes, double start, double software) {
  const double wire = this->wire(from, to, bytes);
  if (from == to) return start + software + m_->intra_chip.latency + wire;
  if (from.instance == to.instance) {
    const std::vector<int>& path = route(from.chip, to.chip);
    const size_t base = static_cast<size_t>(from.instance) * links_;
    const double done = pass_route(static_cast<int>(path.size()), start, wire, [&](int i) {
      link_bytes_[base + path[i]] += bytes;
      return &link_free_[base + path[i]];
    });
    return done + software + static_cast<double>(path.size()) * m_->neuronlink.latency;
  }
  const double out =
      serve(&nic_out_free_[static_cast<size_t>(from.instance) * chips_ + from.chip], start, wire);
  const double in =
      serve(&nic_in_free_[static_cast<size_t>(to.instance) * chips_ + to.chip], start, wire);
  return std::max(out, in) + software + m_->efa.latency;
}

void count_received(std::vector<uint64_t>* received, int chips, ChipAt to, uint64_t bytes) {
  const size_t k = static_cast<size_t>(to.instance) * chips + to.chip;
  if (k >= received->size()) received->resize(k + 1, 0);
  (*received)[k] += bytes;
}

}  // namespace torusmpi::topo
