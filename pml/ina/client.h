// A rank's side of in-network aggregation: it talks to torusmpi_switch (TORUSMPI_SWITCH) over UDP
// on the loopback, in the protocol of protocol.h. An Aggregation is one source's part of one
// aggregation run of a group (the ranks that hold the same piece in every instance): its data cut
// into blocks, at most TORUSMPI_SWITCH_WINDOW of them in flight, each sent again when its result
// is late, and the results written to dst as they come. The progress engine polls the socket.
//
// Failures end an aggregation with an error rather than a hang: a block the switch aged out
// (a member too late: it names the missing members), or a switch that stopped answering. The
// caller (coll's executor) then finishes the call over the network (coll/sched/rescue.h). A
// switch that stopped answering is not used again: one warning says so.
//
// Whether the job uses the switch at all is agreed at MPI_Init (every rank reached it) and does
// not change afterwards, so that every rank chooses the same algorithms; a switch that dies later
// makes the aggregations fail at once, and the calls finish over the network.
//
// A dying switch may leave some members of a group with a block's result and others without. So
// a member keeps the results it got (kept()) until it learns, from the floors of later results
// (protocol.h), that every member of the group has its own; a member without asks the others.
#ifndef TORUSMPI_PML_INA_CLIENT_H_
#define TORUSMPI_PML_INA_CLIENT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "pml/ina/protocol.h"

namespace torusmpi::pml::ina {

struct Aggregation {
  // What to do. src and dst are views this process can read and write (a device buffer's DMA
  // view: the NIC reads and writes HBM); they do not overlap.
  uint64_t group = 0;  // the switch's group id, the same at every member
  uint64_t call = 0;   // the run's number in the group, the same at every member
  uint16_t sources = 0;
  uint16_t source = 0;  // this rank's index among them
  ElemType elem = ElemType::kNone;
  AggOp op = AggOp::kNone;
  const uint8_t* src = nullptr;
  uint8_t* dst = nullptr;
  size_t bytes = 0;  // of src (kGather: this member's piece; dst holds sources x bytes)
  // A reduce-scatter: each member's part of the vector (sources of them, one after another); the
  // switch sends each member its own part only, written where it sits in dst.
  const uint64_t* parts = nullptr;
  void (*on_complete)(Aggregation*) = nullptr;  // once, when done (from a poll)
  void* user = nullptr;

  // How it went: kOk, or kErrTimeout with `why` (a block aged out at the switch, or the switch
  // stopped answering).
  Status error = Status::kOk;
  std::string why;

  // Internal to the client.
  struct Block {
    size_t offset = 0;  // of its bytes in src (kGather: in each source's piece)
    uint32_t len = 0;
    uint16_t owner = kEverySource;
    double sent = 0;  // when last sent (0: not yet)
    double due = 0;   // when to send it again
    int tries = 0;
    bool done = false;
  };
  std::vector<Block> blocks_;
  uint32_t next_ = 0;       // first block not sent yet
  uint32_t in_flight_ = 0;  // sent, no answer yet
  uint32_t left_ = 0;       // without an answer (result or error)
};

// What the client needs of the job, at MPI_Init: a number that differs between jobs sharing the
// switch. Finds TORUSMPI_SWITCH and asks the switch what it is (a few tries over 0.3 s); returns
// whether it answered (false also without TORUSMPI_SWITCH). Then, once every rank's answer is
// known, agree(): the switch is used when it answered every rank. `speaks`: the rank that warns
// (one per job) when TORUSMPI_SWITCH is set and the switch is not used; `deaf` names the ranks it
// did not answer (empty: all of them).
bool init(uint64_t job);
void agree(bool everyone, const std::string& deaf, bool speaks);
void finalize();

// The job uses the switch (agreed at MPI_Init; the same at every rank, and for the whole job).
bool in_use();
// It is in use and has not stopped answering this rank.
bool available();

// Elements and ops the switch can aggregate.
bool supports(ElemType elem, AggOp op);

// Starts an aggregation (its fields above set); on_complete runs when it is done. A failed one's
// call stays open (it holds back the group's floor) until settle().
Status start(Aggregation* a);
void settle(uint64_t group, uint64_t call);

// What this rank kept of (group, call) for members without their result: the result, or a
// reduce-scatter's contribution; nullptr when it has none (never got it, or forgot it: see
// forgotten()).
struct Kept {
  std::vector<uint8_t> bytes;
  bool contribution = false;
};
const Kept* kept(uint64_t group, uint64_t call);
// It had it, but TORUSMPI_SWITCH_KEEP made it forget it before every member had its own.
bool forgotten(uint64_t group, uint64_t call);
// Forgets what it keeps for the groups of a communicator's collective context (at its end).
void forget_context(uint32_t context);

// The switch's id of a group: the communicator's collective context and the group's number in
// the schedule, the same at every member.
inline uint64_t group_id(uint32_t context, uint32_t number) {
  return static_cast<uint64_t>(context) << 32 | number;
}

// What a sleeping rank polls so that the switch's answers wake it: `also` (a network transport's
// descriptor, or -1) when no aggregation waits, else a descriptor that is readable when the
// switch's socket or `also` is (an epoll set of both).
int wait_fd(int also);

struct Counters {
  uint64_t blocks = 0;       // blocks this rank contributed
  uint64_t bytes_out = 0;    // payload sent to the switch
  uint64_t bytes_in = 0;     // payload received from it
  uint64_t retransmits = 0;  // blocks sent again
  uint64_t timeouts = 0;     // blocks aged out, or lost with the switch
  uint64_t fallbacks = 0;    // aggregations finished over the network (note_fallback)
  uint64_t rescued = 0;      // of those, finished with a result another member had (note_rescued)
};
const Counters& counters();
void note_fallback();
void note_rescued();

}  // namespace torusmpi::pml::ina

#endif  // TORUSMPI_PML_INA_CLIENT_H_
