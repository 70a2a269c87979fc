// The emulated device: this rank's share of its chip's HBM, its allocator, the DMA engine and the
// reduction wrapper (see device.h for the contract).
//
// Why it is shaped so:
// - One memfd per rank, mapped twice: the range handed to users (PROT_NONE under
//   TORUSMPI_DEVICE_GUARD) and a private read-write alias at a fixed offset from it. Only this
//   file uses the alias, so a host dereference of a device pointer anywhere else faults when the
//   guard is on. A memfd has no name: nothing can be left in /dev/shm, even by a killed rank.
// - The whole range is mapped at init, so "is this a device pointer" is one subtraction and one
//   compare (device.h), the cost every copy of the library pays on its host path.
// - The allocator keeps free space and live blocks in two ordered maps: first fit with
//   coalescing, and a live-block lookup by address, so kind() and free() tell a live block from
//   freed or never-allocated arena space.
// - Host memory is recognized from /proc/self/maps, read into a sorted snapshot that readers
//   search without a lock; a miss re-reads the file (the address may be newly mapped). Old
//   snapshots are kept until finalize, since a reader may still be searching one.
#include "device/device.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/log.h"
#include "core/params.h"
#include "topo/machine.h"

namespace torusmpi::device {

namespace detail {
__attribute__((tls_model("initial-exec"))) thread_local HostHit t_host_hit = {0, 0, 0};
std::atomic<uint64_t> maps_epoch{0};  // counts the changes of g_maps
}  // namespace detail

uintptr_t range_base = 0;
size_t range_bytes = 0;

namespace {

constexpr size_t kAlign = 64;

struct Arena {
  int fd = -1;
  uint8_t* user = nullptr;   // what users see (range_base)
  uint8_t* alias = nullptr;  // this layer's read-write view of the same pages
  size_t bytes = 0;
  int chip = -1;
  std::mutex mutex;                // the two maps below
  std::map<size_t, size_t> free_;  // offset -> bytes, never adjacent (coalesced)
  std::map<size_t, size_t> live_;  // offset -> bytes as rounded up
  // Moves on at every free: a block kind() found live stays live until then (LiveHit).
  std::atomic<uint64_t> frees{1};
};
Arena g_arena;
Counters g_counters;

// Other ranks' arenas mapped here, by job rank (view == nullptr: not mapped).
struct PeerArena {
  uint8_t* view = nullptr;
  uintptr_t base = 0;
  size_t bytes = 0;
};
std::vector<PeerArena> g_peers;
int g_self = -1;  // this rank: its own words are reachable as a peer's are (a send to itself)

// Readable host ranges [first, second), sorted, adjacent ones merged.
using Ranges = std::vector<std::pair<uintptr_t, uintptr_t>>;
std::atomic<const Ranges*> g_maps{nullptr};
std::mutex g_maps_mutex;                           // rereads
std::vector<std::unique_ptr<Ranges>> g_snapshots;  // every snapshot made, freed at finalize

// The allocations kind() found last on this thread: the argument checks of every call on a device
// buffer ask about the same few blocks (a send and a receive buffer, in turn), and the map behind
// a mutex cost a device message's latency about 5%. Initial-exec: no __tls_get_addr call (a few
// bytes of static TLS).
struct LiveHit {
  uint64_t frees = 0;  // Arena::frees when found; 0 matches nothing
  size_t off = 0;
  size_t len = 0;
};
constexpr int kHits = 2;
__attribute__((tls_model("initial-exec"))) thread_local LiveHit t_hits[kHits];
__attribute__((tls_model("initial-exec"))) thread_local int t_next_hit = 0;

inline uint8_t* to_alias(const void* p) {
  return g_arena.alias + (reinterpret_cast<uintptr_t>(p) - range_base);
}

// Parses /proc/self/maps: "start-end perms offset dev inode path". The device range itself is
// left out (it is device memory, not host memory), and so is the alias (no user holds it).
std::unique_ptr<Ranges> read_maps() {
  auto out = std::make_unique<Ranges>();
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  std::string text;
  char buf[16384];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  const uintptr_t alias_lo = reinterpret_cast<uintptr_t>(g_arena.alias);
  const uintptr_t alias_hi = alias_lo + g_arena.bytes;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const char* line = text.c_str() + pos;
    char* end = nullptr;
    uintptr_t lo = std::strtoull(line, &end, 16);
    uintptr_t hi = (end != nullptr && *end == '-') ? std::strtoull(end + 1, &end, 16) : 0;
    bool readable = end != nullptr && end[0] == ' ' && end[1] == 'r';
    pos = eol + 1;
    if (!readable || hi <= lo) continue;
    if (lo < range_base + range_bytes && hi > range_base) continue;
    if (g_arena.alias != nullptr && lo < alias_hi && hi > alias_lo) continue;
    if (!out->empty() && out->back().second == lo) {
      out->back().second = hi;
    } else {
      out->push_back({lo, hi});
    }
  }
  std::sort(out->begin(), out->end());
  return out;
}

// The readable range of the snapshot that holds all of [lo, hi), or nullptr.
const std::pair<uintptr_t, uintptr_t>* covering(const Ranges* r, uintptr_t lo, uintptr_t hi) {
  if (r == nullptr) return nullptr;
  auto it = std::upper_bound(
      r->begin(), r->end(), lo,
      [](uintptr_t a, const std::pair<uintptr_t, uintptr_t>& b) { return a < b.first; });
  if (it == r->begin()) return nullptr;
  --it;
  return lo >= it->first && hi <= it->second ? &*it : nullptr;
}
bool covered(const Ranges* r, uintptr_t lo, uintptr_t hi) { return covering(r, lo, hi) != nullptr; }

Kind host_kind(const void* p, size_t bytes) {
  if (known_host(p, bytes)) return Kind::kHost;
  uintptr_t lo = reinterpret_cast<uintptr_t>(p);
  uintptr_t hi = lo + (bytes == 0 ? 1 : bytes);
  if (hi < lo) return Kind::kInvalid;  // wraps around the address space
  // A range that reaches into the device range is neither kind.
  if (lo < range_base + range_bytes && hi > range_base) return Kind::kInvalid;
  const uint64_t epoch = detail::maps_epoch.load(std::memory_order_acquire);
  if (const auto* range = covering(g_maps.load(std::memory_order_acquire), lo, hi)) {
    detail::t_host_hit = detail::HostHit{epoch, range->first, range->second};
    return Kind::kHost;
  }
  std::lock_guard<std::mutex> lock(g_maps_mutex);
  std::unique_ptr<Ranges> fresh = read_maps();
  const Ranges* now = fresh.get();
  g_snapshots.push_back(std::move(fresh));
  g_maps.store(now, std::memory_order_release);
  detail::maps_epoch.fetch_add(1, std::memory_order_acq_rel);
  return covered(now, lo, hi) ? Kind::kHost : Kind::kInvalid;
}

}  // namespace

