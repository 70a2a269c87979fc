/* p2p_order: MPI's matching order. On MPI_COMM_WORLD as a ring (send to rank+1, receive from
 * rank-1; one rank talks to itself) unless said otherwise.
 *
 *   p2p_order [outstanding]     any number of ranks; outstanding requests per rank, default 10000
 *
 * Checked, one "ok/FAIL <rank> <check>" line per case, then "done <rank> ...":
 *  - non-overtaking from one sender: small (eager) and large (rendezvous) messages interleaved,
 *    received with a specific source, MPI_ANY_SOURCE, MPI_ANY_TAG (tags then vary) and both;
 *    receives posted while the sends go, after every send is posted, or before any, and sends of
 *    mixed modes (Isend, Issend, Ibsend) in one sequence;
 *  - wildcards with several senders: every rank in turn receives from all (itself included) with
 *    MPI_ANY_SOURCE and MPI_ANY_TAG, blocking or pre-posted: every message exactly once, each
 *    sender's in its order;
 *  - thousands of outstanding Isend/Irecv (1 in 100 large): receives posted before the sends,
 *    after them, or half and half, completed with Waitall, Testall or Waitsome; receive i gets
 *    message i;
 *  - tags out of order: tag 3 received before tag 1, both sent; receives posted in the other
 *    order than the sends; the earliest posted matching receive wins (MPI_ANY_SOURCE before a
 *    specific source, then MPI_ANY_TAG).
 * MPI_ERRORS_RETURN is set so that a failing call is reported, not fatal. */
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

static int g_size, g_left, g_right;

