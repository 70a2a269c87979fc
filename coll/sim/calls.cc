#include "coll/sim/calls.h"

#include "coll/select/select.h"

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
  call->arrays.reserve(4 + 9 * static_cast<size_t>(p));
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

  // Neighbourhood collectives: a multigraph with repeated edges and self-loops; rank r sends to
  // r+1, r+2, r+1 again and itself, and lists its sources from the highest rank down.
  std::vector<std::vector<int>>& dests = call->dests;
  std::vector<std::vector<int>>& sources = call->sources;
  dests.resize(p);
  sources.resize(p);
  const bool neighbors = coll_neighbor(s.coll);
  if (neighbors) {
    for (int r = 0; r < p; ++r) dests[r] = {(r + 1) % p, (r + 2) % p, (r + 1) % p, r};
    for (int q = p - 1; q >= 0; --q) {
      for (int d : dests[q]) sources[d].push_back(q);
    }
  }
  std::vector<const size_t*> nsc(p), nsd(p);
  if (neighbors) {
    for (int r = 0; r < p; ++r) {
      // Per edge j of r: amount(count, r + 2j), placed in order with gaps.
      std::vector<size_t> sc(dests[r].size()), sd(dests[r].size());
      size_t at = 0;
      for (size_t j = 0; j < sc.size(); ++j) {
        sc[j] = amount(s.count, r + 2 * static_cast<int>(j));
        sd[j] = at;
        at += sc[j] + j % 2;
      }
      nsd[r] = keep(sd);
      nsc[r] = keep(sc);
    }
  }

  const bool placed = s.machine != nullptr && (s.machine->emulated() || s.machine->instances > 1);
  if (placed) {
    std::vector<int> job_ranks(p);
    for (int r = 0; r < p; ++r) job_ranks[r] = r;
    call->view = topo_view(*s.machine, job_ranks);
  }

  call->args.resize(p);
  for (int r = 0; r < p; ++r) {
    Args& a = call->args[r];
    a.topo = placed ? &call->view : nullptr;
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
    if (neighbors) {
      a.in_place = false;  // MPI has no in-place neighbourhood collectives
      a.sources = sources[r].data();
      a.indegree = static_cast<int>(sources[r].size());
      a.dests = dests[r].data();
      a.outdegree = static_cast<int>(dests[r].size());
      // What each source sends along the edge: the receive layout follows it.
      std::vector<size_t> rc(a.indegree), rd(a.indegree);
      size_t at = 0;
      for (int i = 0; i < a.indegree; ++i) {
        const int q = sources[r][i];
        int k = 0;
        for (int x = 0; x < i; ++x) k += sources[r][x] == q;
        size_t j = 0;
        for (int seen = 0; j < dests[q].size(); ++j) {
          if (dests[q][j] == r && seen++ == k) break;
        }
        rc[i] = s.coll == Coll::kNeighborAllgatherv ? s.count : nsc[q][j];
      }
      // Blocks in reverse order with a gap after each, like the other vector collectives.
      for (int i = a.indegree - 1; i >= 0; --i) {
        rd[i] = at;
        at += rc[i] + i % 2;
      }
      if (s.coll == Coll::kNeighborAllgatherv) {
        a.displs = keep(rd);
        a.counts = keep(rc);
      } else {
        a.rdispls = keep(rd);
        a.rcounts = keep(rc);
        a.sdispls = nsd[r];
        a.scounts = nsc[r];
      }
    }
  }
  return call;
}

}  // namespace torusmpi::coll::sim
