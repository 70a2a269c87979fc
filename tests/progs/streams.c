/* streams: stream-ordered calls (torusmpi.h's MPIX_Stream_* and MPIX_*_enqueue), any number of
 * ranks, every buffer on the device.
 *
 *   streams        order within a stream (a fill enqueued before an allreduce is what it reduces;
 *                  a host function after it sees its result; nothing runs before its turn, held
 *                  back by a gate the program opens), two streams at once (one waits for a message
 *                  while the other finishes an allreduce), every enqueued collective and
 *                  point-to-point call with its statuses, errors (at the call when the arguments
 *                  show them, at synchronize when an entry fails, and the stream goes on), and
 *                  work still queued at MPI_Finalize, which runs it.
 *   streams abort  rank 0 calls MPI_Abort while every rank's stream waits for a message that never
 *                  comes: the job must end (the script checks that nothing is left).
 *
 * Built with Open MPI's mpicc: torusmpi's calls are declared here, weak (see device.c). */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

typedef struct torusmpi_stream* MPIX_Stream;
#define MPIX_STREAM_NULL ((MPIX_Stream)0)
extern int torusmpi_device_malloc(void** ptr, size_t bytes) __attribute__((weak));
extern int torusmpi_device_free(void* ptr) __attribute__((weak));
extern int torusmpi_memcpy(void* dst, const void* src, size_t bytes) __attribute__((weak));
extern int torusmpi_memset(void* dst, int value, size_t bytes) __attribute__((weak));
extern int MPIX_Stream_create(MPI_Info info, MPIX_Stream* stream) __attribute__((weak));
extern int MPIX_Stream_free(MPIX_Stream* stream) __attribute__((weak));
extern int MPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm* newcomm)
    __attribute__((weak));
extern int MPIX_Send_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                             MPI_Comm comm) __attribute__((weak));
extern int MPIX_Recv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                             MPI_Comm comm, MPI_Status* status) __attribute__((weak));
extern int MPIX_Isend_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                              MPI_Comm comm, MPI_Request* request) __attribute__((weak));
extern int MPIX_Irecv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                              MPI_Comm comm, MPI_Request* request) __attribute__((weak));
extern int MPIX_Wait_enqueue(MPI_Request* request, MPI_Status* status) __attribute__((weak));
extern int MPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[],
                                MPI_Status array_of_statuses[]) __attribute__((weak));
