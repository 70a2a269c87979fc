// One-sided mechanics of the shm transport: see rma.h.
#include "pml/shm/rma.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "core/params.h"
#include "core/progress.h"

namespace torusmpi::pml::shm::rma {
namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

Status map(int fd, size_t bytes, Segment* seg, std::string* error) {
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    *error = errno_text("rma: mmap of a window segment of " + std::to_string(bytes) + " B");
    return Status::kErrNoMem;
  }
  seg->base = base;
  seg->bytes = bytes;
  return Status::kOk;
}

}  // namespace

Status segment_create(const std::string& job_tag, size_t bytes, Segment* seg, SegmentCard* card,
                      std::string* error) {
  static uint32_t sequence = 0;
  *card = SegmentCard{};
  card->pid = static_cast<int32_t>(getpid());
  card->bytes = bytes;
  if (params::shm_named()) {
    std::string name = "/torusmpi-win-" + job_tag + "-" + std::to_string(getpid()) + "-" +
                       std::to_string(sequence++);
    std::replace(name.begin() + 1, name.end(), '/', '_');
    name = name.substr(0, sizeof card->name - 1);
    seg->fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (seg->fd < 0) {
      *error = errno_text("rma: cannot create " + name);
      return Status::kErrNoMem;
    }
    seg->name = name;
    std::snprintf(card->name, sizeof card->name, "%s", name.c_str());
  } else {
    seg->fd = memfd_create("torusmpi-win", MFD_CLOEXEC);
    if (seg->fd < 0) {
      *error = errno_text("rma: memfd_create");
      return Status::kErrNoMem;
    }
  }
  card->fd = seg->fd;
  if (ftruncate(seg->fd, static_cast<off_t>(bytes)) != 0) {
    *error = errno_text("rma: cannot size a window segment to " + std::to_string(bytes) + " B");
    segment_close(seg);
    return Status::kErrNoMem;
  }
  Status s = map(seg->fd, bytes, seg, error);
  if (s != Status::kOk) segment_close(seg);
  return s;
}

Status segment_open(const SegmentCard& card, Segment* seg, std::string* error) {
  int fd;
  if (card.name[0] != '\0') {
    fd = shm_open(card.name, O_RDWR, 0);
    if (fd < 0) *error = errno_text(std::string("rma: cannot open ") + card.name);
  } else {
    std::string path = "/proc/" + std::to_string(card.pid) + "/fd/" + std::to_string(card.fd);
    fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      *error = errno_text("rma: cannot open the window segment " + path +
                          " (TORUSMPI_SHM_NAMED=1 uses a named segment instead)");
    }
  }
  if (fd < 0) return Status::kErrNoMem;
  Status s = map(fd, card.bytes, seg, error);
  close(fd);
  return s;
}

void segment_release_name(Segment* seg) {
  if (!seg->name.empty()) shm_unlink(seg->name.c_str());
  seg->name.clear();
  if (seg->fd >= 0) close(seg->fd);
  seg->fd = -1;
}

void segment_close(Segment* seg) {
  segment_release_name(seg);
  if (seg->base != nullptr) munmap(seg->base, seg->bytes);
  seg->base = nullptr;
  seg->bytes = 0;
}

void lock_exclusive(std::atomic<uint32_t>* word) {
  progress::Backoff backoff(true);
  uint32_t expected = 0;
  while (!word->compare_exchange_weak(expected, kExclusive, std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
    expected = 0;
    backoff.pause();
  }
}

void lock_shared(std::atomic<uint32_t>* word) {
  progress::Backoff backoff(true);
  for (;;) {
    uint32_t v = word->load(std::memory_order_relaxed);
    if ((v & kExclusive) == 0 && word->compare_exchange_weak(v, v + 1, std::memory_order_acquire,
                                                             std::memory_order_relaxed)) {
      return;
    }
    backoff.pause();
  }
}

bool try_lock_shared(std::atomic<uint32_t>* word) {
  uint32_t v = word->load(std::memory_order_relaxed);
  while ((v & kExclusive) == 0) {
    if (word->compare_exchange_weak(v, v + 1, std::memory_order_acquire,
                                    std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

bool try_lock_exclusive(std::atomic<uint32_t>* word) {
  uint32_t expected = 0;
  return word->compare_exchange_strong(expected, kExclusive, std::memory_order_acquire,
                                       std::memory_order_relaxed);
}

void unlock_exclusive(std::atomic<uint32_t>* word) { word->store(0, std::memory_order_release); }

void unlock_shared(std::atomic<uint32_t>* word) { word->fetch_sub(1, std::memory_order_release); }

void wait_at_least(std::atomic<uint32_t>* word, uint32_t value) {
  progress::Backoff backoff(true);
  // Counters only grow; the difference survives their wrapping around.
  while (static_cast<int32_t>(word->load(std::memory_order_acquire) - value) < 0) backoff.pause();
}

namespace {

// One process_vm_* call per batch of at most IOV_MAX blocks, the local side one contiguous iovec.
template <typename Call>
Status peer_copy(pid_t pid, const std::vector<Block>& blocks, char* packed, Call call,
                 const char* verb, std::string* error) {
  std::vector<iovec> remote;
  size_t i = 0;
  while (i < blocks.size()) {
    remote.clear();
    size_t bytes = 0;
    for (; i < blocks.size() && remote.size() < IOV_MAX; ++i) {
      remote.push_back({reinterpret_cast<void*>(blocks[i].address), blocks[i].bytes});
      bytes += blocks[i].bytes;
    }
    iovec local{packed, bytes};
    ssize_t n = call(pid, &local, 1, remote.data(), remote.size(), 0);
    if (n < 0) {
      *error = errno_text(std::string("rma: cannot ") + verb + " the memory of process " +
                          std::to_string(pid));
      return errno == EPERM ? Status::kErrUnsupported : Status::kErrInternal;
    }
    if (static_cast<size_t>(n) != bytes) {
      *error = std::string("rma: ") + verb + " " + std::to_string(n) + " B of " +
               std::to_string(bytes) + " B in process " + std::to_string(pid);
      return Status::kErrInternal;
    }
    packed += bytes;
  }
  return Status::kOk;
}

}  // namespace

Status peer_read(pid_t pid, const std::vector<Block>& blocks, void* packed, std::string* error) {
  return peer_copy(pid, blocks, static_cast<char*>(packed), process_vm_readv, "read", error);
}

Status peer_write(pid_t pid, const std::vector<Block>& blocks, const void* packed,
                  std::string* error) {
  return peer_copy(pid, blocks, static_cast<char*>(const_cast<void*>(packed)), process_vm_writev,
                   "write", error);
}

void allow_peer_access() {
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
}

}  // namespace torusmpi::pml::shm::rma
