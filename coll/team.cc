#include "coll/team.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "coll/select/select.h"
#include "coll/stats.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"

namespace torusmpi::coll {

void Team::place() {
  const topo::Machine& m = topo::machine();
  std::vector<int> job_ranks(comm_->size);
  for (int r = 0; r < comm_->size; ++r) job_ranks[r] = comm_->world_rank(r);
  view_ = topo_view(m, job_ranks);
  // Host instances too (a job's nodes, or TORUSMPI_INSTANCES): the network between them is priced
  // (one host alone keeps host_model), and so is this host's oversubscription, as for the host
  // alone; an emulated instance is priced as the instance would run, whatever this host's cores.
  modelled_ = m.emulated() || m.instances > 1;
  if (modelled_)
    model_ = topo_model(m, view_, !m.emulated() && progress::node_oversubscribed(), &torus_);
  placed_ = true;
}

const Algorithm* Team::choose(const Args& a, std::string* why) {
  Choice c = select_algorithm(a, modelled_ ? model_ : host_model(progress::node_oversubscribed()));
  // Decisions are cached, so these lines come once per call shape; rank 0 speaks for all.
  if (comm_->rank == 0) {
    if (c.passed_over && c.alg != nullptr && params::coll_fallback() == "warn") {
      log::warn("%s of %zu B on %d ranks: %s", coll_name(a.coll), selection_bytes(a), a.size,
                c.why.c_str());
    }
    if (modelled_ && cache_.empty()) {
      TORUSMPI_DEBUG(kSelect, "%s model: %s", topo::machine().name.c_str(),
                     describe_model(model_).c_str());
    }
    TORUSMPI_DEBUG(kSelect, "%s %zu B, %d ranks%s%s -> %s: %s", coll_name(a.coll),
                   selection_bytes(a), a.size, a.commutative ? "" : ", non-commutative",
                   coll_rooted(a.coll) ? (", root " + std::to_string(a.root)).c_str() : "",
                   c.alg != nullptr ? c.alg->token : "none", c.why.c_str());
  }
  if (c.alg == nullptr) *why = c.why;
  return c.alg;
}

namespace {

// The arrays of a call, in one order, and how many values each holds: one per rank, or for the
// neighbourhood collectives one per source (counts, displs, rcounts, rdispls) or dest (scounts,
// sdispls).
constexpr int kArrays = 6;
constexpr const size_t* Args::*kArrayMembers[kArrays] = {
    &Args::counts, &Args::displs, &Args::scounts, &Args::sdispls, &Args::rcounts, &Args::rdispls};
const size_t* array_of(const Args& a, int i) { return a.*kArrayMembers[i]; }
// `neighbor`: coll_neighbor(a.coll), asked once per call rather than once per array.
int array_len(const Args& a, int i, bool neighbor) {
  if (!neighbor) return a.size;
  return i == 2 || i == 3 ? a.outdegree : a.indegree;
}

}  // namespace

size_t Team::hash(const Args& a) {
  size_t h = static_cast<size_t>(a.coll) | static_cast<size_t>(a.in_place) << 8 |
             static_cast<size_t>(a.commutative) << 9 | static_cast<size_t>(a.in_network) << 10 |
             static_cast<size_t>(a.root) << 11;
  h ^= a.count * 0x9e3779b97f4a7c15ull ^ a.elem << 40;
  if (coll_vector(a.coll)) {
    const bool neighbor = coll_neighbor(a.coll);
    for (int i = 0; i < kArrays; ++i) {
      const size_t* v = array_of(a, i);
      const int n = v != nullptr ? array_len(a, i, neighbor) : 0;
      for (int j = 0; j < n; ++j) h = (h ^ v[j]) * 0x100000001b3ull;
    }
  }
  return h;
}

bool Team::matches(const Entry& e, const Args& a) {
  if (e.coll != a.coll || e.in_place != a.in_place || e.commutative != a.commutative ||
      e.in_network != a.in_network || e.root != a.root || e.count != a.count || e.elem != a.elem)
    return false;
  if (!e.vector) return true;  // no arrays: the small-message path ends here
  // The same arrays present, then each one's values, looping over the present ones only (a
  // reduce_scatter has one of the six).
  const size_t* const v[kArrays] = {a.counts, a.displs, a.scounts, a.sdispls, a.rcounts, a.rdispls};
  static_assert(kArrayMembers[5] == &Args::rdispls, "v follows kArrayMembers");
  const unsigned present = (v[0] != nullptr) | (v[1] != nullptr) << 1 | (v[2] != nullptr) << 2 |
                           (v[3] != nullptr) << 3 | (v[4] != nullptr) << 4 | (v[5] != nullptr) << 5;
  if (present != e.present) return false;
  const bool neighbor = coll_neighbor(a.coll);
  const size_t* stored = e.arrays.data();
  for (unsigned left = present; left != 0; left &= left - 1) {
    const int i = __builtin_ctz(left);
    const int n = array_len(a, i, neighbor);
    if (std::memcmp(stored, v[i], sizeof(size_t) * n) != 0) return false;
    stored += n;
  }
  return true;
}

Status Team::prepare(Args* a, RunArgs* r, std::shared_ptr<Schedule>** out, std::string* why) {
  if (!placed_) place();
  a->rank = comm_->rank;
  a->size = comm_->size;
  // The host stays as it was, no placement, unless it spans host instances.
  a->topo = modelled_ ? &view_ : nullptr;
  r->comm = comm_;
  r->call = seq_;
  r->tag = static_cast<int>(seq_++ & 0x3fffffff);
  Entry*& recent = recent_[static_cast<int>(a->coll)];
  if (recent != nullptr && matches(*recent, *a) && recent->generation == params::generation()) {
    last_ = recent->alg;
    *out = &recent->schedule;
    return Status::kOk;
  }
  const size_t h = hash(*a);
  auto [first, last] = cache_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    Entry& e = *it->second;
    if (!matches(e, *a)) continue;
    if (e.generation == params::generation()) {
      last_ = e.alg;
      recent = &e;
      *out = &e.schedule;
      return Status::kOk;
    }
    if (recent == &e) recent = nullptr;
    cache_.erase(it);  // chosen under other selection parameters: choose again
    break;
  }
  const Algorithm* alg = choose(*a, why);
  if (alg == nullptr) return Status::kErrArg;
  if (cache_.size() >= kMaxEntries) {
    cache_.clear();
    std::fill(std::begin(recent_), std::end(recent_), nullptr);
  }
  auto e = std::make_unique<Entry>();
  *e = Entry{a->coll,
             a->in_place,
             a->commutative,
             a->in_network,
             a->root,
             a->count,
             a->elem,
             {},
             0,
             coll_vector(a->coll),
             alg,
             std::make_shared<Schedule>(),
             params::generation()};
  const bool neighbor = coll_neighbor(a->coll);
  for (int i = 0; coll_vector(a->coll) && i < kArrays; ++i) {
    const size_t* v = array_of(*a, i);
    if (v == nullptr) continue;
    e->present |= 1u << i;
    e->arrays.insert(e->arrays.end(), v, v + array_len(*a, i, neighbor));
  }
  Builder b(e->schedule.get());
  alg->build(b, *a);
  b.finish();
  last_ = alg;
  recent = e.get();
  *out = &cache_.emplace(h, std::move(e))->second->schedule;
  return Status::kOk;
}

Status Team::run(Args& a, RunArgs& r, std::string* why, Started started, void* ctx) {
  Exec* e = Exec::make();
  std::shared_ptr<Schedule>* s = nullptr;
  Status st = prepare(&a, &r, &s, why);
  if (st == Status::kOk) {
    if (params::stats()) stats_record(*last_, selection_bytes(a));
    e->bind(s->get(), r);
    e->start();
  }
  if (started != nullptr) started(ctx, st == Status::kOk && e->done() && e->error() == Status::kOk);
  if (st == Status::kOk) {
    e->report_step();
    if (!e->done()) e->wait();
    st = e->error();
  }
  Exec::release(e);
  return st;
}

Status Team::start(Args& a, RunArgs& r, Exec** out, std::string* why) {
  Exec* e = Exec::make();
  std::shared_ptr<Schedule>* s = nullptr;
  Status st = prepare(&a, &r, &s, why);
  if (st != Status::kOk) {
    Exec::release(e);
    return st;
  }
  if (params::stats()) stats_record(*last_, selection_bytes(a));
  e->bind(s->get(), r);
  e->keep(*s);
  *out = e;
  return Status::kOk;
}

}  // namespace torusmpi::coll
