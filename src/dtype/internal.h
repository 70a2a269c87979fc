// What the engine's files share and its users do not need.
#ifndef TORUSMPI_DTYPE_INTERNAL_H_
#define TORUSMPI_DTYPE_INTERNAL_H_

#include <vector>

#include "dtype/dtype.h"

namespace torusmpi::dtype {

// The single node for n passes over program p (non-empty) at `stride` bytes: a merged block or
// loop when p's regularity allows, else a loop over p.
Node repeat(const ProgramRef& p, int64_t n, int64_t stride);

// `blocklen` consecutive copies of `type` from disp, that `count` times at `stride` bytes.
struct Copies {
  TypeRef type;
  int64_t count = 1;
  int64_t blocklen = 1;
  int64_t stride = 0;
  int64_t disp = 0;
};

// The type made of these copies, in this order (nullptr on overflow).
TypeRef build_copies(const std::vector<Copies>& copies);

}  // namespace torusmpi::dtype

#endif  // TORUSMPI_DTYPE_INTERNAL_H_
