// The one step of the linear neighbourhood collectives: a receive from every source and a send to
// every destination, all posted at once. Edges repeat in a multigraph; the k-th message from a
// source matches the k-th receive from it, which is MPI's pairing of repeated edges. Messages of
// no bytes are skipped: both ends know the size (counts agree in a correct program); so are
// neighbours that are no rank (a negative rank: MPI_PROC_NULL at a non-periodic Cartesian edge),
// whose blocks stay as they are.
#ifndef TORUSMPI_COLL_PATTERNS_NEIGHBOR_H_
#define TORUSMPI_COLL_PATTERNS_NEIGHBOR_H_

#include <cstdint>
#include <utility>

#include "coll/coll.h"
#include "coll/sched/schedule.h"

namespace torusmpi::coll::patterns {

// send_span(j) and recv_span(i): {byte offset, bytes} of the block for dests[j] in the send
// buffer and of the block from sources[i] in the receive buffer.
template <class SendSpan, class RecvSpan>
void neighbor_exchange(Builder& b, const Args& a, SendSpan send_span, RecvSpan recv_span) {
  for (int i = 0; i < a.indegree; ++i) {
    std::pair<uint64_t, uint64_t> at = recv_span(i);
    if (at.second > 0 && a.sources[i] >= 0) b.recv(a.sources[i], a.recv + at.first, at.second);
  }
  for (int j = 0; j < a.outdegree; ++j) {
    std::pair<uint64_t, uint64_t> at = send_span(j);
    if (at.second > 0 && a.dests[j] >= 0) b.send(a.dests[j], a.send + at.first, at.second);
  }
}

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_NEIGHBOR_H_
