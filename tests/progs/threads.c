/* threads: MPI_THREAD_MULTIPLE under stress. Every rank runs T threads (argv[1], default 4) through
 * each part below at once; the main thread joins them and reports one check per part:
 *   p2p        each thread sends to every other rank on its own tag and receives with
 *              MPI_ANY_SOURCE (odd threads: MPI_ANY_TAG on a communicator of their own); eager
 *              and rendezvous sizes, standard and synchronous sends. Per (source, thread) the
 *              sequence numbers arrive in order (MPI's non-overtaking rule).
 *   coll       collectives on per-thread communicators, all threads at once, while each thread
 *              also duplicates, splits and frees communicators of its own and makes and frees
 *              datatypes (its context ids agreed while the others agree theirs).
 *   mprobe     every thread takes messages off one shared (communicator, tag) with MPI_Improbe
 *              and MPI_Mrecv: each message is received exactly once. Plus blocking MPI_Probe
 *              then MPI_Recv on a tag of each thread's own.
 *   foreign    thread 0 starts the requests, the others complete them (Wait, Test loops, Waitall,
 *              Waitany, Waitsome).
 *   blocked    one thread blocks in MPI_Recv for a message that its peer sends only after the
 *              other threads of both ranks have run collectives: a blocked thread must not keep
 *              the others out.
 *   device     (argv[2] = "device", torusmpi only) every thread allocates device memory, runs
 *              collectives and a ring exchange on it, and frees it, all threads at once.
 * Integer data, checked exactly. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* torusmpi.h's extension, declared weak: the program is built with Open MPI's mpicc. */
extern int torusmpi_device_malloc(void** ptr, size_t bytes) __attribute__((weak));
extern int torusmpi_device_free(void* ptr) __attribute__((weak));
extern int torusmpi_memcpy(void* dst, const void* src, size_t bytes) __attribute__((weak));

enum { kMaxThreads = 16, kRounds = 24, kBigInts = 16384 /* 64 KiB: rendezvous */ };

static int g_size, g_threads;
static MPI_Comm g_own[kMaxThreads]; /* one communicator per thread: a dup of MPI_COMM_WORLD */
static MPI_Comm g_shared;           /* every thread's, for the mprobe part */

/* The first failure of a part, kept for the report; parts count their failures. */
static pthread_mutex_t g_fail_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_part_failures;
static char g_part_first[256];

