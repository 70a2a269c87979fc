// Collective data access over the two-phase plan (two_phase.h), carried out with torusmpi's own
// point-to-point (the pml, through a Channel the MPI layer gives: src/io sits below the pml) on
// the file's private communicator, and POSIX pread/pwrite.
//
// Every rank of the file's group calls two_phase() with its part of one collective call: the
// extents its view gives the call (file order) and its packed data. In turn:
//   1. each rank's touched range [lo, hi) and extent count to every rank (p - 1 messages of 24
//      bytes each way), and at the same time its whole extent list to each aggregator (unless
//      the mode is "disable"); from the ranges, alike everywhere: whether to aggregate (cb mode;
//      "automatic": only when the ranges interleave), the domains, the rounds. An aggregator
//      receives each list as soon as its count is in, clips it to its domain and plans every
//      rank's slices as the rank does. So one exchange precedes the data, not three (ranges,
//      counts, lists): at 4 ranks and 1 MiB the round trips cost as much as the data's copies;
//   2. round by round, writes: every rank's slice to the aggregator (one message, straight from
//      the packed data), pieces placed in the round buffer, one pwrite per covered run; reads:
//      one pread of the span the round's pieces cover, then each rank's slice back to it (one
//      message, straight into its packed data). An aggregator keeps two rounds going: the next
//      one's messages travel while the current one is placed and written (or read and sent).
// Without aggregation each rank does its own extents, one pread or pwrite per run of adjacent
// extents (a write's run cut into calls of at most cb_buffer_size bytes).
#ifndef TORUSMPI_IO_COLL_IO_H_
#define TORUSMPI_IO_COLL_IO_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/two_phase.h"

namespace torusmpi::io {

// romio_cb_read / romio_cb_write, as ROMIO users give them.
enum class CbMode { kAutomatic, kEnable, kDisable };

// The collective-buffering hints of a file (MPI_Info keys as ROMIO has them), their defaults,
// and what MPI_File_get_info reports. A value that does not parse leaves the hint as it was (MPI
// lets an implementation ignore a hint).
struct CollHints {
  CbMode read = CbMode::kAutomatic;   // romio_cb_read
  CbMode write = CbMode::kAutomatic;  // romio_cb_write
  int cb_nodes = 0;                   // aggregators; 0: one per node
  // Bytes an aggregator handles per round. ROMIO's default is 16 MiB; here rounds of 1 MiB were
  // faster (osu_io, 4 ranks of a node: about 1.5 times 16 MiB's bandwidth): a round's receives,
  // placement and write stay in the caches, and the next round's messages overlap them. 1 MiB is
  // still a large request for a parallel file system (Lustre's default stripe).
  int64_t cb_buffer_size = 1 << 20;

  // Takes key = value if the key is one of the above; false for other keys.
  bool set(const std::string& key, const std::string& value);
  // key, value pairs in force, cb_nodes as the aggregators' number.
  std::vector<std::pair<std::string, std::string>> report(int aggregators) const;
};

// How the engine's messages travel: the pml in the library (PmlChannel), an in-memory mailbox in
// the unit tests, which run a whole group's accesses in one process. Messages between two ranks
// with one tag are received in the order they were sent.
class Channel {
 public:
  virtual ~Channel() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Start a send or receive; the returned id is test()ed or wait()ed until done, then forgotten.
  // The buffer stays untouched by the caller until then.
  virtual int send(int dest, int tag, const void* buf, size_t bytes) = 0;
  virtual int recv(int source, int tag, void* buf, size_t bytes) = 0;
  // Whether it is done; false with *error set when it failed.
  virtual bool test(int id, bool* failed, std::string* error) = 0;
  virtual void wait(int id) = 0;
};

// A buffer that grows without being filled: every byte of a round buffer is written (received,
// placed, read) before it is used, and zero-filling 1 MiB rounds was, by instruction count, 45%
// of an aggregator's work in a 4-rank 1 MiB write_all (each call's vector<char>::resize).
class Bytes {
 public:
  char* data() { return p_.get(); }
  size_t size() const { return size_; }
  // At least n bytes; what was there is not kept when it grows.
  void reserve(size_t n) {
    if (n <= size_) return;
    p_.reset(new char[n]);
    size_ = n;
  }

 private:
  std::unique_ptr<char[]> p_;
  size_t size_ = 0;
};

// An aggregator's round buffers, kept by the caller from one call to the next (their
// allocation and first touch cost as much as a small call's whole exchange).
struct Scratch {
  Bytes buf[2], staging[2];
};

struct TwoPhaseArgs {
  Channel* channel = nullptr;  // the file's group, on a context nothing else of it uses
  int tag = 0;                 // tags tag .. tag + 3 are this call's
  int fd = -1;
  bool write = false;
  std::vector<Extent> extents;  // this rank's, in file order, not overlapping
  char* data = nullptr;         // its packed bytes: write source, read destination
  std::vector<int> aggregators;
  int64_t cb_buffer_size = 1 << 20;
  CbMode mode = CbMode::kAutomatic;
  Scratch* scratch = nullptr;  // nullptr: the call's own buffers
  // Nonzero: this rank's arguments were wrong (its own error, already reported by the caller,
  // an MPI error class). It still takes part in the first exchange, telling the others, so that
  // every rank's call fails instead of theirs waiting for it; it moves no data.
  int refused = 0;
};

struct TwoPhaseResult {
  bool ok = true;
  int os_error = 0;         // errno of a failed pread/pwrite (0: a communication failure)
  std::string what;         // one line for the error's message
  int64_t transferred = 0;  // bytes of this rank's data read (to the end of file) or written
  bool aggregated = false;  // collective buffering was used
  int64_t file_calls = 0;   // pread/pwrite calls this rank made (statistics, tests)
  // Some rank's TwoPhaseArgs::refused (the lowest such rank's): its class, its rank.
  int refused = 0;
  int refused_by = -1;
};

// One collective access in flight. step() does what can be done without waiting for another
// rank (posts messages, handles the rounds whose messages are in, makes the file calls) and says
// whether the access is over; it never blocks, so a nonblocking call's request drives it from the
// progress engine. The arguments (extents, data) must stay valid until it is over.
class TwoPhase {
 public:
  explicit TwoPhase(TwoPhaseArgs a);
  ~TwoPhase();
  TwoPhase(const TwoPhase&) = delete;
  TwoPhase& operator=(const TwoPhase&) = delete;

  bool step();
  bool done() const { return state_ == State::kDone; }
  const TwoPhaseResult& result() const { return res_; }

 private:
  enum class State { kStart, kRanges, kLists, kRounds, kDone };
  struct Impl;
  bool advance();
  void post_round(int k);

  TwoPhaseArgs a_;
  TwoPhaseResult res_;
  State state_ = State::kStart;
  Impl* impl_;
};

// The blocking form: steps until over, driving progress in between.
TwoPhaseResult two_phase(const TwoPhaseArgs& a);

// One process's access of its extents (sorted), one pread or pwrite per run of adjacent ones
// (writes cut at 1 MiB): the shared-pointer calls, and collective calls without aggregation.
TwoPhaseResult independent_access(int fd, bool write, const std::vector<Extent>& extents,
                                  char* data);

}  // namespace torusmpi::io

#endif  // TORUSMPI_IO_COLL_IO_H_
