// torusmpi.h's question about the collectives: which algorithm a communicator's last collective
// ran. Benchmarks print it beside their timings (osu/ with -a), so a table says what was measured.
#include "coll/select/registry.h"
#include "mpi/errors.h"
#include "mpi/runtime.h"

// Exported (exports.map: torusmpi_*) from a library built with hidden visibility.
#pragma GCC visibility push(default)
#include "core/progress.h"
#include "include/torusmpi.h"
#pragma GCC visibility pop

extern "C" int torusmpi_coll_algorithm(MPI_Comm comm, char* token, int len) {
  torusmpi::progress::Lock lock;
  using torusmpi::mpi::raise_error;
  constexpr const char* kFn = "torusmpi_coll_algorithm";
  if (int err = torusmpi::mpi::require_active(kFn)) return err;
  torusmpi::mpi::Comm* c = torusmpi::mpi::comm_impl(comm);
  if (c == nullptr)
    return raise_error(nullptr, MPI_ERR_COMM, kFn, "comm argument is not a communicator");
  if (token == nullptr || len < 1)
    return raise_error(comm, MPI_ERR_ARG, kFn, "token argument is NULL or len (%d) is below 1",
                       len);
  const torusmpi::coll::Algorithm* alg = c->team.last_algorithm();
  std::string text =
      alg == nullptr ? "" : std::string(torusmpi::coll::coll_name(alg->coll)) + "/" + alg->token;
  torusmpi::mpi::copy_out(text, token, len);
  return MPI_SUCCESS;
}
