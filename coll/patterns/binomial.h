// Binomial trees over ranks relative to a root (v = rank - root mod p). Rank v's parent is v with
// its lowest set bit cleared; its children are v + 2^k for each 2^k below that bit (every 2^k
// for the root), and the subtree of child v + 2^k holds min(2^k, p - v - 2^k) ranks, contiguous
// in v. Children are listed largest subtree first: the order a bcast sends in and a reduce
// receives in.
//   p = 6, root 0:   0 -> 4 -> 5
//                    0 -> 2 -> 3
//                    0 -> 1
#ifndef TORUSMPI_COLL_PATTERNS_BINOMIAL_H_
#define TORUSMPI_COLL_PATTERNS_BINOMIAL_H_

#include <vector>

namespace torusmpi::coll::patterns {

struct Binomial {
  struct Child {
    int rank;     // real rank
    int vrank;    // relative to the root
    int subtree;  // ranks in its subtree: vrank .. vrank + subtree - 1
  };

  int p;
  int root;
  int vrank;
  int parent = -1;  // real rank; -1 at the root
  std::vector<Child> children;

  Binomial(int rank, int size, int root_rank) : p(size), root(root_rank) {
    vrank = (rank - root + p) % p;
    int mask = 1;
    while (mask < p && (vrank & mask) == 0) mask <<= 1;
    if (vrank != 0) parent = real(vrank - mask);
    // Below the lowest set bit (or every bit for the root), largest first.
    for (mask >>= 1; mask > 0; mask >>= 1) {
      int c = vrank + mask;
      if (c < p) children.push_back({real(c), c, mask < p - c ? mask : p - c});
    }
  }

  int real(int v) const { return (v + root) % p; }
  // Ranks in this rank's own subtree, itself included.
  int subtree() const {
    int n = 1;
    for (const Child& c : children) n += c.subtree;
    return n;
  }
};

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_BINOMIAL_H_
