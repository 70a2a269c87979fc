#include "coll/sim/calls.h"

namespace torusmpi::coll::sim {
namespace {

// Per-rank amounts around `count`: uneven, some zero when count is small.
//   count 4, p 5: 2 4 6 2 4
size_t amount(size_t count, int i) { return count * (i % 3 + 1) / 2; }

// Displacements for amounts n[i], laid out in reverse rank order with a gap of (i % 2) after
// each, so that blocks are neither in order nor packed.
std::vector<size_t> reversed_displs(const std::vector<size_t>& n) {
  std::vector<size_t> d(n.size());
  size_t at = 0;
  for (size_t k = n.size(); k-- > 0;) {
    d[k] = at;
    at += n[k] + k % 2;
  }
  return d;
}

}  // namespace

std::unique_ptr<Call> make_call(const CallShape& s) {
  auto call = std::make_unique<Call>();
  call->shape = s;
  const int p = s.size;
  // Each array is stored once; the pointers stay valid as the outer vector only grows to a size
  // reserved in advance.
  call->arrays.reserve(4 + 5 * static_cast<size_t>(p));
  auto keep = [&](std::vector<size_t> v) -> const size_t* {
    call->arrays.push_back(std::move(v));
    return call->arrays.back().data();
  };

  const size_t* counts = nullptr;
  const size_t* displs = nullptr;
  if (s.coll == Coll::kAllgatherv || s.coll == Coll::kGatherv || s.coll == Coll::kScatterv ||
      s.coll == Coll::kReduceScatter) {
    std::vector<size_t> n(p);
    for (int i = 0; i < p; ++i) n[i] = amount(s.count, i);
    displs = keep(reversed_displs(n));
    counts = keep(n);
  }

  // alltoallv/w: rank r sends m[r][j] to rank j; in place, the matrix is symmetric (each rank
  // sends back as much as it receives, from the same place).
  std::vector<const size_t*> scounts(p), sdispls(p), rcounts(p), rdispls(p);
  bool all_to_all = s.coll == Coll::kAlltoallv || s.coll == Coll::kAlltoallw;
  if (all_to_all) {
    auto m = [&](int r, int j) {
      return s.in_place ? amount(s.count, r + j) : amount(s.count, r + 2 * j);
    };
    for (int r = 0; r < p; ++r) {
      std::vector<size_t> sc(p), rc(p);
      for (int j = 0; j < p; ++j) {
        sc[j] = m(r, j);
        rc[j] = m(j, r);
      }
      rdispls[r] = keep(reversed_displs(rc));
      rcounts[r] = keep(rc);
      if (s.in_place) {
        sdispls[r] = rdispls[r];
        scounts[r] = rcounts[r];
      } else {
        std::vector<size_t> sd(p);
        size_t at = 0;
        for (int j = 0; j < p; ++j) sd[j] = at, at += sc[j] + (j % 3 == 0);
        sdispls[r] = keep(sd);
        scounts[r] = keep(sc);
      }
    }
    call->peer_scounts = scounts;
    call->peer_sdispls = sdispls;
  }

  call->args.resize(p);
  for (int r = 0; r < p; ++r) {
    Args& a = call->args[r];
    a.coll = s.coll;
    a.rank = r;
    a.size = p;
    a.root = s.root;
    // MPI_IN_PLACE is the root's alone in rooted collectives.
    a.in_place = s.in_place && (!coll_rooted(s.coll) || r == s.root);
    a.commutative = s.commutative;
    a.count = s.count;
    a.elem = s.elem;
    a.counts = counts;
    a.displs = displs;
    // Off the root, gatherv and scatterv know their own count only: the others read as 0, so
    // an algorithm that leans on them fails here rather than in a real run.
    if ((s.coll == Coll::kGatherv || s.coll == Coll::kScatterv) && r != s.root) {
      std::vector<size_t> own(p, 0);
      own[r] = counts[r];
      a.counts = keep(own);
      a.displs = nullptr;
    }
    if (all_to_all) {
      a.scounts = scounts[r];
      a.sdispls = sdispls[r];
      a.rcounts = rcounts[r];
      a.rdispls = rdispls[r];
      a.peer_scounts = call->peer_scounts.data();
      a.peer_sdispls = call->peer_sdispls.data();
    }
  }
  return call;
}

}  // namespace torusmpi::coll::sim
