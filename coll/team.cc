#include "coll/team.h"

#include "coll/select/select.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"

namespace torusmpi::coll {

const Algorithm* Team::choose(const Args& a, std::string* why) {
  Choice c = select_algorithm(a, host_model(progress::oversubscribed()));
  // Decisions are cached, so these lines come once per call shape; rank 0 speaks for all.
  if (comm_->rank == 0) {
    if (c.passed_over && c.alg != nullptr && params::coll_fallback() == "warn") {
      log::warn("%s of %zu B on %d ranks: %s", coll_name(a.coll), selection_bytes(a), a.size,
                c.why.c_str());
    }
    TORUSMPI_DEBUG(kSelect, "%s %zu B, %d ranks%s%s -> %s: %s", coll_name(a.coll),
                   selection_bytes(a), a.size, a.commutative ? "" : ", non-commutative",
                   coll_rooted(a.coll) ? (", root " + std::to_string(a.root)).c_str() : "",
                   c.alg != nullptr ? c.alg->token : "none", c.why.c_str());
  }
  if (c.alg == nullptr) *why = c.why;
  return c.alg;
}

Status Team::prepare(Args* a, RunArgs* r, Schedule* own, const Schedule** out,
                     std::string* why) {
  a->rank = comm_->rank;
  a->size = comm_->size;
  r->comm = comm_;
  r->tag = static_cast<int>(seq_++ & 0x3fffffff);
  const Algorithm* alg;
  if (coll_vector(a->coll)) {
    if ((alg = choose(*a, why)) == nullptr) return Status::kErrArg;
    Builder b(own);
    alg->build(b, *a);
    b.finish();
    *out = own;
  } else {
    Key k{a->coll, a->in_place, a->commutative, a->root, a->count, a->elem};
    std::unique_ptr<Entry>& e = cache_[k];
    if (e == nullptr || e->generation != params::generation()) {
      if ((alg = choose(*a, why)) == nullptr) {
        e.reset();
        return Status::kErrArg;
      }
      e = std::make_unique<Entry>();
      e->alg = alg;
      e->generation = params::generation();
      Builder b(&e->schedule);
      alg->build(b, *a);
      b.finish();
    }
    alg = e->alg;
    *out = &e->schedule;
  }
  last_ = alg;
  return Status::kOk;
}

Status Team::run(Args a, RunArgs r, std::string* why) {
  Exec* e = Exec::make();
  const Schedule* s = nullptr;
  Status st = prepare(&a, &r, e->own(), &s, why);
  if (st == Status::kOk) {
    e->bind(s, r);
    e->start();
    if (!e->done()) e->wait();
    st = e->error();
  }
  Exec::release(e);
  return st;
}

Status Team::start(Args a, RunArgs r, Exec** out, std::string* why) {
  Exec* e = Exec::make();
  const Schedule* s = nullptr;
  Status st = prepare(&a, &r, e->own(), &s, why);
  if (st != Status::kOk) {
    Exec::release(e);
    return st;
  }
  e->bind(s, r);
  *out = e;
  return Status::kOk;
}

}  // namespace torusmpi::coll
