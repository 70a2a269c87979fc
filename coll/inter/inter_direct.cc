// Intercommunicator collectives whose blocks belong to pairs of ranks: every pair of a rank of one
// group and a rank of the other exchanges its own block directly, all in one step (receives
// posted first, so no send waits on a receive that is not there).
//
//   alltoall, alltoallv, alltoallw   block j of a rank's send goes to rank j of the other group
//   allgatherv                       a rank's one block goes to every rank of the other group
//   gatherv, scatterv                between the root and each rank of the other group
//
// Cost = q a + n b per rank (q: the other group's size; n: the bytes the rank sends or receives,
// whichever is more): p q messages in all, each block on the wire once. Latency grows with q, but
// the blocks have per-pair sizes a tree could only forward; a rank that has nothing for a peer
// still sends it an empty message, which keeps every pair's messages in step whatever the counts.
// Restrictions: none.
//
//   p = 2 (ranks 0-1), q = 3 (ranks 2-4), alltoall: one step,
//     0 -> 2, 3, 4    1 -> 2, 3, 4    2 -> 0, 1    3 -> 0, 1    4 -> 0, 1
#include "coll/inter/inter.h"

namespace torusmpi::coll::inter {

void alltoall(Builder& b, const Args& a) {
  const Sides s = sides(a);
  const uint64_t n = a.count;
  for (int j = 0; j < s.other_size; ++j) b.recv(s.other_first + j, a.recv + j * n, n);
  for (int j = 0; j < s.other_size; ++j) b.send(s.other_first + j, a.send + j * n, n);
  b.step();
}

void alltoallv(Builder& b, const Args& a) {
  const Sides s = sides(a);
  for (int j = 0; j < s.other_size; ++j) {
    b.recv(s.other_first + j, a.recv + a.rdispls[j], a.rcounts[j]);
  }
  for (int j = 0; j < s.other_size; ++j) {
    b.send(s.other_first + j, a.send + a.sdispls[j], a.scounts[j]);
  }
  b.step();
}

void allgatherv(Builder& b, const Args& a) {
  const Sides s = sides(a);
  for (int j = 0; j < s.other_size; ++j) {
    b.recv(s.other_first + j, a.recv + a.displs[j], a.counts[j]);
  }
  for (int j = 0; j < s.other_size; ++j) b.send(s.other_first + j, a.send, a.count);
  b.step();
}

void gatherv(Builder& b, const Args& a) {
  if (a.root < 0) return;
  const Sides s = sides(a);
  if (a.rank == a.root) {
    for (int j = 0; j < s.other_size; ++j) {
      b.recv(s.other_first + j, a.recv + a.displs[j], a.counts[j]);
    }
  } else {
    b.send(a.root, a.send, a.count);
  }
  b.step();
}

void scatterv(Builder& b, const Args& a) {
  if (a.root < 0) return;
  const Sides s = sides(a);
  if (a.rank == a.root) {
    for (int j = 0; j < s.other_size; ++j) {
      b.send(s.other_first + j, a.send + a.displs[j], a.counts[j]);
    }
  } else {
    b.recv(a.root, a.recv, a.count);
  }
  b.step();
}

}  // namespace torusmpi::coll::inter
