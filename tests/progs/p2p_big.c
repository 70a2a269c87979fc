/* p2p_big: very large messages, between ranks 0 and 1 both ways and from each of them to itself.
 *
 *   p2p_big [MiB]     any number of ranks (ranks from 2 on only take part in the barriers);
 *                     message size in MiB, default 256 (at most 2047: counts are ints of bytes)
 *
 * Checked, one "ok/FAIL <rank> <check>" line per case, then "done <rank> ...":
 *  - Send/Recv of MPI_BYTE, 0 -> 1 then 1 -> 0;
 *  - Isend/Irecv of MPI_LONG_LONG both ways at once (Waitall);
 *  - Sendrecv_replace of MPI_DOUBLE between 0 and 1, an eighth of the size;
 *  - Isend then Recv to itself on ranks 0 and 1 (on one rank: just that);
 * each time the status (source, tag, Get_count in the type and in bytes) and every 64-bit word of
 * the data (word i = i ^ seed, a seed per message so that an old message left in a buffer shows),
 * and that 4 KiB after the receive buffer are untouched. Prints the bandwidth of each as "# ...".
 * Needs about 3 times the size in memory per active rank. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* MPICH's MPI_STATUSES_IGNORE is (MPI_Status*)1, which gcc takes for an array of size 0. */
#if defined(MPICH_VERSION) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

enum { kGuardWords = 512 };
static size_t g_words; /* of the message */

static void fill(uint64_t* p, size_t words, uint64_t seed) {
  for (size_t i = 0; i < words; ++i) p[i] = i ^ seed;
}
static void fill_guard(uint64_t* p, size_t words) {
  for (size_t i = 0; i < kGuardWords; ++i) p[words + i] = 0xA5A5A5A5A5A5A5A5ull ^ i;
}
static uint64_t seed_of(int sender, int message) {
  return ((uint64_t)(sender + 1) << 56) ^ ((uint64_t)(message + 1) << 40) ^ 0x5eed;
}

