// What the network transports (pml/ofi, pml/ucx) do the same way whatever library carries their
// bytes: put fragments back in order per peer, queue arrivals for poll(), sleep on the library's
// descriptor, and flush at the end (their address cards are pml/net.cc's). Each transport keeps
// only its library's calls.
#ifndef TORUSMPI_PML_NET_PEERS_H_
#define TORUSMPI_PML_NET_PEERS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "boot/boot.h"

namespace torusmpi::pml::net {

// Order. The pml's non-overtaking rule needs the fragments to one peer delivered in the order
// sent, and receives need not complete in that order (libfabric's tcp;ofi_rxm was seen completing
// a 16 KiB fragment after a header-only one sent behind it; UCX's order is not relied on either).
// So every fragment carries a Stamp, and the receiver holds early ones back until those before
// them have been delivered; in order, which is nearly always, that costs a compare.
// A sender of another job (spawned, connected: pml.h's add_peer) is known by its job's id and its
// rank there, which the receiver maps to its own number for it (PeerOrder::resolve).
struct Stamp {
  int32_t from;  // the sender's job rank
  uint32_t seq;  // per (sender, receiver), from 0
  uint64_t job;  // the sender's job (boot::job_id)
};
static_assert(sizeof(Stamp) == 16, "Stamp travels on the wire");

// A rank read off the wire that is not in the job: a peer of another job, version or protocol.
// Ends the job, diagnosed.
[[noreturn]] void not_in_job(const char* transport, int rank, int from);
// A fragment whose place in its sender's order was delivered or is held already: the transport
// duplicated it or the sender broke the protocol; delivering it, or dropping it quietly, would
// corrupt a message. Ends the job, diagnosed.
[[noreturn]] void out_of_order(const char* transport, int rank, int from, uint32_t seq,
                               uint32_t next, const char* what);

// The order of fragments between this rank and each peer. `Held` is what an early arrival keeps
// until its turn (a copy of the fragment, or a handle on the library's buffer).
template <typename Held>
class PeerOrder {
 public:
  PeerOrder(const char* transport, const boot::JobInfo& job)
      : transport_(transport),
        rank_(job.rank),
        job_(boot::job_id(job.nspace)),
        out_(static_cast<size_t>(job.size), 0),
        in_(static_cast<size_t>(job.size), 0),
        held_(static_cast<size_t>(job.size)) {}

  // Sending: the stamp of the next fragment to `peer` (a rank the pml chose); sent() once the
  // library has taken it.
  Stamp stamp(int peer) const { return Stamp{rank_, out_[peer], job_}; }
  void sent(int peer) { ++out_[peer]; }

  // Processes of other jobs: `rank` of job `job` is the pml's peer `index` (beyond this job's
  // ranks). resolve() turns an arrival's stamp into the pml's numbering: false for a sender of
  // another job not added yet (its fragment waits until it is), true otherwise.
  void add(int index, uint64_t job, int rank) {
    const size_t n = static_cast<size_t>(index) + 1;
    if (out_.size() < n) {
      out_.resize(n, 0);
      in_.resize(n, 0);
      held_.resize(n);
    }
    foreign_[{job, rank}] = index;
  }
  bool resolve(Stamp* s) const {
    if (s->job == job_) return true;
    auto it = foreign_.find({s->job, s->from});
    if (it == foreign_.end()) return false;
    s->from = it->second;
    return true;
  }

  // Receiving. in_turn(): whether an arrival is the next from its sender, whose rank, read off the
  // wire, is checked first. If not, hold() keeps it. Once one in turn has been delivered,
  // delivered() hands over each held one that is now in turn, in order, to deliver(Held&), and
  // returns how many.
  bool in_turn(const Stamp& s) const { return s.seq == in_[checked(s.from)]; }
  void hold(const Stamp& s, Held h) {
    const size_t from = checked(s.from);
    // Sequence numbers wrap: "behind" is a negative distance from the next one due.
    if (static_cast<int32_t>(s.seq - in_[from]) < 0) {
      out_of_order(transport_, rank_, s.from, s.seq, in_[from], "was delivered already");
    }
    if (!held_[from].emplace(s.seq, std::move(h)).second) {
      out_of_order(transport_, rank_, s.from, s.seq, in_[from], "is held already");
    }
  }
  template <typename Deliver>
  int delivered(int from, Deliver&& deliver) {
    auto& held = held_[checked(from)];
    uint32_t& next = in_[from];
    int n = 0;
    for (auto it = held.find(++next); it != held.end(); it = held.find(++next)) {
      Held h = std::move(it->second);
      held.erase(it);
      deliver(h);
      ++n;
    }
    return n;
  }

