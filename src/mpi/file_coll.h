// MPI-IO's collective data access and shared file pointers (file_coll.cc), and what they keep
// per open file. The file object, views and independent access are file.h's; this is the part
// that needs the file's whole group: two-phase collective buffering (io/coll_io.h) and the shared
// pointer (io/shared_fp.h).
#ifndef TORUSMPI_MPI_FILE_COLL_H_
#define TORUSMPI_MPI_FILE_COLL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/coll_io.h"
#include "io/shared_fp.h"
#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

class Comm;

// The collective state of one open file.
struct FileColl {
  io::CollHints hints;
  std::vector<int> aggregators;  // ranks of the file's group, from the hints and the nodes
  uint32_t calls = 0;            // collective calls so far: each one's tags
  io::SharedPointer shared;
  std::string shared_error;  // why the shared pointer is not there, when it is not
  // A split collective in flight (MPI allows one per file): its call and what _end returns.
  struct Split;
  std::unique_ptr<Split> split;

  FileColl();
  ~FileColl();
};

// Hooks the file object calls (file.cc).
// MPI_File_open, once the file is open on every rank: takes the cb hints of info, chooses the
// aggregators, makes the shared pointer (collective over comm). A failure to make the shared
// pointer is not the open's: the shared-pointer calls report it.
std::unique_ptr<FileColl> file_coll_open(Comm* comm, const std::string& path, MPI_Info info,
                                         uint64_t open_number);
// MPI_File_set_info and set_view's info: the cb hints it carries.
void file_coll_hints(FileColl* fc, Comm* comm, MPI_Info info);
// MPI_File_get_info: the hints in force.
std::vector<std::pair<std::string, std::string>> file_coll_report(const FileColl& fc);
// MPI_File_set_view, collective: the shared pointer goes back to 0 (rank 0 sets it; the view's
// own synchronization follows before any rank returns).
void file_coll_view_reset(FileColl* fc, Comm* comm);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_FILE_COLL_H_