extern int MPIX_Allreduce_enqueue(const void* sendbuf, void* recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
    __attribute__((weak));
extern int MPIX_Allgather_enqueue(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm) __attribute__((weak));
extern int MPIX_Reduce_scatter_enqueue(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
    __attribute__((weak));
extern int MPIX_Reduce_scatter_block_enqueue(const void* sendbuf, void* recvbuf, int recvcount,
                                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
    __attribute__((weak));
extern int MPIX_Alltoall_enqueue(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
    __attribute__((weak));
extern int MPIX_Bcast_enqueue(void* buffer, int count, MPI_Datatype datatype, int root,
                              MPI_Comm comm) __attribute__((weak));
extern int torusmpi_stream_memcpy(MPIX_Stream stream, void* dst, const void* src, size_t bytes)
    __attribute__((weak));
extern int torusmpi_stream_memset(MPIX_Stream stream, void* dst, int value, size_t bytes)
    __attribute__((weak));
extern int torusmpi_stream_host_fn(MPIX_Stream stream, int (*fn)(void* arg), void* arg)
    __attribute__((weak));
extern int torusmpi_stream_synchronize(MPIX_Stream stream) __attribute__((weak));
extern int torusmpi_stream_query(MPIX_Stream stream, int* idle) __attribute__((weak));

static int g_size;

static void* dev(size_t bytes) {
  void* p = NULL;
  if (torusmpi_device_malloc(&p, bytes ? bytes : 1) != MPI_SUCCESS) {
    printf("FAIL %d cannot allocate %zu B of device memory\n", g_rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* A host function that waits for the program to open its gate, then records that it ran. */
struct gate {
  atomic_int open;
  atomic_int passed;
};
static int wait_gate(void* arg) {
  struct gate* g = arg;
  while (!atomic_load(&g->open)) usleep(1000);
  atomic_store(&g->passed, 1);
  return 0;
}

/* A host function that checks, when it runs, that n ints at got equal want[] (both host). */
struct seen {
  const int* got;
  const int* want;
  int n;
  atomic_int ran, right;
};
static int check_seen(void* arg) {
  struct seen* s = arg;
  atomic_store(&s->right, memcmp(s->got, s->want, (size_t)s->n * sizeof(int)) == 0);
  atomic_store(&s->ran, 1);
  return 0;
}

static int fail_with_7(void* arg) {
  (void)arg;
  return 7;
}

/* Order: gate, fill, allreduce in place, copy back, check. Until the gate opens nothing after it
 * may have run: the stream is busy, and the host copy still holds what the program put there. */
static void test_order(MPIX_Stream s, MPI_Comm sc) {
  enum { n = 1031 };
  int* d = dev(n * sizeof(int));
  int* h = malloc(n * sizeof(int));
  int* want = malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) {
    h[i] = -1;
    want[i] = 0x01010101 * (g_size * (g_size + 1) / 2); /* sum of the filled bytes' ints */
  }
  torusmpi_memset(d, 0x7f, n * sizeof(int));
  struct gate g = {0, 0};
  struct seen seen = {h, want, n, 0, 0};
  check_rc(torusmpi_stream_host_fn(s, wait_gate, &g), "order: host function enqueued");
  check_rc(torusmpi_stream_memset(s, d, g_rank + 1, n * sizeof(int)), "order: fill enqueued");
  check_rc(MPIX_Allreduce_enqueue(MPI_IN_PLACE, d, n, MPI_INT, MPI_SUM, sc),
           "order: allreduce enqueued");
  check_rc(torusmpi_stream_memcpy(s, h, d, n * sizeof(int)), "order: copy enqueued");
  check_rc(torusmpi_stream_host_fn(s, check_seen, &seen), "order: check enqueued");
  int idle = 1;
  torusmpi_stream_query(s, &idle);
  check(!idle && h[0] == -1 && !atomic_load(&seen.ran), "order: nothing runs before its turn",
        "idle %d, h[0] %d, check ran %d", idle, h[0], atomic_load(&seen.ran));
  atomic_store(&g.open, 1);
  check_rc(torusmpi_stream_synchronize(s), "order: synchronize");
  torusmpi_stream_query(s, &idle);
  check(idle && atomic_load(&seen.ran) && atomic_load(&seen.right),
        "order: the allreduce saw the fill and the host function its result",
        "idle %d, ran %d, right %d, h[0] %d (want %d)", idle, atomic_load(&seen.ran),
        atomic_load(&seen.right), h[0], want[0]);
  torusmpi_device_free(d);
  free(h);
  free(want);
}

/* Two streams: the first waits for a message from the left that is sent only once the second has
 * finished an allreduce; the engine runs the second meanwhile. */
static void test_two_streams(MPIX_Stream s1, MPI_Comm c1, MPIX_Stream s2, MPI_Comm c2) {
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  enum { n = 4099 };
  int* d1 = dev(n * sizeof(int));
  int* d2 = dev(n * sizeof(int));
  int* h = malloc(n * sizeof(int));
  torusmpi_memset(d1, 0, n * sizeof(int));
  MPI_Status st;
  st.MPI_SOURCE = st.MPI_TAG = -5;
  check_rc(MPIX_Recv_enqueue(d1, n, MPI_INT, left, 42, c1, &st), "two streams: receive enqueued");
  for (int i = 0; i < n; ++i) h[i] = g_rank * i;
  torusmpi_memcpy(d2, h, n * sizeof(int));
  check_rc(MPIX_Allreduce_enqueue(MPI_IN_PLACE, d2, n, MPI_INT, MPI_SUM, c2),
           "two streams: allreduce enqueued");
  check_rc(torusmpi_stream_synchronize(s2), "two streams: second stream synchronized");
  int idle = 1;
  torusmpi_stream_query(s1, &idle);
  check(!idle, "two streams: the first still waits for its message", "it is idle");
  MPI_Barrier(MPI_COMM_WORLD); /* every rank has looked before any sends */
  torusmpi_memcpy(h, d2, n * sizeof(int));
  int bad = 0;
  for (int i = 0; i < n && !bad; ++i) bad = h[i] != i * (g_size * (g_size - 1) / 2);
  check(!bad, "two streams: the second's allreduce", "wrong result");
  /* The message the first stream waits for: the program's own send on the stream's comm. */
  for (int i = 0; i < n; ++i) h[i] = g_rank * 1000 + i;
  MPI_Send(h, n, MPI_INT, right, 42, c1);
  check_rc(torusmpi_stream_synchronize(s1), "two streams: first stream synchronized");
  torusmpi_memcpy(h, d1, n * sizeof(int));
  bad = 0;
  for (int i = 0; i < n && !bad; ++i) bad = h[i] != left * 1000 + i;
  check(!bad && st.MPI_SOURCE == left && st.MPI_TAG == 42, "two streams: the first's message",
        "source %d tag %d, data %s", st.MPI_SOURCE, st.MPI_TAG, bad ? "wrong" : "right");
  torusmpi_device_free(d1);
  torusmpi_device_free(d2);
  free(h);
}

/* Point-to-point in a stream: a ring of Isend/Irecv_enqueue waited by Waitall_enqueue (statuses
 * written when the wait runs), and Send/Recv_enqueue to self and around the ring. */
static void test_p2p(MPIX_Stream s, MPI_Comm sc) {
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  const int sizes[] = {0, 1, 7, 1000, 70001}; /* eager and rendezvous */
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
    const int n = sizes[k];
    const size_t bytes = (size_t)n * sizeof(int);
    int* out = malloc(bytes + sizeof(int));
    int* in = malloc(bytes + sizeof(int));
    for (int i = 0; i < n; ++i) out[i] = g_rank * 7 + i;
    int* dout = dev(bytes);
    int* din = dev(bytes);
    torusmpi_memcpy(dout, out, bytes);
    MPI_Request r[2];
    MPI_Status st[2];
    st[0].MPI_SOURCE = st[1].MPI_SOURCE = -5;
    struct gate g = {0, 0};
    torusmpi_stream_host_fn(s, wait_gate, &g); /* holds the stream while the program looks */
    check_rc(MPIX_Irecv_enqueue(din, n, MPI_INT, left, 5, sc, &r[0]), "p2p: Irecv_enqueue");
    check_rc(MPIX_Isend_enqueue(dout, n, MPI_INT, right, 5, sc, &r[1]), "p2p: Isend_enqueue");
    check_rc(MPIX_Waitall_enqueue(2, r, st), "p2p: Waitall_enqueue");
    check(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "p2p: requests set to null",
          "not null");
    check(st[0].MPI_SOURCE == -5, "p2p: status not written before the wait runs",
          "source %d already", st[0].MPI_SOURCE);
    atomic_store(&g.open, 1);
    torusmpi_stream_memcpy(s, in, din, bytes);
    check_rc(torusmpi_stream_synchronize(s), "p2p: synchronize");
    int got = -1;
    MPI_Get_count(&st[0], MPI_INT, &got);
    int bad = 0;
    for (int i = 0; i < n && !bad; ++i) bad = in[i] != left * 7 + i;
    check(!bad && got == n && st[0].MPI_SOURCE == left && st[0].MPI_TAG == 5,
          "p2p: ring through Isend/Irecv_enqueue", "n %d: count %d source %d, data %s", n, got,
          st[0].MPI_SOURCE, bad ? "wrong" : "right");
    /* To self: a send started, then a blocking receive of a shorter message (the send cannot be
     * blocking: a device message is a rendezvous and its receive would come after it), and
     * around the ring with the blocking forms. */
    MPI_Status rs;
    MPI_Request sr;
    const int part = n / 2;
    torusmpi_memset(din, 0, bytes);
    check_rc(MPIX_Isend_enqueue(dout, part, MPI_INT, g_rank, 6, sc, &sr),
             "p2p: Isend_enqueue to self");
    check_rc(MPIX_Recv_enqueue(din, n, MPI_INT, g_rank, 6, sc, &rs), "p2p: Recv_enqueue from self");
    check_rc(MPIX_Wait_enqueue(&sr, MPI_STATUS_IGNORE), "p2p: Wait_enqueue");
    check_rc(torusmpi_stream_synchronize(s), "p2p: synchronize self");
    MPI_Get_count(&rs, MPI_INT, &got);
    torusmpi_memcpy(in, din, bytes);
    bad = 0;
    for (int i = 0; i < got && !bad; ++i) bad = in[i] != g_rank * 7 + i;
    check(!bad && got == part && rs.MPI_SOURCE == g_rank && rs.MPI_TAG == 6,
          "p2p: Isend/Recv_enqueue to self", "n %d: count %d source %d, data %s", n, got,
          rs.MPI_SOURCE, bad ? "wrong" : "right");
    if (g_rank % 2 == 0) {
      MPIX_Send_enqueue(dout, n, MPI_INT, right, 8, sc);
      MPIX_Recv_enqueue(din, n, MPI_INT, left, 8, sc, &rs);
    } else {
      MPIX_Recv_enqueue(din, n, MPI_INT, left, 8, sc, &rs);
      MPIX_Send_enqueue(dout, n, MPI_INT, right, 8, sc);
    }
    check_rc(torusmpi_stream_synchronize(s), "p2p: synchronize ring");
    torusmpi_memcpy(in, din, bytes);
    bad = 0;
    for (int i = 0; i < n && !bad; ++i) bad = in[i] != left * 7 + i;
    check(!bad, "p2p: Send/Recv_enqueue ring", "n %d: wrong data", n);
    torusmpi_device_free(dout);
    torusmpi_device_free(din);
    free(out);
    free(in);
  }
}

/* Every enqueued collective, each result copied back in the stream and compared. */
static void test_collectives(MPIX_Stream s, MPI_Comm sc) {
  const int p = g_size, counts[] = {0, 1, p - 1, p, p + 1, 1009};
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) {
    const int n = counts[k];
    const size_t all = (size_t)n * p;
    int* h = malloc((all + 1) * sizeof(int));
    int* want = malloc((all + 1) * sizeof(int));
    int* ds = dev(all * sizeof(int));
    int* dr = dev(all * sizeof(int));
    char what[96];
    /* Allgather: block q is q's n values. */
    for (int i = 0; i < n; ++i) h[i] = g_rank * 100 + i;
    torusmpi_memcpy(ds, h, (size_t)n * sizeof(int));
    MPIX_Allgather_enqueue(ds, n, MPI_INT, dr, n, MPI_INT, sc);
    torusmpi_stream_memcpy(s, h, dr, all * sizeof(int));
    snprintf(what, sizeof what, "Allgather_enqueue n=%d", n);
    check_rc(torusmpi_stream_synchronize(s), what);
    for (size_t i = 0; i < all; ++i) want[i] = (int)(i / (size_t)n) * 100 + (int)(i % (size_t)n);
    check(memcmp(h, want, all * sizeof(int)) == 0, what, "wrong result");
    /* Alltoall: rank r sends r*1000 + q*10 + i to q. */
    for (size_t i = 0; i < all; ++i)
      h[i] = g_rank * 1000 + (int)(i / (size_t)n) * 10 + (int)(i % (size_t)n);
    torusmpi_memcpy(ds, h, all * sizeof(int));
    MPIX_Alltoall_enqueue(ds, n, MPI_INT, dr, n, MPI_INT, sc);
    torusmpi_stream_memcpy(s, h, dr, all * sizeof(int));
    snprintf(what, sizeof what, "Alltoall_enqueue n=%d", n);
    check_rc(torusmpi_stream_synchronize(s), what);
    for (size_t i = 0; i < all; ++i)
      want[i] = (int)(i / (size_t)n) * 1000 + g_rank * 10 + (int)(i % (size_t)n);
    check(memcmp(h, want, all * sizeof(int)) == 0, what, "wrong result");
    /* Reduce_scatter_block and Reduce_scatter (equal counts, then all on the last rank). */
    for (size_t i = 0; i < all; ++i) h[i] = g_rank + (int)i;
    torusmpi_memcpy(ds, h, all * sizeof(int));
    MPIX_Reduce_scatter_block_enqueue(ds, dr, n, MPI_INT, MPI_SUM, sc);
    torusmpi_stream_memcpy(s, h, dr, (size_t)n * sizeof(int));
    snprintf(what, sizeof what, "Reduce_scatter_block_enqueue n=%d", n);
    check_rc(torusmpi_stream_synchronize(s), what);
    for (int i = 0; i < n; ++i) want[i] = p * (p - 1) / 2 + p * (g_rank * n + i);
    check(memcmp(h, want, (size_t)n * sizeof(int)) == 0, what, "wrong result");
    int* rc = malloc((size_t)p * sizeof(int));
    for (int q = 0; q < p; ++q) rc[q] = q == p - 1 ? (int)all : 0;
    for (size_t i = 0; i < all; ++i) h[i] = g_rank + (int)i;
    torusmpi_memcpy(ds, h, all * sizeof(int));
    MPIX_Reduce_scatter_enqueue(ds, dr, rc, MPI_INT, MPI_SUM, sc);
    free(rc); /* the call keeps its own copy of the counts */
    const size_t mine = g_rank == p - 1 ? all : 0;
    torusmpi_stream_memcpy(s, h, dr, mine * sizeof(int));
    snprintf(what, sizeof what, "Reduce_scatter_enqueue n=%d", n);
    check_rc(torusmpi_stream_synchronize(s), what);
    for (size_t i = 0; i < mine; ++i) want[i] = p * (p - 1) / 2 + p * (int)i;
    check(memcmp(h, want, mine * sizeof(int)) == 0, what, "wrong result");
    /* Bcast from every root. */
    for (int root = 0; root < p; ++root) {
      for (int i = 0; i < n; ++i) h[i] = g_rank == root ? root * 31 + i : -1;
      torusmpi_memcpy(ds, h, (size_t)n * sizeof(int));
      MPIX_Bcast_enqueue(ds, n, MPI_INT, root, sc);
      torusmpi_stream_memcpy(s, h, ds, (size_t)n * sizeof(int));
      snprintf(what, sizeof what, "Bcast_enqueue n=%d root=%d", n, root);
      check_rc(torusmpi_stream_synchronize(s), what);
      int bad = 0;
      for (int i = 0; i < n && !bad; ++i) bad = h[i] != root * 31 + i;
      check(!bad, what, "wrong result");
    }
    torusmpi_device_free(ds);
    torusmpi_device_free(dr);
    free(h);
    free(want);
  }
}

/* Errors: what the arguments show is raised at the call; what fails when an entry runs is
 * returned by synchronize, and the stream goes on. MPI_ERRORS_RETURN on the world (synchronize
 * raises there) and on the stream's communicator. */
static void test_errors(MPIX_Stream s, MPI_Comm sc) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(sc, MPI_ERRORS_RETURN);
  int x = 1, y = 0, cls = -1;
  int rc = MPIX_Allreduce_enqueue(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_ARG, "errors: enqueue on a communicator without a stream", "class %d", cls);
  rc = MPIX_Send_enqueue(&x, 1, MPI_INT, g_size + 3, 0, sc);
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_RANK, "errors: Send_enqueue to a rank past the group", "class %d", cls);
  rc = torusmpi_stream_synchronize((MPIX_Stream)&x);
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_ARG, "errors: synchronize of something not a stream", "class %d", cls);
  /* An entry that fails when it runs: a null op, found by the allreduce the engine starts. */
  rc = MPIX_Allreduce_enqueue(&x, &y, 1, MPI_INT, MPI_OP_NULL, sc);
  check(rc == MPI_SUCCESS, "errors: a bad allreduce is enqueued", "returned %d", rc);
  torusmpi_stream_host_fn(s, fail_with_7, NULL);
  rc = torusmpi_stream_synchronize(s);
  MPI_Error_class(rc, &cls);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  check(cls == MPI_ERR_OP && strstr(text, "MPIX_Allreduce_enqueue") != NULL,
        "errors: synchronize returns the first failed entry's error, naming it", "class %d: %s",
        cls, text);
  rc = torusmpi_stream_synchronize(s);
  check(rc == MPI_SUCCESS, "errors: ... and forgets it", "returned %d", rc);
  torusmpi_stream_host_fn(s, fail_with_7, NULL);
  rc = torusmpi_stream_synchronize(s);
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_OTHER, "errors: a host function's nonzero return", "class %d", cls);
  rc = MPIX_Allreduce_enqueue(&x, &y, 1, MPI_INT, MPI_SUM, sc);
  torusmpi_stream_synchronize(s);
  check(rc == MPI_SUCCESS && y == g_size, "errors: the stream goes on after them", "y %d", y);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static int set_flag(void* arg) {
  *(int*)arg = 1;
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (MPIX_Stream_create == NULL || torusmpi_device_malloc == NULL) {
    printf("FAIL %d torusmpi's stream calls are not there: not running on torusmpi\n", g_rank);
    MPI_Finalize();
    return 1;
  }
  MPIX_Stream s1, s2;
  MPI_Comm c1, c2;
  check_rc(MPIX_Stream_create(MPI_INFO_NULL, &s1), "MPIX_Stream_create");
  check_rc(MPIX_Stream_create(MPI_INFO_NULL, &s2), "MPIX_Stream_create, a second");
  check_rc(MPIX_Stream_comm_create(MPI_COMM_WORLD, s1, &c1), "MPIX_Stream_comm_create");
  check_rc(MPIX_Stream_comm_create(MPI_COMM_WORLD, s2, &c2), "MPIX_Stream_comm_create, a second");
  if (argc > 1 && strcmp(argv[1], "abort") == 0) {
    int x;
    MPIX_Recv_enqueue(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, c1, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
      printf("aborting\n");
      fflush(stdout);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    torusmpi_stream_synchronize(s1); /* never returns: the abort ends it */
    return 1;
  }
  test_order(s1, c1);
  test_two_streams(s1, c1, s2, c2);
  test_p2p(s1, c1);
  test_collectives(s2, c2);
  test_errors(s1, c1);
  /* Work still queued at MPI_Finalize runs before it returns. */
  static int flag;
  int* d = dev(64 * sizeof(int));
  torusmpi_memset(d, 0, 64 * sizeof(int));
  MPIX_Allreduce_enqueue(MPI_IN_PLACE, d, 64, MPI_INT, MPI_SUM, c2);
  torusmpi_stream_host_fn(s2, set_flag, &flag);
  MPI_Comm_free(&c1);
  check_rc(MPIX_Stream_free(&s1), "MPIX_Stream_free");
  check(s1 == MPIX_STREAM_NULL, "MPIX_Stream_free sets the handle to null", "it did not");
  int rc = check_done(g_size);
  fflush(stdout);
  MPI_Finalize();
  printf("after finalize %d: queued work %s\n", g_rank, flag ? "ran" : "did not run");
  return rc;
}
