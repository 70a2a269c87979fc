// Intercommunicator collectives through each group's leader (its rank 0), composed from the
// intracommunicator builders run on one group's ranks (Builder::Group):
//
//   barrier         dissemination in each group | leaders swap an empty message | dissemination
//   bcast           root -> other leader | binomial bcast in the other group
//   reduce          binomial reduce to the leader of the non-root group | leader -> root
//   allreduce       binomial reduce to each leader | leaders swap | binomial bcast in each group
//   allgather       binomial gather to each leader | leaders swap | binomial bcast in each group
//   gather          binomial gather to the leader of the non-root group | leader -> root
//   scatter         root -> other leader | binomial scatter in the other group
//   reduce_scatter  binomial reduce to each leader | leaders swap | linear scatterv in each group
//   (and _block)
//
// Costs (p: own group, q: other group; n: the bytes of the vector or of all of a group's blocks):
//   barrier    (lg p + lg q + 1) a, both groups at once: Cost = (2 lg max(p,q) + 1) a
//   bcast, scatter          Cost = (1 + lg q) a + 2 n b
//   reduce, gather          Cost = (lg q + 1) (a + n b) (+ lg q n g for reduce)
//   allreduce, allgather    Cost = (2 lg max(p,q) + 1) (a + n b) (+ lg max(p,q) n g)
//   reduce_scatter          Cost = (lg max(p,q) + 1) (a + n b) + lg max(p,q) n g + (p-1) a + n b
// Each message between the groups is one, between the two leaders, so the groups' own trees see
// only their own ranks. Restrictions: none; a group of one rank skips its tree.
//
//   p = 2 (ranks 0-1), q = 3 (ranks 2-4), allreduce:
//     step 0: 1->0  3->2 (4->2 next round)      reduce to each leader
//     step 1: 0<->2                              the leaders swap their groups' sums
//     step 2: 0->1  2->3, 2->4                    bcast in each group
#include <vector>

#include "coll/algorithms.h"
#include "coll/inter/inter.h"