/* Problems of one case, gathered into one check line. */
static char g_why[1024];
static void why(const char* fmt, ...) {
  size_t len = strlen(g_why);
  if (len + 2 >= sizeof g_why) return;
  if (len > 0) g_why[len++] = ';', g_why[len++] = ' ';
  g_why[len] = '\0';
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_why + len, sizeof g_why - len, fmt, ap);
  va_end(ap);
}
static void begin(void) { g_why[0] = '\0'; }
static void end(const char* fmt, ...) {
  char what[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  check(g_why[0] == '\0', what, "%s", g_why);
}
static void rc_ok(int rc, const char* call) {
  if (rc != MPI_SUCCESS) why("%s returned %d", call, rc);
}
/* Whether a polling loop goes on: not done yet, no call of the case failed, under 30 s. */
static int polling(int done, double t0) {
  return !done && g_why[0] == '\0' && MPI_Wtime() - t0 < 30;
}

/* A message: a header saying who sent it and its sequence number, then words that depend on
 * both, so that a message delivered into the wrong receive or half of one shows. */
typedef struct {
  int sender, seq;
} Header;
static void make_message(int* buf, int words, int sender, int seq) {
  Header h = {sender, seq};
  memcpy(buf, &h, sizeof h);
  for (int i = 2; i < words; ++i) buf[i] = sender * 1000003 + seq * 7919 + i;
}
/* Checks a received message against its own header; returns the header ({-1, -1} if too short). */
static Header read_message(const int* buf, int words) {
  Header h = {-1, -1};
  if (words < 2) {
    why("message of %d words", words);
    return h;
  }
  memcpy(&h, buf, sizeof h);
  for (int i = 2; i < words; ++i) {
    if (buf[i] != h.sender * 1000003 + h.seq * 7919 + i) {
      why("message %d from %d: word %d of %d is %d", h.seq, h.sender, i, words, buf[i]);
      break;
    }
  }
  return h;
}
static int words_of(const MPI_Status* st) {
  int count = -1;
  MPI_Get_count(st, MPI_INT, &count);
  return count;
}

/* --- One sender, mixed sizes ------------------------------------------------------------------ */
enum { kSeq = 48, kLargeWords = 20000 };
/* Odd messages large (rendezvous under any usual eager limit), even ones small. */
static int seq_words(int k) { return k % 2 ? kLargeWords + k : 2 + k; }

enum Post { kWhileSending, kAfterSends, kBeforeSends };
static const char* const kPostName[] = {"while-sending", "after-sends", "before-sends"};

/* left -> me, kSeq messages; the receiver uses src and tag (MPI_ANY_TAG: the sender's tags
 * vary). */
static void one_sender(int src, int tag_any, int post, int mixed_modes) {
  static int sbuf[kSeq][kLargeWords + kSeq], rbuf[kSeq][kLargeWords + kSeq];
  MPI_Request sreq[kSeq], rreq[kSeq];
  MPI_Status st[kSeq];
  const int base = 100;
  begin();
  for (int k = 0; k < kSeq; ++k) make_message(sbuf[k], seq_words(k), g_rank, k);
  memset(rbuf, 0, sizeof rbuf);
  if (post == kBeforeSends) {
    for (int k = 0; k < kSeq; ++k)
      rc_ok(MPI_Irecv(rbuf[k], kLargeWords + kSeq, MPI_INT, src, tag_any ? MPI_ANY_TAG : base,
                      MPI_COMM_WORLD, &rreq[k]),
            "Irecv");
    MPI_Barrier(MPI_COMM_WORLD);
  }
  for (int k = 0; k < kSeq; ++k) {
    int tag = tag_any ? base + k % 3 : base;
    int mode = mixed_modes ? k % 3 : 0;
    if (mode == 0)
      rc_ok(MPI_Isend(sbuf[k], seq_words(k), MPI_INT, g_right, tag, MPI_COMM_WORLD, &sreq[k]),
            "Isend");
    if (mode == 1)
      rc_ok(MPI_Issend(sbuf[k], seq_words(k), MPI_INT, g_right, tag, MPI_COMM_WORLD, &sreq[k]),
            "Issend");
    if (mode == 2)
      rc_ok(MPI_Ibsend(sbuf[k], seq_words(k), MPI_INT, g_right, tag, MPI_COMM_WORLD, &sreq[k]),
            "Ibsend");
  }
  if (post == kAfterSends) MPI_Barrier(MPI_COMM_WORLD);
  if (post == kBeforeSends) {
    rc_ok(MPI_Waitall(kSeq, rreq, st), "Waitall(recv)");
  } else {
    for (int k = 0; k < kSeq; ++k)
      rc_ok(MPI_Recv(rbuf[k], kLargeWords + kSeq, MPI_INT, src, tag_any ? MPI_ANY_TAG : base,
                     MPI_COMM_WORLD, &st[k]),
            "Recv");
  }
  rc_ok(MPI_Waitall(kSeq, sreq, MPI_STATUSES_IGNORE), "Waitall(send)");
  for (int k = 0; k < kSeq && g_why[0] == '\0'; ++k) {
    int words = words_of(&st[k]);
    Header h = read_message(rbuf[k], words);
    int tag = tag_any ? base + k % 3 : base;
    if (h.seq != k || h.sender != g_left || words != seq_words(k) || st[k].MPI_SOURCE != g_left ||
        st[k].MPI_TAG != tag)
      why("receive %d got message %d of %d (%d words, source %d, tag %d), expected message %d "
          "of %d (%d words, tag %d)",
          k, h.seq, h.sender, words, st[k].MPI_SOURCE, st[k].MPI_TAG, k, g_left, seq_words(k), tag);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* keeps the cases apart (the order alone would) */
  end("one-sender%s%s-%s%s", src == MPI_ANY_SOURCE ? "-any_source" : "", tag_any ? "-any_tag" : "",
      kPostName[post], mixed_modes ? "-mixed_modes" : "");
}

/* --- Several senders, one receiver with wildcards -------------------------------------------- */
enum { kPerSender = 30 };
static int many_words(int k) { return k % 7 == 3 ? 5000 : 2 + k % 5; }

static void many_senders(int preposted) {
  int total = g_size * kPerSender;
  int** rbuf = malloc(sizeof(int*) * (size_t)total);
  MPI_Request* rreq = malloc(sizeof(MPI_Request) * (size_t)total);
  MPI_Status* st = malloc(sizeof(MPI_Status) * (size_t)total);
  int* next = malloc(sizeof(int) * (size_t)g_size);
  static int sbuf[kPerSender][5000];
  MPI_Request sreq[kPerSender];
  for (int i = 0; i < total; ++i) rbuf[i] = malloc(5000 * sizeof(int));
  const int base = preposted ? 300 : 200;

  for (int root = 0; root < g_size; ++root) {
    begin();
    if (g_rank == root && preposted) {
      for (int i = 0; i < total; ++i)
        rc_ok(MPI_Irecv(rbuf[i], 5000, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                        &rreq[i]),
              "Irecv");
    }
    if (preposted) MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < kPerSender; ++k) {
      make_message(sbuf[k], many_words(k), g_rank, k);
      rc_ok(
          MPI_Isend(sbuf[k], many_words(k), MPI_INT, root, base + k % 4, MPI_COMM_WORLD, &sreq[k]),
          "Isend");
    }
    if (g_rank == root) {
      if (preposted) {
        rc_ok(MPI_Waitall(total, rreq, st), "Waitall(recv)");
      } else {
        for (int i = 0; i < total; ++i)
          rc_ok(
              MPI_Recv(rbuf[i], 5000, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st[i]),
              "Recv");
      }
      /* In receive order, each sender's messages come 0, 1, 2, ...: that is both "exactly
       * once" and "in order". */
      for (int s = 0; s < g_size; ++s) next[s] = 0;
      for (int i = 0; i < total && g_why[0] == '\0'; ++i) {
        int words = words_of(&st[i]);
        Header h = read_message(rbuf[i], words);
        if (h.sender < 0 || h.sender >= g_size) {
          why("receive %d: sender %d", i, h.sender);
          break;
        }
        if (h.seq != next[h.sender] || st[i].MPI_SOURCE != h.sender ||
            st[i].MPI_TAG != base + h.seq % 4 || words != many_words(h.seq))
          why("receive %d: message %d of %d (source %d, tag %d, %d words), expected message %d", i,
              h.seq, h.sender, st[i].MPI_SOURCE, st[i].MPI_TAG, words, next[h.sender]);
        ++next[h.sender];
      }
      for (int s = 0; s < g_size; ++s) {
        if (next[s] != kPerSender) why("%d messages from %d", next[s], s);
      }
    }
    rc_ok(MPI_Waitall(kPerSender, sreq, MPI_STATUSES_IGNORE), "Waitall(send)");
    end("many-senders-%s-root-%d", preposted ? "preposted" : "recv", root);
  }
  for (int i = 0; i < total; ++i) free(rbuf[i]);
  free(rbuf);
  free(rreq);
  free(st);
  free(next);
}

/* --- Thousands of outstanding requests -------------------------------------------------------- */
static int out_words(int i) { return i % 100 == 99 ? 2000 : 2; }

enum Completion { kWaitall, kTestall, kWaitsome };
static const char* const kCompletionName[] = {"waitall", "testall", "waitsome"};

/* n Isend to the right and n Irecv from the left (src, tag as given) of which `before` are posted
 * before the sends and the rest after every send is posted, completed together with one call. */
static void outstanding(int n, int before, int completion, int src, int tag) {
  size_t* off = malloc(sizeof(size_t) * ((size_t)n + 1));
  off[0] = 0;
  for (int i = 0; i < n; ++i) off[i + 1] = off[i] + (size_t)out_words(i);
  int* sarena = malloc(off[n] * sizeof(int));
  int* rarena = calloc(off[n], sizeof(int));
  MPI_Request* req = malloc(sizeof(MPI_Request) * 2 * (size_t)n); /* receives, then sends */
  MPI_Status* st = malloc(sizeof(MPI_Status) * 2 * (size_t)n);
  MPI_Status* some = malloc(sizeof(MPI_Status) * 2 * (size_t)n);
  int* indices = malloc(sizeof(int) * 2 * (size_t)n);
  int* done = calloc(2 * (size_t)n, sizeof(int));
  const int send_tag = 400;
  begin();
  for (int i = 0; i < before; ++i)
    rc_ok(MPI_Irecv(rarena + off[i], out_words(i), MPI_INT, src, tag, MPI_COMM_WORLD, &req[i]),
          "Irecv");
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < n; ++i) {
    make_message(sarena + off[i], out_words(i), g_rank, i);
    rc_ok(MPI_Isend(sarena + off[i], out_words(i), MPI_INT, g_right, send_tag, MPI_COMM_WORLD,
                    &req[n + i]),
          "Isend");
  }
  MPI_Barrier(MPI_COMM_WORLD); /* every send is posted */
  for (int i = before; i < n; ++i)
    rc_ok(MPI_Irecv(rarena + off[i], out_words(i), MPI_INT, src, tag, MPI_COMM_WORLD, &req[i]),
          "Irecv");

  if (completion == kWaitall) {
    rc_ok(MPI_Waitall(2 * n, req, st), "Waitall");
    for (int i = 0; i < 2 * n; ++i) done[i] = 1;
  } else if (completion == kTestall) {
    int flag = 0;
    for (double t0 = MPI_Wtime(); polling(flag, t0);)
      rc_ok(MPI_Testall(2 * n, req, &flag, st), "Testall");
    if (!flag) why("Testall never completed");
    for (int i = 0; i < 2 * n; ++i) done[i] = flag;
  } else {
    for (int left = 2 * n; left > 0 && g_why[0] == '\0';) {
      int outcount = -7;
      rc_ok(MPI_Waitsome(2 * n, req, &outcount, indices, some), "Waitsome");
      if (outcount == MPI_UNDEFINED || outcount < 1 || outcount > left) {
        why("Waitsome: outcount %d with %d left", outcount, left);
        break;
      }
      for (int j = 0; j < outcount; ++j) {
        int i = indices[j];
        if (i < 0 || i >= 2 * n || done[i]) {
          why("Waitsome: index %d", i);
          break;
        }
        done[i] = 1;
        st[i] = some[j];
      }
      left -= outcount;
    }
    int outcount = -7;
    rc_ok(MPI_Waitsome(2 * n, req, &outcount, indices, some), "Waitsome");
    if (outcount != MPI_UNDEFINED) why("Waitsome after all completed: outcount %d", outcount);
  }
  for (int i = 0; i < 2 * n; ++i) {
    if (done[i] && req[i] != MPI_REQUEST_NULL) {
      why("request %d not freed", i);
      break;
    }
  }
  for (int i = 0; i < n && g_why[0] == '\0'; ++i) {
    int words = words_of(&st[i]);
    Header h = read_message(rarena + off[i], out_words(i));
    if (h.seq != i || h.sender != g_left || words != out_words(i) || st[i].MPI_SOURCE != g_left ||
        st[i].MPI_TAG != send_tag)
      why("receive %d: message %d of %d (%d words, source %d, tag %d)", i, h.seq, h.sender, words,
          st[i].MPI_SOURCE, st[i].MPI_TAG);
  }
  end("outstanding-%d-%d-posted-before-%s%s%s", n, before, kCompletionName[completion],
      src == MPI_ANY_SOURCE ? "-any_source" : "", tag == MPI_ANY_TAG ? "-any_tag" : "");
  free(off);
  free(sarena);
  free(rarena);
  free(req);
  free(st);
  free(some);
  free(indices);
  free(done);
}

