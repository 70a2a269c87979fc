#include "coll/coll.h"

#include <cstring>

namespace torusmpi::coll {
namespace {

constexpr const char* kNames[kCollCount] = {
    "barrier",   "bcast",     "reduce",    "allreduce",      "allgather",
    "allgatherv", "reduce_scatter", "reduce_scatter_block", "alltoall", "alltoallv",
    "alltoallw", "gather",    "gatherv",   "scatter",        "scatterv",
    "scan",      "exscan",    "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
    "neighbor_alltoallv", "neighbor_alltoallw",
};

}  // namespace

const char* coll_name(Coll c) {
  int i = static_cast<int>(c);
  return i >= 0 && i < kCollCount ? kNames[i] : "?";
}

bool coll_from_name(const char* name, Coll* out) {
  for (int i = 0; i < kCollCount; ++i) {
    if (std::strcmp(name, kNames[i]) == 0) {
      *out = static_cast<Coll>(i);
      return true;
    }
  }
  return false;
}

bool coll_reduces(Coll c) {
  switch (c) {
    case Coll::kReduce:
    case Coll::kAllreduce:
    case Coll::kReduceScatter:
    case Coll::kReduceScatterBlock:
    case Coll::kScan:
    case Coll::kExscan:
      return true;
    default:
      return false;
  }
}

bool coll_rooted(Coll c) {
  switch (c) {
    case Coll::kBcast:
    case Coll::kReduce:
    case Coll::kGather:
    case Coll::kGatherv:
    case Coll::kScatter:
    case Coll::kScatterv:
      return true;
    default:
      return false;
  }
}

bool coll_vector(Coll c) {
  switch (c) {
    case Coll::kAllgatherv:
    case Coll::kReduceScatter:
    case Coll::kAlltoallv:
    case Coll::kAlltoallw:
    case Coll::kGatherv:
    case Coll::kScatterv:
    case Coll::kNeighborAllgatherv:
    case Coll::kNeighborAlltoallv:
    case Coll::kNeighborAlltoallw:
      return true;
    default:
      return false;
  }
}

bool coll_neighbor(Coll c) {
  switch (c) {
    case Coll::kNeighborAllgather:
    case Coll::kNeighborAllgatherv:
    case Coll::kNeighborAlltoall:
    case Coll::kNeighborAlltoallv:
    case Coll::kNeighborAlltoallw:
      return true;
    default:
      return false;
  }
}

}  // namespace torusmpi::coll
