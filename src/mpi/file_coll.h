// MPI-IO's collective data access and shared file pointers (file_coll.cc), and what they keep
// per open file (File::coll_state). The file object, views and independent access are file.h's;
// this is the part that needs the file's whole group: two-phase collective buffering
// (io/coll_io.h) and the shared pointer (io/shared_fp.h).
#ifndef TORUSMPI_MPI_FILE_COLL_H_
#define TORUSMPI_MPI_FILE_COLL_H_

#include "mpi/file.h"

namespace torusmpi::mpi {

// The hook of the file object (file.cc): MPI_File_open, once the file is open on every process,
// calls it for the collective state (File::coll_state), the shared pointer's file (collective
// over f->comm), and the hooks that keep them: at_set_view (the shared pointer back to 0, the
// hints in force into f->info) and at_close (the shared pointer's file closed). A shared pointer
// that cannot be made does not fail the open: the shared-pointer calls report why. The cb hints
// in force (cb_buffer_size, cb_nodes as the aggregators' number, romio_cb_read/write) are set in
// f->info, which MPI_File_get_info reports.
void file_coll_open(File* f);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_FILE_COLL_H_
