#include "coll/basic/basic.h"

#include <cstring>
#include <vector>

namespace torusmpi::coll::basic {
namespace {

// Tags on the collective context; one collective's messages between two ranks are matched in the
// order they were sent, so a tag per kind (and per round, for the barrier) is enough.
constexpr int kTagBarrier = 0x1000;  // + round
constexpr int kTagBcast = 0x2000;
constexpr int kTagReduce = 0x3000;

Status send(const pml::Comm& c, const void* buf, size_t bytes, int dest, int tag) {
  pml::Request req;
  TORUSMPI_CHECK(pml::isend(c, c.coll_context(), buf, bytes, dest, tag, pml::SendMode::kStandard,
                            &req));
  pml::wait(&req);
  return req.error;
}

Status recv(const pml::Comm& c, void* buf, size_t bytes, int source, int tag) {
  pml::Request req;
  TORUSMPI_CHECK(pml::irecv(c, c.coll_context(), buf, bytes, source, tag, &req));
  pml::wait(&req);
  return req.error;
}

}  // namespace

// Round k: send to rank + 2^k, receive from rank - 2^k; after ceil(log2 p) rounds every rank has
// heard, directly or not, from every other.
//   p=5, round 0: 0->1 1->2 2->3 3->4 4->0; round 1: 0->2 ...; round 2: 0->4 ...
Status barrier(const pml::Comm& c) {
  int p = c.size;
  char token = 0, got = 0;
  for (int k = 1, round = 0; k < p; k <<= 1, ++round) {
    pml::Request in, out;
    int tag = kTagBarrier + round;
    TORUSMPI_CHECK(pml::irecv(c, c.coll_context(), &got, 0, (c.rank - k + p) % p, tag, &in));
    TORUSMPI_CHECK(pml::isend(c, c.coll_context(), &token, 0, (c.rank + k) % p, tag,
                              pml::SendMode::kStandard, &out));
    pml::wait(&in);
    pml::wait(&out);
    TORUSMPI_CHECK(in.error);
  }
  return Status::kOk;
}

// Binomial tree over ranks relative to the root (v = rank - root mod p): v receives from v minus
// its lowest set bit, then sends to v + 2^j for each 2^j below that bit.
//   p=5, root 0:  0->4; 0->2; 0->1, 2->3
Status bcast(const pml::Comm& c, void* buf, size_t bytes, int root) {
  int p = c.size;
  int v = (c.rank - root + p) % p;
  int mask = 1;
  while (mask < p) {
    if (v & mask) {
      TORUSMPI_CHECK(recv(c, buf, bytes, (v - mask + root) % p, kTagBcast));
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (v + mask < p) TORUSMPI_CHECK(send(c, buf, bytes, (v + mask + root) % p, kTagBcast));
  }
  return Status::kOk;
}

// The binomial tree of bcast, run backwards: each rank combines its children's partial results
// into its own, then sends it to its parent.
Status reduce(const pml::Comm& c, const void* sendbuf, void* recvbuf, size_t count, size_t stride,
              ReduceFn fn, int root) {
  int p = c.size;
  size_t bytes = count * stride;
  int v = (c.rank - root + p) % p;
  // The root accumulates in place in recvbuf; the others in scratch.
  std::vector<uint8_t> scratch(c.rank == root ? 0 : bytes);
  uint8_t* acc = c.rank == root ? static_cast<uint8_t*>(recvbuf) : scratch.data();
  if (acc != sendbuf && bytes > 0) std::memcpy(acc, sendbuf, bytes);
  std::vector<uint8_t> incoming;
  for (int mask = 1; mask < p; mask <<= 1) {
    if (v & mask) return send(c, acc, bytes, (v - mask + root) % p, kTagReduce);
    if (v + mask < p) {
      incoming.resize(bytes);
      TORUSMPI_CHECK(recv(c, incoming.data(), bytes, (v + mask + root) % p, kTagReduce));
      fn(acc, incoming.data(), count);
    }
  }
  return Status::kOk;
}

Status allreduce(const pml::Comm& c, const void* sendbuf, void* recvbuf, size_t count,
                 size_t stride, ReduceFn fn) {
  TORUSMPI_CHECK(reduce(c, sendbuf, recvbuf, count, stride, fn, 0));
  return bcast(c, recvbuf, count * stride, 0);
}

}  // namespace torusmpi::coll::basic
