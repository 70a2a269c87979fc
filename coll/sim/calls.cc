#include "coll/sim/calls.h"

#include "coll/collective.h"
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
  const Collective& c = collective(s.coll);
  // Which arrays the collective's arguments need: its descriptor says.
  const CallArrays need = c.call_arrays;
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
  if (need == CallArrays::kPerRank || need == CallArrays::kPerRankAtRoot) {
    std::vector<size_t> n(p);
    for (int i = 0; i < p; ++i) n[i] = amount(s.count, i);
    displs = keep(reversed_displs(n));
    counts = keep(n);
  }

  // alltoallv/w: rank r sends m[r][j] to rank j; in place, the matrix is symmetric (each rank
  // sends back as much as it receives, from the same place).
  std::vector<const size_t*> scounts(p), sdispls(p), rcounts(p), rdispls(p);
  const bool all_to_all = need == CallArrays::kMatrix;
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
  const bool neighbors = need == CallArrays::kGraph || need == CallArrays::kGraphBlocks ||
                         need == CallArrays::kGraphLayouts;
  if (neighbors) {
    for (int r = 0; r < p; ++r) dests[r] = {(r + 1) % p, (r + 2) % p, (r + 1) % p, r};
    for (int q = p - 1; q >= 0; --q) {
      for (int d : dests[q]) sources[d].push_back(q);
    }
  }
  std::vector<const size_t*> nsc(p), nsd(p);
  if (need == CallArrays::kGraphLayouts) {
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
    // MPI_IN_PLACE where the collective has it, and the root's alone in rooted collectives.
    a.in_place = s.in_place && c.in_place() && (!c.rooted() || r == s.root);
    a.commutative = s.commutative;
    a.in_network = s.in_network;
    a.count = s.count;
    a.elem = s.elem;
    a.counts = counts;
    a.displs = displs;
    // Off the root, gatherv and scatterv know their own count only: the others read as 0, so
    // an algorithm that leans on them fails here rather than in a real run.
    if (need == CallArrays::kPerRankAtRoot && r != s.root) {
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
      a.sources = sources[r].data();
      a.indegree = static_cast<int>(sources[r].size());
      a.dests = dests[r].data();
      a.outdegree = static_cast<int>(dests[r].size());
    }
    if (need == CallArrays::kGraphBlocks || need == CallArrays::kGraphLayouts) {
      // What each source sends along its edge (count elements, or its amount for that edge),
      // laid out in reverse order with gaps, like the other vector collectives.
      std::vector<size_t> rc(a.indegree);
      for (int i = 0; i < a.indegree; ++i) {
        const int q = sources[r][i];
        const int j = collectives::dest_index(sources[r].data(), i, r, dests[q].data(),
                                              static_cast<int>(dests[q].size()));
        rc[i] = need == CallArrays::kGraphBlocks ? s.count : nsc[q][j];
      }
      if (need == CallArrays::kGraphBlocks) {
        a.displs = keep(reversed_displs(rc));
        a.counts = keep(rc);
      } else {
        a.rdispls = keep(reversed_displs(rc));
        a.rcounts = keep(rc);
        a.sdispls = nsd[r];
        a.scounts = nsc[r];
      }
    }
  }
  return call;
}

}  // namespace torusmpi::coll::sim
