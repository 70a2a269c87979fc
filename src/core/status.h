// Internal status codes. Everything below src/mpi speaks Status; only src/mpi maps a Status to an
// MPI error class (it alone sees mpi.h).
#ifndef TORUSMPI_CORE_STATUS_H_
#define TORUSMPI_CORE_STATUS_H_

namespace torusmpi {

enum class Status {
  kOk = 0,
  kErrArg,          // a caller passed something invalid
  kErrNoMem,        // an allocation failed
  kErrUnsupported,  // valid, but not implemented by this build
  kErrBoot,         // the launcher/PMIx could not be used
  kErrPeerGone,     // a peer process died or closed its endpoint
  kErrTimeout,      // a peer did not answer in time
  kErrTruncate,     // a message was longer than its receive buffer
  kErrInternal,     // a bug in torusmpi
};

// A short, stable name ("peer gone") for messages.
const char* status_string(Status s);

}  // namespace torusmpi

// Evaluates expr once; on failure returns its Status from the enclosing function.
#define TORUSMPI_CHECK(expr)                                                    \
  do {                                                                          \
    ::torusmpi::Status torusmpi_check_s_ = (expr);                              \
    if (torusmpi_check_s_ != ::torusmpi::Status::kOk) return torusmpi_check_s_; \
  } while (0)

#endif  // TORUSMPI_CORE_STATUS_H_
