// Powers of two, and the fold that lets power-of-two algorithms (recursive doubling and halving)
// run on any number of ranks, as MPICH does: with p = p2 + extra (p2 the largest power of two
// <= p), the first 2*extra ranks pair up, even with odd; each even rank hands its data to its odd
// neighbour and sits out; the p2 ranks left take part under new ranks 0..p2-1, in rank order.
//   p = 6 (p2 4, extra 2):  rank   0  1  2  3  4  5
//                           folded -  0  -  1  2  3
#ifndef TORUSMPI_COLL_PATTERNS_POW2_H_
#define TORUSMPI_COLL_PATTERNS_POW2_H_

namespace torusmpi::coll::patterns {

inline bool is_pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

// The largest power of two <= n (n >= 1).
inline int floor_pow2(int n) {
  int p = 1;
  while (p <= n / 2) p *= 2;
  return p;
}

// ceil(log2(n)) for n >= 1.
inline int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

struct Fold {
  int p2 = 1;       // ranks that take part after the fold
  int extra = 0;    // ranks that sit out (p - p2)
  int folded = -1;  // this rank's new rank, or -1 if it sits out

  Fold(int rank, int p) : p2(floor_pow2(p)), extra(p - floor_pow2(p)) {
    if (rank < 2 * extra) {
      folded = rank % 2 == 1 ? rank / 2 : -1;
    } else {
      folded = rank - extra;
    }
  }
  // The rank behind new rank f.
  int unfold(int f) const { return f < extra ? 2 * f + 1 : f + extra; }
  bool sits_out() const { return folded < 0; }
};

}  // namespace torusmpi::coll::patterns

#endif  // TORUSMPI_COLL_PATTERNS_POW2_H_
