// torusmpi.torch._C: what the Python package (torusmpi/torch/__init__.py) registers with
// torch.distributed. Groups and the store are handed out as torch's own ProcessGroup and Store
// types, so torch calls them like its built-in ones.
#include <torch/csrc/utils/pybind.h>

#include <cstdio>

#include "backend.h"
#include "store.h"

namespace {

namespace pt = torusmpi::pt;

c10::intrusive_ptr<c10d::ProcessGroup> make_group(const std::vector<int64_t>& ranks, int rank,
                                                  int size, double timeout_seconds) {
  return c10::make_intrusive<pt::ProcessGroup>(
      ranks, rank, size, std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000)));
}

std::pair<int, int> world() {
  pt::ensure_mpi();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return {rank, size};
}

bool mpi_running() {
  int init = 0, fini = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fini);
  return init && !fini;
}

// An uncaught exception on one rank ends every rank, with the reason said first.
void abort_job(int code, const std::string& why) {
  if (!mpi_running()) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "torusmpi.torch: rank %d: %s; ending the job (MPI_Abort)\n", rank,
               why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
}

// At interpreter exit: the completion thread, the store's server, then MPI, if this module
// started it.
void finalize() {
  if (!mpi_running()) return;
  pt::Completer::get().stop();
  pt::shutdown_store();
  if (pt::mpi_is_ours()) MPI_Finalize();
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "torusmpi's torch.distributed backend (the C++ half of torusmpi.torch)";
  m.def("ProcessGroup", &make_group, py::arg("ranks"), py::arg("rank"), py::arg("size"),
        py::arg("timeout"), py::call_guard<py::gil_scoped_release>(),
        "A process group over the given world ranks (all of them when empty).");
  m.def("world_store", &pt::world_store, py::call_guard<py::gil_scoped_release>(),
        "The job's store, served over MPI by world rank 0 (collective on first call).");
  m.def("world", &world, py::call_guard<py::gil_scoped_release>(),
        "(rank, size) in MPI_COMM_WORLD, initializing MPI if needed.");
  m.def("mpi_running", &mpi_running, "Whether MPI is initialized and not finalized.");
  m.def("abort", &abort_job, py::arg("code"), py::arg("why"),
        py::call_guard<py::gil_scoped_release>(), "MPI_Abort after a line naming why.");
  m.def("finalize", &finalize, py::call_guard<py::gil_scoped_release>(),
        "Stops the backend's threads and MPI; registered with atexit.");
}