Status init(int rank, std::string* error) {
  Arena& a = g_arena;
  size_t bytes = static_cast<size_t>(params::device_memory());
  bytes = (bytes + kAlign - 1) / kAlign * kAlign;
  if (bytes == 0) bytes = kAlign;
  long page = sysconf(_SC_PAGESIZE);
  size_t pg = page > 0 ? static_cast<size_t>(page) : 4096;
  bytes = (bytes + pg - 1) / pg * pg;
  a.chip = topo::place(topo::machine(), rank).chip;
  g_self = rank;
  a.fd = memfd_create("torusmpi-hbm", MFD_CLOEXEC);
  if (a.fd < 0) {
    *error = std::string("device memory: memfd_create failed: ") + std::strerror(errno);
    return Status::kErrNoMem;
  }
  if (ftruncate(a.fd, static_cast<off_t>(bytes)) != 0) {
    *error = "device memory: cannot size the arena to " + std::to_string(bytes) +
             " B (TORUSMPI_DEVICE_MEMORY): " + std::strerror(errno);
    close(a.fd);
    a.fd = -1;
    return Status::kErrNoMem;
  }
  int prot = params::device_guard() ? PROT_NONE : PROT_READ | PROT_WRITE;
  void* user = mmap(nullptr, bytes, prot, MAP_SHARED | MAP_NORESERVE, a.fd, 0);
  void* alias = user == MAP_FAILED ? MAP_FAILED
                                   : mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                                          MAP_SHARED | MAP_NORESERVE, a.fd, 0);
  if (user == MAP_FAILED || alias == MAP_FAILED) {
    *error = "device memory: cannot map an arena of " + std::to_string(bytes) +
             " B (TORUSMPI_DEVICE_MEMORY): " + std::strerror(errno);
    if (user != MAP_FAILED) munmap(user, bytes);
    close(a.fd);
    a.fd = -1;
    return Status::kErrNoMem;
  }
  a.user = static_cast<uint8_t*>(user);
  a.alias = static_cast<uint8_t*>(alias);
  a.bytes = bytes;
  a.free_.clear();
  a.live_.clear();
  a.free_[0] = bytes;
  g_counters = Counters{};
  range_base = reinterpret_cast<uintptr_t>(user);
  range_bytes = bytes;
  TORUSMPI_DEBUG(kMpi, "device: chip %d, %zu B of HBM at %p (guard %s)", a.chip, bytes, user,
                 params::device_guard() ? "on" : "off");
  return Status::kOk;
}

