#include "coll/sched/rescue.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/log.h"
#include "core/progress.h"
#include "pml/ina/client.h"

namespace torusmpi::coll::rescue {
namespace {

// One communicator's listener: a receive of requests from any member, posted again after each.
struct Listener {
  pml::Comm comm;  // a copy of the communicator's pml view (its context names it)
  Request asked;
  pml::Request req;
  bool posted = false;
  bool arrived = false;  // a request came: the poll answers it, then posts the receive again
};

struct Key {
  uint64_t group, call;
  bool operator<(const Key& o) const { return group != o.group ? group < o.group : call < o.call; }
};

// An answer on its way: two sends, then it deletes itself.
struct Reply {
  Answer head;
  std::vector<uint8_t> copy;  // a kept result's bytes (it may be forgotten meanwhile)
  pml::Request reqs[2];
  int left = 2;
  bool counted = false;  // a contribution's: its Call counts it in `sending`
  Key key{};
};

struct Asker {
  Listener* listener;
  int rank;
  int64_t tag;
};

// What this rank knows of a call others asked for, or that it failed.
struct Call {
  std::vector<Asker> waiting;  // requests whose answer waits for the call's outcome here
  const void* contribution = nullptr;
  size_t bytes = 0;
  bool offered = false;
  std::vector<int> answered;  // ranks answered with the contribution
  uint64_t sending = 0;       // answers of the contribution not sent yet
};

std::unordered_map<uint32_t, std::unique_ptr<Listener>>& g_listeners =
    *new std::unordered_map<uint32_t, std::unique_ptr<Listener>>;
std::map<Key, Call>& g_calls = *new std::map<Key, Call>;
int g_poll = 0;
bool g_arrived = false;

void reply_sent(pml::Request* r) {
  auto* reply = static_cast<Reply*>(r->user);
  if (r->error != Status::kOk)
    log::warn("collective: an answer to a member the switch left without a result failed: %s",
              status_string(r->error));
  if (--reply->left > 0) return;
  if (reply->counted) {
    auto it = g_calls.find(reply->key);
    // Withdrawn while this was in flight (its run failed): the entry waited for it.
    if (it != g_calls.end() && --it->second.sending == 0 && !it->second.offered) g_calls.erase(it);
  }
  delete reply;
}

// Sends `kind` and `bytes` at data to `to` (both messages on the asker's tag); with `copy`, its
// bytes instead, which the answer keeps until sent.
void answer(const Asker& to, Kind kind, const void* data, size_t bytes, const Key* counted,
            std::vector<uint8_t>* copy = nullptr) {
  auto* reply = new Reply;
  if (copy != nullptr) {
    reply->copy = std::move(*copy);
    data = reply->copy.data();
    bytes = reply->copy.size();
  }
  reply->head = Answer{kind, bytes};
  if (counted != nullptr) {
    reply->counted = true;
    reply->key = *counted;
    ++g_calls[*counted].sending;
  }
  const pml::Comm& comm = to.listener->comm;
  const int tag = static_cast<int>(to.tag);
  const void* bufs[2] = {&reply->head, data};
  const size_t lens[2] = {sizeof(Answer), bytes};
  for (int i = 0; i < 2; ++i) {
    pml::Request& q = reply->reqs[i];
    q.user = reply;
    q.on_complete = reply_sent;
    if (pml::isend(comm, comm.coll_context(), bufs[i], lens[i], to.rank, tag,
                   pml::SendMode::kStandard, &q) != Status::kOk) {
      q.error = Status::kErrInternal;
      reply_sent(&q);  // the asker waits: TORUSMPI_TIMEOUT will say where
    }
  }
}

void answer_kept(const Asker& to, const Request& r) {
  const pml::ina::Kept* kept = pml::ina::kept(r.group, r.call);
  if (kept == nullptr) {
    answer(to, Kind::kGone, nullptr, 0, nullptr);
    return;
  }
  // Copied: it may be forgotten before the send is done.
  std::vector<uint8_t> copy(kept->bytes);
  answer(to, kept->contribution ? Kind::kKeptContribution : Kind::kResult, nullptr, 0, nullptr,
         &copy);
}

void handle(Listener* l) {
  const Request r = l->asked;
  const Asker asker{l, l->req.source, r.tag};
  const Key key{r.group, r.call};
  auto it = g_calls.find(key);
  if (it != g_calls.end() && it->second.offered) {
    Call& c = it->second;
    answer(asker, Kind::kContribution, c.contribution, c.bytes, &key);
    c.answered.push_back(asker.rank);
    return;
  }
  if (pml::ina::kept(r.group, r.call) != nullptr || pml::ina::forgotten(r.group, r.call)) {
    answer_kept(asker, r);
    return;
  }
  g_calls[key].waiting.push_back(asker);
}

void listener_done(pml::Request* r) {
  if (r->cancelled) return;
  static_cast<Listener*>(r->user)->arrived = true;
  g_arrived = true;
}

void post(Listener* l) {
  l->req = pml::Request{};
  l->req.user = l;
  l->req.on_complete = listener_done;
  l->req.quiet = true;
  l->posted = true;
  if (pml::irecv(l->comm, l->comm.coll_context(), &l->asked, sizeof l->asked, pml::kAnySource, kTag,
                 &l->req) != Status::kOk) {
    l->posted = false;
  }
}

int poll_listeners(void*) {
  int events = 0;
  while (g_arrived) {
    g_arrived = false;
    for (auto& [context, l] : g_listeners) {
      if (!l->arrived) continue;
      l->arrived = false;
      l->posted = false;
      handle(l.get());
      ++events;
      post(l.get());  // may complete at once (a request was queued): the loop goes round again
    }
  }
  return events;
}

}  // namespace

void listen(const pml::Comm& comm) {
  const uint32_t context = comm.coll_context();
  if (g_listeners.count(context) != 0) return;
  auto l = std::make_unique<Listener>();
  l->comm.context = comm.context;
  l->comm.rank = comm.rank;
  l->comm.size = comm.size;
  l->comm.world_ranks = comm.world_ranks;
  l->comm.remote_ranks = comm.remote_ranks;
  Listener* raw = l.get();
  g_listeners.emplace(context, std::move(l));
  if (g_poll == 0) g_poll = progress::add(poll_listeners, nullptr);
  post(raw);
}

void forget(uint32_t coll_context) {
  auto it = g_listeners.find(coll_context);
  if (it != g_listeners.end()) {
    Listener* l = it->second.get();
    // Cancelled if it has not matched; one that has is let complete before it goes.
    if (l->posted && !l->req.done() && !pml::cancel(&l->req))
      progress::wait_until([l] { return l->req.done(); });
    g_listeners.erase(it);
  }
  pml::ina::forget_context(coll_context);
  for (auto c = g_calls.begin(); c != g_calls.end();) {
    if (c->first.group >> 32 == coll_context && !c->second.offered) {
      c = g_calls.erase(c);
    } else {
      ++c;
    }
  }
}

void finalize() {
  while (!g_listeners.empty()) forget(g_listeners.begin()->first);
  if (g_poll != 0) progress::remove(g_poll);
  g_poll = 0;
  g_calls.clear();
}

void settled(uint64_t group, uint64_t call) {
  if (g_calls.empty()) return;
  auto it = g_calls.find(Key{group, call});
  if (it == g_calls.end()) return;
  for (const Asker& a : it->second.waiting) answer_kept(a, Request{group, call, a.tag});
  g_calls.erase(it);
}

void offer(uint64_t group, uint64_t call, const void* src, size_t bytes) {
  const Key key{group, call};
  Call& c = g_calls[key];
  c.contribution = src;
  c.bytes = bytes;
  c.offered = true;
  const std::vector<Asker> waiting = std::move(c.waiting);
  c.waiting.clear();
  for (const Asker& a : waiting) {
    answer(a, Kind::kContribution, src, bytes, &key);
    g_calls[key].answered.push_back(a.rank);
  }
}

bool finished(uint64_t group, uint64_t call, const int* askers, size_t n) {
  auto it = g_calls.find(Key{group, call});
  if (it == g_calls.end()) return n == 0;
  const Call& c = it->second;
  if (c.sending != 0) return false;
  for (size_t i = 0; i < n; ++i) {
    if (std::find(c.answered.begin(), c.answered.end(), askers[i]) == c.answered.end())
      return false;
  }
  return true;
}

void withdraw(uint64_t group, uint64_t call) {
  auto it = g_calls.find(Key{group, call});
  if (it == g_calls.end()) return;
  if (it->second.sending == 0) {
    g_calls.erase(it);
  } else {  // answers in flight: the last one ends it (reply_sent)
    it->second.offered = false;
    it->second.contribution = nullptr;
  }
}

}  // namespace torusmpi::coll::rescue
