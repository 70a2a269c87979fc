// A file on a POSIX file system, as MPI-IO's processes each hold it: positioned reads and writes
// of lists of file ranges (view.h) from and to a contiguous stream buffer, with data sieving for
// noncontiguous ranges and byte-range locks where other processes could otherwise lose bytes.
//
// Every call returns 0 or the errno of the system call that failed, for the MPI layer to turn
// into an error class and a message ("MPI_File_write_at: MPI_ERR_IO: file /tmp/x: pwrite: No
// space left on device"); `op` (when given) receives that call's name.
//
// Data sieving (ROMIO's name and hints): a noncontiguous read reads whole windows of up to
// ind_rd_buffer_size bytes from the first to the last range they hold and copies the ranges out;
// a noncontiguous write reads such a window (ind_wr_buffer_size), lays the ranges into it and
// writes it back, holding an exclusive fcntl lock on the window meanwhile so that another
// process's write into a hole of it is not undone; while write sieving is not disabled, plain
// writes lock their range too (else one could land between another's read and write back). Windows
// never reach past the last range asked for, so nothing is written beyond the access. A range
// bigger than the buffer is moved alone.
#ifndef TORUSMPI_IO_POSIX_H_
#define TORUSMPI_IO_POSIX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "io/view.h"

namespace torusmpi::io {

// "enable", "disable" or "automatic" (ROMIO's romio_ds_read/romio_ds_write values).
enum class Toggle : uint8_t { kAutomatic, kEnable, kDisable };

struct Hints {
  int64_t ind_rd_buffer_size = 4 << 20;  // ROMIO's defaults
  int64_t ind_wr_buffer_size = 512 << 10;
  Toggle ds_read = Toggle::kAutomatic;
  Toggle ds_write = Toggle::kAutomatic;
};

// One sieving window: ranges [first, last] of an access, read or written as the file bytes
// [off, off + len). sieved is false for a window of one range (moved directly).
struct Window {
  size_t first = 0, last = 0;
  int64_t off = 0, len = 0;
  bool sieved = false;
};

// Groups the ranges (in nondecreasing file order, as views give them) into windows of at most
// `buffer` bytes each. With sieve false every range is its own window. Pure: unit tested.
std::vector<Window> plan_windows(const std::vector<Extent>& ranges, int64_t buffer, bool sieve);

// Whether sieving is used for ranges under a hint: automatic sieves when there are several
// ranges and the holes between them average at most kSievedHoleBytesPerRange (beyond that,
// reading the holes costs more than the system calls saved).
constexpr int64_t kSievedHoleBytesPerRange = 4096;
bool want_sieving(const std::vector<Extent>& ranges, Toggle hint);

class PosixFile {
 public:
  PosixFile() = default;
  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;
  ~PosixFile();

  // open(2) with flags (O_RDONLY, O_RDWR, O_CREAT, O_EXCL ...) and mode 0666 less the umask.
  int open(const std::string& path, int flags, const char** op);
  int close(const char** op);
  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  // Reads the ranges into stream (their bytes one after the other). *got: the stream bytes read
  // before the end of the file (MPI's count of a read that reaches it).
  int read(const std::vector<Extent>& ranges, char* stream, const Hints& h, bool atomic,
           int64_t* got, const char** op);
  // Writes the stream into the ranges. atomic: under an exclusive lock of their whole span.
  int write(const std::vector<Extent>& ranges, const char* stream, const Hints& h, bool atomic,
            const char** op);

  int size(int64_t* out, const char** op) const;
  int truncate(int64_t size, const char** op);
  // Makes sure the first `size` bytes have storage (posix_fallocate; never shrinks).
  int preallocate(int64_t size, const char** op);
  int sync(const char** op);

  // fcntl byte-range locks on [off, off + len) (len 0: to the end of the file); blocking.
  int lock(int64_t off, int64_t len, bool exclusive);
  int unlock(int64_t off, int64_t len);

 private:
  int pread_full(char* buf, int64_t len, int64_t off, int64_t* got, const char** op);
  int pwrite_full(const char* buf, int64_t len, int64_t off, const char** op);

  int fd_ = -1;
};

}  // namespace torusmpi::io

#endif  // TORUSMPI_IO_POSIX_H_
