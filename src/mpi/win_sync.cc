// Epochs of windows: MPI_Win_fence; passive target (MPI_Win_lock/unlock, lock_all/unlock_all,
// the flushes, MPI_Win_sync); general active target (MPI_Win_post/start/complete/wait/test).
//
// Every operation on this node has completed at its target when its call returns (win.h), so
// closing an epoch orders memory and synchronizes processes: a fence is a barrier of the window's
// communicator, a flush a memory fence. Puts and accumulates to other nodes may still be in
// flight: whatever ends their epoch waits for their answers first (net_flush). Locks are words in
// the window's control segment (a target need not call MPI for another process to lock it), and
// post/start/complete/wait count in it; a process of another node asks the target's service to take
// or give back the lock word, to count a post or a complete there (win_net.cc).
#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "core/flight.h"
#include "core/progress.h"
#include "mpi/errors.h"
#include "mpi/group.h"
#include "mpi/runtime.h"
#include "mpi/win.h"

namespace torusmpi::mpi {
namespace {

constexpr int kAllAsserts =
    MPI_MODE_NOCHECK | MPI_MODE_NOPRECEDE | MPI_MODE_NOPUT | MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED;

int check_assert(const char* fn, MPI_Win win, int assert_arg) {
  if ((assert_arg & ~kAllAsserts) == 0) return MPI_SUCCESS;
  return raise_error_win(win, MPI_ERR_ASSERT, fn,
                         "assert argument %d has bits that are no MPI_MODE_* of windows",
                         assert_arg);
}

int check_target_rank(const char* fn, MPI_Win win, const Win& w, int rank) {
  if (rank >= 0 && rank < w.size) return MPI_SUCCESS;
  return raise_error_win(win, MPI_ERR_RANK, fn,
                         "rank argument is %d, not a rank of the window's group (size %d)", rank,
                         w.size);
}

// The flight recorder's record of a call that may wait for another process (a lock, a post, the
// completes): with TORUSMPI_TIMEOUT a wait that lasts is diagnosed like any other.
struct WaitRecord {
  WaitRecord(const char* fn, const Win& w, int target)
      : scope(fn, comm_impl(w.comm)->context, w.name.empty() ? "window" : w.name.c_str(), 0, -1,
              target >= 0 ? w.members[target] : flight::kNoPeer) {}
  flight::Scope scope;
};

// A lock request to a target on another node, answered at once (its service never waits): whether
// the lock word was taken. MPI_SUCCESS or an error class with *error.
int try_remote(Win* w, int r, bool exclusive, bool* granted, std::string* error) {
  NetCall call;
  call.kind = exclusive ? NetKind::kTryLockExclusive : NetKind::kTryLockShared;
  return net_call(w, r, call, granted, error);
}

int unlock_remote(Win* w, int r, bool exclusive, std::string* error) {
  NetCall call;
  call.kind = exclusive ? NetKind::kUnlockExclusive : NetKind::kUnlockShared;
  return net_call(w, r, call, nullptr, error);
}

// Takes target r's lock word: on this node directly, on another by asking until it is given
// (backing off in between, as a wait for a local word does).
int acquire(Win* w, int r, bool exclusive, std::string* error) {
  std::atomic<uint32_t>* word = &w->block(r)->lock;
  if (!w->targets[r].remote) {
    if (!w->mixed) {
      exclusive ? rma::lock_exclusive(word) : rma::lock_shared(word);
      return MPI_SUCCESS;
    }
    // Polling meanwhile: the holder may be a process of another node, whose unlock this
    // process's service applies.
    progress::wait_until(
        [&] { return exclusive ? rma::try_lock_exclusive(word) : rma::try_lock_shared(word); });
    return MPI_SUCCESS;
  }
  progress::Backoff backoff(true);
  for (;;) {
    bool granted = false;
    if (int rc = try_remote(w, r, exclusive, &granted, error)) return rc;
    if (granted) return MPI_SUCCESS;
    if (progress::poll() > 0) {
      backoff.reset();
    } else {
      backoff.pause();
    }
  }
}

int release(Win* w, int r, Held h, std::string* error) {
  if (w->targets[r].remote) {
    if (h != Held::kShared && h != Held::kExclusive) return MPI_SUCCESS;
    return unlock_remote(w, r, h == Held::kExclusive, error);
  }
  switch (h) {
    case Held::kShared:
      rma::unlock_shared(&w->block(r)->lock);
      break;
    case Held::kExclusive:
      rma::unlock_exclusive(&w->block(r)->lock);
      break;
    default:
      break;
  }
  return MPI_SUCCESS;
}

// Waits until *word >= value; in a window across nodes polling meanwhile (the count may be this
// process's service's to raise).
void wait_count(Win* w, std::atomic<uint32_t>* word, uint32_t value) {
  if (!w->mixed) {
    rma::wait_at_least(word, value);
    return;
  }
  progress::wait_until(
      [&] { return static_cast<int32_t>(word->load(std::memory_order_acquire) - value) >= 0; });
}

// The window ranks of a group's members; MPI_ERR_GROUP when one is not in the window.
int window_ranks(const char* fn, MPI_Win win, const Win& w, MPI_Group group,
                 std::vector<int>* out) {
  Group* g = group_impl(group);
  if (g == nullptr) {
    return raise_error_win(win, MPI_ERR_GROUP, fn, "group argument is %s",
                           group == MPI_GROUP_NULL ? "MPI_GROUP_NULL" : "not a valid group");
  }
  out->clear();
  for (int job_rank : g->ranks) {
    auto it = std::find(w.members.begin(), w.members.end(), job_rank);
    if (it == w.members.end()) {
      return raise_error_win(win, MPI_ERR_GROUP, fn,
                             "group argument has job rank %d, which is not in the window",
                             job_rank);
    }
    out->push_back(static_cast<int>(it - w.members.begin()));
  }
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace torusmpi::mpi

using torusmpi::mpi::Held;
using torusmpi::mpi::raise_error_win;
using torusmpi::mpi::Win;
namespace mpi = torusmpi::mpi;
namespace rma = torusmpi::pml::shm::rma;

int PMPI_Win_fence(int assert_arg, MPI_Win win) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_fence";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (int err = mpi::check_assert(kFn, win, assert_arg)) return err;
  if (w->held_count > 0 || w->lock_all || w->access_open || w->exposure_open) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, kFn,
                           "a passive target or post/start epoch is open on the window");
  }
  if (w->mixed) {
    std::string error;
    if (int rc = mpi::net_flush(w, -1, &error))
      return raise_error_win(win, rc, kFn, "%s", error.c_str());
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (int rc = PMPI_Barrier(w->comm)) {
    return raise_error_win(win, rc, kFn, "the window's barrier failed");
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  w->fence_open = (assert_arg & MPI_MODE_NOSUCCEED) == 0;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_fence);

int PMPI_Win_lock(int lock_type, int rank, int assert_arg, MPI_Win win) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_lock";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE) {
    return raise_error_win(win, MPI_ERR_LOCKTYPE, kFn,
                           "lock_type argument is %d, not MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE",
                           lock_type);
  }
  if (int err = mpi::check_target_rank(kFn, win, *w, rank)) return err;
  if (int err = mpi::check_assert(kFn, win, assert_arg)) return err;
  if (w->lock_all || w->held[rank] != Held::kNone) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, kFn,
                           "rank %d is already locked by this process%s", rank,
                           w->lock_all ? " (MPI_Win_lock_all)" : "");
  }
  const bool nocheck = (assert_arg & MPI_MODE_NOCHECK) != 0;
  mpi::WaitRecord record(kFn, *w, rank);
  const bool exclusive = lock_type == MPI_LOCK_EXCLUSIVE;
  std::string error;
  if (!nocheck) {
    if (int rc = mpi::acquire(w, rank, exclusive, &error))
      return raise_error_win(win, rc, kFn, "%s", error.c_str());
  }
  if (exclusive) {
    w->held[rank] = nocheck ? Held::kExclusiveNoCheck : Held::kExclusive;
  } else {
    w->held[rank] = nocheck ? Held::kSharedNoCheck : Held::kShared;
  }
  ++w->held_count;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_lock);

