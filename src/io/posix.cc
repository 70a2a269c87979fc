#include "io/posix.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace torusmpi::io {

std::vector<Window> plan_windows(const std::vector<Extent>& ranges, int64_t buffer, bool sieve) {
  std::vector<Window> out;
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].len <= 0) continue;
    if (sieve && !out.empty() && out.back().last + 1 == i &&
        ranges[i].end() - out.back().off <= buffer && ranges[i].off >= out.back().off) {
      Window& w = out.back();
      w.last = i;
      w.len = ranges[i].end() - w.off;
      w.sieved = true;
      continue;
    }
    out.push_back(Window{i, i, ranges[i].off, ranges[i].len, false});
  }
  return out;
}

bool want_sieving(const std::vector<Extent>& ranges, Toggle hint) {
  if (hint == Toggle::kDisable || ranges.size() < 2) return false;
  if (hint == Toggle::kEnable) return true;
  int64_t data = 0;
  for (const Extent& e : ranges) data += e.len;
  const int64_t holes = ranges.back().end() - ranges.front().off - data;
  // A system call costs about what moving a few KiB through the page cache does: sieve when the
  // holes read along come to less than that per range saved.
  return holes <= static_cast<int64_t>(ranges.size()) * kSievedHoleBytesPerRange;
}

PosixFile::~PosixFile() {
  if (fd_ >= 0) ::close(fd_);
}

int PosixFile::open(const std::string& path, int flags, const char** op) {
  *op = "open";
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0666);
  if (fd < 0) return errno;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return EISDIR;
  }
  fd_ = fd;
  return 0;
}

int PosixFile::close(const char** op) {
  *op = "close";
  if (fd_ < 0) return 0;
  int rc = ::close(fd_);
  fd_ = -1;
  return rc == 0 ? 0 : errno;
}

int PosixFile::pread_full(char* buf, int64_t len, int64_t off, int64_t* got, const char** op) {
  *got = 0;
  while (*got < len) {
    ssize_t n = ::pread(fd_, buf + *got, static_cast<size_t>(len - *got), off + *got);
    if (n < 0) {
      if (errno == EINTR) continue;
      *op = "pread";
      return errno;
    }
    if (n == 0) break;  // the end of the file
    *got += n;
  }
  return 0;
}

int PosixFile::pwrite_full(const char* buf, int64_t len, int64_t off, const char** op) {
  int64_t done = 0;
  while (done < len) {
    ssize_t n = ::pwrite(fd_, buf + done, static_cast<size_t>(len - done), off + done);
    if (n < 0) {
      if (errno == EINTR) continue;
      *op = "pwrite";
      return errno;
    }
    done += n;
  }
  return 0;
}

