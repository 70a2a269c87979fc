// Finishing an aggregation that failed at some members of its group (coll/sched/exec.cc).
//
// A switch that dies while it sends a block's result leaves some members with the result and
// others without (pml/ina/protocol.h). A member without (it failed) asks every other member of
// the group: a request (group, call) on the communicator's collective context, tag kTag. Each
// answers once, on the call's tag: with the result, when it got it (pml/ina keeps results until
// every member has its own), or with its contribution, when it failed too. A failed member that
// gets a result from anyone takes it; one that gets every member's contribution reduces them in
// member order, as every failed member of the group then does, so all members end with the same
// bytes. Every failed member sends its request before its answer, on the same FIFO channel, so a
// member that has every answer has had every request it will get (answered() checks it).
//
// Members answer from a listener: a receive posted on each communicator where the rank
// aggregated, for as long as the communicator lives, so that a member answers whatever it is
// doing in MPI. A request for a call whose outcome the member does not know yet (it is still at
// the switch, or has not started it) waits for it: exec.cc calls settled() or offer().
#ifndef TORUSMPI_COLL_SCHED_RESCUE_H_
#define TORUSMPI_COLL_SCHED_RESCUE_H_

#include <cstddef>
#include <cstdint>

#include "coll/sched/schedule.h"
#include "pml/pml.h"

namespace torusmpi::coll::rescue {

// Requests' tag on the collective context: no collective's (group.h's table of tags).
constexpr int kTag = -2;

struct Request {
  uint64_t group = 0;
  uint64_t call = 0;
  int64_t tag = 0;  // where the asker waits for the answer: its call's tag
};

enum class Kind : uint64_t {
  kResult = 1,        // the switch's result, which this member got
  kContribution = 2,  // this member's contribution: it failed too
  kGone = 3,          // it got the result but forgot it (TORUSMPI_SWITCH_KEEP)
  // A reduce-scatter's contribution, kept by a member that got its own part (it does not ask).
  kKeptContribution = 4,
};
// An answer is two messages on the asker's tag: this, then the bytes (none for kGone). A
// contribution goes from where it is (device memory too), so its run waits until its answers are
// sent (finished()).
struct Answer {
  Kind kind = Kind::kGone;
  uint64_t bytes = 0;
};
static_assert(sizeof(Request) == kRescueRequestBytes && sizeof(Answer) == kRescueAnswerBytes,
              "the simulator prices these sizes (schedule.h)");

// Posts comm's listener, if it has none (at each aggregation: a lookup).
void listen(const pml::Comm& comm);
// The communicator is going: its listener is cancelled, its kept results forgotten.
void forget(uint32_t coll_context);
void finalize();

// (group, call) succeeded here: requests that waited for it get the kept result.
void settled(uint64_t group, uint64_t call);
// It failed here: requests for it, those that waited and those to come until withdraw(), get
// this contribution (bytes at src, host or device memory, unchanged until withdraw()).
void offer(uint64_t group, uint64_t call, const void* src, size_t bytes);
// Whether every comm rank in `askers` (those that answered with a contribution: they failed, so
// they asked) has asked for (group, call) and been answered, and every answer is sent.
bool finished(uint64_t group, uint64_t call, const int* askers, size_t n);
void withdraw(uint64_t group, uint64_t call);

}  // namespace torusmpi::coll::rescue

#endif  // TORUSMPI_COLL_SCHED_RESCUE_H_
