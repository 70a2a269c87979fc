// A communicator as the collective engine sees it: its ranks (the pml's view), the tag sequence
// of its calls, and its cache of decisions and schedules. A call of a given shape (collective,
// count, element size, root, in place, commutative, and the arrays of vector collectives) is
// selected and built once; afterwards it is a hash lookup and a run of the cached schedule.
#ifndef TORUSMPI_COLL_TEAM_H_
#define TORUSMPI_COLL_TEAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "coll/coll.h"
#include "coll/sched/exec.h"
#include "coll/select/registry.h"
#include "core/status.h"
#include "pml/pml.h"

namespace torusmpi::coll {

class Team {
 public:
  explicit Team(const pml::Comm* comm) : comm_(comm) {}
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  // A blocking call: selects, builds (both cached) and runs. `a` has the call's shape (rank and
  // size are filled in here); `r` its buffers and reduction (comm and tag are filled in here).
  // kErrArg with *why when no algorithm may run the call (TORUSMPI_COLL_FALLBACK=error). Both are
  // the caller's scratch, taken by reference: copying them cost a small call 1.5%.
  // `started(ctx, done)`, when given, is called once the first step is posted (or no algorithm
  // could run the call), before the wait: the caller's bookkeeping (its flight record) then
  // overlaps the messages' travel. `done`: the run ended already (its messages had come, or it
  // has none), and nothing will wait.
  using Started = void (*)(void* ctx, bool done);
  Status run(Args& a, RunArgs& r, std::string* why, Started started = nullptr, void* ctx = nullptr);
  // A nonblocking call: the started run, done or not; Exec::release it once done.
  Status start(Args& a, RunArgs& r, Exec** out, std::string* why);

  // The algorithm the last call ran (statistics, tests).
  const Algorithm* last_algorithm() const { return last_; }

 private:
  // One cached call shape: its decision and schedule. Vector collectives also keep a copy of
  // their arrays, compared on every lookup (cheaper than building a schedule of O(p) steps).
  struct Entry {
    Coll coll;
    bool in_place;
    bool commutative;
    bool in_network;
    int root;
    size_t count;
    size_t elem;
    std::vector<size_t> arrays;  // each present array's values, in Args order
    unsigned present = 0;        // which arrays are there (bit i: array i of arrays_of())
    bool vector = false;         // coll_vector(coll): asked once, not on every lookup
    const Algorithm* alg = nullptr;
    // Shared with nonblocking runs in flight, which may outlive the entry.
    std::shared_ptr<Schedule> schedule;
    uint64_t generation = 0;  // of the selection parameters it was chosen with
  };
  // More shapes than this and the cache starts over (programs whose vector counts never repeat).
  static constexpr size_t kMaxEntries = 4096;

  // The schedule for a call, from the cache or built and cached.
  Status prepare(Args* a, RunArgs* r, std::shared_ptr<Schedule>** out, std::string* why);
  const Algorithm* choose(const Args& a, std::string* why);
  // Places the communicator's ranks on the machine and makes its cost model, at its first call
  // (the machine is known once MPI_Init has loaded it, and a communicator never moves).
  void place();
  static bool matches(const Entry& e, const Args& a);
  static size_t hash(const Args& a);

  const pml::Comm* comm_;
  bool placed_ = false;
  bool modelled_ = false;  // model_ holds the placement's figures (emulated, or host instances)
  TopoView view_;          // every builder's Args::topo on an emulated machine
  TorusModel torus_;       // model_.torus points here
  Model model_{};          // emulated machines; the host's follows oversubscription at each choice
  uint64_t seq_ = 0;       // calls so far: RunArgs::call, and (its low bits) the tag
  const Algorithm* last_ = nullptr;
  std::unordered_multimap<size_t, std::unique_ptr<Entry>> cache_;
  // The entry each collective's last call used: a loop of calls finds them without hashing, even
  // when collectives alternate (a benchmark's barrier between its timed calls); nullptr once the
  // cache drops it.
  Entry* recent_[kCollCount] = {};
};

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_TEAM_H_