int PosixFile::lock(int64_t off, int64_t len, bool exclusive) {
  struct flock fl {};
  fl.l_type = exclusive ? F_WRLCK : F_RDLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = off;
  fl.l_len = len;
  while (fcntl(fd_, F_SETLKW, &fl) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

int PosixFile::unlock(int64_t off, int64_t len) {
  struct flock fl {};
  fl.l_type = F_UNLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = off;
  fl.l_len = len;
  return fcntl(fd_, F_SETLK, &fl) == 0 ? 0 : errno;
}

namespace {

// Room for the largest sieved window (not the hint's whole buffer, which may be far larger than
// any window of this access).
std::unique_ptr<char[]> sieve_buffer(const std::vector<Window>& windows) {
  int64_t most = 0;
  for (const Window& w : windows) {
    if (w.sieved) most = std::max(most, w.len);
  }
  return most > 0 ? std::unique_ptr<char[]>(new char[static_cast<size_t>(most)]) : nullptr;
}

}  // namespace

int PosixFile::read(const std::vector<Extent>& ranges, char* stream, const Hints& h, bool atomic,
                    int64_t* got, const char** op) {
  *got = 0;
  if (ranges.empty()) return 0;
  const int64_t span_off = ranges.front().off, span_len = ranges.back().end() - span_off;
  if (atomic) {
    *op = "fcntl(F_SETLKW)";
    if (int e = lock(span_off, span_len, false)) return e;
  }
  std::vector<Window> windows =
      plan_windows(ranges, h.ind_rd_buffer_size, want_sieving(ranges, h.ds_read));
  std::unique_ptr<char[]> sieve = sieve_buffer(windows);
  int err = 0;
  bool short_read = false;
  char* at = stream;
  for (const Window& w : windows) {
    if (!w.sieved) {
      int64_t n = 0;
      err = pread_full(at, w.len, w.off, &n, op);
      if (err != 0) break;
      *got += n;
      at += w.len;
      if (n < w.len) {
        short_read = true;
        break;
      }
      continue;
    }
    int64_t n = 0;
    err = pread_full(sieve.get(), w.len, w.off, &n, op);
    if (err != 0) break;
    for (size_t i = w.first; i <= w.last; ++i) {
      const Extent& r = ranges[i];
      int64_t have = std::clamp<int64_t>(n - (r.off - w.off), 0, r.len);
      std::memcpy(at, sieve.get() + (r.off - w.off), static_cast<size_t>(have));
      *got += have;
      at += r.len;
      if (have < r.len) {
        short_read = true;
        break;
      }
    }
    if (short_read) break;
  }
  if (atomic) unlock(span_off, span_len);
  return err;
}

int PosixFile::write(const std::vector<Extent>& ranges, const char* stream, const Hints& h,
                     bool atomic, const char** op) {
  if (ranges.empty()) return 0;
  const int64_t span_off = ranges.front().off, span_len = ranges.back().end() - span_off;
  if (atomic) {
    *op = "fcntl(F_SETLKW)";
    if (int e = lock(span_off, span_len, true)) return e;
  }
  std::vector<Window> windows =
      plan_windows(ranges, h.ind_wr_buffer_size, want_sieving(ranges, h.ds_write));
  // While processes may sieve writes to this file, every write locks what it writes: a plain
  // write must not fall between another process's read and write back of a window around it.
  const bool lock_each = !atomic && h.ds_write != Toggle::kDisable;
  std::unique_ptr<char[]> sieve = sieve_buffer(windows);
  int err = 0;
  const char* at = stream;
  for (const Window& w : windows) {
    if (lock_each) {
      *op = "fcntl(F_SETLKW)";
      if ((err = lock(w.off, w.len, true)) != 0) break;
    }
    if (!w.sieved) {
      err = pwrite_full(at, w.len, w.off, op);
      at += w.len;
    } else {
      int64_t n = 0;
      err = pread_full(sieve.get(), w.len, w.off, &n, op);
      if (err == 0) {
        // Past the end of the file the holes read as nothing: zeros, as the file would have them.
        std::memset(sieve.get() + n, 0, static_cast<size_t>(w.len - n));
        for (size_t i = w.first; i <= w.last; ++i) {
          const Extent& r = ranges[i];
          std::memcpy(sieve.get() + (r.off - w.off), at, static_cast<size_t>(r.len));
          at += r.len;
        }
        err = pwrite_full(sieve.get(), w.len, w.off, op);
      }
    }
    if (lock_each) unlock(w.off, w.len);
    if (err != 0) break;
  }
  if (atomic) unlock(span_off, span_len);
  return err;
}

int PosixFile::size(int64_t* out, const char** op) const {
  struct stat st;
  *op = "fstat";
  if (fstat(fd_, &st) != 0) return errno;
  *out = st.st_size;
  return 0;
}

int PosixFile::truncate(int64_t size, const char** op) {
  *op = "ftruncate";
  return ftruncate(fd_, size) == 0 ? 0 : errno;
}

int PosixFile::preallocate(int64_t size, const char** op) {
  *op = "posix_fallocate";
  if (size <= 0) return 0;
  int rc = posix_fallocate(fd_, 0, size);
  if (rc == EOPNOTSUPP || rc == EINVAL) {
    // A file system without fallocate: extending the file gives the same guarantee of size.
    int64_t now = 0;
    if (int e = this->size(&now, op)) return e;
    if (now < size) return truncate(size, op);
    return 0;
  }
  return rc;
}

int PosixFile::sync(const char** op) {
  *op = "fsync";
  return fsync(fd_) == 0 ? 0 : errno;
}

}  // namespace torusmpi::io