int PMPI_Win_unlock(int rank, MPI_Win win) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_unlock";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (int err = mpi::check_target_rank(kFn, win, *w, rank)) return err;
  if (w->held[rank] == Held::kNone) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, kFn, "rank %d is not locked by this process",
                           rank);
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::string error;
  // The lock is given back even when an answer brought an error (the epoch ends either way).
  int rc = w->mixed ? mpi::net_flush(w, rank, &error) : MPI_SUCCESS;
  std::string why;
  const int released = mpi::release(w, rank, w->held[rank], &why);
  if (rc == MPI_SUCCESS && released != MPI_SUCCESS) {
    rc = released;
    error = why;
  }
  w->held[rank] = Held::kNone;
  --w->held_count;
  if (rc != MPI_SUCCESS) return raise_error_win(win, rc, kFn, "%s", error.c_str());
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_unlock);

int PMPI_Win_lock_all(int assert_arg, MPI_Win win) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_lock_all";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (int err = mpi::check_assert(kFn, win, assert_arg)) return err;
  if (w->lock_all || w->held_count > 0) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, kFn, "this process already holds %s",
                           w->lock_all ? "MPI_Win_lock_all" : "a lock of the window");
  }
  w->lock_all_nocheck = (assert_arg & MPI_MODE_NOCHECK) != 0;
  mpi::WaitRecord record(kFn, *w, -1);
  if (!w->lock_all_nocheck) {
    // All or none: holding some while waiting for the next could deadlock with a process that
    // holds that one exclusively and waits for one of these.
    torusmpi::progress::Backoff backoff(true);
    std::string error;
    for (;;) {
      int r = 0;
      int rc = MPI_SUCCESS;
      for (; r < w->size; ++r) {
        bool granted = false;
        if (w->targets[r].remote) {
          rc = mpi::try_remote(w, r, false, &granted, &error);
        } else {
          granted = rma::try_lock_shared(&w->block(r)->lock);
        }
        if (rc != MPI_SUCCESS || !granted) break;
      }
      if (r == w->size) break;
      while (r-- > 0) {
        if (w->targets[r].remote) {
          std::string ignored;
          mpi::unlock_remote(w, r, false, &ignored);
        } else {
          rma::unlock_shared(&w->block(r)->lock);
        }
      }
      if (rc != MPI_SUCCESS) return raise_error_win(win, rc, kFn, "%s", error.c_str());
      if (w->mixed && torusmpi::progress::poll() > 0) {
        backoff.reset();
      } else {
        backoff.pause();
      }
    }
  }
  w->lock_all = true;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_lock_all);

