// A small stand-in for the algorithm registry (coll/select/registry.cc, coll/coll.cc) for
// rules_fuzz: the rule file and range parsers need collective names and algorithm tokens only,
// and the real registry pulls in every algorithm of coll/ (minutes to build with sanitizers).
// The names are the real ones; each collective has the tokens below.
#include <cstring>
#include <string>
#include <vector>

#include "coll/coll.h"
#include "coll/select/registry.h"

namespace torusmpi::coll {
namespace {

// In Coll order (coll/coll.h).
const char* const kNames[] = {"barrier",
                              "bcast",
                              "reduce",
                              "allreduce",
                              "allgather",
                              "allgatherv",
                              "reduce_scatter",
                              "reduce_scatter_block",
                              "alltoall",
                              "alltoallv",
                              "alltoallw",
                              "gather",
                              "gatherv",
                              "scatter",
                              "scatterv",
                              "scan",
                              "exscan",
                              "neighbor_allgather",
                              "neighbor_allgatherv",
                              "neighbor_alltoall",
                              "neighbor_alltoallv",
                              "neighbor_alltoallw"};
static_assert(sizeof kNames / sizeof kNames[0] == kCollCount, "one name per collective");

const char* const kTokens[] = {"linear", "ring", "recursive_doubling", "binomial", "torus_ring"};

}  // namespace

const char* coll_name(Coll c) {
  const int i = static_cast<int>(c);
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

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> all = [] {
    std::vector<Algorithm> v;
    for (int i = 0; i < kCollCount; ++i) {
      for (const char* t : kTokens) {
        v.push_back(Algorithm{static_cast<Coll>(i), t, nullptr, 0, "", nullptr, ""});
      }
    }
    return v;
  }();
  return all;
}

const Algorithm* find_algorithm(Coll c, const std::string& token) {
  for (const Algorithm& a : algorithms()) {
    if (a.coll == c && token == a.token) return &a;
  }
  return nullptr;
}

const Algorithm& fallback(Coll c) { return *find_algorithm(c, "linear"); }
bool supports(const Algorithm&, const Args&, std::string*) { return true; }
bool runs_forced(const Algorithm&, const Args&, std::string*) { return true; }
size_t selection_bytes(const Args&) { return 0; }

}  // namespace torusmpi::coll
