/* p2p_errors: point-to-point errors under MPI_ERRORS_RETURN, each with its class, after which the
 * program goes on. On MPI_COMM_WORLD as a ring (send to rank+1, receive from rank-1; one rank
 * talks to itself).
 *
 *   p2p_errors      any number of ranks, 1 included
 *
 * Checked, one "ok/FAIL <rank> <check>" line per case, then "done <rank> ...":
 *  - truncation, for an eager-sized message (100 bytes into 50), a rendezvous-sized one (200000
 *    into 100000) and 1 byte into none: MPI_ERR_TRUNCATE from Recv, Wait, Test and Mrecv,
 *    MPI_ERR_IN_STATUS from Waitall and Waitsome with MPI_ERR_TRUNCATE in the status of that
 *    request and MPI_SUCCESS in the others; the sender's side succeeds; nothing written after the
 *    receive buffer; a message after that arrives whole;
 *  - MPI_Cancel of a posted receive (Test_cancelled true, buffer untouched), of a persistent
 *    receive (which can be started again), of a receive that has completed (Test_cancelled false,
 *    the data there), and of a send (either cancelled and never received, or received: the
 *    sender tells the receiver which);
 *  - MPI_Bsend: no buffer attached, and a message larger than the attached buffer: MPI_ERR_BUFFER,
 *    nothing delivered; after Buffer_detach and a larger Buffer_attach it works;
 *  - bad arguments: rank out of range, negative or MPI_ANY_SOURCE destination (MPI_ERR_RANK),
 *    negative send tag or above MPI_TAG_UB, bad receive tag (MPI_ERR_TAG), negative count
 *    (MPI_ERR_COUNT), MPI_DATATYPE_NULL (MPI_ERR_TYPE), MPI_COMM_NULL (MPI_ERR_COMM), a NULL
 *    request pointer or a null request where an active one is needed (MPI_ERR_REQUEST or
 *    MPI_ERR_ARG).
 * Only the error class is checked (MPICH returns codes that are not classes). A check that a
 * reference library is known to fail prints "skip <rank> <check>: known ... deviation" there. */
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* MPICH's MPI_STATUSES_IGNORE is (MPI_Status*)1, which gcc takes for an array of size 0. */
#if defined(MPICH_VERSION) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

static int g_size, g_left, g_right;

/* --- Known deviations of the reference libraries from the standard ---------------------------
 * torusmpi's version string starts with "torusmpi" (it names "Open MPI 4.1 ABI" further on). */
enum { kOpenMpi = 1, kMpich = 2 };
static int g_library;
static void detect_library(void) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(version, &len);
  if (strncmp(version, "Open MPI", 8) == 0) g_library = kOpenMpi;
  if (strncmp(version, "MPICH", 5) == 0) g_library = kMpich;
}
static int deviation(int libraries, const char* what, const char* text) {
  if ((g_library & libraries) == 0) return 0;
  printf("skip %d %s: known %s deviation: %s\n", g_rank, what,
         g_library == kOpenMpi ? "Open MPI" : "MPICH", text);
  return 1;
}

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
static int class_of(int rc) {
  int cls = -1;
  if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) return -1;
  return cls;
}
/* The call failed with this class. */
static void rc_class(int rc, int expected, const char* call) {
  if (rc == MPI_SUCCESS || class_of(rc) != expected)
    why("%s returned %d (class %d), expected class %d", call, rc, class_of(rc), expected);
}
/* One check: rc is an error of class `expected` (or of `also`, when that is not -1). */
static void check_class(int rc, int expected, int also, const char* what) {
  int cls = class_of(rc);
  check(rc != MPI_SUCCESS && (cls == expected || (also != -1 && cls == also)), what,
        "returned %d (class %d), expected class %d", rc, cls, expected);
}

/* Data and guard bytes. */
static unsigned char pattern(size_t i, unsigned seed) {
  return (unsigned char)(i + (i >> 8) * 7 + (i >> 16) * 13 + seed * 31);
}
static void fill(unsigned char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = pattern(i, seed);
}
static void data_is(const unsigned char* p, size_t n, unsigned seed, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != pattern(i, seed)) {
      why("%s: byte %zu of %zu is %u, expected %u", what, i, n, p[i], pattern(i, seed));
      return;
    }
  }
}
#define kGuard 64
static void fill_guard(unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(0xA5 ^ i);
}
/* p[from, to) still holds what fill_guard wrote. */
static void guard_is(const unsigned char* p, size_t from, size_t to, const char* what) {
  for (size_t i = from; i < to; ++i) {
    if (p[i] != (unsigned char)(0xA5 ^ i)) {
      why("%s: byte %zu overwritten (buffer of %zu, guard up to %zu)", what, i, from, to);
      return;
    }
  }
}
static unsigned seed_of(int sender, int message) { return (unsigned)(sender * 4099 + message); }

