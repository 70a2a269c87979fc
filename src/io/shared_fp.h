// The shared file pointer of an open file: one 8-byte counter (the position, in etypes of the
// current view) that every process of the file's group reads and moves, whatever node it runs on.
//
// It lives in a small hidden file beside the data file, the only thing every node surely shares
// with the others (nodes have their own /dev/shm and IPC), and each access holds a POSIX record
// lock (fcntl F_SETLKW on its 8 bytes) across a pread and a pwrite: the kernel, or the file
// system's lock manager, serializes processes of every node.
//
// Nothing of it outlives the job, even a killed one: at MPI_File_open rank 0 creates the file
// (O_EXCL, a name no other open uses: the data file's name, the job's and the open's numbers),
// every rank opens it, and once all have (a barrier) rank 0 unlinks it. From then on it exists
// only as the ranks' open descriptors, which close (or die) with them; a crash between creation
// and unlink, a window of one barrier inside MPI_File_open, is the only way to leave it.
//
// The ordered calls (read_ordered, write_ordered) need no lock: they are collective, so rank 0
// moves the pointer once by the total and the ranks take their places by a prefix sum.
#ifndef TORUSMPI_IO_SHARED_FP_H_
#define TORUSMPI_IO_SHARED_FP_H_

#include <cstdint>
#include <string>

namespace torusmpi::io {

class SharedPointer {
 public:
  SharedPointer() = default;
  SharedPointer(const SharedPointer&) = delete;
  SharedPointer& operator=(const SharedPointer&) = delete;
  ~SharedPointer() { close(); }

  // The name of the hidden file of data file `path` (same directory): ".<base>.shfp.<a>.<b>".
  static std::string name_for(const std::string& path, uint64_t a, uint64_t b);

  // Rank 0: creates the file (O_EXCL) holding position 0 and opens it. Others: open(name), after
  // rank 0's create. On failure false and *error says why (with the OS's reason).
  bool create(const std::string& name, std::string* error);
  bool open(const std::string& name, std::string* error);
  // Rank 0, once every rank has opened it: removes the name.
  void unlink_name();
  void close();
  bool ready() const { return fd_ >= 0; }
  const std::string& name() const { return name_; }

  // Under the lock: *old = the position, then position += delta. delta 0 reads it.
  bool fetch_add(int64_t delta, int64_t* old, std::string* error);
  bool set(int64_t position, std::string* error);

 private:
  bool locked_rw(int64_t delta, bool absolute, int64_t* old, std::string* error);

  int fd_ = -1;
  std::string name_;
  bool named_ = false;  // the name is still in the directory
};

}  // namespace torusmpi::io

#endif  // TORUSMPI_IO_SHARED_FP_H_
