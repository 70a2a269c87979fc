// The simulator: runs every rank's schedule of one collective call in this process, with no
// data, only what the data is. It
//  - matches every send to a receive (in each pair's order, sizes equal), and finds deadlocks
//    (a receive or send that can never match, under rendezvous semantics: a send waits for its
//    receive, so a schedule that only works with eager buffering is reported);
//  - tracks contributions: every byte of every buffer is known as "bytes [o, o+n) of rank r's
//    send buffer" or "the reduction over ranks S of the vector at [o, o+n)" (contrib.h), so at
//    the end it checks that each output holds exactly what the collective defines (its
//    descriptor's expect(), coll/collective.h), each rank counted once, in rank order for
//    non-commutative ops, and that nothing outside the outputs was written;
//  - checks each step's ops for races (a write overlapping another op's read or write), reads
//    of undefined data into reductions, writes to send buffers, accesses outside a buffer;
//  - predicts time with an alpha-beta-gamma model (per-message latency, per-byte transfer with
//    each rank's send and receive ports serialized, per-byte reduction and copy);
//  - or, given an emulated machine and the ranks' placement, times each message with the
//    machine's timing model (topo/timing.h, which link pacing in pml/shm follows too): it starts
//    once both sides are ready and the sender's and receiver's ports are free, its bytes pass the
//    links of its dimension-order route, or the two chips' network interfaces between instances,
//    each a first-come, first-served server, and it ends when the last of them is done plus
//    software alpha and the latency of the way (hops * link latency, or the network's); messages
//    within a chip use the chip's figures. Messages reach the links in the order they become
//    ready (ranks advance in time order), so contention on a shared link shows as queueing; the
//    bytes each link carried are counted. The runtime's own cost of the call (topo::call_time)
//    is added to the time.
#ifndef TORUSMPI_COLL_SIM_SIM_H_
#define TORUSMPI_COLL_SIM_SIM_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "coll/coll.h"
#include "coll/collective.h"
#include "coll/sched/schedule.h"
#include "topo/machine.h"

namespace torusmpi::coll::sim {

// Costs of the flat model, in seconds. With `machine` set, alpha is the per-message software
// cost only and beta the per byte of a rank's port (its DMA queue; 0: unbounded): links, their
// latency and bandwidth come from the machine, where each rank is from `view` (one entry per
// rank of the call; both must outlive the run). machine_costs() fills them as the library's cost
// model counts them.
struct Costs {
  double alpha = 1e-6;       // per message
  double beta = 1.0 / 10e9;  // per byte on a link
  double gamma = 1.0 / 5e9;  // per byte reduced
  double copy = 1.0 / 10e9;  // per byte copied locally
  const topo::Machine* machine = nullptr;
  const TopoView* view = nullptr;
};
// The costs of `view`'s ranks on `m` (an emulated machine; the flat defaults for the host, with
// `view` for the network bytes when it spans host instances).
Costs machine_costs(const topo::Machine& m, const TopoView& view);

struct Result {
  bool ok = true;
  std::string error;  // the first problem found, naming the rank, step and op
  double time = 0;    // predicted seconds, until the last rank is done
  uint64_t messages = 0;
  uint64_t bytes = 0;    // bytes sent, all ranks together
  size_t max_steps = 0;  // steps of the longest schedule
  // With a machine: bytes each directed link carried, indexed by instance * link_count + link_id
  // (topo::link_id), and the busiest one (-1: no link was used).
  std::vector<uint64_t> link_bytes;
  int busiest_link = -1;
  uint64_t busiest_bytes = 0;
  // With a placement (Costs::view): the payload bytes each chip received from other instances
  // through its network interface, indexed by instance * chips + chip (one chip per host
  // instance), up to the last instance that received any; as TORUSMPI_STATS=1 counts them.
  std::vector<uint64_t> nic_bytes;
};

// Runs the given schedules, one per rank; args[r] is rank r's call (the simulator derives what
// each buffer holds before and must hold after from it).
Result simulate(const std::vector<Schedule>& schedules, const std::vector<Args>& args,
                const Costs& costs = Costs{});

// Builds each rank's schedule with `build` and simulates them.
using BuildFn = std::function<void(Builder&, const Args&)>;
Result run(const std::vector<Args>& args, const BuildFn& build, const Costs& costs = Costs{});

// The same with the calls' descriptor given rather than looked up by Args::coll: the
// intercommunicator collectives (coll/inter/inter.h) describe their calls their own way.
Result simulate(const std::vector<Schedule>& schedules, const std::vector<Args>& args,
                const Collective& desc, const Costs& costs = Costs{});
Result run(const std::vector<Args>& args, const BuildFn& build, const Collective& desc,
           const Costs& costs = Costs{});

// The size of each buffer of a call, as MPI defines it (the collective's descriptor says, see
// coll/collective.h); kUnavailable when the call has no such buffer on this rank (the send
// buffer of an in-place call, recvbuf of reduce off the root). Scratch: 0 (the schedule's).
constexpr uint64_t kUnavailable = kNoBuffer;
uint64_t buffer_bytes(const Args& a, Buf buf);

}  // namespace torusmpi::coll::sim

#endif  // TORUSMPI_COLL_SIM_SIM_H_