namespace torusmpi::coll::inter {
namespace {

std::vector<int> own_ranks(const Sides& s) {
  std::vector<int> r(s.own_size);
  for (int i = 0; i < s.own_size; ++i) r[i] = s.own_first + i;
  return r;
}

// The Args of an intracommunicator call on this rank's own group.
Args group_args(const Args& a, const Sides& s, Coll c) {
  Args g;
  g.coll = c;
  g.rank = s.local;
  g.size = s.own_size;
  g.root = 0;
  g.commutative = a.commutative;
  g.elem = a.elem;
  return g;
}

// Runs `fn` (an intracommunicator builder) on the own group, then closes the step.
template <typename Fn>
void in_group(Builder& b, const Sides& s, const Args& g, Fn fn) {
  {
    const Builder::Group group(b, own_ranks(s));
    fn(b, g);
  }
  b.step();
}

// This group's reduction of the vector (n bytes at a.send) at its leader: where it lands there
// (the send buffer itself in a group of one).
BufRef reduce_to_leader(Builder& b, const Args& a, const Sides& s, uint64_t count) {
  if (s.own_size == 1) return a.send;
  const uint64_t n = count * a.elem;
  const BufRef sum = b.scratch(n);
  Args g = group_args(a, s, Coll::kReduce);
  g.count = count;
  g.send = a.send;
  g.recv = sum;
  in_group(b, s, g, reduce_binomial);
  return sum;
}

// This group's blocks of `block` bytes (a.send on each rank) gathered at its leader, in rank
// order.
BufRef gather_to_leader(Builder& b, const Args& a, const Sides& s, uint64_t block) {
  if (s.own_size == 1) return a.send;
  const BufRef all = b.scratch(block * s.own_size);
  Args g = group_args(a, s, Coll::kGather);
  g.elem = 1;
  g.count = block;
  g.send = a.send;
  g.recv = all;
  in_group(b, s, g, gather_binomial);
  return all;
}

// n bytes at `buf` on the leader, to every rank of the group at the same place.
void bcast_from_leader(Builder& b, const Args& a, const Sides& s, BufRef buf, uint64_t n) {
  if (s.own_size == 1) return;
  Args g = group_args(a, s, Coll::kBcast);
  g.elem = 1;
  g.count = n;
  g.recv = buf;
  in_group(b, s, g, bcast_binomial);
}

// The leaders send `out` and receive into `in` (n bytes each way).
void leaders_swap(Builder& b, const Sides& s, BufRef out, BufRef in, uint64_t n) {
  if (s.local != 0) return;
  b.send(s.other_first, out, n);
  b.recv(s.other_first, in, n);
  b.step();
}

}  // namespace

void barrier(Builder& b, const Args& a) {
  const Sides s = sides(a);
  const Args g = group_args(a, s, Coll::kBarrier);
  // Once a group's leader knows its group has entered, the leaders tell each other, and each
  // tells its group: the second round carries what the leader heard.
  in_group(b, s, g, barrier_dissemination);
  const BufRef none = b.scratch(0);
  leaders_swap(b, s, none, none, 0);
  in_group(b, s, g, barrier_dissemination);
}

void bcast(Builder& b, const Args& a) {
  if (a.root < 0) return;  // the root's group's other ranks
  const Sides s = sides(a);
  const uint64_t n = a.count;
  if (a.rank == a.root) {
    b.send(s.other_first, a.recv, n);
    return;
  }
  if (s.local == 0) {
    b.recv(a.root, a.recv, n);
    b.step();
  }
  bcast_from_leader(b, a, s, a.recv, n);
}

void reduce(Builder& b, const Args& a) {
  if (a.root < 0) return;
  const Sides s = sides(a);
  const uint64_t n = a.count * a.elem;
  if (a.rank == a.root) {
    b.recv(s.other_first, a.recv, n);
    return;
  }
  const BufRef sum = reduce_to_leader(b, a, s, a.count);
  if (s.local == 0) b.send(a.root, sum, n);
}

void allreduce(Builder& b, const Args& a) {
  const Sides s = sides(a);
  const uint64_t n = a.count * a.elem;
  const BufRef sum = reduce_to_leader(b, a, s, a.count);
  leaders_swap(b, s, sum, a.recv, n);
  bcast_from_leader(b, a, s, a.recv, n);
}

void allgather(Builder& b, const Args& a) {
  const Sides s = sides(a);
  const BufRef all = gather_to_leader(b, a, s, a.count);
  if (s.local == 0) {
    b.send(s.other_first, all, s.own_size * a.count);
    b.recv(s.other_first, a.recv, s.other_size * a.count);
    b.step();
  }
  bcast_from_leader(b, a, s, a.recv, s.other_size * a.count);
}

void gather(Builder& b, const Args& a) {
  if (a.root < 0) return;
  const Sides s = sides(a);
  if (a.rank == a.root) {
    b.recv(s.other_first, a.recv, s.other_size * a.count);
    return;
  }
  const BufRef all = gather_to_leader(b, a, s, a.count);
  if (s.local == 0) b.send(a.root, all, s.own_size * a.count);
}

void scatter(Builder& b, const Args& a) {
  if (a.root < 0) return;
  const Sides s = sides(a);
  if (a.rank == a.root) {
    b.send(s.other_first, a.send, s.other_size * a.count);
    return;
  }
  if (s.own_size == 1) {
    b.recv(a.root, a.recv, a.count);
    return;
  }
  // The group's blocks wait at the leader for the group's scatter.
  const BufRef all = b.scratch(s.own_size * a.count);
  if (s.local == 0) {
    b.recv(a.root, all, s.own_size * a.count);
    b.step();
  }
  Args g = group_args(a, s, Coll::kScatter);
  g.elem = 1;
  g.count = a.count;
  g.send = all;
  g.recv = a.recv;
  in_group(b, s, g, scatter_binomial);
}

void reduce_scatter(Builder& b, const Args& a) {
  const Sides s = sides(a);
  // The own group's counts (elements), and where each part starts in the vector.
  std::vector<size_t> counts(s.own_size), displs(s.own_size);
  size_t total = 0;
  for (int i = 0; i < s.own_size; ++i) {
    counts[i] = a.coll == Coll::kReduceScatterBlock ? a.count : a.counts[i];
    displs[i] = total;
    total += counts[i];
  }
  const uint64_t n = total * a.elem;
  const BufRef sum = reduce_to_leader(b, a, s, total);
  // The other group's sum arrives at the leader: straight into its receive buffer when it keeps
  // all of it.
  const BufRef theirs = s.own_size == 1 ? a.recv : b.scratch(n);
  leaders_swap(b, s, sum, theirs, n);
  if (s.own_size == 1) return;
  Args g = group_args(a, s, Coll::kScatterv);
  g.counts = counts.data();
  g.displs = displs.data();
  g.send = theirs;
  g.recv = a.recv;
  in_group(b, s, g, scatterv_linear);
}

}  // namespace torusmpi::coll::inter
