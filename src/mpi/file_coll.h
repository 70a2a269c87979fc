// MPI-IO's collective data access and shared file pointers (file_coll.cc), and what they keep
// per open file (File::coll_state). The file object, views and independent access are file.h's;
// this is the part that needs the file's whole group: two-phase collective buffering
// (io/coll_io.h) and the shared pointer (io/shared_fp.h).
#ifndef TORUSMPI_MPI_FILE_COLL_H_
#define TORUSMPI_MPI_FILE_COLL_H_

#include "mpi/file.h"

namespace torusmpi::mpi {

class Info;

// Hooks of the file object (file.cc, file_data.cc):
// MPI_File_open, once the file is open on every process: the collective state, the shared
// pointer's file (collective over f->comm), and the at_close hook that ends them. A shared
// pointer that cannot be made does not fail the open: the shared-pointer calls report why.
void file_coll_open(File* f);
// MPI_File_get_info: the collective-buffering hints in force (cb_buffer_size, cb_nodes,
// romio_cb_read, romio_cb_write).
void file_coll_report(File* f, Info* out);
// MPI_File_set_view, on every process before its closing barrier: the shared pointer goes back
// to 0 (rank 0 sets it).
void file_coll_view_reset(File* f);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_FILE_COLL_H_
