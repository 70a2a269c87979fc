#include "pml/shm/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <utility>

#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "device/device.h"
#include "pml/liveness.h"
#include "pml/shm/links.h"
#include "pml/shm/ring.h"
#include "pml/transport.h"
#include "topo/machine.h"

namespace torusmpi::pml::shm {
namespace {

constexpr uint64_t kSegmentMagic = 0x746d2e73686d3031ull;  // "tm.shm01"
constexpr char kKey[] = "torusmpi.shm";
constexpr char kHbmKey[] = "torusmpi.hbm";          // each rank's device::ArenaCard
constexpr char kInboxKey[] = "torusmpi.hbm.inbox";  // each rank's Inbox
// A device queue from each local rank, in the receiver's HBM: room for 64 messages of the largest
// inline size (osu_bw's window), unless many ranks share the node; a rank's queues together take
// at most 16 MiB, and a sixteenth of its HBM.
constexpr uint64_t kInboxRing = uint64_t{1} << 20;
constexpr uint64_t kInboxBudget = uint64_t{16} << 20;
// All rings of a node together stay under this, so 128 ranks per node still fit comfortably.
constexpr uint64_t kAllRingsBudget = uint64_t{512} << 20;
constexpr uint64_t kMinRing = uint64_t{16} << 10;
// Chunks of a pipelined rendezvous: the sender fills one while the receiver empties the one before,
// so both cores copy at once. Measured on 2 cores, 1 MiB messages: 64 KiB chunks through 1 MiB
// rings take ~40 us where one process_vm_readv takes ~95 us (the kernel pins and copies page by
// page). Rings too small for such chunks (many ranks on a node) use the single copy instead.
constexpr size_t kPipelineChunk = size_t{64} << 10;
// Segments up to this size have their pages allocated and mapped at start-up (MAP_POPULATE).
constexpr uint64_t kPopulateMax = uint64_t{256} << 20;
// Ring bytes a rank touches at start-up (touch_rings): whole rings up to 4 local ranks.
constexpr uint64_t kTouchBytes = uint64_t{8} << 20;

// Copies len bytes between `local` in this process and `remote` in process pid, in the direction
// `write` says (process_vm_writev, or process_vm_readv); false, errno set, when the kernel refuses.
bool vm_copy(pid_t pid, void* local, uint64_t remote, size_t len, bool write) {
  auto* here = static_cast<uint8_t*>(local);
  size_t done = 0;
  while (done < len) {
    iovec l{here + done, len - done};
    iovec r{reinterpret_cast<void*>(remote + done), len - done};
    ssize_t n =
        write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Maps a device queue's pages into this process at once (allocating them when `write`). Each page
// faulted in one by one costs 13 us on a 2-vCPU virtual machine, 3.4 ms for a 1 MiB queue spread
// over its first 16 K small messages (osu_latency D D at 1-32 B ran 1.5x H H in runs of 2,500
// iterations a size); populating takes 0.45 ms (new pages) or 0.12 ms (pages another process
// made).
// Kernels before 5.14 refuse the advice: the pages are then faulted in as they are used.
void populate(uint8_t* p, size_t bytes, bool write) {
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22, MADV_POPULATE_WRITE = 23;  // Linux 5.14
#endif
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) & ~(page - 1);
  madvise(reinterpret_cast<void*>(begin), end - begin,
          write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
}

enum RankState : uint32_t { kAbsent = 0, kActive = 1, kFinalized = 2 };
// RankBlock::sleeping: how a sleeping rank is woken.
enum Sleeping : uint32_t { kAwake = 0, kSleepingOnFutex = 1, kSleepingOnSocket = 2 };

struct alignas(64) SegmentHeader {
  uint64_t magic;
  uint32_t ranks;
  uint32_t link_slots;  // LinkSlots after the rank blocks: every rank must emulate one machine
  uint64_t ring_bytes;
  std::atomic<uint32_t> attached;
};

struct alignas(64) RankBlock {
  std::atomic<uint32_t> bell;      // futex word: bumped to wake the rank
  std::atomic<uint32_t> sleeping;  // Sleeping: how the rank is (about to be) asleep
  std::atomic<uint32_t> state;     // RankState
  // Records written to the rank's device queues, by all writers (each adds after its push): the
  // rank looks at those queues only while it has taken fewer. Looking at each peer's device queue
  // at every poll cost a load a peer, most of them misses. A line of its own: writers read the
  // line above at every send (ring_bell).
  alignas(64) std::atomic<uint64_t> device_records;
};

// Where a rank's device queues are: ring_stride(ring_bytes) bytes from local rank i start at
// base + i * stride of its device memory. base 0: it has none (its HBM was too small).
struct Inbox {
  uint64_t base;
  uint64_t ranks;
  uint64_t ring_bytes;
};

// Where the first local rank published the segment.
struct Location {
  int32_t pid;
  int32_t fd;  // memfd: opened by others through /proc/<pid>/fd/<fd>
  uint64_t bytes;
  char name[64];  // POSIX shm name; empty for a memfd
};

uint64_t floor_pow2(uint64_t x) {
  uint64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

uint64_t ring_bytes_for(int ranks) {
  uint64_t want = floor_pow2(std::max<uint64_t>(params::shm_ring_size(), kMinRing));
  uint64_t pairs = static_cast<uint64_t>(ranks) * (ranks - 1);
  uint64_t fair = floor_pow2(std::max<uint64_t>(kAllRingsBudget / pairs, kMinRing));
  return std::min(want, fair);
}

// 0: no room for queues of kMinRing.
uint64_t inbox_ring_bytes(int ranks, uint64_t hbm_bytes) {
  const uint64_t ring = floor_pow2(std::min(kInboxBudget, hbm_bytes / 16) / ranks);
  return ring < kMinRing ? 0 : std::min(ring, kInboxRing);
}

uint64_t ring_stride(uint64_t ring_bytes) { return sizeof(RingControl) + ring_bytes; }
uint64_t blocks_offset() { return sizeof(SegmentHeader); }
uint64_t links_offset(int ranks) { return blocks_offset() + sizeof(RankBlock) * ranks; }
uint64_t rings_offset(int ranks, int link_slots) {
  uint64_t end = links_offset(ranks) + sizeof(LinkSlot) * link_slots;
  return (end + 4095) & ~uint64_t{4095};
}
uint64_t segment_bytes(int ranks, int link_slots, uint64_t ring_bytes) {
  return rings_offset(ranks, link_slots) + ring_stride(ring_bytes) * ranks * ranks;
}

long futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, timeout, nullptr, 0);
}

std::string errno_text(const char* what) { return std::string(what) + ": " + strerror(errno); }

// Doorbells are a Dekker handshake: a writer publishes a record, then reads the reader's sleeping
// flag; a sleeper raises its flag, then looks at its queues once more. Each side needs a full
// fence between its store and its load, but a writer's fence waits for the record's cache line
// to come over from the reader polling it (96% of the send function's samples), and a window of
// small sends went at half Open MPI's rate or less. So the fence is made asymmetric
// (membarrier(2)): a writer only keeps the compiler from reordering, and a rank about to sleep,
// which is rare and slow anyway, forces a full barrier on every CPU that runs a registered process.
// Either the writer's record is then visible to the sleeper's last look, or the writer's later load
// sees the flag. Without the call (old kernels, seccomp) both sides fence as before.
struct Barriers {
  bool expedite = false;  // the kernel has MEMBARRIER_CMD_GLOBAL_EXPEDITED: sleepers call it
  bool light = false;     // this process is registered for it: its writers skip their fence
};
const Barriers& barriers() {
  static const Barriers b = [] {
    Barriers r;
    const long have = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    r.expedite = have > 0 && (have & MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0 &&
                 (have & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0;
    r.light =
        r.expedite && syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
    return r;
  }();
  return b;
}
// The sleeper's side: after its flag is up, before its last look.
void before_sleep() {
  if (barriers().expedite) syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
}

class ShmTransport final : public Transport {
 public:
  ShmTransport(uint8_t* base, uint64_t bytes, const boot::JobInfo& job,
               const std::vector<boot::PeerCard>& cards)
      : base_(base), bytes_(bytes), job_(job), liveness_("shm", job) {
    auto* hdr = reinterpret_cast<SegmentHeader*>(base);
    n_ = static_cast<int>(hdr->ranks);
    cap_ = hdr->ring_bytes;
    // Rings too small for pipeline chunks (many ranks on a node) take the single copy. A rank
    // with a core of its own reads a message in one copy (2 ranks on 2 cores, osu_latency
    // 128-512 KiB 5.6-20 us against 12.6-41 by the pipeline, osu_bw 26-29 GB/s against 15), and
    // from TORUSMPI_SHM_SPLIT_MIN on splits one whose sender would only wait (pml's
    // split_rendezvous): the receiver reads one half while the sender writes the other. Medians
    // of 5, 2 ranks on 2 cores, read alone against split: osu_latency 128 KiB 6.0 us against
    // 4.6, 512 KiB 23.2 against 12.3; osu_bw 32 KiB 18.7 GB/s against 21.5, 512 KiB 27.1 against
    // 48.2; at 16 KiB the split lost (latency 1.63 us against 1.98). An exchange (alltoall) is
    // read alone at every size: each rank copies its own message anyway.
    // With more ranks than cores, messages up to a pipeline chunk go through the rings (a rank
    // whose turn comes copies what has arrived; one copy answered by a read costs a 64 KiB
    // neighbour exchange more: 4 ranks on 2 cores 0.67 ms a round against 1.04), larger ones are
    // read in one copy, which the receiver does alone whenever it runs, while a pipeline stalls
    // each time one end is descheduled (4 ranks on 2 cores, medians of 5: alltoall 128 KiB-1 MiB
    // 76-774 us against 132-1068 all pipelined, allgather 1 MiB 966 against 1033, reduce_scatter
    // 1 MiB 259 against 320, allreduce 1 MiB 488 against 540).
    if (params::shm_single_copy()) {
      if (ring_max_payload(cap_) < kPipelineChunk) {
        single_copy_below_ = SIZE_MAX;
      } else if (!progress::oversubscribed()) {
        single_copy_below_ = std::max<size_t>(params::shm_split_min(), 1);
      } else {
        single_copy_below_ = SIZE_MAX;
        shared_core_eager_ = kPipelineChunk;
      }
    }
    me_ = job.local_rank;
    blocks_ = reinterpret_cast<RankBlock*>(base + blocks_offset());
    const int slots = static_cast<int>(hdr->link_slots);
    rings_off_ = rings_offset(n_, slots);
    local_of_.assign(job.size, -1);
    for (int i = 0; i < n_; ++i) local_of_[job.local_peers[i]] = i;
    pids_.resize(n_);
    for (int i = 0; i < n_; ++i) pids_[i] = cards[i].pid;
    for (int i = 0; i < n_; ++i) {
      if (i != me_) liveness_.watch(job.local_peers[i], pids_[i]);
    }
    writers_.resize(n_);
    readers_.resize(n_);
    device_writers_.resize(n_);
    device_readers_.resize(n_);
    inline_to_.assign(n_, 0);
    cold_out_.assign(n_, Span{nullptr, 0});
    cold_in_.assign(n_, Span{nullptr, 0});
    sent_.assign(n_, 0);
    received_.assign(n_, 0);
    for (int j = 0; j < n_; ++j) {
      if (j == me_) continue;
      writers_[j].attach(control(me_, j), data(me_, j), cap_);
      readers_[j].attach(control(j, me_), data(j, me_), cap_);
    }
    // The rings' pages are touched now, from this process: this VM maps a page for a process only
    // at its first access, however the kernel prefaulted it (the guest counts no fault), and the
    // first pass of small messages through fresh rings made a job's first milliseconds several
    // times slower than the rest (osu_allgather at 512 B: 5-11 us a call for 11 ms, then 0.8 us;
    // touched, 0.6-0.8 us from the second millisecond). Ranks that outnumber the cores too: the
    // first pass costs them more, as a rank that maps a page makes the others wait a time slice
    // (osu_allgather, 4 ranks on 2 cores, 8-256 B: 21-33 us a call untouched, 13 touched;
    // reduce_scatter at 32 KiB: 540 us, 21 touched), while touching did not lengthen an 8- or
    // 12-rank job's start here (340-460 ms either way; once it measured 80 ms a rank).
    if (bytes <= kPopulateMax) touch_rings();
    links_.attach(topo::machine(), job.rank, job.local_peers,
                  reinterpret_cast<LinkSlot*>(base + links_offset(n_)), slots,
                  params::link_pacing());
    accounting_ = links_.accounting();
    pacing_ = links_.pacing();
    // A rank waiting for a held fragment sleeps until it is due; the kernel's default slack
    // (50 us) would stretch every such sleep past hop latencies of a few microseconds.
    if (pacing_) prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    blocks_[me_].state.store(kActive, std::memory_order_release);
  }

  ~ShmTransport() override {
    blocks_[me_].state.store(kFinalized, std::memory_order_release);
    if (bell_sock_ >= 0) close(bell_sock_);
    if (ring_sock_ >= 0) close(ring_sock_);
    munmap(base_, bytes_);
  }

  const char* name() const override { return "shm"; }

  bool send(int peer, const FragHeader& h, const void* payload, size_t len) override {
    int j = local_of_[peer];
    if (__builtin_expect(pacing_, 0) && !links_.may_send(j, h, len)) return false;
    // Both queues to j carry one stream: every fragment is numbered in it.
    if (__builtin_expect(h.type == FragType::kEager && (h.flags & kFlagDevice), 0)) {
      if (len > inline_to_[j]) return false;
      if (__builtin_expect(cold_out_[j].first != nullptr, 0)) warm(&cold_out_[j], true);
      if (!device_writers_[j].push(h, device::dma_view(payload), len, sent_[j])) return false;
      blocks_[j].device_records.fetch_add(1, std::memory_order_release);
    } else if (!writers_[j].push(h, payload, len, sent_[j])) {
      return false;
    }
    ++sent_[j];
    // Only payload: headers and control fragments are not what the simulator charges.
    if (__builtin_expect(accounting_, 0)) links_.charge_to(j, len);
    if (__builtin_expect(pacing_, 0) && links_.hops_to(j) > 0) links_.sent(j);
    ring_bell(j);
    return true;
  }

  size_t eager_cap() const override {
    if (single_copy_below_ == 0) return SIZE_MAX;
    return std::max(static_cast<size_t>(params::shm_eager_limit()), shared_core_eager_);
  }

  size_t max_payload() const override {
    return std::min<size_t>(ring_max_payload(cap_), kPipelineChunk);
  }

  // A rendezvous below single_copy_below_ is read in one copy; from there on the pml splits it
  // (split_copy) or reads it whole (read_remote), and what neither may take is pipelined.
  ReadStart start_read(int peer, uint64_t addr, void* dst, size_t len, const void* key,
                       size_t key_len, uint64_t cookie) override {
    if (len >= single_copy_below_) return ReadStart::kUnsupported;
    return Transport::start_read(peer, addr, dst, len, key, key_len, cookie);
  }

  bool read_remote(int peer, uint64_t addr, void* dst, size_t len, const void*, size_t) override {
    int j = local_of_[peer];
    // A read is one copy the reader cannot hold back: paced messages between chips take the
    // pipeline, whose chunks the sender holds until their links deliver them.
    if (pacing_ && links_.hops_to(j) > 0) return false;
    if (!vm_copy(pids_[j], dst, addr, len, false)) {
      // EPERM: the kernel's ptrace policy forbids it (yama, containers). From now on this
      // process pipelines its rendezvous receives through the rings, small as they are.
      log::warn("shm: single-copy read from rank %d failed (%s): using pipelined copies", peer,
                strerror(errno));
      single_copy_below_ = 0;
      return false;
    }
    reads_ok_ = true;
    if (accounting_) links_.charge_from(j, len);
    return true;
  }

  bool split_copy(int peer, uint64_t addr, size_t len) override {
    if (single_copy_below_ == 0 || len < single_copy_below_) return false;
    int j = local_of_[peer];
    if (pacing_ && links_.hops_to(j) > 0) return false;  // as read_remote
    if (!reads_ok_) {
      // Whether the kernel lets this process read its peers' memory at all, asked with one byte
      // before the sender is told to write its part.
      uint8_t probe;
      if (!vm_copy(pids_[j], &probe, addr, 1, false)) {
        log::warn("shm: single-copy read from rank %d failed (%s): using pipelined copies", peer,
                  strerror(errno));
        single_copy_below_ = 0;
        return false;
      }
      reads_ok_ = true;
    }
    return true;
  }

  bool write_remote(int peer, uint64_t addr, const void* src, size_t len) override {
    int j = local_of_[peer];
    if (!vm_copy(pids_[j], const_cast<void*>(src), addr, len, true)) {
      if (!write_failed_) {
        log::warn("shm: single-copy write to rank %d failed (%s): it reads the whole message", peer,
                  strerror(errno));
      }
      write_failed_ = true;
      return false;
    }
    if (accounting_) links_.charge_to(j, len);
    return true;
  }

  // A paced route cannot hold a read back (see read_remote): such device messages pipeline.
  bool device_reach(int peer) const override {
    int j = local_of_[peer];
    return device::peer_mapped(peer) && !(pacing_ && links_.hops_to(j) > 0);
  }

  size_t device_inline_limit(int peer) const override { return inline_to_[local_of_[peer]]; }

  // This rank's device queues (device memory at `base`, one from each local rank), read from
  // now on. Rank j's writes land there once attach_device_queue has run on j.
  void attach_inbox(uint8_t* base, uint64_t cap) {
    const uint64_t stride = ring_stride(cap);
    auto* view = static_cast<uint8_t*>(device::dma_view(base));
    inbox_delta_ = reinterpret_cast<uintptr_t>(base) - reinterpret_cast<uintptr_t>(view);
    for (int j = 0; j < n_; ++j) {
      if (j == me_) continue;
      uint8_t* ring = view + stride * j;
      device_readers_[j].attach(reinterpret_cast<RingControl*>(ring), ring + sizeof(RingControl),
                                cap);
      cold_in_[j] = {ring, stride};
    }
    inbox_ = true;
  }

  // Writes small device messages to local rank `peer` into its device queue from this rank.
  void attach_device_queue(int peer, const Inbox& inbox) {
    const int j = local_of_[peer];
    const uint64_t cap = inbox.ring_bytes, stride = ring_stride(cap);
    if (inbox.base == 0 || inbox.ranks != static_cast<uint64_t>(n_) || cap < kMinRing ||
        (cap & (cap - 1)) != 0) {
      return;
    }
    uint8_t* ring = device::peer_view(peer, inbox.base + stride * me_, stride);
    if (ring == nullptr) return;
    device_writers_[j].attach(reinterpret_cast<RingControl*>(ring), ring + sizeof(RingControl),
                              cap);
    cold_out_[j] = {ring, stride};
    // Not on a paced route: a device message there waits for its receive (device_reach).
    if (device_reach(peer)) {
      inline_to_[j] = std::min<size_t>(params::device_inline_limit(), ring_max_payload(cap));
    }
  }

  bool read_device(int peer, uint64_t addr, void* dst, size_t len) override {
    if (!device_reach(peer) || !device::copy_from_peer(peer, dst, addr, len)) return false;
    if (accounting_) links_.charge_from(local_of_[peer], len);
    return true;
  }

  int poll() override {
    int events = 0;
    const int budget = poll_budget();
    const bool device = device_pending();
    for (int j = 0; j < n_; ++j) {
      if (j == me_) continue;
      int n = drain_from(j, budget, device);
      if (n > 0) {
        // A writer that found no room may be asleep waiting for the room just freed. The fence
        // (in ring_bell) pairs with the one in its sleep(), whose check sees the room otherwise
        // (RingWriter::room_freed); it found no room long before it sleeps, so the flag is seen.
        if (readers_[j].writer_waiting() || (inbox_ && device_readers_[j].writer_waiting())) {
          ring_bell(j);
        }
        events += n;
      }
    }
    return events;
  }

  bool pending() const override {
    if (device_pending()) return true;
    for (int j = 0; j < n_; ++j) {
      if (j == me_) continue;
      if (!readers_[j].empty()) return true;
      // Room for a fragment the pml keeps until there is.
      if (writers_[j].room_freed() || device_writers_[j].room_freed()) return true;
    }
    // A held fragment whose time has come: the pml must poll to hand it over.
    return pacing_ && links_.holding() && links_.next_due() <= now_ns();
  }

  void sleep(int64_t us, int also) override {
    if (pacing_ && links_.holding()) {
      // No doorbell rings when a held fragment falls due: sleep no longer than until then.
      uint64_t due = links_.next_due(), now = now_ns();
      if (due <= now) return;
      us = std::min<int64_t>(us, static_cast<int64_t>((due - now + 999) / 1000));
    }
    RankBlock& mine = blocks_[me_];
    timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
    // The progress thread sleeps here holding the library's lock: only the system call lets it go
    // (pending() reads rings that other threads change only under it, with atomics).
    if (also >= 0 && bell_socket() >= 0) {
      // A network transport's descriptor too: sleep in ppoll on it and on this rank's bell socket,
      // which writers ring instead of the futex while the flag says kSleepingOnSocket.
      mine.sleeping.store(kSleepingOnSocket, std::memory_order_seq_cst);
      before_sleep();
      if (!pending()) {
        pollfd fds[2] = {{bell_sock_, POLLIN, 0}, {also, POLLIN, 0}};
        int ready;
        {
          progress::Unlocked unlocked;
          ready = ppoll(fds, 2, &ts, nullptr);
        }
        if (ready > 0 && (fds[0].revents & POLLIN)) {
          char drain[64];
          while (recv(bell_sock_, drain, sizeof drain, MSG_DONTWAIT) > 0) {
          }
        }
      }
    } else {
      uint32_t bell = mine.bell.load(std::memory_order_acquire);
      mine.sleeping.store(kSleepingOnFutex, std::memory_order_seq_cst);
      before_sleep();
      // Checked after raising the flag: a writer that missed the flag has published already.
      if (!pending()) {
        progress::Unlocked unlocked;
        futex(&mine.bell, FUTEX_WAIT, bell, &ts);
      }
    }
    mine.sleeping.store(kAwake, std::memory_order_relaxed);
    check_peers("waiting for messages");
  }

  Links& links() { return links_; }
  bool accounting() const { return accounting_; }
  void charge(int peer, size_t bytes, bool to_peer) {
    const int j = local_of_[peer];
    if (j < 0) return;
    to_peer ? links_.charge_to(j, bytes) : links_.charge_from(j, bytes);
    if (!pacing_) return;
    // The copy is made; the call that made it returns when the links would have delivered it.
    const uint64_t due = links_.copy_arrival(j, bytes, to_peer);
    progress::Backoff backoff;
    while (now_ns() < due) backoff.pause();
  }

  // Now and then: ends the job when a local peer's process is gone without having finalized (a
  // finalized one may leave while this rank still waits on others).
  void check_peers(const char* doing) {
    liveness_.check_due(doing, [&](int rank) {
      return blocks_[local_of_[rank]].state.load(std::memory_order_acquire) == kActive;
    });
  }

 private:
  // Device records were written to this rank's device queues that it has not taken yet. Read
  // before the host queues of a poll: a host record that must wait for a device one (the stream's
  // order) was published after the device record was counted, so the next poll sees the count.
  bool device_pending() const {
    return inbox_ && blocks_[me_].device_records.load(std::memory_order_acquire) != device_taken_;
  }

  // Delivers the next fragments local rank j sent (up to `budget`), in the order sent: from its
  // host queue or its device queue (looked at only when `device`: device_pending), whichever
  // holds the next of j's stream; 0 when neither does yet.
  int drain_from(int j, int budget, bool device_queue) {
    const int peer = job_.local_peers[j];
    auto host = [peer](const FragHeader& h, const uint8_t* payload, size_t len) {
      deliver(peer, h, payload, len);
    };
    // A device payload is handed over by its device address: the pml copies it as device memory.
    const uintptr_t delta = inbox_delta_;
    auto device = [this, peer, delta](const FragHeader& h, const uint8_t* payload, size_t len) {
      // Only a device message's payload may be handed over as device memory.
      if (h.type != FragType::kEager || !(h.flags & kFlagDevice)) {
        boot::abort_job(1, "shm: rank " + std::to_string(job_.rank) +
                               " found a fragment other than a device message in its device "
                               "queue from rank " +
                               std::to_string(peer) + " (device memory overwritten?)");
      }
      deliver(peer, h,
              reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(payload) + delta), len);
    };
    // As many records as pml::poll_budget says (one, unless a window of receives waits or ranks
    // outnumber cores: RingReader::drain says why), from whichever queue holds the stream's next.
    int n = readers_[j].drain(host, &received_[j], budget);
    check_queue(readers_[j], peer, "queue");
    if (n == 0 && device_queue) {
      if (__builtin_expect(cold_in_[j].first != nullptr, 0) && !device_readers_[j].empty()) {
        warm(&cold_in_[j], false);
      }
      n = device_readers_[j].drain(device, &received_[j], budget);
      device_taken_ += n;
      check_queue(device_readers_[j], peer, "device queue");
    }
    return n;
  }

  // A device queue's first use maps all its pages (populate): the writer's side when it writes the
  // first record, the reader's when it finds one. Queues between ranks that exchange no small
  // device messages take neither memory nor time.
  using Span = std::pair<uint8_t*, size_t>;
  static void warm(Span* cold, bool write) {
    populate(cold->first, cold->second, write);
    cold->first = nullptr;
  }

  void check_queue(const RingReader& reader, int peer, const char* which) {
    if (__builtin_expect(reader.fault() != nullptr, 0)) {
      boot::abort_job(1, "shm: rank " + std::to_string(job_.rank) + " found " + reader.fault() +
                             " in its " + which + " from rank " + std::to_string(peer) +
                             " (shared memory overwritten?)");
    }
  }

  // Writes a zero at each page of this rank's outgoing rings (they hold nothing yet, and no one
  // else writes their records) and reads one at each page of its incoming ones: the first
  // kTouchBytes of them in all, spread evenly, so that start-up stays short with many ranks.
  void touch_rings() {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t each = std::min<uint64_t>(cap_, kTouchBytes / (2 * std::max(n_ - 1, 1)));
    for (int j = 0; j < n_; ++j) {
      if (j == me_) continue;
      for (uint64_t off = 0; off < each; off += page) {
        reinterpret_cast<volatile uint8_t*>(data(me_, j))[off] = 0;
        (void)reinterpret_cast<volatile uint8_t*>(data(j, me_))[off];
      }
    }
  }
  uint8_t* ring_base(int from, int to) {
    return base_ + rings_off_ + ring_stride(cap_) * (static_cast<uint64_t>(from) * n_ + to);
  }
  RingControl* control(int from, int to) {
    return reinterpret_cast<RingControl*>(ring_base(from, to));
  }
  uint8_t* data(int from, int to) { return ring_base(from, to) + sizeof(RingControl); }

  // Wakes local rank j if it sleeps. The fence pairs with sleep()'s (see Barriers): either j sees
  // what was just published, or this sees j's flag.
  void ring_bell(int j) {
    if (light_fence_) {
      std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    wake(j);
  }
  bool has_doorbell() override { return true; }
  void wake_self() override { ring_bell(me_); }
  void wake(int j) {
    RankBlock& b = blocks_[j];
    uint32_t how = b.sleeping.load(std::memory_order_relaxed);
    if (how == kSleepingOnFutex) {
      b.bell.fetch_add(1, std::memory_order_release);
      futex(&b.bell, FUTEX_WAKE, 1, nullptr);
    } else if (how == kSleepingOnSocket) {
      ring_socket(j);
    }
  }

  // The bell socket of a rank that also waits on the network: an abstract Unix datagram socket
  // named after its pid (no file, gone with the process). -1 when it cannot be made; the rank
  // then sleeps on its futex and notices network arrivals only when the sleep times out.
  int bell_socket() {
    if (bell_sock_ == -2) {
      bell_sock_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      sockaddr_un addr;
      socklen_t len = bell_address(pids_[me_], &addr);
      if (bell_sock_ >= 0 && bind(bell_sock_, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
        log::warn("shm: no bell socket (%s): network arrivals wait for the sleep to end",
                  strerror(errno));
        close(bell_sock_);
        bell_sock_ = -1;
      }
    }
    return bell_sock_;
  }
  void ring_socket(int j) {
    if (ring_sock_ < 0) ring_sock_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_un addr;
    socklen_t len = bell_address(pids_[j], &addr);
    char one = 1;
    // A full socket already holds a wake-up: nothing is lost when this one is dropped.
    sendto(ring_sock_, &one, 1, 0, reinterpret_cast<sockaddr*>(&addr), len);
  }
  static socklen_t bell_address(pid_t pid, sockaddr_un* addr) {
    std::memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    int n = std::snprintf(addr->sun_path + 1, sizeof addr->sun_path - 1, "torusmpi.bell.%d",
                          static_cast<int>(pid));
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  }

  uint8_t* base_;
  uint64_t bytes_;
  const boot::JobInfo& job_;
  // Rendezvous messages below this size are read by process_vm_readv, larger ones pipelined
  // through the rings; 0: all pipelined.
  size_t single_copy_below_ = 0;
  // More ranks than cores: messages up to this size go eagerly through the rings, larger ones
  // are read in one copy (0 otherwise).
  size_t shared_core_eager_ = 0;
  bool reads_ok_ = false;      // a single-copy read has worked: the kernel lets this process read
  bool write_failed_ = false;  // a split copy's write has failed (said once)
  int n_ = 0;
  int me_ = 0;
  uint64_t cap_ = 0;
  RankBlock* blocks_ = nullptr;
  uint64_t rings_off_ = 0;
  Links links_;
  bool accounting_ = false;  // links_.accounting(): a peer on another chip of this instance
  bool pacing_ = false;
  bool light_fence_ = barriers().light;  // ring_bell() need not fence (Barriers)
  std::vector<int> local_of_;
  std::vector<pid_t> pids_;
  std::vector<RingWriter> writers_;
  std::vector<RingReader> readers_;
  // Device queues (device_inline_limit): to each local rank in its HBM, from each in this one's.
  std::vector<RingWriter> device_writers_;
  std::vector<RingReader> device_readers_;
  std::vector<Span> cold_out_, cold_in_;   // device queues not used yet (warm)
  bool inbox_ = false;                     // device_readers_ attached
  std::vector<size_t> inline_to_;          // device_inline_limit, per local rank
  uintptr_t inbox_delta_ = 0;              // device address - this process's view of it
  std::vector<uint64_t> sent_, received_;  // the stream's numbers, per local rank
  uint64_t device_taken_ = 0;              // records taken from the device queues (RankBlock)
  Liveness liveness_;
  int bell_sock_ = -2;  // -2: not made yet
  int ring_sock_ = -1;
};

struct State {
  int fd = -1;              // the first local rank's: kept open until every rank has mapped
  std::string name;         // named segments: unlinked once every rank has mapped
  void* inbox = nullptr;    // this rank's device queues (device memory)
  uint64_t inbox_ring = 0;  // bytes of each
  std::unique_ptr<ShmTransport> transport;
};

State& state() {
  static State s;
  return s;
}

// A POSIX shm name unique to this job and node: nspace and pid, without slashes.
std::string segment_name(const boot::JobInfo& job) {
  std::string name = "/torusmpi-" + job.nspace + "-" + std::to_string(getpid());
  std::replace(name.begin() + 1, name.end(), '/', '_');
  return name.substr(0, 63);
}

Status create(const boot::JobInfo& job, std::string* error) {
  State& st = state();
  uint64_t ring = ring_bytes_for(job.local_size);
  int slots = link_slots(topo::machine());
  uint64_t bytes = segment_bytes(job.local_size, slots, ring);
  Location loc{};
  loc.pid = static_cast<int32_t>(getpid());
  loc.bytes = bytes;
  if (params::shm_named()) {
    st.name = segment_name(job);
    st.fd = shm_open(st.name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (st.fd < 0) {
      *error = errno_text(("shm: cannot create " + st.name).c_str());
      return Status::kErrNoMem;
    }
    std::snprintf(loc.name, sizeof loc.name, "%s", st.name.c_str());
  } else {
    st.fd = memfd_create("torusmpi-shm", MFD_CLOEXEC);
    if (st.fd < 0) {
      *error = errno_text("shm: memfd_create");
      return Status::kErrNoMem;
    }
  }
  loc.fd = st.fd;
  if (ftruncate(st.fd, static_cast<off_t>(bytes)) != 0) {
    *error =
        errno_text(("shm: cannot size the segment to " + std::to_string(bytes) + " B").c_str());
    return Status::kErrNoMem;
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, st.fd, 0);
  if (base == MAP_FAILED) {
    *error = errno_text("shm: mmap");
    return Status::kErrNoMem;
  }
  // A fresh segment is zero: every atomic starts at 0, every ring empty.
  auto* hdr = static_cast<SegmentHeader*>(base);
  hdr->magic = kSegmentMagic;
  hdr->ranks = static_cast<uint32_t>(job.local_size);
  hdr->link_slots = static_cast<uint32_t>(slots);
  hdr->ring_bytes = ring;
  munmap(base, bytes);
  TORUSMPI_DEBUG(kPml, "shm: segment of %llu B for %d ranks, rings of %llu B (%s)",
                 static_cast<unsigned long long>(bytes), job.local_size,
                 static_cast<unsigned long long>(ring),
                 st.name.empty() ? "memfd" : st.name.c_str());
  return boot::put(kKey, &loc, sizeof loc);
}

// Opens the segment the first local rank published; returns its fd.
int open_published(const Location& loc, std::string* error) {
  if (loc.name[0] != '\0') {
    int fd = shm_open(loc.name, O_RDWR, 0);
    if (fd < 0) *error = errno_text((std::string("shm: cannot open ") + loc.name).c_str());
    return fd;
  }
  std::string path = "/proc/" + std::to_string(loc.pid) + "/fd/" + std::to_string(loc.fd);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *error = errno_text(("shm: cannot open the first local rank's segment " + path +
                         " (TORUSMPI_SHM_NAMED=1 uses a named segment instead)")
                            .c_str());
  }
  return fd;
}

// Maps a local peer's HBM for read_device and its device queue from this rank. Without the
// mapping (the kernel refuses the open, say) device messages to and from that peer pipeline
// through host memory, counted as staged bytes.
void map_hbm(int peer, ShmTransport* transport) {
  std::vector<uint8_t> value;
  device::ArenaCard card;
  std::string error;
  if (boot::get(peer, kHbmKey, &value) != Status::kOk || value.size() != sizeof card) {
    error = "rank " + std::to_string(peer) + " published no device memory card";
  } else {
    std::memcpy(&card, value.data(), sizeof card);
    if (device::map_peer(peer, card, &error) == Status::kOk) {
      Inbox inbox{};
      if (boot::get(peer, kInboxKey, &value) == Status::kOk && value.size() == sizeof inbox) {
        std::memcpy(&inbox, value.data(), sizeof inbox);
        transport->attach_device_queue(peer, inbox);
      }
      return;
    }
  }
  log::warn("shm: %s: device data to and from it passes through host memory", error.c_str());
}

// This rank's device queues, one from each local rank, published for them. When its HBM has no
// room for them there are none, and small device messages to it go through the senders' HBM eager
// rings.
Status make_inbox(const boot::JobInfo& job) {
  State& st = state();
  Inbox inbox{0, static_cast<uint64_t>(job.local_size),
              inbox_ring_bytes(job.local_size, device::range_bytes)};
  const uint64_t bytes = ring_stride(inbox.ring_bytes) * job.local_size;
  if (params::device_inline_limit() > 0 && inbox.ring_bytes > 0 &&
      device::alloc(bytes, &st.inbox) == Status::kOk) {
    // Every queue empty: its head and its first record's prefix are 0 (the writer clears each
    // prefix it comes to next). Nothing more is touched: a queue's pages are used, and so take
    // memory and page faults, only once messages go through it.
    for (int i = 0; i < job.local_size; ++i) {
      device::fill(static_cast<uint8_t*>(st.inbox) + ring_stride(inbox.ring_bytes) * i, 0,
                   sizeof(RingControl) + kLine);
    }
    inbox.base = reinterpret_cast<uint64_t>(st.inbox);
    st.inbox_ring = inbox.ring_bytes;
  }
  return boot::put(kInboxKey, &inbox, sizeof inbox);
}

}  // namespace

Status prepare(const boot::JobInfo& job, std::string* error) {
  if (job.local_size < 2) return Status::kOk;
  const device::ArenaCard hbm = device::arena_card();
  TORUSMPI_CHECK(boot::put(kHbmKey, &hbm, sizeof hbm));
  TORUSMPI_CHECK(make_inbox(job));
  if (job.local_rank != 0) return Status::kOk;
  return create(job, error);
}

Status attach(const boot::JobInfo& job, const std::vector<boot::PeerCard>& cards,
              std::string* error) {
  if (job.local_size < 2) return Status::kOk;
  State& st = state();
  int first = job.local_peers[0];
  std::vector<uint8_t> value;
  if (boot::get(first, kKey, &value) != Status::kOk || value.size() != sizeof(Location)) {
    *error = "shm: rank " + std::to_string(first) + " published no shared-memory segment";
    return Status::kErrBoot;
  }
  Location loc;
  std::memcpy(&loc, value.data(), sizeof loc);
  loc.name[sizeof loc.name - 1] = '\0';  // another process's bytes: a name that ends
  if (loc.bytes < sizeof(SegmentHeader)) {
    *error = "shm: rank " + std::to_string(first) + " published a segment of " +
             std::to_string(loc.bytes) + " B, too small for its header";
    return Status::kErrBoot;
  }
  int fd = job.local_rank == 0 ? st.fd : open_published(loc, error);
  if (fd < 0) return Status::kErrBoot;
  // Mapped with its pages in place: a page faulted in during the first pass of small messages
  // through a ring costs more than the messages themselves. When ranks outnumber the cores only
  // the first rank does it, which allocates the pages (as touch_rings, for the same reasons).
  const bool populate_here = job.local_rank == 0 || !progress::oversubscribed();
  int populate = loc.bytes <= kPopulateMax && populate_here ? MAP_POPULATE : 0;
  void* base = mmap(nullptr, loc.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | populate, fd, 0);
  if (job.local_rank != 0) close(fd);
  if (base == MAP_FAILED) {
    *error = errno_text("shm: mmap");
    return Status::kErrNoMem;
  }
  auto* hdr = static_cast<SegmentHeader*>(base);
  if (hdr->magic != kSegmentMagic || hdr->ranks != static_cast<uint32_t>(job.local_size)) {
    *error = "shm: the segment published by rank " + std::to_string(first) + " is not this job's";
    munmap(base, loc.bytes);
    return Status::kErrBoot;
  }
  // The rings are laid out from the header's figures: they must fit the mapping exactly.
  const uint64_t ring = hdr->ring_bytes;
  if (ring == 0 || (ring & (ring - 1)) != 0 ||
      segment_bytes(job.local_size, static_cast<int>(hdr->link_slots), ring) != loc.bytes) {
    *error = "shm: the segment published by rank " + std::to_string(first) +
             " does not hold the rings its header describes";
    munmap(base, loc.bytes);
    return Status::kErrBoot;
  }
  if (hdr->link_slots != static_cast<uint32_t>(link_slots(topo::machine()))) {
    *error = "shm: rank " + std::to_string(first) + " emulates another machine than rank " +
             std::to_string(job.rank) + " (" + topo::machine().name +
             "): TORUSMPI_INSTANCE must be the same on every rank";
    munmap(base, loc.bytes);
    return Status::kErrBoot;
  }
  st.transport = std::make_unique<ShmTransport>(static_cast<uint8_t*>(base), loc.bytes, job, cards);
  if (st.inbox != nullptr) {
    st.transport->attach_inbox(static_cast<uint8_t*>(st.inbox), st.inbox_ring);
  }
  hdr->attached.fetch_add(1, std::memory_order_acq_rel);
  if (job.local_rank == 0) {
    // The name goes as soon as every local rank holds the mapping. A rank that dies first ends
    // the job here, diagnosed; the memfd goes with this process in any case.
    progress::Backoff backoff;
    double deadline = progress::now_seconds() + static_cast<double>(params::boot_timeout_s());
    while (hdr->attached.load(std::memory_order_acquire) < static_cast<uint32_t>(job.local_size)) {
      backoff.pause();
      st.transport->check_peers("waiting for its peers to map shared memory");
      if (params::boot_timeout_s() > 0 && progress::now_seconds() > deadline) {
        *error = "shm: local ranks did not map the shared segment within TORUSMPI_BOOT_TIMEOUT";
        return Status::kErrTimeout;
      }
    }
    if (!st.name.empty()) shm_unlink(st.name.c_str());
    close(st.fd);
    st.fd = -1;
  }
  // Every local rank maps the segment (its liveness is watched through it), but ranks of another
  // emulated instance are reached only through the network, as they would be on the hardware.
  const topo::Machine& m = topo::machine();
  const int my_instance = topo::place(m, job.rank).instance;
  for (int i = 0; i < job.local_size; ++i) {
    int peer = job.local_peers[i];
    if (i != job.local_rank && topo::place(m, peer).instance == my_instance) {
      set_transport(peer, st.transport.get());
      map_hbm(peer, st.transport.get());
    }
  }
  return Status::kOk;
}

bool link_accounting() {
  State& st = state();
  return st.transport != nullptr && st.transport->accounting();
}

void charge_links(int peer, size_t bytes, bool to_peer) {
  State& st = state();
  if (st.transport != nullptr) st.transport->charge(peer, bytes, to_peer);
}

void publish_link_stats() {
  State& st = state();
  if (st.transport != nullptr) st.transport->links().publish();
}

void print_link_stats(FILE* out) {
  State& st = state();
  if (st.transport != nullptr) {
    st.transport->links().print(out);
    return;
  }
  // Alone on its node: no peer, no segment, nothing crossed a link; the lines still list them.
  Links alone;
  const boot::JobInfo& job = boot::job();
  alone.attach(topo::machine(), job.rank, {job.rank}, nullptr, 0, false);
  alone.print(out);
}

void detach() {
  State& st = state();
  st.transport.reset();
  if (st.inbox != nullptr) {
    device::free(st.inbox);
    st.inbox = nullptr;
  }
  if (st.fd >= 0) {
    if (!st.name.empty()) shm_unlink(st.name.c_str());
    close(st.fd);
    st.fd = -1;
  }
}

}  // namespace torusmpi::pml::shm