void finalize() {
  for (PeerArena& p : g_peers) {
    if (p.view != nullptr) munmap(p.view, p.bytes);
  }
  g_peers.clear();
  Arena& a = g_arena;
  if (a.fd < 0) return;
  range_base = 0;
  range_bytes = 0;
  munmap(a.user, a.bytes);
  munmap(a.alias, a.bytes);
  close(a.fd);
  a.fd = -1;
  a.user = a.alias = nullptr;
  a.bytes = 0;
  a.chip = -1;
  {
    std::lock_guard<std::mutex> lock(a.mutex);
    a.free_.clear();
    a.live_.clear();
    a.frees.fetch_add(1, std::memory_order_release);
  }
  std::lock_guard<std::mutex> lock(g_maps_mutex);
  g_maps.store(nullptr, std::memory_order_release);
  detail::maps_epoch.fetch_add(1, std::memory_order_acq_rel);
  g_snapshots.clear();
}

Kind kind(const void* p, size_t bytes, int* chip) {
  if (chip != nullptr) *chip = -1;
  if (!in_device_range(p)) return host_kind(p, bytes);
  Arena& a = g_arena;
  const size_t off = reinterpret_cast<uintptr_t>(p) - range_base;
  const size_t want = bytes == 0 ? 1 : bytes;
  auto inside = [&](size_t first, size_t len) {
    return off - first < len && want <= len - (off - first);
  };
  const uint64_t frees = a.frees.load(std::memory_order_acquire);
  bool known = false;
  for (const LiveHit& hit : t_hits)
    known = known || (hit.frees == frees && inside(hit.off, hit.len));
  if (!known) {
    std::lock_guard<std::mutex> lock(a.mutex);
    auto it = a.live_.upper_bound(off);
    if (it == a.live_.begin()) return Kind::kInvalid;
    --it;
    if (!inside(it->first, it->second)) return Kind::kInvalid;
    t_hits[t_next_hit] = LiveHit{a.frees.load(std::memory_order_relaxed), it->first, it->second};
    t_next_hit = (t_next_hit + 1) % kHits;
  }
  if (chip != nullptr) *chip = a.chip;
  return Kind::kDevice;
}

Status alloc(size_t bytes, void** out) {
  Arena& a = g_arena;
  *out = nullptr;
  if (a.fd < 0) return Status::kErrArg;
  if (bytes > a.bytes) return Status::kErrNoMem;
  size_t need = bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign;  // distinct pointers
  std::lock_guard<std::mutex> lock(a.mutex);
  for (auto it = a.free_.begin(); it != a.free_.end(); ++it) {
    if (it->second < need) continue;
    size_t off = it->first, len = it->second;
    a.free_.erase(it);
    if (len > need) a.free_[off + need] = len - need;
    a.live_[off] = need;
    *out = a.user + off;
    return Status::kOk;
  }
  return Status::kErrNoMem;
}

