#include "io/shared_fp.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace torusmpi::io {
namespace {

std::string os_error(const char* what, const std::string& name) {
  return std::string(what) + " " + name + ": " + std::strerror(errno);
}

}  // namespace

std::string SharedPointer::name_for(const std::string& path, uint64_t a, uint64_t b) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + base + ".shfp." + std::to_string(a) + "." + std::to_string(b);
}

bool SharedPointer::create(const std::string& name, std::string* error) {
  close();
  int fd = ::open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = os_error("cannot create the shared file pointer's file", name);
    return false;
  }
  int64_t zero = 0;
  if (pwrite(fd, &zero, sizeof zero, 0) != static_cast<ssize_t>(sizeof zero)) {
    *error = os_error("cannot write the shared file pointer's file", name);
    ::close(fd);
    ::unlink(name.c_str());
    return false;
  }
  fd_ = fd;
  name_ = name;
  named_ = true;
  return true;
}

bool SharedPointer::open(const std::string& name, std::string* error) {
  close();
  int fd = ::open(name.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *error = os_error("cannot open the shared file pointer's file", name);
    return false;
  }
  fd_ = fd;
  name_ = name;
  return true;
}

void SharedPointer::unlink_name() {
  if (named_) ::unlink(name_.c_str());
  named_ = false;
}

void SharedPointer::close() {
  unlink_name();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool SharedPointer::locked_rw(int64_t delta, bool absolute, int64_t* old, std::string* error) {
  if (fd_ < 0) {
    *error = "the shared file pointer is not available";
    return false;
  }
  // A record lock on the counter's bytes: fcntl locks belong to the process and its inode, so
  // they order the ranks of every node that reaches the same file system.
  struct flock lk {};
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_SET;
  lk.l_start = 0;
  lk.l_len = sizeof(int64_t);
  while (fcntl(fd_, F_SETLKW, &lk) != 0) {
    if (errno != EINTR) {
      *error = os_error("cannot lock the shared file pointer's file", name_);
      return false;
    }
  }
  int64_t pos = 0;
  bool ok = pread(fd_, &pos, sizeof pos, 0) == static_cast<ssize_t>(sizeof pos);
  if (!ok) *error = os_error("cannot read the shared file pointer's file", name_);
  int64_t next = absolute ? delta : pos + delta;
  if (ok && (absolute || delta != 0)) {
    ok = pwrite(fd_, &next, sizeof next, 0) == static_cast<ssize_t>(sizeof next);
    if (!ok) *error = os_error("cannot write the shared file pointer's file", name_);
  }
  lk.l_type = F_UNLCK;
  fcntl(fd_, F_SETLK, &lk);
  if (old != nullptr) *old = pos;
  return ok;
}

bool SharedPointer::fetch_add(int64_t delta, int64_t* old, std::string* error) {
  return locked_rw(delta, false, old, error);
}

bool SharedPointer::set(int64_t position, std::string* error) {
  return locked_rw(position, true, nullptr, error);
}

}  // namespace torusmpi::io
