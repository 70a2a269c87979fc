// A communicator as the collective engine sees it: its ranks (the pml's view), the tag sequence
// of its calls, and its cache of decisions and schedules. A call of a given shape (collective,
// count, element size, root, in place, commutative) is selected and built once; afterwards it is
// a hash lookup and a run of the cached schedule. Vector collectives, whose shapes are arrays,
// are built for each call.
#ifndef TORUSMPI_COLL_TEAM_H_
#define TORUSMPI_COLL_TEAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

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
  // kErrArg with *why when no algorithm may run the call (TORUSMPI_COLL_FALLBACK=error).
  Status run(Args a, RunArgs r, std::string* why);
  // A nonblocking call: the started run, done or not; Exec::release it once done.
  Status start(Args a, RunArgs r, Exec** out, std::string* why);

  // The algorithm the last call ran (statistics, tests).
  const Algorithm* last_algorithm() const { return last_; }

 private:
  struct Key {
    Coll coll;
    bool in_place;
    bool commutative;
    int root;
    size_t count;
    size_t elem;
    bool operator==(const Key& o) const {
      return coll == o.coll && in_place == o.in_place && commutative == o.commutative &&
             root == o.root && count == o.count && elem == o.elem;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      size_t h = static_cast<size_t>(k.coll) | static_cast<size_t>(k.in_place) << 8 |
                 static_cast<size_t>(k.commutative) << 9 | static_cast<size_t>(k.root) << 10;
      return h ^ (k.count * 0x9e3779b97f4a7c15ull) ^ (k.elem << 40);
    }
  };
  struct Entry {
    const Algorithm* alg = nullptr;
    Schedule schedule;
    uint64_t generation = 0;  // of the selection parameters it was chosen with
  };

  // The schedule for a call: from the cache, or built into `own` for vector collectives.
  Status prepare(Args* a, RunArgs* r, Schedule* own, const Schedule** out, std::string* why);
  const Algorithm* choose(const Args& a, std::string* why);

  const pml::Comm* comm_;
  uint32_t seq_ = 0;
  const Algorithm* last_ = nullptr;
  std::unordered_map<Key, std::unique_ptr<Entry>, KeyHash> cache_;
};

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_TEAM_H_
