// The shared-memory transport: ranks of one node exchange fragments through one segment.
//
// The segment belongs to the job and the node: the first local rank creates it (a memfd, or with
// TORUSMPI_SHM_NAMED=1 a POSIX shm object of mode 0600 and a job-unique name), the others open it,
// and as soon as every local rank has mapped it the name is gone (the memfd is closed, the shm
// object unlinked). Nothing is left in /dev/shm however the job ends, crash included: the mapping
// dies with the last process.
//
//   | header | one block per rank: doorbell, sleeping flag, state, pid | one slot per emulated
//   link (links.h) | rings: n x n, ring(i->j) |
//
// A waiting rank spins and yields (progress::Backoff), then sleeps on its doorbell (a futex); a
// sender rings the doorbell only when the flag says the receiver sleeps, so the awake path costs
// one load. While asleep, a rank checks now and then that its local peers are alive, so a peer
// that died gives a diagnosed abort, not a hang.
#ifndef TORUSMPI_PML_SHM_SHM_H_
#define TORUSMPI_PML_SHM_SHM_H_

#include <cstdio>
#include <string>
#include <vector>

#include "boot/boot.h"
#include "core/status.h"

namespace torusmpi::pml::shm {

// Before the bootstrap's exchange: the first local rank creates the segment and publishes where it
// is. Does nothing for a rank alone on its node.
Status prepare(const boot::JobInfo& job, std::string* error);

// After the exchange: maps the segment, waits (first local rank) until every local rank has mapped
// it and removes its name, then serves as the pml's transport to every local peer. `cards` are the
// local peers' (job.local_peers order): their pids let the rendezvous read their memory.
Status attach(const boot::JobInfo& job, const std::vector<boot::PeerCard>& cards,
              std::string* error);

// Whether bytes to local peers on other chips are counted on the emulated links (an instance
// model with chips). One-sided accesses to a local peer's window memory (src/mpi/win_ops.cc) are
// copies this rank makes itself, not fragments: they count their bytes here, to job rank `peer`
// (a put, an accumulate) or from it (a get), and with TORUSMPI_LINK_PACING=1 wait here until
// the links would have delivered them.
bool link_accounting();
void charge_links(int peer, size_t bytes, bool to_peer);

// TORUSMPI_STATS: adds this rank's bytes per emulated link to its node's totals. Once, after the
// rank's last message (pml::finalize) and before the fence that precedes print_link_stats.
void publish_link_stats();
// One line per link of the instance model, in link id order (zeros included):
//   torusmpi-stats link <from_chip>-<to_chip> bytes=<N>
// the totals of every rank of the node that has published. Nothing for the host model.
void print_link_stats(FILE* out);

// Marks this rank finalized (peers stop watching it) and unmaps the segment.
void detach();

}  // namespace torusmpi::pml::shm

#endif  // TORUSMPI_PML_SHM_SHM_H_