/* --- Tags out of order, and which posted receive wins ---------------------------------------- */
static void tags_out_of_order(void) {
  const int sizes[4][2] = {
      {2, 3}, {kLargeWords, kLargeWords + 1}, {kLargeWords, 3}, {2, kLargeWords}};
  static int s1[kLargeWords + 2], s3[kLargeWords + 2], r1[kLargeWords + 2], r3[kLargeWords + 2];
  for (int v = 0; v < 4; ++v) {
    int n1 = sizes[v][0], n3 = sizes[v][1];
    MPI_Request sreq[2], rreq[2];
    MPI_Status st1, st3;
    begin();
    make_message(s1, n1, g_rank, 1);
    make_message(s3, n3, g_rank, 3);
    memset(r1, 0, sizeof r1);
    memset(r3, 0, sizeof r3);
    if (v % 2 == 0) {
      /* Both sent before either receive: tag 3 first. */
      rc_ok(MPI_Isend(s1, n1, MPI_INT, g_right, 501, MPI_COMM_WORLD, &sreq[0]), "Isend 1");
      rc_ok(MPI_Isend(s3, n3, MPI_INT, g_right, 503, MPI_COMM_WORLD, &sreq[1]), "Isend 3");
      MPI_Barrier(MPI_COMM_WORLD);
      rc_ok(MPI_Recv(r3, kLargeWords + 2, MPI_INT, g_left, 503, MPI_COMM_WORLD, &st3), "Recv 3");
      rc_ok(MPI_Recv(r1, kLargeWords + 2, MPI_INT, g_left, 501, MPI_COMM_WORLD, &st1), "Recv 1");
    } else {
      /* Receives posted 3 then 1, sends 1 then 3. */
      rc_ok(MPI_Irecv(r3, kLargeWords + 2, MPI_INT, g_left, 503, MPI_COMM_WORLD, &rreq[1]),
            "Irecv 3");
      rc_ok(MPI_Irecv(r1, kLargeWords + 2, MPI_INT, g_left, 501, MPI_COMM_WORLD, &rreq[0]),
            "Irecv 1");
      MPI_Barrier(MPI_COMM_WORLD);
      rc_ok(MPI_Isend(s1, n1, MPI_INT, g_right, 501, MPI_COMM_WORLD, &sreq[0]), "Isend 1");
      rc_ok(MPI_Isend(s3, n3, MPI_INT, g_right, 503, MPI_COMM_WORLD, &sreq[1]), "Isend 3");
      rc_ok(MPI_Wait(&rreq[0], &st1), "Wait 1");
      rc_ok(MPI_Wait(&rreq[1], &st3), "Wait 3");
    }
    rc_ok(MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE), "Waitall(send)");
    Header h1 = read_message(r1, words_of(&st1)), h3 = read_message(r3, words_of(&st3));
    if (h1.seq != 1 || h1.sender != g_left || words_of(&st1) != n1 || st1.MPI_TAG != 501)
      why("tag 1 receive got message %d of %d, %d words, tag %d", h1.seq, h1.sender, words_of(&st1),
          st1.MPI_TAG);
    if (h3.seq != 3 || h3.sender != g_left || words_of(&st3) != n3 || st3.MPI_TAG != 503)
      why("tag 3 receive got message %d of %d, %d words, tag %d", h3.seq, h3.sender, words_of(&st3),
          st3.MPI_TAG);
    end("tags-%s-%d-%d", v % 2 == 0 ? "sent-then-3-before-1" : "posted-3-before-1", n1, n3);
  }

  /* Three receives that all match the left neighbour's three messages, posted in this order:
   * (MPI_ANY_SOURCE, 9), (left, 9), (left, MPI_ANY_TAG). Each message goes to the earliest
   * posted receive still pending. Twice: small messages, then large. */
  for (int v = 0; v < 2; ++v) {
    int n = v == 0 ? 4 : kLargeWords;
    static int s[3][kLargeWords], r[3][kLargeWords];
    MPI_Request sreq[3], rreq[3];
    MPI_Status st[3];
    begin();
    memset(r, 0, sizeof r);
    rc_ok(MPI_Irecv(r[0], n, MPI_INT, MPI_ANY_SOURCE, 509, MPI_COMM_WORLD, &rreq[0]), "Irecv");
    rc_ok(MPI_Irecv(r[1], n, MPI_INT, g_left, 509, MPI_COMM_WORLD, &rreq[1]), "Irecv");
    rc_ok(MPI_Irecv(r[2], n, MPI_INT, g_left, MPI_ANY_TAG, MPI_COMM_WORLD, &rreq[2]), "Irecv");
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 3; ++k) {
      make_message(s[k], n, g_rank, k);
      rc_ok(MPI_Isend(s[k], n, MPI_INT, g_right, 509, MPI_COMM_WORLD, &sreq[k]), "Isend");
    }
    /* Complete the receives in reverse: completion order must not change matching. */
    for (int k = 2; k >= 0; --k) rc_ok(MPI_Wait(&rreq[k], &st[k]), "Wait");
    rc_ok(MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE), "Waitall(send)");
    for (int k = 0; k < 3; ++k) {
      Header h = read_message(r[k], words_of(&st[k]));
      if (h.seq != k || h.sender != g_left || st[k].MPI_SOURCE != g_left || st[k].MPI_TAG != 509)
        why("receive %d got message %d of %d (source %d, tag %d)", k, h.seq, h.sender,
            st[k].MPI_SOURCE, st[k].MPI_TAG);
    }
    end("earliest-posted-receive-wins-%d", n);
  }
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  g_left = (g_rank + g_size - 1) % g_size;
  g_right = (g_rank + 1) % g_size;
  int n_out = argc > 1 ? atoi(argv[1]) : 10000;
  if (n_out < 1) n_out = 10000;
  /* For the Ibsends of the mixed-mode sequence. */
  int attach_size = kSeq * (int)((kLargeWords + kSeq) * sizeof(int) + MPI_BSEND_OVERHEAD);
  void* attach = malloc((size_t)attach_size);
  check_rc(MPI_Buffer_attach(attach, attach_size), "buffer_attach");

  for (int post = 0; post < 3; ++post) {
    one_sender(g_left, 0, post, 0);
    one_sender(MPI_ANY_SOURCE, 0, post, 0);
    one_sender(g_left, 1, post, 0);
    one_sender(MPI_ANY_SOURCE, 1, post, 0);
  }
  one_sender(g_left, 0, kWhileSending, 1);
  one_sender(MPI_ANY_SOURCE, 1, kAfterSends, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  many_senders(0);
  MPI_Barrier(MPI_COMM_WORLD);
  many_senders(1);
  MPI_Barrier(MPI_COMM_WORLD);
  outstanding(n_out, n_out, kWaitall, g_left, 400);
  outstanding(n_out, 0, kTestall, MPI_ANY_SOURCE, 400);
  outstanding(n_out, n_out / 2, kWaitsome, g_left, MPI_ANY_TAG);
  outstanding(n_out, 0, kWaitsome, MPI_ANY_SOURCE, MPI_ANY_TAG);
  MPI_Barrier(MPI_COMM_WORLD);
  tags_out_of_order();

  void* detached = NULL;
  int detached_size = 0;
  check_rc(MPI_Buffer_detach(&detached, &detached_size), "buffer_detach");
  free(attach);
  check_rc(MPI_Finalize(), "finalize");
  return check_done(g_size);
}
