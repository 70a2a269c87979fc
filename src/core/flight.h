// The flight recorder: the last kDepth MPI operations of this rank (call, communicator, its number
// on that communicator, peer, schedule step, bytes, state, when it was entered), and whom the rank
// waits for while it waits. It lives in a memfd mapping named kMapName, so that any process of
// the node with the rights to read this one's memory finds it in /proc/<pid>/maps and reads it
// (process_vm_readv), while this rank is blocked, stopped or looping: that is how a rank that
// times out describes its node's ranks, and how `torusmpi_info --hang <pid>` describes a running
// job from outside. Nothing is written to the filesystem.
//
// Hang diagnosis (TORUSMPI_TIMEOUT): a rank that has waited in one operation longer than the
// timeout calls the handler set by set_on_timeout() (the MPI layer prints the job's report and
// ends the job). Waits call stalled() as they sleep (progress::Backoff), which costs one clock read
// per sleep.
//
// Readers in other processes tolerate a record being rewritten as they read it: each record has a
// generation, odd while it is written; such a record is shown as it was read, marked torn.
#ifndef TORUSMPI_CORE_FLIGHT_H_
#define TORUSMPI_CORE_FLIGHT_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace torusmpi::flight {

constexpr char kMapName[] = "torusmpi-flight";
constexpr uint32_t kMagic = 0x4c464d54;  // "TMFL" in memory
constexpr uint32_t kLayout = 2;          // bumped whenever Book changes
constexpr int kDepth = 64;               // operations kept
constexpr int kNest = 4;                 // operations in progress inside each other
constexpr int kWaitMax = 8;              // ranks listed as waited for

// A rank named by an operation: a job rank, or one of these.
constexpr int32_t kNoPeer = -1;
constexpr int32_t kAnyPeer = -2;

enum class State : uint32_t { kFree, kActive, kDone, kStarted, kFailed };

// One operation. Plain data: the same bytes are read by other processes.
struct Op {
  uint32_t gen;  // odd while being written
  State state;
  uint64_t index;      // 1, 2, ... over the rank's life
  int64_t entered_ns;  // now_ns(): one clock for every process of the machine
  int64_t ended_ns;    // 0 while in progress
  uint64_t repeats;    // identical calls folded into this one after it (test loops), 0 if none
  int64_t bytes;       // -1 when the call has no size
  uint32_t context;    // communicator's context id
  uint32_t comm_seq;   // the call's number among the communicator's collectives, 0 for others
  int32_t peer;        // job rank named (destination, source), or kNoPeer / kAnyPeer
  int32_t step;        // schedule step running (from 1), 0 when none
  int32_t steps;       // steps of the schedule, 0 when none
  uint32_t stride;     // folded calls: 1, one after another; 2, in turn with the record next to it
  char call[28];       // "MPI_Allreduce"
  char comm[36];       // "MPI_COMM_WORLD", a communicator's name, or "context 6"
};

struct Header {
  uint32_t magic;
  uint32_t layout;
  int32_t pid;
  int32_t rank;
  int32_t size;
  int32_t depth;  // ops[active[0..depth-1]] are in progress, outermost first
  int32_t active[kNest];
  uint64_t next_index;  // of the next operation
  int32_t last;         // slot of the record written last (an alternating fold rewrites one before)
  int32_t pad;
  int64_t opened_ns;
  int64_t wait_seen_ns;        // when wait_for was last refreshed by a waiting rank (0: never)
  int32_t nwait;               // entries of wait_for
  int32_t wait_for[kWaitMax];  // job ranks whose messages the rank waits for (kAnyPeer: any)
  char nspace[64];
  char host[64];
};

struct Book {
  Header h;
  Op ops[kDepth];
};

// The text a record names its communicator by (a communicator's name, a window's) is copied into
// a slot only when it may have changed since the slot last held it: same pointer, and no Name made,
// changed or destroyed since. Owners of such texts keep them in a Name, which tells the recorder
// (a loop of barrier and allreduce writes a new record on every call, and copying the name was a
// fifth of the recorder's cost). A literal passed as `comm` never changes.
namespace detail {
extern uint64_t g_names_epoch;
}
class Name {
 public:
  Name() { changed(); }
  Name(const Name& o) : text_(o.text_) { changed(); }
  ~Name() { changed(); }
  Name& operator=(const Name& o) { return *this = o.text_; }
  Name& operator=(std::string text) {
    text_ = std::move(text);
    changed();
    return *this;
  }
  Name& assign(const char* text, size_t n) { return *this = std::string(text, n); }
  const std::string& str() const { return text_; }
  operator const std::string&() const { return text_; }
  const char* c_str() const { return text_.c_str(); }
  bool empty() const { return text_.empty(); }

 private:
  static void changed() { ++detail::g_names_epoch; }
  std::string text_;
};

// Opens this rank's recorder; until then (and after close) begin() records nothing.
void open(int rank, int size, const std::string& nspace, const std::string& host);
void close();
bool is_open();