/* One check for one received message. */
static void check_message(const char* what, const uint64_t* p, size_t words, uint64_t seed,
                          const MPI_Status* st, int source, int tag, MPI_Datatype type, int count,
                          double seconds) {
  char why[400] = "";
  size_t len = 0;
  int n = -1, bytes = -1;
  MPI_Get_count(st, type, &n);
  MPI_Get_count(st, MPI_BYTE, &bytes);
  if (st->MPI_SOURCE != source || st->MPI_TAG != tag || n != count || (size_t)bytes != words * 8)
    len += (size_t)snprintf(why + len, sizeof why - len,
                            "status: source %d tag %d count %d (%d bytes), expected %d %d %d; ",
                            st->MPI_SOURCE, st->MPI_TAG, n, bytes, source, tag, count);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < words; ++i) {
    if (p[i] != (i ^ seed)) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad > 0)
    len += (size_t)snprintf(
        why + len, sizeof why - len,
        "%zu of %zu words wrong, the first is word %zu: %#llx, expected %#llx; ", bad, words, first,
        (unsigned long long)p[first], (unsigned long long)(first ^ seed));
  for (size_t i = 0; i < kGuardWords; ++i) {
    if (p[words + i] != (0xA5A5A5A5A5A5A5A5ull ^ i)) {
      snprintf(why + len, sizeof why - len, "word %zu after the buffer overwritten", i);
      break;
    }
  }
  check(why[0] == '\0', what, "%s", why);
  if (seconds > 0) printf("# %d %s: %.0f MB/s\n", g_rank, what, (double)words * 8 / seconds / 1e6);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  long mib = argc > 1 ? atol(argv[1]) : 256;
  if (mib < 1 || mib > 2047) mib = 256;
  g_words = (size_t)mib << 17;
  const int bytes = (int)(g_words * 8), longs = (int)g_words;
  int active = g_rank < 2;
  int peer = size > 1 ? 1 - g_rank : g_rank;
  uint64_t *sbuf = NULL, *rbuf = NULL;
  if (active) {
    sbuf = malloc((g_words + kGuardWords) * 8);
    rbuf = malloc((g_words + kGuardWords) * 8);
    check(sbuf != NULL && rbuf != NULL, "malloc", "no memory for 2 x %ld MiB", mib);
    if (sbuf == NULL || rbuf == NULL) active = 0;
  }
  MPI_Status st, sts[2];
  MPI_Request req[2];
  double t;

  /* Send/Recv, one way then the other. */
  if (active && size > 1) {
    for (int dir = 0; dir < 2; ++dir) {
      char what[64];
      snprintf(what, sizeof what, "send-recv-%d-to-%d", dir, 1 - dir);
      if (g_rank == dir) {
        fill(sbuf, g_words, seed_of(g_rank, dir));
        check_rc(MPI_Send(sbuf, bytes, MPI_BYTE, peer, 10 + dir, MPI_COMM_WORLD), what);
      } else {
        fill_guard(rbuf, g_words);
        memset(rbuf, 0, g_words * 8);
        t = MPI_Wtime();
        int rc = MPI_Recv(rbuf, bytes, MPI_BYTE, peer, 10 + dir, MPI_COMM_WORLD, &st);
        t = MPI_Wtime() - t;
        check_rc(rc, "recv");
        check_message(what, rbuf, g_words, seed_of(peer, dir), &st, peer, 10 + dir, MPI_BYTE, bytes,
                      t);
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* Isend/Irecv both ways at once. */
  if (active && size > 1) {
    fill(sbuf, g_words, seed_of(g_rank, 2));
    fill_guard(rbuf, g_words);
    memset(rbuf, 0, g_words * 8);
    t = MPI_Wtime();
    check_rc(MPI_Irecv(rbuf, longs, MPI_LONG_LONG, peer, 12, MPI_COMM_WORLD, &req[0]), "irecv");
    check_rc(MPI_Isend(sbuf, longs, MPI_LONG_LONG, peer, 12, MPI_COMM_WORLD, &req[1]), "isend");
    check_rc(MPI_Waitall(2, req, sts), "waitall");
    t = MPI_Wtime() - t;
    check_message("isend-irecv-both-ways", rbuf, g_words, seed_of(peer, 2), &sts[0], peer, 12,
                  MPI_LONG_LONG, longs, t);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* Sendrecv_replace: one buffer, sent and overwritten; an eighth of the size, as libraries
   * stage it through a bounce buffer in pieces (Open MPI does it at some 50 MB/s). */
  if (active && size > 1) {
    size_t words = g_words / 8;
    fill(rbuf, words, seed_of(g_rank, 3));
    fill_guard(rbuf, words);
    t = MPI_Wtime();
    check_rc(
        MPI_Sendrecv_replace(rbuf, (int)words, MPI_DOUBLE, peer, 13, peer, 13, MPI_COMM_WORLD, &st),
        "sendrecv_replace");
    t = MPI_Wtime() - t;
    check_message("sendrecv_replace", rbuf, words, seed_of(peer, 3), &st, peer, 13, MPI_DOUBLE,
                  (int)words, t);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* To itself. */
  if (active) {
    fill(sbuf, g_words, seed_of(g_rank, 4));
    fill_guard(rbuf, g_words);
    memset(rbuf, 0, g_words * 8);
    t = MPI_Wtime();
    check_rc(MPI_Isend(sbuf, bytes, MPI_BYTE, g_rank, 14, MPI_COMM_WORLD, &req[0]), "isend-self");
    int rc = MPI_Recv(rbuf, bytes, MPI_BYTE, g_rank, 14, MPI_COMM_WORLD, &st);
    check_rc(MPI_Wait(&req[0], MPI_STATUS_IGNORE), "wait-self");
    t = MPI_Wtime() - t;
    check_rc(rc, "recv-self");
    check_message("self", rbuf, g_words, seed_of(g_rank, 4), &st, g_rank, 14, MPI_BYTE, bytes, t);
  }

  free(sbuf);
  free(rbuf);
  check_rc(MPI_Finalize(), "finalize");
  return check_done(size);
}
