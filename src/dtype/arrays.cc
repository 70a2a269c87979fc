// Subarrays and distributed arrays, built dimension by dimension from the fastest-varying one out,
// each dimension's type resized to the whole dimension so the next one steps over it.
#include <cstdio>

#include "dtype/internal.h"

namespace torusmpi::dtype {
namespace {

// The i-th fastest-varying dimension.
size_t fastest(size_t i, size_t ndims, Order order) {
  return order == Order::kC ? ndims - 1 - i : i;
}

bool checked_mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

}  // namespace

TypeRef subarray(const std::vector<int64_t>& sizes, const std::vector<int64_t>& subsizes,
                 const std::vector<int64_t>& starts, Order order, const TypeRef& old) {
  const size_t ndims = sizes.size();
  size_t d = fastest(0, ndims, order);
  TypeRef t = contiguous(subsizes[d], old);
  int64_t stride, disp;  // bytes between consecutive indices of the next dimension; first element
  if (t == nullptr || !checked_mul(sizes[d], old->extent(), &stride) ||
      !checked_mul(starts[d], old->extent(), &disp)) {
    return nullptr;
  }
  for (size_t i = 1; i < ndims; ++i) {
    d = fastest(i, ndims, order);
    t = hvector(subsizes[d], 1, stride, t);
    int64_t offset;
    if (t == nullptr || !checked_mul(starts[d], stride, &offset) ||
        __builtin_add_overflow(disp, offset, &disp) || !checked_mul(stride, sizes[d], &stride)) {
      return nullptr;
    }
  }
  t = build_copies({Copies{t, 1, 1, 0, disp}});
  return t == nullptr ? nullptr : resized(t, 0, stride);
}

TypeRef darray(int rank, const std::vector<int64_t>& gsizes,
               const std::vector<Distribution>& distribs, const std::vector<int64_t>& dargs,
               const std::vector<int64_t>& psizes, Order order, const TypeRef& old) {
  const size_t ndims = gsizes.size();
  // The process grid is row major whatever the array's order.
  std::vector<int64_t> coords(ndims);
  for (size_t i = ndims; i-- > 0;) {
    coords[i] = rank % psizes[i];
    rank = static_cast<int>(rank / psizes[i]);
  }
  TypeRef t = old;
  int64_t extent = old->extent();  // of one index of the current dimension
  for (size_t i = 0; i < ndims && t != nullptr; ++i) {
    const size_t d = fastest(i, ndims, order);
    const int64_t g = gsizes[d], p = psizes[d], c = coords[d];
    std::vector<Copies> parts;
    switch (distribs[d]) {
      case Distribution::kNone:
        parts.push_back(Copies{t, 1, g, 0, 0});
        break;
      case Distribution::kBlock: {
        int64_t b = dargs[d] == kDefaultDarg ? (g + p - 1) / p : dargs[d];
        int64_t first = c * b;
        if (first < g) parts.push_back(Copies{t, 1, std::min(b, g - first), 0, first * extent});
        break;
      }
      case Distribution::kCyclic: {
        // Blocks of b indices at (c + k p) b: the whole ones as a vector, then a partial one.
        int64_t b = dargs[d] == kDefaultDarg ? 1 : dargs[d];
        int64_t whole = g - b - c * b >= 0 ? (g - b - c * b) / (p * b) + 1 : 0;
        if (whole > 0) parts.push_back(Copies{t, whole, b, p * b * extent, c * b * extent});
        int64_t last = (c + whole * p) * b;
        if (last < g) parts.push_back(Copies{t, 1, g - last, 0, last * extent});
        break;
      }
    }
    t = build_copies(parts);
    int64_t dim_extent;
    if (t == nullptr || !checked_mul(g, extent, &dim_extent)) return nullptr;
    t = resized(t, 0, dim_extent);
    extent = dim_extent;
  }
  return t;
}

std::string darray_error(int size, int rank, const std::vector<int64_t>& gsizes,
                         const std::vector<Distribution>& distribs,
                         const std::vector<int64_t>& dargs, const std::vector<int64_t>& psizes) {
  char buf[256];
  if (size <= 0) {
    std::snprintf(buf, sizeof buf, "size argument is %d", size);
    return buf;
  }
  if (rank < 0 || rank >= size) {
    std::snprintf(buf, sizeof buf, "rank argument is %d, not in [0, %d)", rank, size);
    return buf;
  }
  int64_t processes = 1;
  for (size_t i = 0; i < gsizes.size(); ++i) {
    const long long g = gsizes[i], p = psizes[i], darg = dargs[i];
    if (g <= 0) {
      std::snprintf(buf, sizeof buf, "gsizes[%zu] is %lld: must be positive", i, g);
      return buf;
    }
    if (p <= 0) {
      std::snprintf(buf, sizeof buf, "psizes[%zu] is %lld: must be positive", i, p);
      return buf;
    }
    if (distribs[i] == Distribution::kNone && p != 1) {
      std::snprintf(buf, sizeof buf,
                    "psizes[%zu] is %lld: a dimension with MPI_DISTRIBUTE_NONE is not "
                    "distributed, its psize must be 1",
                    i, p);
      return buf;
    }
    if (distribs[i] != Distribution::kNone && darg != kDefaultDarg && darg <= 0) {
      std::snprintf(buf, sizeof buf,
                    "dargs[%zu] is %lld: must be positive or MPI_DISTRIBUTE_DFLT_DARG", i, darg);
      return buf;
    }
    if (distribs[i] == Distribution::kBlock && darg != kDefaultDarg && darg * p < g) {
      std::snprintf(buf, sizeof buf,
                    "dargs[%zu] is %lld: %lld blocks of %lld cover %lld of gsizes[%zu] = %lld", i,
                    darg, p, darg, darg * p, i, g);
      return buf;
    }
    if (__builtin_mul_overflow(processes, psizes[i], &processes)) processes = -1;
  }
  if (processes != size) {
    std::snprintf(buf, sizeof buf, "the product of psizes is %lld, not size = %d",
                  static_cast<long long>(processes), size);
    return buf;
  }
  return std::string();
}

}  // namespace torusmpi::dtype