int PMPI_Win_unlock_all(MPI_Win win) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_unlock_all";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (!w->lock_all) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, kFn,
                           "this process holds no MPI_Win_lock_all on the window");
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::string error;
  int rc = w->mixed ? mpi::net_flush(w, -1, &error) : MPI_SUCCESS;
  if (!w->lock_all_nocheck) {
    for (int r = 0; r < w->size; ++r) {
      std::string why;
      int one = mpi::release(w, r, Held::kShared, &why);
      if (rc == MPI_SUCCESS && one != MPI_SUCCESS) {
        rc = one;
        error = why;
      }
    }
  }
  w->lock_all = false;
  if (rc != MPI_SUCCESS) return raise_error_win(win, rc, kFn, "%s", error.c_str());
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_unlock_all);

namespace {

// MPI_Win_flush(_local) of one target: the target must be locked.
int flush_one(const char* fn, int rank, MPI_Win win) {
  Win* w = nullptr;
  if (int err = mpi::check_win(fn, win, &w)) return err;
  if (int err = mpi::check_target_rank(fn, win, *w, rank)) return err;
  if (!w->lock_all && w->held[rank] == Held::kNone) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, fn,
                           "rank %d is not locked by this process (no passive target epoch)", rank);
  }
  if (w->mixed) {
    std::string error;
    if (int rc = mpi::net_flush(w, rank, &error))
      return raise_error_win(win, rc, fn, "%s", error.c_str());
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return MPI_SUCCESS;
}

// MPI_Win_flush(_local)_all: some target must be locked.
int flush_all(const char* fn, MPI_Win win) {
  Win* w = nullptr;
  if (int err = mpi::check_win(fn, win, &w)) return err;
  if (!w->lock_all && w->held_count == 0) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, fn,
                           "this process holds no lock of the window (no passive target epoch)");
  }
  if (w->mixed) {
    std::string error;
    if (int rc = mpi::net_flush(w, -1, &error))
      return raise_error_win(win, rc, fn, "%s", error.c_str());
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return MPI_SUCCESS;
}

}  // namespace

int PMPI_Win_flush(int rank, MPI_Win win) {
  torusmpi::progress::Lock lock;
  return flush_one("MPI_Win_flush", rank, win);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_flush);

int PMPI_Win_flush_local(int rank, MPI_Win win) {
  torusmpi::progress::Lock lock;
  return flush_one("MPI_Win_flush_local", rank, win);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_flush_local);

int PMPI_Win_flush_all(MPI_Win win) {
  torusmpi::progress::Lock lock;
  return flush_all("MPI_Win_flush_all", win);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_flush_all);

int PMPI_Win_flush_local_all(MPI_Win win) {
  torusmpi::progress::Lock lock;
  return flush_all("MPI_Win_flush_local_all", win);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_flush_local_all);