enum { kBig = 200000 };
static unsigned char *g_sbuf, *g_rbuf;

/* A message that must arrive whole after the errors: eager and rendezvous sizes. */
static void still_works(const char* after) {
  const int sizes[2] = {100, kBig};
  begin();
  for (int k = 0; k < 2; ++k) {
    int n = sizes[k], tag = 50 + k;
    MPI_Request req;
    MPI_Status st;
    fill(g_sbuf, (size_t)n, seed_of(g_rank, tag));
    fill_guard(g_rbuf, (size_t)n + kGuard);
    rc_ok(MPI_Isend(g_sbuf, n, MPI_BYTE, g_right, tag, MPI_COMM_WORLD, &req), "Isend");
    rc_ok(MPI_Recv(g_rbuf, n, MPI_BYTE, g_left, tag, MPI_COMM_WORLD, &st), "Recv");
    rc_ok(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (st.MPI_SOURCE != g_left || st.MPI_TAG != tag || count != n)
      why("status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    data_is(g_rbuf, (size_t)n, seed_of(g_left, tag), "data");
    guard_is(g_rbuf, (size_t)n, (size_t)n + kGuard, "after the message");
  }
  end("still-works-after-%s", after);
}

/* --- Truncation ------------------------------------------------------------------------------- */
/* Nothing written after the receive buffer of a truncated receive (g_rbuf always has room for the
 * whole message and the guard, whatever the library does). */
static void truncation_guard(int n, int room, const char* call) {
  char what[100];
  snprintf(what, sizeof what, "truncate-rendezvous-%s-overflow", call);
  /* Open MPI 4.1's ob1 copies the whole of a message above its eager limit into a receive buffer
   * that is too small for it, over whatever follows (any BTL, CMA or not). */
  if (n > 4096 && deviation(kOpenMpi, what,
                            "a truncated rendezvous message is written past the receive buffer"))
    return;
  guard_is(g_rbuf, (size_t)room, (size_t)n + kGuard, "after the receive buffer");
}

static void test_truncation(void) {
  const int cases[3][2] = {{100, 50}, {kBig, kBig / 2}, {1, 0}}; /* message, buffer */
  for (int c = 0; c < 3; ++c) {
    int n = cases[c][0], room = cases[c][1];
    const char* kind = c == 0 ? "eager" : c == 1 ? "rendezvous" : "into-empty";
    MPI_Request sreq[3], rreq[3];
    MPI_Status st, sts[3];
    int rc, tag = 100 + 10 * c;

    /* Recv. */
    begin();
    fill(g_sbuf, (size_t)n, seed_of(g_rank, tag));
    fill_guard(g_rbuf, (size_t)n + kGuard);
    rc_ok(MPI_Isend(g_sbuf, n, MPI_BYTE, g_right, tag, MPI_COMM_WORLD, &sreq[0]), "Isend");
    rc = MPI_Recv(g_rbuf, room, MPI_BYTE, g_left, tag, MPI_COMM_WORLD, &st);
    rc_class(rc, MPI_ERR_TRUNCATE, "Recv");
    rc_ok(MPI_Wait(&sreq[0], MPI_STATUS_IGNORE), "the sender's Wait");
    truncation_guard(n, room, "recv");
    end("truncate-%s-recv", kind);

    /* The next cases post the receive before the message is sent. */
    if (c == 0 && g_size == 1 &&
        deviation(kOpenMpi, "truncate-eager-posted-self",
                  "an eager message to itself truncated by a posted receive is not reported")) {
      still_works(kind);
      continue;
    }

    /* Irecv + Wait, and Irecv + Test. */
    for (int test = 0; test < 2; ++test) {
      begin();
      ++tag;
      fill_guard(g_rbuf, (size_t)n + kGuard);
      rc_ok(MPI_Irecv(g_rbuf, room, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &rreq[0]),
            "Irecv");
      rc_ok(MPI_Send(g_sbuf, n, MPI_BYTE, g_right, tag, MPI_COMM_WORLD), "the sender's Send");
      if (test) {
        int flag = 0;
        rc = MPI_SUCCESS;
        for (double t0 = MPI_Wtime(); !flag && rc == MPI_SUCCESS && MPI_Wtime() - t0 < 30;)
          rc = MPI_Test(&rreq[0], &flag, &st);
        rc_class(rc, MPI_ERR_TRUNCATE, "Test");
      } else {
        rc_class(MPI_Wait(&rreq[0], &st), MPI_ERR_TRUNCATE, "Wait");
      }
      if (rreq[0] != MPI_REQUEST_NULL) why("the failed request was not freed");
      truncation_guard(n, room, "irecv");
      end("truncate-%s-irecv-%s", kind, test ? "test" : "wait");
    }

    /* Waitall and Waitsome: the truncated request in the middle, two good ones around it. */
    for (int some = 0; some < 2; ++some) {
      begin();
      tag += 3;
      unsigned char* good[2] = {g_rbuf + kBig + kGuard, g_rbuf + kBig + kGuard + 200};
      fill_guard(g_rbuf, (size_t)n + kGuard);
      rc_ok(MPI_Irecv(good[0], 100, MPI_BYTE, g_left, tag, MPI_COMM_WORLD, &rreq[0]), "Irecv");
      rc_ok(MPI_Irecv(g_rbuf, room, MPI_BYTE, g_left, tag + 1, MPI_COMM_WORLD, &rreq[1]), "Irecv");
      rc_ok(MPI_Irecv(good[1], 100, MPI_BYTE, g_left, tag + 2, MPI_COMM_WORLD, &rreq[2]), "Irecv");
      fill(g_sbuf + kBig, 100, seed_of(g_rank, tag));
      fill(g_sbuf + kBig + 100, 100, seed_of(g_rank, tag + 2));
      rc_ok(MPI_Isend(g_sbuf + kBig, 100, MPI_BYTE, g_right, tag, MPI_COMM_WORLD, &sreq[0]),
            "Isend");
      rc_ok(MPI_Isend(g_sbuf, n, MPI_BYTE, g_right, tag + 1, MPI_COMM_WORLD, &sreq[1]), "Isend");
      rc_ok(
          MPI_Isend(g_sbuf + kBig + 100, 100, MPI_BYTE, g_right, tag + 2, MPI_COMM_WORLD, &sreq[2]),
          "Isend");
      for (int i = 0; i < 3; ++i) sts[i].MPI_ERROR = -12345;
      int truncated_error = -12345, good_errors[2] = {MPI_SUCCESS, MPI_SUCCESS}, seen = 0;
      if (some) {
        /* Until the truncated one has been reported, then Waitall for the rest. A status's
         * MPI_ERROR is set only by a call that returns MPI_ERR_IN_STATUS. */
        for (int calls = 0; !seen && calls < 4; ++calls) {
          int outcount = -7, indices[3];
          rc = MPI_Waitsome(3, rreq, &outcount, indices, sts);
          if (outcount == MPI_UNDEFINED || outcount < 1) {
            why("Waitsome: outcount %d", outcount);
            break;
          }
          for (int j = 0; j < outcount; ++j) seen |= indices[j] == 1;
          if (seen) {
            rc_class(rc, MPI_ERR_IN_STATUS, "Waitsome");
            for (int j = 0; j < outcount; ++j) {
              if (indices[j] == 1) {
                truncated_error = sts[j].MPI_ERROR;
              } else {
                good_errors[indices[j] / 2] = sts[j].MPI_ERROR;
              }
            }
          } else if (rc != MPI_SUCCESS) {
            why("Waitsome without the truncated request: %d", rc);
          }
        }
        rc_ok(MPI_Waitall(3, rreq, MPI_STATUSES_IGNORE), "Waitall(the rest)");
      } else {
        rc_class(MPI_Waitall(3, rreq, sts), MPI_ERR_IN_STATUS, "Waitall");
        truncated_error = sts[1].MPI_ERROR;
        good_errors[0] = sts[0].MPI_ERROR;
        good_errors[1] = sts[2].MPI_ERROR;
      }
      if (class_of(truncated_error) != MPI_ERR_TRUNCATE)
        why("the truncated request's MPI_ERROR is %d", truncated_error);
      /* The others completed (MPI_SUCCESS, request freed) or not yet (MPI_ERR_PENDING, request
       * still active: MPI-3.1 3.7.5 lets Waitall return before every request is complete). */
      for (int g = 0; g < 2; ++g) {
        MPI_Request* r = &rreq[2 * g];
        if (good_errors[g] == MPI_SUCCESS && *r != MPI_REQUEST_NULL) {
          why("good request %d: MPI_SUCCESS but not freed", 2 * g);
        } else if (good_errors[g] != MPI_SUCCESS && class_of(good_errors[g]) != MPI_ERR_PENDING) {
          why("good request %d: MPI_ERROR %d", 2 * g, good_errors[g]);
        } else if (good_errors[g] != MPI_SUCCESS) {
          if (*r == MPI_REQUEST_NULL)
            why("good request %d: MPI_ERR_PENDING but freed", 2 * g);
          else
            rc_ok(MPI_Wait(r, MPI_STATUS_IGNORE), "Wait(pending request)");
        }
      }
      if (rreq[1] != MPI_REQUEST_NULL) why("the truncated request was not freed");
      data_is(good[0], 100, seed_of(g_left, tag), "first good message");
      data_is(good[1], 100, seed_of(g_left, tag + 2), "last good message");
      truncation_guard(n, room, some ? "waitsome" : "waitall");
      rc_ok(MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE), "the sender's Waitall");
      end("truncate-%s-%s", kind, some ? "waitsome" : "waitall");
    }

    /* Mprobe + Mrecv. */
    begin();
    tag += 3;
    MPI_Message msg;
    fill_guard(g_rbuf, (size_t)n + kGuard);
    rc_ok(MPI_Isend(g_sbuf, n, MPI_BYTE, g_right, tag, MPI_COMM_WORLD, &sreq[0]), "Isend");
    rc_ok(MPI_Mprobe(g_left, tag, MPI_COMM_WORLD, &msg, &st), "Mprobe");
    rc_class(MPI_Mrecv(g_rbuf, room, MPI_BYTE, &msg, &st), MPI_ERR_TRUNCATE, "Mrecv");
    rc_ok(MPI_Wait(&sreq[0], MPI_STATUS_IGNORE), "the sender's Wait");
    truncation_guard(n, room, "mrecv");
    end("truncate-%s-mrecv", kind);

    still_works(kind);
  }
  /* The error string of the class names something. */
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  int rc = MPI_Error_string(MPI_ERR_TRUNCATE, text, &len);
  check(rc == MPI_SUCCESS && len > 0 && len == (int)strlen(text), "error_string-truncate",
        "rc %d, \"%s\" (len %d)", rc, text, len);
}

/* --- Cancel ----------------------------------------------------------------------------------- */
static void test_cancel(void) {
  MPI_Request req;
  MPI_Status st;
  int flag;
  unsigned char buf[100 + kGuard];

  /* Receives nobody sends to. */
  for (int any = 0; any < 2; ++any) {
    begin();
    fill_guard(buf, sizeof buf);
    rc_ok(MPI_Irecv(buf, 100, MPI_BYTE, any ? MPI_ANY_SOURCE : g_left, any ? MPI_ANY_TAG : 200,
                    MPI_COMM_WORLD, &req),
          "Irecv");
    rc_ok(MPI_Cancel(&req), "Cancel");
    if (req == MPI_REQUEST_NULL) why("Cancel freed the request");
    rc_ok(MPI_Wait(&req, &st), "Wait");
    flag = -7;
    rc_ok(MPI_Test_cancelled(&st, &flag), "Test_cancelled");
    if (flag != 1) why("Test_cancelled %d", flag);
    if (req != MPI_REQUEST_NULL) why("Wait did not free the request");
    guard_is(buf, 0, sizeof buf, "receive buffer");
    end("cancel-posted-recv%s", any ? "-any" : "");
  }

  /* A persistent receive: cancelled once, then started again and matched. */
  begin();
  fill_guard(buf, sizeof buf);
  rc_ok(MPI_Recv_init(buf, 100, MPI_BYTE, g_left, 201, MPI_COMM_WORLD, &req), "Recv_init");
  rc_ok(MPI_Start(&req), "Start");
  rc_ok(MPI_Cancel(&req), "Cancel");
  rc_ok(MPI_Wait(&req, &st), "Wait");
  flag = -7;
  MPI_Test_cancelled(&st, &flag);
  if (flag != 1) why("Test_cancelled %d", flag);
  if (req == MPI_REQUEST_NULL) why("Wait freed the persistent request");
  guard_is(buf, 0, sizeof buf, "receive buffer");
  MPI_Barrier(MPI_COMM_WORLD); /* nobody sent before the cancel */
  rc_ok(MPI_Start(&req), "Start again");
  fill(g_sbuf, 100, seed_of(g_rank, 201));
  MPI_Request sreq;
  rc_ok(MPI_Isend(g_sbuf, 100, MPI_BYTE, g_right, 201, MPI_COMM_WORLD, &sreq), "Isend");
  rc_ok(MPI_Wait(&req, &st), "Wait");
  flag = -7;
  MPI_Test_cancelled(&st, &flag);
  if (flag != 0) why("second start: Test_cancelled %d", flag);
  data_is(buf, 100, seed_of(g_left, 201), "second start");
  rc_ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "Wait(send)");
  rc_ok(MPI_Request_free(&req), "Request_free");
  end("cancel-persistent-recv");

  /* Receives that have completed (eager and rendezvous): the cancel fails, the data is there. */
  for (int k = 0; k < 2; ++k) {
    int n = k == 0 ? 100 : kBig, tag = 210 + k;
    begin();
    fill_guard(g_rbuf, (size_t)n + kGuard);
    fill(g_sbuf, (size_t)n, seed_of(g_rank, tag));
    rc_ok(MPI_Irecv(g_rbuf, n, MPI_BYTE, g_left, tag, MPI_COMM_WORLD, &req), "Irecv");
    rc_ok(MPI_Isend(g_sbuf, n, MPI_BYTE, g_right, tag, MPI_COMM_WORLD, &sreq), "Isend");
    flag = 0;
    for (double t0 = MPI_Wtime(); polling(flag, t0);)
      rc_ok(MPI_Request_get_status(req, &flag, &st), "Request_get_status");
    if (!flag) why("the receive never completed");
    rc_ok(MPI_Cancel(&req), "Cancel");
    rc_ok(MPI_Wait(&req, &st), "Wait");
    flag = -7;
    MPI_Test_cancelled(&st, &flag);
    if (flag != 0) why("Test_cancelled %d", flag);
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (st.MPI_SOURCE != g_left || st.MPI_TAG != tag || count != n)
      why("status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    data_is(g_rbuf, (size_t)n, seed_of(g_left, tag), "data");
    rc_ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "Wait(send)");
    end("cancel-completed-recv-%d", n);
  }

  /* Sends: the cancel may succeed (then the message is never received) or fail (then it is).
   * The receive is posted after the cancel (a failed cancel of a rendezvous send completes only
   * once the receiver matches it), the sender says which it was on another tag, and the receiver
   * then either waits for the message or cancels its receive, which must then succeed. */
  for (int k = 0; k < 2; ++k) {
    int n = k == 0 ? 100 : kBig, tag = 220 + 2 * k;
    begin();
    fill(g_sbuf, (size_t)n, seed_of(g_rank, tag));
    rc_ok(MPI_Isend(g_sbuf, n, MPI_BYTE, g_right, tag, MPI_COMM_WORLD, &sreq), "Isend");
    rc_ok(MPI_Cancel(&sreq), "Cancel");
    MPI_Barrier(MPI_COMM_WORLD);
    fill_guard(g_rbuf, (size_t)n);
    rc_ok(MPI_Irecv(g_rbuf, n, MPI_BYTE, g_left, tag, MPI_COMM_WORLD, &req), "Irecv");
    rc_ok(MPI_Wait(&sreq, &st), "Wait(send)");
    int cancelled = -7, peer_cancelled = -7;
    rc_ok(MPI_Test_cancelled(&st, &cancelled), "Test_cancelled");
    if (cancelled != 0 && cancelled != 1) why("Test_cancelled %d", cancelled);
    rc_ok(MPI_Sendrecv(&cancelled, 1, MPI_INT, g_right, tag + 1, &peer_cancelled, 1, MPI_INT,
                       g_left, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "Sendrecv");
    if (peer_cancelled) rc_ok(MPI_Cancel(&req), "Cancel(recv)");
    rc_ok(MPI_Wait(&req, &st), "Wait(recv)");
    flag = -7;
    MPI_Test_cancelled(&st, &flag);
    if (peer_cancelled && flag != 1)
      why("the send was cancelled, yet its receive completed (Test_cancelled %d)", flag);
    if (!peer_cancelled && flag != 0) why("Test_cancelled %d for a received message", flag);
    if (!peer_cancelled) data_is(g_rbuf, (size_t)n, seed_of(g_left, tag), "data");
    printf("# rank %d: cancel of a %d-byte send %s\n", g_rank, n,
           cancelled == 1 ? "succeeded" : "failed (the message was sent)");
    end("cancel-send-%d", n);
  }
  still_works("cancel");
}

/* --- Bsend ------------------------------------------------------------------------------------
 * Each failing Bsend is tried small (10 or 2000 bytes) and large (200000 bytes), to the right
 * neighbour, and large to itself on MPI_COMM_SELF; nothing of it may arrive (tag 300). Open MPI
 * 4.1's ob1 deviates twice: it sends a message that fits in an eager fragment without the attached
 * buffer (so it neither fails for want of one nor ever runs out of it), and a failed Bsend costs
 * it a sequence number, so nothing it sends later to that destination is ever received. */
static void failing_bsend(int n, int self, int immediate, const char* why_fail) {
  char what[100];
  snprintf(what, sizeof what, "%s-%s-%d%s", immediate ? "ibsend" : "bsend", why_fail, n,
           self ? "-comm_self" : "");
  /* Not even tried there: a message let through would have to be received, one that fails would
   * cut the channel (to itself as well, on one rank). */
  if (!self && n <= 4096 &&
      deviation(kOpenMpi, what, "a Bsend of an eager-sized message ignores the attached buffer"))
    return;
  if (!self && deviation(kOpenMpi, what,
                         "after a failed Bsend nothing sent later to its destination arrives"))
    return;
  MPI_Comm comm = self ? MPI_COMM_SELF : MPI_COMM_WORLD;
  int dest = self ? 0 : g_right;
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = immediate ? MPI_Ibsend(g_sbuf, n, MPI_BYTE, dest, 300, comm, &req)
                     : MPI_Bsend(g_sbuf, n, MPI_BYTE, dest, 300, comm);
  /* An Ibsend may fail at once or in its completion. */
  if (rc == MPI_SUCCESS && immediate) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  check_class(rc, MPI_ERR_BUFFER, -1, what);
}

static void test_bsend(void) {
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  fill(g_sbuf, kBig, seed_of(g_rank, 300));
  for (int immediate = 0; immediate < 2; ++immediate) {
    failing_bsend(10, 0, immediate, "no-buffer");
    failing_bsend(kBig, 0, immediate, "no-buffer");
    failing_bsend(kBig, 1, immediate, "no-buffer");
  }
  int size1 = 1000 + MPI_BSEND_OVERHEAD;
  void* buf1 = malloc((size_t)size1);
  check_rc(MPI_Buffer_attach(buf1, size1), "buffer_attach-small");
  failing_bsend(2000, 0, 0, "larger-than-buffer");
  failing_bsend(kBig, 0, 0, "larger-than-buffer");
  failing_bsend(kBig, 1, 0, "larger-than-buffer");

  /* What fits goes. */
  begin();
  MPI_Status st;
  fill(g_sbuf, 600, seed_of(g_rank, 301));
  rc_ok(MPI_Bsend(g_sbuf, 600, MPI_BYTE, g_right, 301, MPI_COMM_WORLD), "Bsend");
  fill_guard(g_rbuf, kBig);
  rc_ok(MPI_Recv(g_rbuf, kBig, MPI_BYTE, g_left, 301, MPI_COMM_WORLD, &st), "Recv");
  int count = -1;
  MPI_Get_count(&st, MPI_BYTE, &count);
  if (count != 600) why("received %d bytes", count);
  data_is(g_rbuf, 600, seed_of(g_left, 301), "data");
  end("bsend-fitting-message");

  /* Detached, and a buffer large enough attached: the large message goes. */
  begin();
  void* detached = NULL;
  int detached_size = -1;
  rc_ok(MPI_Buffer_detach(&detached, &detached_size), "Buffer_detach");
  if (detached != buf1 || detached_size != size1)
    why("detached %p of %d bytes, attached %p of %d", detached, detached_size, buf1, size1);
  int size2 = kBig + MPI_BSEND_OVERHEAD;
  void* buf2 = malloc((size_t)size2);
  rc_ok(MPI_Buffer_attach(buf2, size2), "Buffer_attach");
  fill(g_sbuf, kBig, seed_of(g_rank, 302));
  rc_ok(MPI_Bsend(g_sbuf, kBig, MPI_BYTE, g_right, 302, MPI_COMM_WORLD), "Bsend");
  memset(g_sbuf, 0, kBig); /* the buffered copy is what goes */
  fill_guard(g_rbuf, kBig);
  rc_ok(MPI_Recv(g_rbuf, kBig, MPI_BYTE, g_left, 302, MPI_COMM_WORLD, &st), "Recv");
  MPI_Get_count(&st, MPI_BYTE, &count);
  if (count != kBig) why("received %d bytes", count);
  data_is(g_rbuf, kBig, seed_of(g_left, 302), "data");
  /* Detach waits until the buffered messages are out. */
  rc_ok(MPI_Buffer_detach(&detached, &detached_size), "Buffer_detach");
  if (detached != buf2 || detached_size != size2)
    why("second detach: %p of %d", detached, detached_size);
  end("bsend-after-reattach");
  free(buf1);
  free(buf2);

  /* None of the failed Bsends (tag 300) may have been delivered. */
  MPI_Barrier(MPI_COMM_WORLD);
  int flag = -7, self_flag = -7;
  MPI_Iprobe(MPI_ANY_SOURCE, 300, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  MPI_Iprobe(MPI_ANY_SOURCE, 300, MPI_COMM_SELF, &self_flag, MPI_STATUS_IGNORE);
  check(flag == 0 && self_flag == 0, "bsend-failed-not-delivered",
        "a failed Bsend's message arrived (MPI_COMM_WORLD %d, MPI_COMM_SELF %d)", flag, self_flag);
  still_works("bsend");
}

/* --- Bad arguments ----------------------------------------------------------------------------
 * A library that let a bad receive through would wait for ever: a watchdog ends the program
 * then, saying so, rather than leave the job to its time limit. */
static char g_hung[160];
static void on_alarm(int sig) {
  (void)sig;
  ssize_t ignored = write(STDOUT_FILENO, g_hung, strlen(g_hung));
  (void)ignored;
  _exit(3);
}
static void watchdog(int seconds) {
  snprintf(g_hung, sizeof g_hung, "FAIL %d bad-arguments: a call hung for %d s\n", g_rank, seconds);
  signal(SIGALRM, on_alarm);
  alarm((unsigned)seconds);
}

static void test_arguments(void) {
  unsigned char buf[16] = {0};
  MPI_Request req;
  MPI_Status st;
  int flag;
  MPI_Comm w = MPI_COMM_WORLD;
  const int bad_ranks[3] = {g_size, -5, MPI_ANY_SOURCE};
  const char* bad_rank_names[3] = {"size", "negative", "any_source"};
  watchdog(60); /* generous: valgrind.sh runs this under memcheck */

  for (int b = 0; b < 3; ++b) {
    char what[100];
    int r = bad_ranks[b];
    req = MPI_REQUEST_NULL;
    snprintf(what, sizeof what, "send-rank-%s", bad_rank_names[b]);
    check_class(MPI_Send(buf, 1, MPI_BYTE, r, 1, w), MPI_ERR_RANK, -1, what);
    snprintf(what, sizeof what, "ssend-rank-%s", bad_rank_names[b]);
    check_class(MPI_Ssend(buf, 1, MPI_BYTE, r, 1, w), MPI_ERR_RANK, -1, what);
    snprintf(what, sizeof what, "isend-rank-%s", bad_rank_names[b]);
    check_class(MPI_Isend(buf, 1, MPI_BYTE, r, 1, w, &req), MPI_ERR_RANK, -1, what);
    snprintf(what, sizeof what, "send_init-rank-%s", bad_rank_names[b]);
    check_class(MPI_Send_init(buf, 1, MPI_BYTE, r, 1, w, &req), MPI_ERR_RANK, -1, what);
    snprintf(what, sizeof what, "sendrecv-dest-%s", bad_rank_names[b]);
    check_class(
        MPI_Sendrecv(buf, 1, MPI_BYTE, r, 1, buf + 8, 1, MPI_BYTE, MPI_PROC_NULL, 1, w, &st),
        MPI_ERR_RANK, -1, what);
    if (r == MPI_ANY_SOURCE) continue; /* a fine source */
    snprintf(what, sizeof what, "recv-rank-%s", bad_rank_names[b]);
    check_class(MPI_Recv(buf, 1, MPI_BYTE, r, 1, w, &st), MPI_ERR_RANK, -1, what);
    snprintf(what, sizeof what, "irecv-rank-%s", bad_rank_names[b]);
    check_class(MPI_Irecv(buf, 1, MPI_BYTE, r, 1, w, &req), MPI_ERR_RANK, -1, what);
    snprintf(what, sizeof what, "iprobe-rank-%s", bad_rank_names[b]);
    check_class(MPI_Iprobe(r, 1, w, &flag, &st), MPI_ERR_RANK, -1, what);
  }

  /* Tags: sends take 0..MPI_TAG_UB, receives that or MPI_ANY_TAG. */
  int* ub = NULL;
  flag = 0;
  MPI_Comm_get_attr(w, MPI_TAG_UB, &ub, &flag);
  check(flag && ub != NULL && *ub >= 32767, "tag_ub", "flag %d, value %d", flag,
        ub != NULL ? *ub : -1);
  int tag_ub = flag && ub != NULL ? *ub : 32767;
  check_class(MPI_Send(buf, 1, MPI_BYTE, g_right, -5, w), MPI_ERR_TAG, -1, "send-tag-negative");
  check_class(MPI_Send(buf, 1, MPI_BYTE, g_right, MPI_ANY_TAG, w), MPI_ERR_TAG, -1,
              "send-tag-any_tag");
  check_class(MPI_Isend(buf, 1, MPI_BYTE, g_right, -5, w, &req), MPI_ERR_TAG, -1,
              "isend-tag-negative");
  if (tag_ub < INT_MAX) {
    check_class(MPI_Send(buf, 1, MPI_BYTE, g_right, tag_ub + 1, w), MPI_ERR_TAG, -1,
                "send-tag-above-ub");
    check_class(MPI_Issend(buf, 1, MPI_BYTE, g_right, tag_ub + 1, w, &req), MPI_ERR_TAG, -1,
                "issend-tag-above-ub");
  } else {
    printf("# MPI_TAG_UB is INT_MAX: no tag above it to try\n");
  }
  check_class(MPI_Recv(buf, 1, MPI_BYTE, g_left, -5, w, &st), MPI_ERR_TAG, -1, "recv-tag-negative");
  check_class(MPI_Irecv(buf, 1, MPI_BYTE, g_left, -5, w, &req), MPI_ERR_TAG, -1,
              "irecv-tag-negative");
  /* The largest tag works. */
  begin();
  buf[0] = (unsigned char)g_rank;
  rc_ok(MPI_Isend(buf, 1, MPI_BYTE, g_right, tag_ub, w, &req), "Isend(MPI_TAG_UB)");
  rc_ok(MPI_Recv(buf + 1, 1, MPI_BYTE, g_left, tag_ub, w, &st), "Recv(MPI_TAG_UB)");
  rc_ok(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
  if (buf[1] != (unsigned char)g_left || st.MPI_TAG != tag_ub)
    why("got %d with tag %d", buf[1], st.MPI_TAG);
  end("tag-ub-works");

  check_class(MPI_Send(buf, -1, MPI_BYTE, g_right, 1, w), MPI_ERR_COUNT, -1, "send-count-negative");
  check_class(MPI_Isend(buf, -1, MPI_INT, g_right, 1, w, &req), MPI_ERR_COUNT, -1,
              "isend-count-negative");
  check_class(MPI_Recv(buf, -1, MPI_BYTE, g_left, 1, w, &st), MPI_ERR_COUNT, -1,
              "recv-count-negative");
  check_class(MPI_Irecv(buf, -3, MPI_BYTE, g_left, 1, w, &req), MPI_ERR_COUNT, -1,
              "irecv-count-negative");

  check_class(MPI_Send(buf, 1, MPI_DATATYPE_NULL, g_right, 1, w), MPI_ERR_TYPE, -1,
              "send-datatype_null");
  check_class(MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, g_left, 1, w, &req), MPI_ERR_TYPE, -1,
              "irecv-datatype_null");
  check_class(MPI_Recv(buf, 1, MPI_DATATYPE_NULL, g_left, 1, w, &st), MPI_ERR_TYPE, -1,
              "recv-datatype_null");

  check_class(MPI_Send(buf, 1, MPI_BYTE, 0, 1, MPI_COMM_NULL), MPI_ERR_COMM, -1, "send-comm_null");
  check_class(MPI_Isend(buf, 1, MPI_BYTE, 0, 1, MPI_COMM_NULL, &req), MPI_ERR_COMM, -1,
              "isend-comm_null");
  check_class(MPI_Recv(buf, 1, MPI_BYTE, 0, 1, MPI_COMM_NULL, &st), MPI_ERR_COMM, -1,
              "recv-comm_null");

  /* Requests. */
  check_class(MPI_Isend(buf, 1, MPI_BYTE, g_right, 1, w, NULL), MPI_ERR_REQUEST, MPI_ERR_ARG,
              "isend-null-request-pointer");
  check_class(MPI_Irecv(buf, 1, MPI_BYTE, g_left, 1, w, NULL), MPI_ERR_REQUEST, MPI_ERR_ARG,
              "irecv-null-request-pointer");
  check_class(MPI_Wait(NULL, &st), MPI_ERR_REQUEST, MPI_ERR_ARG, "wait-null-request-pointer");
  check_class(MPI_Test(NULL, &flag, &st), MPI_ERR_REQUEST, MPI_ERR_ARG,
              "test-null-request-pointer");
  req = MPI_REQUEST_NULL;
  check_class(MPI_Request_free(&req), MPI_ERR_REQUEST, MPI_ERR_ARG, "request_free-null-request");
  req = MPI_REQUEST_NULL;
  check_class(MPI_Start(&req), MPI_ERR_REQUEST, MPI_ERR_ARG, "start-null-request");
  req = MPI_REQUEST_NULL;
  check_class(MPI_Cancel(&req), MPI_ERR_REQUEST, MPI_ERR_ARG, "cancel-null-request");

  alarm(0);
  still_works("bad-arguments");
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  detect_library();
  check_rc(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "set-errors-return");
  g_left = (g_rank + g_size - 1) % g_size;
  g_right = (g_rank + 1) % g_size;
  g_sbuf = malloc(kBig + 1000);
  g_rbuf = malloc(kBig + 1000);

  test_truncation();
  MPI_Barrier(MPI_COMM_WORLD);
  test_cancel();
  MPI_Barrier(MPI_COMM_WORLD);
  test_bsend();
  MPI_Barrier(MPI_COMM_WORLD);
  test_arguments();

  free(g_sbuf);
  free(g_rbuf);
  check_rc(MPI_Finalize(), "finalize");
  return check_done(g_size);
}