static void fail(int thread, const char* fmt, ...) {
  pthread_mutex_lock(&g_fail_lock);
  if (g_part_failures++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(g_part_first, sizeof g_part_first, "thread %d: ", thread);
    vsnprintf(g_part_first + n, sizeof g_part_first - (size_t)n, fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&g_fail_lock);
}

static void expect_rc(int thread, int rc, const char* what) {
  if (rc != MPI_SUCCESS) fail(thread, "%s returned %d", what, rc);
}

/* Runs fn in every thread, then reports the part as one check. */
static void run_part(const char* name, void* (*fn)(void*)) {
  pthread_t tid[kMaxThreads];
  intptr_t i;
  g_part_failures = 0;
  g_part_first[0] = '\0';
  for (i = 0; i < g_threads; ++i) pthread_create(&tid[i], NULL, fn, (void*)i);
  for (i = 0; i < g_threads; ++i) pthread_join(tid[i], NULL);
  check(g_part_failures == 0, name, "%d failure(s), first: %s", g_part_failures, g_part_first);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* --- p2p: message k of (source s, thread t) carries s, t, k and a pattern. */
static int p2p_ints(int k) { return k % 7 == 3 ? kBigInts : 1 + k % 5; }
static int pattern(int s, int t, int k, int i) { return s * 1000003 + t * 10007 + k * 101 + i; }

static void* p2p_part(void* arg) {
  const int t = (int)(intptr_t)arg;
  const int any_tag = t % 2 == 1;
  MPI_Comm comm = any_tag ? g_own[t] : MPI_COMM_WORLD;
  const size_t slot = kBigInts + 3;
  const size_t nmsg = (size_t)kRounds * (size_t)g_size;
  int* in = malloc(sizeof(int) * slot);
  int** out = calloc(nmsg, sizeof(int*));           /* each message's own buffer */
  int* last = malloc(sizeof(int) * (size_t)g_size); /* last sequence seen per source */
  MPI_Request* sends = malloc(sizeof(MPI_Request) * nmsg);
  int k, peer, i, nsend = 0;
  for (i = 0; i < g_size; ++i) last[i] = -1;
  /* Sends are nonblocking (standard and synchronous, eager and rendezvous) and waited for only
   * at the end: a receive from any source may take a later round's message, so a rank that
   * waited for its sends every round could wait for a receiver that no longer needs one. */
  for (k = 0; k < kRounds; ++k) {
    for (peer = 0; peer < g_size; ++peer) {
      if (peer == g_rank) continue;
      int n = p2p_ints(k);
      int* o = out[nsend] = malloc(sizeof(int) * (size_t)(n + 3));
      o[0] = g_rank;
      o[1] = t;
      o[2] = k;
      for (i = 0; i < n; ++i) o[3 + i] = pattern(g_rank, t, k, i);
      if (k % 3 == 1) {
        expect_rc(t, MPI_Issend(o, n + 3, MPI_INT, peer, t, comm, &sends[nsend++]), "MPI_Issend");
      } else {
        expect_rc(t, MPI_Isend(o, n + 3, MPI_INT, peer, t, comm, &sends[nsend++]), "MPI_Isend");
      }
    }
    for (peer = 0; peer < g_size - 1; ++peer) {
      MPI_Status st;
      int got = -1;
      expect_rc(
          t, MPI_Recv(in, (int)slot, MPI_INT, MPI_ANY_SOURCE, any_tag ? MPI_ANY_TAG : t, comm, &st),
          "MPI_Recv(ANY_SOURCE)");
      MPI_Get_count(&st, MPI_INT, &got);
      if (st.MPI_TAG != t || in[1] != t || in[0] != st.MPI_SOURCE) {
        fail(t, "message from %d tag %d claims source %d thread %d", st.MPI_SOURCE, st.MPI_TAG,
             in[0], in[1]);
        continue;
      }
      if (in[2] <= last[in[0]]) fail(t, "message %d from %d after %d", in[2], in[0], last[in[0]]);
      last[in[0]] = in[2];
      if (got != p2p_ints(in[2]) + 3) {
        fail(t, "message %d from %d: %d ints, expected %d", in[2], in[0], got, p2p_ints(in[2]) + 3);
        continue;
      }
      for (i = 0; i < got - 3; ++i) {
        if (in[3 + i] != pattern(in[0], t, in[2], i)) {
          fail(t, "message %d from %d: int %d is %d", in[2], in[0], i, in[3 + i]);
          break;
        }
      }
    }
  }
  expect_rc(t, MPI_Waitall(nsend, sends, MPI_STATUSES_IGNORE), "MPI_Waitall(sends)");
  for (i = 0; i < nsend; ++i) free(out[i]);
  free(sends);
  free(last);
  free(out);
  free(in);
  return NULL;
}

/* --- coll: collectives on the thread's own communicator, with communicator and type churn. */
static void* coll_part(void* arg) {
  const int t = (int)(intptr_t)arg;
  MPI_Comm comm = g_own[t];
  enum { kCount = 1031 };
  int* in = malloc(sizeof(int) * kCount * (size_t)g_size);
  int* out = malloc(sizeof(int) * kCount * (size_t)g_size);
  int round, i, r;
  for (round = 0; round < 8; ++round) {
    for (i = 0; i < kCount; ++i) in[i] = g_rank + i + t + round;
    expect_rc(t, MPI_Allreduce(in, out, kCount, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
    for (i = 0; i < kCount; ++i) {
      int want = g_size * (g_size - 1) / 2 + g_size * (i + t + round);
      if (out[i] != want) {
        fail(t, "allreduce round %d: [%d] = %d, expected %d", round, i, out[i], want);
        break;
      }
    }
    const int root = (round + t) % g_size;
    for (i = 0; i < kCount; ++i) out[i] = g_rank == root ? root * 7 + i + t : -1;
    expect_rc(t, MPI_Bcast(out, kCount, MPI_INT, root, comm), "MPI_Bcast");
    for (i = 0; i < kCount; ++i) {
      if (out[i] != root * 7 + i + t) {
        fail(t, "bcast round %d root %d: [%d] = %d", round, root, i, out[i]);
        break;
      }
    }
    for (r = 0; r < g_size; ++r) in[r] = g_rank * 100 + r + t;
    expect_rc(t, MPI_Alltoall(in, 1, MPI_INT, out, 1, MPI_INT, comm), "MPI_Alltoall");
    for (r = 0; r < g_size; ++r) {
      if (out[r] != r * 100 + g_rank + t) {
        fail(t, "alltoall round %d: from %d got %d", round, r, out[r]);
        break;
      }
    }
    MPI_Request req;
    int x = g_rank + t, sum = -1;
    expect_rc(t, MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm, &req), "MPI_Iallreduce");
    expect_rc(t, MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait(Iallreduce)");
    if (sum != g_size * (g_size - 1) / 2 + g_size * t) fail(t, "iallreduce: %d", sum);

    /* Churn: every thread agrees context ids for its own new communicators at the same time. */
    MPI_Comm dup, half;
    expect_rc(t, MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
    expect_rc(t, MPI_Comm_split(dup, g_rank % 2, -g_rank, &half), "MPI_Comm_split");
    int hs = 0, hr = -1, want_hs = (g_size - g_rank % 2 + 1) / 2;
    MPI_Comm_size(half, &hs);
    MPI_Comm_rank(half, &hr);
    if (hs != want_hs || hr != want_hs - 1 - g_rank / 2)
      fail(t, "split: size %d rank %d, expected %d and %d", hs, hr, want_hs,
           want_hs - 1 - g_rank / 2);
    int hsum = 0, one = 1;
    expect_rc(t, MPI_Allreduce(&one, &hsum, 1, MPI_INT, MPI_SUM, half), "MPI_Allreduce(half)");
    if (hsum != hs) fail(t, "allreduce on the split half: %d of %d", hsum, hs);
    MPI_Datatype vec;
    expect_rc(t, MPI_Type_vector(4, 2, 3 + t, MPI_INT, &vec), "MPI_Type_vector");
    expect_rc(t, MPI_Type_commit(&vec), "MPI_Type_commit");
    for (i = 0; i < 4 * (3 + t); ++i) in[i] = g_rank == 0 ? i : -1;
    expect_rc(t, MPI_Bcast(in, 1, vec, 0, dup), "MPI_Bcast(vector)");
    for (i = 0; i < 4; ++i) {
      if (in[i * (3 + t)] != i * (3 + t) || in[i * (3 + t) + 1] != i * (3 + t) + 1)
        fail(t, "bcast of a vector type: block %d", i);
    }
    expect_rc(t, MPI_Type_free(&vec), "MPI_Type_free");
    expect_rc(t, MPI_Comm_free(&half), "MPI_Comm_free(half)");
    expect_rc(t, MPI_Comm_free(&dup), "MPI_Comm_free(dup)");
  }
  free(in);
  free(out);
  return NULL;
}

/* --- mprobe: every rank sends kPer messages to every other rank on g_shared, tag 7; the threads
 * of the receiver share them out with MPI_Improbe. */
enum { kPer = 40 };
static int g_taken;           /* messages received by the rank's threads, under g_fail_lock */
static unsigned char* g_seen; /* [source * kPer + seq] */

static void* mprobe_part(void* arg) {
  const int t = (int)(intptr_t)arg;
  const int expected = (g_size - 1) * kPer;
  int k, peer;
  /* Thread t sends the messages k = t, t + T, ... to every other rank, nonblocking: a blocking
   * send may wait for its receiver (rendezvous), and every thread sends before it receives. */
  int msgs[kPer][2];
  MPI_Request* sends = malloc(sizeof(MPI_Request) * (size_t)kPer * (size_t)g_size);
  int nsend = 0;
  for (k = t; k < kPer; k += g_threads) {
    msgs[k][0] = g_rank;
    msgs[k][1] = k;
    for (peer = 0; peer < g_size; ++peer) {
      if (peer == g_rank) continue;
      expect_rc(t, MPI_Isend(msgs[k], 2, MPI_INT, peer, 7, g_shared, &sends[nsend++]),
                "MPI_Isend(tag 7)");
    }
  }
  for (;;) {
    pthread_mutex_lock(&g_fail_lock);
    int done = g_taken >= expected;
    pthread_mutex_unlock(&g_fail_lock);
    if (done) break;
    int flag = 0;
    MPI_Message m;
    MPI_Status st;
    expect_rc(t, MPI_Improbe(MPI_ANY_SOURCE, 7, g_shared, &flag, &m, &st), "MPI_Improbe");
    if (!flag) continue;
    int msg[2] = {-1, -1};
    expect_rc(t, MPI_Mrecv(msg, 2, MPI_INT, &m, MPI_STATUS_IGNORE), "MPI_Mrecv");
    pthread_mutex_lock(&g_fail_lock);
    ++g_taken;
    int bad = msg[0] != st.MPI_SOURCE || msg[1] < 0 || msg[1] >= kPer;
    int twice = !bad && g_seen[msg[0] * kPer + msg[1]]++ > 0;
    pthread_mutex_unlock(&g_fail_lock);
    if (bad) fail(t, "mrecv: message (%d, %d) from %d", msg[0], msg[1], st.MPI_SOURCE);
    if (twice) fail(t, "message %d of %d received twice", msg[1], msg[0]);
  }
  /* Blocking probe on a tag only this thread receives: the probed message is still there. */
  const int tag = 100 + t;
  int mine = g_rank * 10 + t;
  for (peer = 0; peer < g_size; ++peer) {
    if (peer == g_rank) continue;
    expect_rc(t, MPI_Isend(&mine, 1, MPI_INT, peer, tag, g_shared, &sends[nsend++]),
              "MPI_Isend(own tag)");
  }
  for (k = 0; k < g_size - 1; ++k) {
    MPI_Status st;
    int v = -1, n = 0;
    expect_rc(t, MPI_Probe(MPI_ANY_SOURCE, tag, g_shared, &st), "MPI_Probe");
    MPI_Get_count(&st, MPI_INT, &n);
    expect_rc(t, MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, tag, g_shared, MPI_STATUS_IGNORE),
              "MPI_Recv(probed)");
    if (n != 1 || v != st.MPI_SOURCE * 10 + t)
      fail(t, "probed %d int(s) from %d: %d", n, st.MPI_SOURCE, v);
  }
  expect_rc(t, MPI_Waitall(nsend, sends, MPI_STATUSES_IGNORE), "MPI_Waitall(sends)");
  free(sends);
  return NULL;
}

/* --- foreign: thread 0 posts receives from the previous rank and sends to the next; the other
 * threads complete them, each its share, each by another call. */
enum { kForeign = 48 };
static MPI_Request g_recvs[kForeign], g_sends[kForeign];
static int g_in[kForeign], g_out[kForeign];
static volatile int g_posted;
static pthread_mutex_t g_post_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_post_cond = PTHREAD_COND_INITIALIZER;

static void* foreign_part(void* arg) {
  const int t = (int)(intptr_t)arg;
  const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  int i;
  if (t == 0) {
    for (i = 0; i < kForeign; ++i) {
      g_out[i] = g_rank * 1000 + i;
      expect_rc(t, MPI_Irecv(&g_in[i], 1, MPI_INT, prev, 300 + i, MPI_COMM_WORLD, &g_recvs[i]),
                "MPI_Irecv");
      expect_rc(t, MPI_Isend(&g_out[i], 1, MPI_INT, next, 300 + i, MPI_COMM_WORLD, &g_sends[i]),
                "MPI_Isend");
    }
    pthread_mutex_lock(&g_post_lock);
    g_posted = 1;
    pthread_cond_broadcast(&g_post_cond);
    pthread_mutex_unlock(&g_post_lock);
    return NULL;
  }
  pthread_mutex_lock(&g_post_lock);
  while (!g_posted) pthread_cond_wait(&g_post_cond, &g_post_lock);
  pthread_mutex_unlock(&g_post_lock);
  /* Thread t (1..T-1) owns the receives i with i % (T-1) == t-1, and completes them so: */
  const int helpers = g_threads - 1;
  MPI_Request mine[kForeign];
  int idx[kForeign], n = 0;
  for (i = t - 1; i < kForeign; i += helpers) {
    idx[n] = i;
    mine[n++] = g_recvs[i];
  }
  switch (t % 4) {
    case 1:
      for (i = 0; i < n; ++i) expect_rc(t, MPI_Wait(&mine[i], MPI_STATUS_IGNORE), "MPI_Wait");
      break;
    case 2:
      for (i = 0; i < n; ++i) {
        int flag = 0;
        while (!flag) expect_rc(t, MPI_Test(&mine[i], &flag, MPI_STATUS_IGNORE), "MPI_Test");
      }
      break;
    case 3: {
      int left = n, which;
      while (left-- > 0)
        expect_rc(t, MPI_Waitany(n, mine, &which, MPI_STATUS_IGNORE), "MPI_Waitany");
      break;
    }
    default: {
      int left = n, outs, done[kForeign];
      while (left > 0) {
        expect_rc(t, MPI_Waitsome(n, mine, &outs, done, MPI_STATUSES_IGNORE), "MPI_Waitsome");
        left -= outs;
      }
      break;
    }
  }
  for (i = 0; i < n; ++i) {
    if (g_in[idx[i]] != prev * 1000 + idx[i]) fail(t, "receive %d holds %d", idx[i], g_in[idx[i]]);
  }
  if (t == 1)
    expect_rc(t, MPI_Waitall(kForeign, g_sends, MPI_STATUSES_IGNORE), "MPI_Waitall(sends)");
  return NULL;
}

/* --- blocked: thread 0 waits in MPI_Recv for what the previous rank's thread 1 sends after its
 * collectives with this rank's thread 1 (and the others') are over. */
static void* blocked_part(void* arg) {
  const int t = (int)(intptr_t)arg;
  const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  if (t == 0) {
    int v = -1;
    expect_rc(t, MPI_Recv(&v, 1, MPI_INT, prev, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "MPI_Recv(blocked)");
    if (v != prev) fail(t, "blocked receive got %d", v);
    return NULL;
  }
  int i, x = 1, sum = 0;
  for (i = 0; i < 50; ++i) {
    expect_rc(t, MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, g_own[t]), "MPI_Allreduce");
    if (sum != g_size) fail(t, "allreduce %d: %d", i, sum);
  }
  if (t == 1) {
    int v = g_rank;
    expect_rc(t, MPI_Ssend(&v, 1, MPI_INT, next, 999, MPI_COMM_WORLD), "MPI_Ssend(unblock)");
  }
  return NULL;
}

/* --- device: buffers in emulated device memory, read and written only through torusmpi_memcpy. */
static void* device_part(void* arg) {
  const int t = (int)(intptr_t)arg;
  enum { kCount = 1031 };
  const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  int host[kCount], i, round;
  void *a = NULL, *b = NULL;
  expect_rc(t, torusmpi_device_malloc(&a, sizeof host), "torusmpi_device_malloc");
  expect_rc(t, torusmpi_device_malloc(&b, sizeof host), "torusmpi_device_malloc");
  for (round = 0; round < 6 && a != NULL && b != NULL; ++round) {
    for (i = 0; i < kCount; ++i) host[i] = g_rank * 3 + i + t + round;
    torusmpi_memcpy(a, host, sizeof host);
    expect_rc(t, MPI_Allreduce(a, b, kCount, MPI_INT, MPI_SUM, g_own[t]), "MPI_Allreduce(device)");
    torusmpi_memcpy(host, b, sizeof host);
    for (i = 0; i < kCount; ++i) {
      int want = 3 * g_size * (g_size - 1) / 2 + g_size * (i + t + round);
      if (host[i] != want) {
        fail(t, "device allreduce round %d: [%d] = %d, expected %d", round, i, host[i], want);
        break;
      }
    }
    MPI_Request rr;
    expect_rc(t, MPI_Irecv(b, kCount, MPI_INT, prev, 500 + t, g_own[t], &rr), "MPI_Irecv(device)");
    expect_rc(t, MPI_Send(a, kCount, MPI_INT, next, 500 + t, g_own[t]), "MPI_Send(device)");
    expect_rc(t, MPI_Wait(&rr, MPI_STATUS_IGNORE), "MPI_Wait(device)");
    torusmpi_memcpy(host, b, sizeof host);
    for (i = 0; i < kCount; ++i) {
      if (host[i] != prev * 3 + i + t + round) {
        fail(t, "device ring round %d: [%d] = %d", round, i, host[i]);
        break;
      }
    }
  }
  if (a != NULL) expect_rc(t, torusmpi_device_free(a), "torusmpi_device_free");
  if (b != NULL) expect_rc(t, torusmpi_device_free(b), "torusmpi_device_free");
  return NULL;
}

int main(int argc, char** argv) {
  int provided = -1, t;
  check_rc(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), "init_thread");
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  check(provided == MPI_THREAD_MULTIPLE, "provided-multiple", "provided %d", provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    return check_done(g_size);
  }
  g_threads = argc > 1 ? atoi(argv[1]) : 4;
  if (g_threads < 2) g_threads = 2;
  if (g_threads > kMaxThreads) g_threads = kMaxThreads;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  for (t = 0; t < g_threads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &g_own[t]);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_shared);
  g_seen = calloc((size_t)g_size * kPer, 1);
  int flag = 0;
  MPI_Is_thread_main(&flag);
  check(flag, "is-thread-main", "flag %d in the main thread", flag);

  run_part("p2p", p2p_part);
  run_part("coll", coll_part);
  run_part("mprobe", mprobe_part);
  run_part("foreign", foreign_part);
  run_part("blocked", blocked_part);
  if (argc > 2 && strcmp(argv[2], "device") == 0) {
    check(torusmpi_device_malloc != NULL, "device-api", "torusmpi's extension is not there");
    if (torusmpi_device_malloc != NULL) run_part("device", device_part);
  }

  int missing = 0, i;
  for (i = 0; i < g_size * kPer; ++i) missing += i / kPer != g_rank && !g_seen[i];
  check(missing == 0, "mprobe-all-received", "%d message(s) never received", missing);
  free(g_seen);
  for (t = 0; t < g_threads; ++t) MPI_Comm_free(&g_own[t]);
  MPI_Comm_free(&g_shared);
  check_rc(MPI_Finalize(), "finalize");
  return check_done(g_size);
}