int PMPI_Win_sync(MPI_Win win) {
  torusmpi::progress::Lock lock;
  Win* w = nullptr;
  if (int err = mpi::check_win("MPI_Win_sync", win, &w)) return err;
  // The public and private copies are one (MPI_WIN_UNIFIED): a memory fence is all.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_sync);

// General active target: the target counts each post to each origin in the control segment
// (post[target][origin]); an origin's start waits for the next one from each target; complete
// adds one to each target's count of completes, which the target's wait awaits.

int PMPI_Win_post(MPI_Group group, int assert_arg, MPI_Win win) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_post";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (int err = mpi::check_assert(kFn, win, assert_arg)) return err;
  if (w->exposure_open) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, kFn,
                           "the window is already exposed (MPI_Win_post without MPI_Win_wait)");
  }
  std::vector<int> origins;
  if (int err = mpi::window_ranks(kFn, win, *w, group, &origins)) return err;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::string error;
  for (int o : origins) {
    if (w->targets[o].remote) {
      if (int rc = mpi::net_signal(w, o, mpi::NetKind::kPost, &error))
        return raise_error_win(win, rc, kFn, "%s", error.c_str());
    } else {
      w->posts(w->rank, o)->fetch_add(1, std::memory_order_release);
    }
  }
  w->exposure = origins;
  w->completes_expected += static_cast<uint32_t>(origins.size());
  w->exposure_open = true;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_post);

int PMPI_Win_start(MPI_Group group, int assert_arg, MPI_Win win) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_start";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (int err = mpi::check_assert(kFn, win, assert_arg)) return err;
  if (w->access_open) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, kFn,
                           "an access epoch is already open (MPI_Win_start without "
                           "MPI_Win_complete)");
  }
  std::vector<int> targets;
  if (int err = mpi::window_ranks(kFn, win, *w, group, &targets)) return err;
  mpi::WaitRecord record(kFn, *w, targets.size() == 1 ? targets[0] : -1);
  for (int t : targets) {
    mpi::wait_count(w, w->posts(t, w->rank), w->started[t] + 1);
    ++w->started[t];
  }
  w->access = targets;
  w->access_open = true;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_start);

int PMPI_Win_complete(MPI_Win win) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_complete";
  Win* w = nullptr;
  if (int err = mpi::check_win(kFn, win, &w)) return err;
  if (!w->access_open) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, kFn, "no MPI_Win_start epoch is open");
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::string error;
  int rc = w->mixed ? mpi::net_flush(w, -1, &error) : MPI_SUCCESS;
  for (int t : w->access) {
    if (w->targets[t].remote) {
      // Its operations were answered: this arrives after them.
      std::string why;
      int one = mpi::net_signal(w, t, mpi::NetKind::kComplete, &why);
      if (rc == MPI_SUCCESS && one != MPI_SUCCESS) {
        rc = one;
        error = why;
      }
    } else {
      w->block(t)->completes.fetch_add(1, std::memory_order_release);
    }
  }
  w->access.clear();
  w->access_open = false;
  if (rc != MPI_SUCCESS) return raise_error_win(win, rc, kFn, "%s", error.c_str());
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Win_complete);

namespace {

int wait_or_test(const char* fn, MPI_Win win, int* flag) {
  Win* w = nullptr;
  if (int err = mpi::check_win(fn, win, &w)) return err;
  if (!w->exposure_open) {
    return raise_error_win(win, MPI_ERR_RMA_SYNC, fn, "no MPI_Win_post epoch is open");
  }
  std::atomic<uint32_t>* completes = &w->block(w->rank)->completes;
  if (flag != nullptr) {
    if (w->mixed) torusmpi::progress::poll();  // completes from other nodes come as requests
    *flag = static_cast<int32_t>(completes->load(std::memory_order_acquire) -
                                 w->completes_expected) >= 0;
    if (!*flag) return MPI_SUCCESS;
  } else {
    mpi::WaitRecord record(fn, *w, w->exposure.size() == 1 ? w->exposure[0] : -1);
    mpi::wait_count(w, completes, w->completes_expected);
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  w->exposure.clear();
  w->exposure_open = false;
  return MPI_SUCCESS;
}

}  // namespace

int PMPI_Win_wait(MPI_Win win) {
  torusmpi::progress::Lock lock;
  return wait_or_test("MPI_Win_wait", win, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_wait);

int PMPI_Win_test(MPI_Win win, int* flag) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_test";
  if (flag == nullptr) {
    Win* w = nullptr;
    if (int err = mpi::check_win(kFn, win, &w)) return err;
    return raise_error_win(win, MPI_ERR_ARG, kFn, "flag argument is NULL");
  }
  return wait_or_test(kFn, win, flag);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_test);