Status free(void* p) {
  Arena& a = g_arena;
  if (!in_device_range(p)) return Status::kErrArg;
  size_t off = reinterpret_cast<uintptr_t>(p) - range_base;
  std::lock_guard<std::mutex> lock(a.mutex);
  auto live = a.live_.find(off);
  if (live == a.live_.end()) return Status::kErrArg;
  size_t len = live->second;
  a.live_.erase(live);
  a.frees.fetch_add(1, std::memory_order_release);
  // Coalesce with the free neighbours on both sides.
  auto next = a.free_.lower_bound(off);
  if (next != a.free_.end() && next->first == off + len) {
    len += next->second;
    next = a.free_.erase(next);
  }
  if (next != a.free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      prev->second += len;
      return Status::kOk;
    }
  }
  a.free_[off] = len;
  return Status::kOk;
}

int chip() { return g_arena.chip; }

void copy_device(void* dst, const void* src, size_t bytes) {
  const bool d = in_device_range(dst), s = in_device_range(src);
  void* to = d ? to_alias(dst) : dst;
  const void* from = s ? to_alias(src) : src;
  // Overlap is possible only within the arena (an in-place collective's block onto itself).
  if (d && s) {
    std::memmove(to, from, bytes);
    g_counters.d2d += bytes;
    return;
  }
  std::memcpy(to, from, bytes);
  (d ? g_counters.h2d : g_counters.d2h) += bytes;
}

void stage_device(void* host_dst, const void* src, size_t bytes) {
  std::memcpy(host_dst, to_alias(src), bytes);
  g_counters.d2h += bytes;
  g_counters.staged += bytes;
}

void* dma_view(const void* p) { return in_device_range(p) ? to_alias(p) : const_cast<void*>(p); }

ArenaCard arena_card() {
  const Arena& a = g_arena;
  return ArenaCard{static_cast<int32_t>(getpid()), a.fd, range_base, range_bytes};
}

Status map_peer(int rank, const ArenaCard& card, std::string* error) {
  if (rank < 0) return Status::kErrArg;
  if (static_cast<size_t>(rank) >= g_peers.size()) g_peers.resize(rank + 1);
  PeerArena& p = g_peers[rank];
  if (p.view != nullptr) return Status::kOk;
  const std::string path = "/proc/" + std::to_string(card.pid) + "/fd/" + std::to_string(card.fd);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *error = "device memory: cannot open rank " + std::to_string(rank) + "'s HBM " + path + ": " +
             std::strerror(errno);
    return Status::kErrBoot;
  }
  // Its size from the file itself: a card's word is not trusted to size a mapping.
  off_t size = lseek(fd, 0, SEEK_END);
  if (size < 0 || static_cast<uint64_t>(size) != card.bytes) {
    close(fd);
    *error = "device memory: rank " + std::to_string(rank) + "'s HBM is " +
             std::to_string(static_cast<long long>(size)) + " B, its card says " +
             std::to_string(card.bytes);
    return Status::kErrBoot;
  }
  void* view = mmap(nullptr, card.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  close(fd);
  if (view == MAP_FAILED) {
    *error = "device memory: cannot map rank " + std::to_string(rank) +
             "'s HBM: " + std::strerror(errno);
    return Status::kErrNoMem;
  }
  p.view = static_cast<uint8_t*>(view);
  p.base = card.base;
  p.bytes = card.bytes;
  return Status::kOk;
}

bool peer_mapped(int rank) {
  return rank >= 0 && static_cast<size_t>(rank) < g_peers.size() && g_peers[rank].view != nullptr;
}

uint8_t* peer_view(int rank, uint64_t addr, size_t bytes) {
  if (!peer_mapped(rank)) return nullptr;
  const PeerArena& p = g_peers[rank];
  const uint64_t off = addr - p.base;
  if (off > p.bytes || bytes > p.bytes - off) return nullptr;
  return p.view + off;
}

bool copy_from_peer(int rank, void* dst, uint64_t addr, size_t bytes) {
  const uint8_t* from = peer_view(rank, addr, bytes);
  if (from == nullptr) return false;
  std::memcpy(dma_view(dst), from, bytes);
  g_counters.peer += bytes;
  (in_device_range(dst) ? g_counters.d2d : g_counters.d2h) += bytes;
  return true;
}

bool copy_to_peer(int rank, uint64_t addr, const void* src, size_t bytes) {
  uint8_t* to = peer_view(rank, addr, bytes);
  if (to == nullptr) return false;
  std::memcpy(to, dma_view(src), bytes);
  g_counters.peer += bytes;
  (in_device_range(src) ? g_counters.d2d : g_counters.h2d) += bytes;
  return true;
}