  // Closing: every arrival still held, for releasing what it owns.
  template <typename Release>
  void drop_held(Release&& release) {
    for (auto& held : held_) {
      for (auto& e : held) release(e.second);
      held.clear();
    }
  }

 private:
  size_t checked(int from) const {
    if (from < 0 || static_cast<size_t>(from) >= in_.size()) not_in_job(transport_, rank_, from);
    return static_cast<size_t>(from);
  }

  const char* transport_;
  int32_t rank_;
  uint64_t job_;
  // Processes of other jobs: (job, rank) -> the pml's number for it.
  std::map<std::pair<uint64_t, int>, int> foreign_;
  std::vector<uint32_t> out_;                   // by receiver: the next seq to send
  std::vector<uint32_t> in_;                    // by sender: the next seq to deliver
  std::vector<std::map<uint32_t, Held>> held_;  // by sender: arrivals ahead of their turn
};

// Arrivals waiting for poll(). The library hands them over where they must not be delivered: from
// inside its progress (UCX's callbacks), or while the pml is itself inside pml::deliver (it reads
// a rendezvous message as soon as one matches, progressing the library meanwhile). So they queue,
// in order, and poll() drains the queue, never re-entered.
template <typename T>
class Inbox {
 public:
  void push(T t) { queue_.push_back(std::move(t)); }
  bool empty() const { return queue_.empty(); }

  // Hands each arrival queued by now to take(T&), which returns how many fragments it delivered,
  // and returns their sum. Called again from inside a delivery, it returns 0: the outer drain goes
  // on, and what arrives meanwhile waits for the next poll (a flood must not keep poll() busy).
  template <typename Take>
  int drain(Take&& take) {
    if (draining_) return 0;
    draining_ = true;
    int delivered = 0;
    // take() may close the transport, dropping the queue: stop there.
    for (size_t n = queue_.size(); n > 0 && !queue_.empty(); --n) {
      T t = std::move(queue_.front());
      queue_.pop_front();
      delivered += take(t);
    }
    draining_ = false;
    return delivered;
  }

  // Closing: every arrival still queued, for releasing what it owns.
  template <typename Release>
  void drop(Release&& release) {
    for (T& t : queue_) release(t);
    queue_.clear();
  }

 private:
  std::deque<T> queue_;
  bool draining_ = false;
};

// A network transport's own doorbell, for wake_self() when it is the transport that sleeps: an
// eventfd that its sleep watches beside the library's descriptor. A ring lasts until the sleep
// that sees it, so one rung just before the sleep starts is not lost. fd() is -1 when none could
// be made (the transport then has no doorbell).
class Bell {
 public:
  Bell();
  ~Bell();
  Bell(const Bell&) = delete;
  Bell& operator=(const Bell&) = delete;
  int fd() const { return fd_; }
  void ring();  // from any thread

 private:
  friend void sleep_on(int fd, int also, int64_t us, Bell* bell);
  void drain();
  int fd_;
};

// Sleeps until `fd` (the library's wait descriptor, armed by the caller) or `also` (another
// transport's, armed) is readable, `bell` (when given) rings, or `us` microseconds pass. Either
// descriptor may be -1: without any, it sleeps the whole time.
void sleep_on(int fd, int also, int64_t us, Bell* bell = nullptr);

// detach(): how long what is still in flight may take to leave. Peers are closing too, so what is
// left after this is abandoned rather than waited for.
constexpr double kFlushTimeoutS = 2.0;

// Calls progress() (it returns how much it did) until done(), for at most kFlushTimeoutS; a call
// that did nothing is followed by a pause of 100 us, so a peer that went quiet costs no CPU.
void flush(const std::function<bool()>& done, const std::function<int()>& progress);

}  // namespace torusmpi::pml::net

#endif  // TORUSMPI_PML_NET_PEERS_H_
