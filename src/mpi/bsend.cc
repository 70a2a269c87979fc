// Buffered sends: MPI_Buffer_attach/detach and the copy each MPI_Bsend/Ibsend/Bsend_init makes
// into the attached buffer. A message holds its bytes plus MPI_BSEND_OVERHEAD of the buffer
// (what MPI tells users to reserve) until the pml has sent it; then the space is free again.
#include <cstring>
#include <map>

#include "core/progress.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/p2p.h"

namespace torusmpi::mpi {
namespace {

struct Attached {
  uint8_t* base = nullptr;
  size_t size = 0;
  std::map<size_t, size_t> used;  // offset -> bytes held, overhead included
  size_t in_use = 0;
};

Attached& attached() {
  static Attached a;
  return a;
}

// One buffered message: its pml request and where its copy lives.
struct Buffered {
  pml::Request req;
  size_t offset;
};

// Message copies start on a 16-byte boundary, as malloc's would.
size_t round16(size_t n) { return (n + 15) & ~size_t{15}; }

// First fit in the gaps between the messages still held; SIZE_MAX when none is large enough.
size_t find_room(const Attached& a, size_t need) {
  // The buffer's base may be unaligned: offsets are counted from its first 16-byte boundary.
  size_t skew = round16(reinterpret_cast<uintptr_t>(a.base)) - reinterpret_cast<uintptr_t>(a.base);
  if (a.size < skew) return SIZE_MAX;
  size_t at = skew;
  for (const auto& [offset, bytes] : a.used) {
    if (offset - at >= need) return at;
    at = round16(offset + bytes);
  }
  return a.size >= at && a.size - at >= need ? at : SIZE_MAX;
}

void release(pml::Request* r) {
  auto* m = static_cast<Buffered*>(r->user);
  Attached& a = attached();
  auto it = a.used.find(m->offset);
  a.in_use -= it->second;
  a.used.erase(it);
  delete m;
}

}  // namespace

int bsend(const char* fn, MPI_Comm comm, const Comm& c, const Buffer& b, int dest, int tag) {
  // Sent messages give their room back from completion callbacks: under asynchronous progress,
  // on the progress thread.
  progress::Lock lock;
  Attached& a = attached();
  if (a.base == nullptr) {
    return raise_error(comm, MPI_ERR_BUFFER, fn,
                       "no buffer is attached (MPI_Buffer_attach) for a buffered send of %zu B",
                       b.bytes);
  }
  size_t need = b.bytes + MPI_BSEND_OVERHEAD;
  size_t at = find_room(a, need);
  if (at == SIZE_MAX) {
    // Messages sent since the last poll may have left.
    progress::poll();
    at = find_room(a, need);
  }
  if (at == SIZE_MAX) {
    return raise_error(comm, MPI_ERR_BUFFER, fn,
                       "the attached buffer of %zu B has no room for a message of %zu B (+%d B "
                       "MPI_BSEND_OVERHEAD); %zu B are held by messages not yet sent",
                       a.size, b.bytes, MPI_BSEND_OVERHEAD, a.in_use);
  }
  uint8_t* copy = a.base + at;
  if (b.staged()) {
    pack_any(*b.type, b.user, b.count, copy);  // the packed stream: MPI_Pack_size's bytes
  } else if (b.bytes > 0) {
    device::stage(copy, b.buf, b.bytes);  // the attached buffer is the library's to use
  }
  auto* m = new Buffered;
  m->offset = at;
  a.used.emplace(at, need);
  a.in_use += need;
  m->req.user = m;
  m->req.on_complete = release;
  Status s = pml::isend(c, c.context, copy, b.bytes, dest, tag, pml::SendMode::kStandard, &m->req);
  if (s != Status::kOk) {
    release(&m->req);
    return raise_error(comm, error_class_of(s), fn, "rank %d cannot be reached: %s", dest,
                       status_string(s));
  }
  return MPI_SUCCESS;
}

}  // namespace torusmpi::mpi

using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;

int PMPI_Buffer_attach(void* buffer, int size) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Buffer_attach";
  if (int err = require_active(kFn)) return err;
  auto& a = torusmpi::mpi::attached();
  if (a.base != nullptr) {
    return raise_error(nullptr, MPI_ERR_BUFFER, kFn,
                       "a buffer of %zu B is attached already: detach it first", a.size);
  }
  if (size < 0) return raise_error(nullptr, MPI_ERR_ARG, kFn, "size argument is %d", size);
  if (buffer == nullptr && size > 0)
    return raise_error(nullptr, MPI_ERR_BUFFER, kFn, "buffer argument is NULL");
  a.base = static_cast<uint8_t*>(buffer);
  a.size = static_cast<size_t>(size);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Buffer_attach);

// Waits until every buffered message has been sent, as MPI requires, then hands the buffer back.
int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Buffer_detach";
  if (int err = require_active(kFn)) return err;
  if (buffer_addr == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "buffer_addr argument is NULL");
  if (size == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "size argument is NULL");
  auto& a = torusmpi::mpi::attached();
  torusmpi::progress::wait_until([&] {
    torusmpi::progress::Lock lock;
    return a.used.empty();
  });
  *static_cast<void**>(buffer_addr) = a.base;
  *size = static_cast<int>(a.size);
  a.base = nullptr;
  a.size = 0;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Buffer_detach);