bool reduce_at_peer(Kernel apply, void* ctx, int rank, uint64_t addr, const void* src, size_t count,
                    size_t elem) {
  uint8_t* to = peer_view(rank, addr, count * elem);
  if (to == nullptr) return false;
  apply(ctx, to, dma_view(src), count);
  g_counters.reduced += count * elem;
  return true;
}

namespace {

// The word at addr of rank's device memory, or nullptr when it is not mapped here or addr is not
// an aligned word inside it.
uint64_t* peer_word(int rank, uint64_t addr) {
  const auto* own = reinterpret_cast<const void*>(addr);
  if (rank == g_self && in_device_range(own) && addr % sizeof(uint64_t) == 0) {
    return static_cast<uint64_t*>(dma_view(own));
  }
  if (!peer_mapped(rank)) return nullptr;
  const PeerArena& p = g_peers[rank];
  const uint64_t off = addr - p.base;
  if (off > p.bytes || sizeof(uint64_t) > p.bytes - off || off % sizeof(uint64_t) != 0) {
    return nullptr;
  }
  return reinterpret_cast<uint64_t*>(p.view + off);
}

}  // namespace

bool store_to_peer(int rank, uint64_t addr, uint64_t value) {
  uint64_t* w = peer_word(rank, addr);
  if (w == nullptr) return false;
  __atomic_store_n(w, value, __ATOMIC_RELEASE);
  return true;
}

#if defined(__x86_64__)
// PREFETCHW, which fetches the line to be written (exclusive): a plain prefetch shares it, and the
// swap that follows still waits for another core to let go of it. Older x86 cores run it as a NOP.
__attribute__((target("prfchw")))
#endif
void prefetch_at_peer(int rank, uint64_t addr) {
  if (const uint64_t* w = peer_word(rank, addr)) __builtin_prefetch(w, 1);
}

bool load_from_peer(int rank, uint64_t addr, uint64_t* value) {
  const uint64_t* w = peer_word(rank, addr);
  if (w == nullptr) return false;
  *value = __atomic_load_n(w, __ATOMIC_ACQUIRE);
  return true;
}

bool exchange_at_peer(int rank, uint64_t addr, uint64_t expected, uint64_t desired,
                      uint64_t* seen) {
  uint64_t* w = peer_word(rank, addr);
  if (w == nullptr) return false;
  *seen = expected;
  __atomic_compare_exchange_n(w, seen, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return true;
}

uint64_t load_word(const void* p) {
  return __atomic_load_n(static_cast<const uint64_t*>(dma_view(p)), __ATOMIC_ACQUIRE);
}

void store_word(void* p, uint64_t value) {
  __atomic_store_n(static_cast<uint64_t*>(dma_view(p)), value, __ATOMIC_RELEASE);
}

bool exchange_word(void* p, uint64_t expected, uint64_t desired) {
  return __atomic_compare_exchange_n(static_cast<uint64_t*>(dma_view(p)), &expected, desired, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void fill(void* dst, int byte, size_t bytes) {
  if (!in_device_range(dst)) {
    std::memset(dst, byte, bytes);
    return;
  }
  std::memset(to_alias(dst), byte, bytes);
  g_counters.d2d += bytes;
}

void reduce(Kernel apply, void* ctx, void* dst, const void* src, size_t count, size_t elem) {
  const bool d = in_device_range(dst), s = in_device_range(src);
  apply(ctx, d ? to_alias(dst) : dst, s ? to_alias(src) : src, count);
  if (d || s) g_counters.reduced += count * elem;
}

void transfer(Transfer run, void* ctx, void* dst, bool dst_device, const void* src, bool src_device,
              size_t bytes) {
  run(ctx, dst_device ? to_alias(dst) : dst, src_device ? to_alias(src) : src);
  if (dst_device && src_device) {
    g_counters.d2d += bytes;
  } else if (dst_device) {
    g_counters.h2d += bytes;
  } else if (src_device) {
    g_counters.d2h += bytes;
    g_counters.staged += bytes;
  }
}

const Counters& counters() { return g_counters; }

}  // namespace torusmpi::device