// An operation begins: records it and returns its slot (-1 when closed). `peer` is a job rank or
// kNoPeer/kAnyPeer; `comm_seq` 0 for a call that is not a collective. An operation equal to the
// last one (call, communicator, peer) and already ended is folded into it (repeats), so a loop of
// MPI_Test keeps the history before it; so is one equal to the one before the last, when the two
// alternate (a benchmark's timed call and its barrier, a ping-pong's send and receive), each then
// numbered two after its previous. `call` is a literal (or text that never changes while the
// process runs): a call at the same address is taken to be the same call.
int begin(const char* call, uint32_t context, const char* comm, uint32_t comm_seq, int64_t bytes,
          int32_t peer);
// The operation in `slot` ends: kDone (a blocking call returned), kStarted (a nonblocking call
// returned its request) or kFailed.
void end(int slot, State state);
// begin() and end(kStarted) at once, for a nonblocking call that hands its work to a request and
// returns: its record never joins the operations in progress.
void started(const char* call, uint32_t context, const char* comm, uint32_t comm_seq, int64_t bytes,
             int32_t peer);
// begin() and end(kDone) at once, for a blocking call found done before it would wait.
void done(const char* call, uint32_t context, const char* comm, uint32_t comm_seq, int64_t bytes,
          int32_t peer);
// The innermost operation in progress runs step `step` of `steps` of its schedule.
void step(int step, int steps);

// RAII for a call: begin() now (or at open(), for a record begun later), end(kDone) when it goes
// out of scope unless end() came first.
class Scope {
 public:
  Scope() : slot_(-1) {}
  Scope(const char* call, uint32_t context, const char* comm, uint32_t comm_seq, int64_t bytes,
        int32_t peer)
      : slot_(begin(call, context, comm, comm_seq, bytes, peer)) {}
  // With `already_done` (a blocking call found done before it would wait), the record is written
  // done at once (flight::done) and the scope has nothing left to end.
  void open(const char* call, uint32_t context, const char* comm, uint32_t comm_seq, int64_t bytes,
            int32_t peer, bool already_done = false) {
    if (already_done) {
      done(call, context, comm, comm_seq, bytes, peer);
    } else {
      slot_ = begin(call, context, comm, comm_seq, bytes, peer);
    }
  }
  ~Scope() { finish(State::kDone); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  void finish(State state) {
    if (slot_ >= 0) end(slot_, state);
    slot_ = -1;
  }

 private:
  int slot_;
};

// Whom this rank waits for, asked as it waits (the pml lists its posted receives). Writes up to
// `max` job ranks (kAnyPeer for a receive from any source) and returns how many.
using WaitingFor = int (*)(int32_t* ranks, int max);
void set_waiting_for(WaitingFor fn);

// Called by a wait that sleeps: at most every kLookPeriodMs it refreshes whom the rank waits for
// and, with TORUSMPI_TIMEOUT, calls the timeout handler once the outermost operation in progress
// has waited longer. Time the process did not run (stopped, held by a debugger: a long gap
// between two looks) is not waiting.
constexpr int kLookPeriodMs = 200;
void stalled();
// The operation in progress has waited from now on only (a debugger holds a peer).
void discount_wait();
// The handler: `waited_s` is how long the operation has lasted. It may return (the report is left
// to another rank), and is then called again at the next look.
using OnTimeout = void (*)(double waited_s);
void set_on_timeout(OnTimeout fn, double timeout_s);

// This rank's book (nullptr when closed).
const Book* self();

// Another process's book, found by its mapping's name in /proc/<pid>/maps. False with *error
// when there is none or it cannot be read.
bool read_book(pid_t pid, Book* out, std::string* error);
// The processes of this machine that have a book, by pid, ascending (readable ones only).
std::vector<pid_t> find_books();

// A process's scheduler state from /proc/<pid>/stat ('R', 'S', 'D', 'T' stopped, 't' stopped by a
// tracer, 'Z'), or '?' when it is gone.
char proc_state(pid_t pid);
// Whether a debugger (any tracer) is attached to the process.
bool traced(pid_t pid);

// CLOCK_MONOTONIC_COARSE, in nanoseconds (a few milliseconds' resolution).
int64_t now_ns();

// What the ranks of one node are doing, from their books (read at `now_ns`) and process states:
// ranks in the same place are grouped on one line ("ranks 0-2 are in MPI_Allreduce #58 on
// MPI_COMM_WORLD, step 1 of 2, waiting for rank 3, entered 602 s ago"), then each rank's last
// operations when `history` > 0. `missing` lists job ranks expected on the node without a book.
struct Seen {
  Book book;
  char state;  // proc_state()
};
std::string describe_node(const std::vector<Seen>& ranks, int64_t now_ns, int history,
                          const std::vector<int>& missing = {});

// "0-2,5" for ascending ranks.
std::string rank_ranges(const std::vector<int>& ranks);

}  // namespace torusmpi::flight

#endif  // TORUSMPI_CORE_FLIGHT_H_
