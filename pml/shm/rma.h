// One-sided communication between the processes of one node, without MPI: the shared segment of
// a window (its control block and, for windows that allocate their memory, the memory itself),
// the lock words in it, and the single copy to and from a peer's private memory
// (process_vm_readv/writev) for windows made on memory the application already had.
//
// A window's segment follows the shm transport's rules (shm.cc): a memfd that the other processes
// open through /proc/<pid>/fd of its maker, or with TORUSMPI_SHM_NAMED=1 a POSIX segment named
// after the job, the maker's pid and a sequence number; either way it is gone (closed, unlinked)
// as soon as every process of the window has mapped it, so a job that crashes later leaves
// nothing in /dev/shm.
#ifndef TORUSMPI_PML_SHM_RMA_H_
#define TORUSMPI_PML_SHM_RMA_H_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace torusmpi::pml::shm::rma {

// How the other processes find a segment: its maker's pid and fd (memfd) or its name.
struct SegmentCard {
  int32_t pid = 0;
  int32_t fd = -1;
  uint64_t bytes = 0;
  char name[64] = {};
};

// A segment this process made or mapped.
struct Segment {
  void* base = nullptr;
  size_t bytes = 0;
  int fd = -1;       // the maker's, open until every process has mapped (release_name)
  std::string name;  // named segments: unlinked by release_name
};

// Makes a zeroed segment of `bytes` bytes, maps it, and fills *card for the others.
Status segment_create(const std::string& job_tag, size_t bytes, Segment* seg, SegmentCard* card,
                      std::string* error);
// Maps the segment another process made.
Status segment_open(const SegmentCard& card, Segment* seg, std::string* error);
// The maker, once every process has mapped the segment: closes its fd and unlinks the name.
void segment_release_name(Segment* seg);
// Unmaps (and releases the name if still held).
void segment_close(Segment* seg);

// The per-process block of a window's control segment, one cache line each.
struct alignas(64) ControlBlock {
  // Passive target lock: kExclusive, or the number of shared holders.
  std::atomic<uint32_t> lock{0};
  // Held while an accumulate updates this process's memory: accumulates are atomic per element
  // with respect to each other.
  std::atomic<uint32_t> update{0};
  // Active target (post/start/complete/wait): completes received from origins, in total.
  std::atomic<uint32_t> completes{0};
};
static_assert(sizeof(ControlBlock) == 64, "one cache line per process");
constexpr uint32_t kExclusive = 0x80000000u;

// The control segment's layout for n processes: n blocks, then an n x n matrix of post counts
// (post[target * n + origin]: how many times target exposed its memory to origin).
inline size_t control_bytes(int n) {
  size_t bytes = sizeof(ControlBlock) * static_cast<size_t>(n) +
                 sizeof(std::atomic<uint32_t>) * static_cast<size_t>(n) * static_cast<size_t>(n);
  return (bytes + 4095) / 4096 * 4096;
}
inline ControlBlock* control_blocks(void* base) { return static_cast<ControlBlock*>(base); }
inline std::atomic<uint32_t>* post_counts(void* base, int n) {
  return reinterpret_cast<std::atomic<uint32_t>*>(static_cast<char*>(base) +
                                                  sizeof(ControlBlock) * static_cast<size_t>(n));
}

// Lock words. Waits spin briefly, then yield, then sleep (the node may have more processes than
// cores), letting the progress lock go meanwhile.
void lock_exclusive(std::atomic<uint32_t>* word);
void lock_shared(std::atomic<uint32_t>* word);
// One attempt, no wait: whether the shared (exclusive) lock was taken.
bool try_lock_shared(std::atomic<uint32_t>* word);
bool try_lock_exclusive(std::atomic<uint32_t>* word);
void unlock_exclusive(std::atomic<uint32_t>* word);
void unlock_shared(std::atomic<uint32_t>* word);
// Waits until *word >= value (acquire).
void wait_at_least(std::atomic<uint32_t>* word, uint32_t value);

// A piece of a peer's memory, by its address in that process.
struct Block {
  uintptr_t address;
  size_t bytes;
};

// Copies the peer's blocks, in order, into `packed` (read) or from it (write): one
// process_vm_readv/writev per batch of blocks, a single copy. kErrUnsupported (the kernel refuses:
// ptrace rules) or kErrInternal (it copied less) with *error set.
Status peer_read(pid_t pid, const std::vector<Block>& blocks, void* packed, std::string* error);
Status peer_write(pid_t pid, const std::vector<Block>& blocks, const void* packed,
                  std::string* error);

// Lets every process of this user read and write this one's memory with process_vm_* where the
// kernel's Yama module would allow only ancestors (a no-op elsewhere).
void allow_peer_access();

}  // namespace torusmpi::pml::shm::rma

#endif  // TORUSMPI_PML_SHM_RMA_H_
