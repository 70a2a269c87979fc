#include "core/status.h"

namespace torusmpi {

const char* status_string(Status s) {
  switch (s) {
    case Status::kOk:
      return "success";
    case Status::kErrArg:
      return "invalid argument";
    case Status::kErrNoMem:
      return "out of memory";
    case Status::kErrUnsupported:
      return "not supported";
    case Status::kErrBoot:
      return "bootstrap failed";
    case Status::kErrPeerGone:
      return "peer gone";
    case Status::kErrTimeout:
      return "timed out";
    case Status::kErrTruncate:
      return "message truncated";
    case Status::kErrInternal:
      return "internal error";
  }
  return "unknown status";
}

}  // namespace torusmpi
