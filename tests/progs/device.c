/* device: device buffers (torusmpi.h) in every MPI call that moves data.
 *
 *   device          any number of ranks: pointer kinds, MPI_Alloc_mem with the device key, bad
 *                   buffers under MPI_ERRORS_RETURN, point-to-point between every pair of kinds
 *                   at eager and rendezvous sizes, Sendrecv_replace, a vector datatype on device
 *                   memory, and every collective (blocking, and some nonblocking) on device
 *                   buffers everywhere, mixed (even ranks device, odd ranks host) and in place.
 *                   Integer data, each result compared with a reference computed on the host.
 *   device overrun  any number of ranks: only the collectives whose count runs past a device
 *                   allocation (MPI_ERR_BUFFER under MPI_ERRORS_RETURN, then a good call).
 *   device only     any number of ranks: the point-to-point ring, self sends, Sendrecv_replace,
 *                   a vector datatype device to device and in a broadcast, and every collective
 *                   with device buffers on every rank, nothing else, so
 *                   that the script can check that no device byte passed through host memory.
 *   device overlap  any number of ranks: a 1 MiB MPI_Iallreduce on device buffers, started by
 *                   one rank 2 ms before the others and followed by a sleep (at least 20 ms) or
 *                   100 ms of spinning computation, has its result in the output buffer on that
 *                   rank before any MPI call (its engine ran it): after the sleep in all
 *                   but one of the tries it led, after the spinning in all; results right. How
 *                   often a sleep of twice the blocking time is enough is printed (a speed figure).
 *   device idle     two or more ranks: rank 0's nonblocking device allreduce waits 1 s for rank 1
 *                   to join while rank 0 sleeps; the chip's engine, with that work in flight and
 *                   nothing arriving, sleeps too: rank 0 uses less than 0.2 s of CPU meanwhile.
 *   device deref    one rank: reads a device pointer in host code, which must fault under
 *                   TORUSMPI_DEVICE_GUARD=1 (the script expects SIGSEGV) and works without it.
 *
 * Built with Open MPI's mpicc, which knows nothing of torusmpi.h: the extension calls are declared
 * here, weak, so the program links against Open MPI and finds them when torusmpi is preloaded.
 * Device bytes are only read or written through torusmpi_memcpy/memset, as a real accelerator's
 * would be. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define TORUSMPI_MEMORY_INVALID (-1)
#define TORUSMPI_MEMORY_HOST 0
#define TORUSMPI_MEMORY_DEVICE 1
extern int torusmpi_device_malloc(void** ptr, size_t bytes) __attribute__((weak));
extern int torusmpi_device_free(void* ptr) __attribute__((weak));
extern int torusmpi_memcpy(void* dst, const void* src, size_t bytes) __attribute__((weak));
extern int torusmpi_memset(void* dst, int value, size_t bytes) __attribute__((weak));
extern int torusmpi_pointer_kind(const void* ptr, int* kind, int* chip) __attribute__((weak));
extern int torusmpi_device_chip(int* chip) __attribute__((weak));

static int g_size;

/* Memory of either kind; contents set and read only through torusmpi_memcpy. */
static void* mem(size_t bytes, int on_device) {
  void* p = NULL;
  if (on_device) {
    if (torusmpi_device_malloc(&p, bytes) != MPI_SUCCESS) p = NULL;
  } else {
    p = malloc(bytes > 0 ? bytes : 1);
  }
  if (p == NULL) {
    printf("FAIL %d cannot allocate %zu B (%s)\n", g_rank, bytes, on_device ? "device" : "host");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}
static void mem_free(void* p, int on_device) {
  if (on_device) {
    torusmpi_device_free(p);
  } else {
    free(p);
  }
}
static void put(void* dst, const void* src, size_t bytes) { torusmpi_memcpy(dst, src, bytes); }

/* A buffer of n ints of the given kind holding src (or garbage 0x5a bytes when src is NULL). */
static int* ints(const int* src, size_t n, int on_device) {
  int* p = mem(n * sizeof(int), on_device);
  if (src != NULL) {
    put(p, src, n * sizeof(int));
  } else {
    torusmpi_memset(p, 0x5a, n * sizeof(int));
  }
  return p;
}

/* Compares n ints of buf (either kind) with want; one check line. */
static void expect_ints(const char* what, const int* buf, const int* want, size_t n) {
  int* got = malloc(n * sizeof(int) + 1);
  put(got, buf, n * sizeof(int));
  size_t bad = n;
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      bad = i;
      break;
    }
  }
  if (bad < n) {
    check(0, what, "element %zu is %d, expected %d (%zu ints)", bad, got[bad], want[bad], n);
  } else {
    check(1, what, "");
  }
  free(got);
}

static int value(int rank, size_t i) { return (int)(rank * 100003 + (int)(i % 9973) - 4000); }

/* --- Pointer kinds, allocation, bad buffers */

/* A count that runs past a live device allocation: the collectives check every byte the
 * arguments name, not the first, so every rank returns MPI_ERR_BUFFER before moving data. Run
 * under MPI_ERRORS_RETURN. */
static void test_overrun(void) {
  int one = 1, rc, cls = -1, len = 0;
  char text[MPI_MAX_ERROR_STRING];
  int* small = mem(64 * sizeof(int), 1);
  rc = MPI_Allreduce(MPI_IN_PLACE, small, 65, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, text, &len);
  check(cls == MPI_ERR_BUFFER && strstr(text, "MPI_Allreduce") != NULL &&
            strstr(text, "recvbuf argument") != NULL && strstr(text, "(260 B)") != NULL,
        "MPI_Allreduce with a count past a device allocation is MPI_ERR_BUFFER", "class %d: %s",
        cls, text);
  /* 64 ints from each rank fit the allocation once, not g_size times. */
  static int block[64];
  rc = MPI_Allgather(block, 64, MPI_INT, small, 64, MPI_INT, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, text, &len);
  check(cls == MPI_ERR_BUFFER && strstr(text, "MPI_Allgather") != NULL &&
            strstr(text, "recvbuf argument") != NULL,
        "MPI_Allgather with blocks past a device allocation is MPI_ERR_BUFFER", "class %d: %s", cls,
        text);
  /* ... and the job goes on: the same buffer with a count that fits. */
  put(small, &one, sizeof one);
  rc = MPI_Allreduce(MPI_IN_PLACE, small, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int sum = 0;
  torusmpi_memcpy(&sum, small, sizeof sum);
  check(rc == MPI_SUCCESS && sum == g_size, "MPI_Allreduce after the refused calls",
        "rc %d, sum %d (want %d)", rc, sum, g_size);
  mem_free(small, 1);
  if (g_rank == 0) printf("overrun: refused, then an allreduce of %d ranks\n", g_size);
}

static void test_kinds(void) {
  int kind = -2, chip = -2, mychip = -2;
  int stack_var = 0;
  check_rc(torusmpi_device_chip(&mychip), "torusmpi_device_chip");
  /* Ranks are placed core first, then chip, then instance: on torus:AxB[xC]:cores=N rank r is on
   * chip (r / N) mod (A * B * C) of its instance (TORUSMPI_INSTANCES may give several). */
  const char* model = getenv("TORUSMPI_INSTANCE");
  const char* cores = model != NULL ? strstr(model, "cores=") : NULL;
  int dims[3] = {1, 1, 1};
  if (model != NULL) sscanf(model, "torus:%dx%dx%d", &dims[0], &dims[1], &dims[2]);
  int want_chip = cores != NULL ? (g_rank / atoi(cores + 6)) % (dims[0] * dims[1] * dims[2]) : 0;
  check(mychip == want_chip, "the rank's chip follows the placement", "chip %d, expected %d",
        mychip, want_chip);
  torusmpi_pointer_kind(&stack_var, &kind, &chip);
  check(kind == TORUSMPI_MEMORY_HOST && chip == -1, "stack is host", "kind %d chip %d", kind, chip);
  int* heap = malloc(64);
  torusmpi_pointer_kind(heap, &kind, &chip);
  check(kind == TORUSMPI_MEMORY_HOST, "heap is host", "kind %d", kind);
  free(heap);
  void* d = mem(4096, 1);
  torusmpi_pointer_kind(d, &kind, &chip);
  check(kind == TORUSMPI_MEMORY_DEVICE && chip == mychip, "device pointer is device",
        "kind %d chip %d (rank's chip %d)", kind, chip, mychip);
  torusmpi_pointer_kind((char*)d + 4095, &kind, &chip);
  check(kind == TORUSMPI_MEMORY_DEVICE, "last byte of an allocation is device", "kind %d", kind);
  torusmpi_pointer_kind((char*)d + (1 << 20), &kind, &chip);
  check(kind == TORUSMPI_MEMORY_INVALID, "unallocated arena space is invalid", "kind %d", kind);
  check_rc(torusmpi_device_free(d), "torusmpi_device_free");
  torusmpi_pointer_kind(d, &kind, &chip);
  check(kind == TORUSMPI_MEMORY_INVALID, "freed device pointer is invalid", "kind %d", kind);
  torusmpi_pointer_kind((void*)(uintptr_t)16, &kind, &chip);
  check(kind == TORUSMPI_MEMORY_INVALID, "wild pointer 0x10 is invalid", "kind %d", kind);
  /* A wild pointer among the mappings: a reserved page nobody may read. (A fixed address there,
   * as this check once used, is sometimes mapped by chance under address randomization.) */
  void* reserved = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  torusmpi_pointer_kind(reserved, &kind, &chip);
  check(reserved != MAP_FAILED && kind == TORUSMPI_MEMORY_INVALID,
        "wild pointer among the mappings (an inaccessible page) is invalid", "kind %d", kind);
  if (reserved != MAP_FAILED) munmap(reserved, 4096);
  torusmpi_pointer_kind((void*)(uintptr_t)0x800000000000ULL, &kind, &chip);
  check(kind == TORUSMPI_MEMORY_INVALID, "wild pointer past user space is invalid", "kind %d",
        kind);

  /* Freed blocks are found again: first fit with coalescing gives the space back whole. */
  void *a = mem(1 << 20, 1), *b = mem(1 << 20, 1);
  torusmpi_device_free(a);
  torusmpi_device_free(b);
  void* c = mem(2 << 20, 1);
  check(c == a, "freed neighbours coalesce", "got %p, first block was %p", c, a);
  torusmpi_device_free(c);

  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = torusmpi_device_free(d);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_ARG, "double free is MPI_ERR_ARG", "class %d", cls);
  void* huge = NULL;
  rc = torusmpi_device_malloc(&huge, (size_t)1 << 46);
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_NO_MEM && huge == NULL, "oversized malloc is MPI_ERR_NO_MEM", "class %d",
        cls);

  /* MPI_Alloc_mem with the info key. */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "torusmpi_memory_kind", "device");
  void* am = NULL;
  check_rc(MPI_Alloc_mem(8192, info, &am), "MPI_Alloc_mem device");
  torusmpi_pointer_kind(am, &kind, &chip);
  check(kind == TORUSMPI_MEMORY_DEVICE, "MPI_Alloc_mem device gives device memory", "kind %d",
        kind);
  check_rc(MPI_Free_mem(am), "MPI_Free_mem device");
  torusmpi_pointer_kind(am, &kind, &chip);
  check(kind == TORUSMPI_MEMORY_INVALID, "MPI_Free_mem frees device memory", "kind %d", kind);
  MPI_Info_set(info, "torusmpi_memory_kind", "host");
  check_rc(MPI_Alloc_mem(8192, info, &am), "MPI_Alloc_mem host");
  torusmpi_pointer_kind(am, &kind, &chip);
  check(kind == TORUSMPI_MEMORY_HOST, "MPI_Alloc_mem host gives host memory", "kind %d", kind);
  MPI_Free_mem(am);
  MPI_Info_set(info, "torusmpi_memory_kind", "hbm");
  rc = MPI_Alloc_mem(8192, info, &am);
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_INFO_VALUE, "MPI_Alloc_mem with kind hbm is MPI_ERR_INFO_VALUE", "class %d",
        cls);
  MPI_Info_free(&info);

  /* A freed device pointer in MPI_Send: MPI_ERR_BUFFER, naming the call, and the job goes on. */
  rc = MPI_Send(d, 4, MPI_INT, 0, 99, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  check(cls == MPI_ERR_BUFFER && strstr(text, "MPI_Send") != NULL &&
            strstr(text, "neither host memory nor device memory") != NULL,
        "MPI_Send from a freed device pointer is MPI_ERR_BUFFER", "class %d: %s", cls, text);
  rc = MPI_Recv((void*)(uintptr_t)16, 4, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_BUFFER, "MPI_Recv into a wild pointer is MPI_ERR_BUFFER", "class %d", cls);
  int one = 1;
  rc = MPI_Allreduce(&one, d, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_BUFFER, "MPI_Allreduce into a freed device pointer is MPI_ERR_BUFFER",
        "class %d", cls);

  test_overrun();
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* --- Point-to-point */

/* Small device messages that the sender writes into a queue in the receiver's HBM, while larger
 * ones and host ones from the same sender take the host queue: one stream, in order, whichever
 * queue each took. Pairs: even rank -> odd. */
static void test_inline(void) {
  const int sender = g_rank % 2 == 0, peer = sender ? g_rank + 1 : g_rank - 1;
  MPI_Barrier(MPI_COMM_WORLD);
  if (peer >= g_size) return;
  /* 600 messages of one tag, sent before the receiver looks: device 4 B and 16 KiB (inline;
   * more of them than the device queue holds, so some wait in the sender), device 20000 B (a
   * rendezvous), host 4 B and an empty one (the host queue). */
  enum { count = 600, kinds = 6, most = 20000 };
  const int sizes[kinds] = {4, 16384, 4, 20000, 0, 16384}, on_dev[kinds] = {1, 1, 0, 1, 1, 1};
  unsigned char* hsrc = malloc((size_t)count * most);
  for (size_t i = 0; i < (size_t)count * most; ++i) hsrc[i] = (unsigned char)(g_rank + i * 3);
  unsigned char* dsrc = mem((size_t)count * most, 1);
  put(dsrc, hsrc, (size_t)count * most);
  int bad = -1;
  if (sender) {
    MPI_Request* r = malloc(count * sizeof *r);
    for (int k = 0; k < count; ++k) {
      const int kind = k % kinds;
      unsigned char* from = (on_dev[kind] ? dsrc : hsrc) + (size_t)k * most;
      MPI_Isend(from, sizes[kind], MPI_BYTE, peer, 20, MPI_COMM_WORLD, &r[k]);
    }
    MPI_Waitall(count, r, MPI_STATUSES_IGNORE);
    free(r);
  } else {
    unsigned char* rb = mem(most, 1);
    unsigned char* got = malloc(most);
    usleep(20000);
    for (int k = 0; k < count && bad < 0; ++k) {
      const int n = sizes[k % kinds];
      MPI_Status st;
      MPI_Recv(rb, most, MPI_BYTE, peer, 20, MPI_COMM_WORLD, &st);
      int c = -1;
      MPI_Get_count(&st, MPI_BYTE, &c);
      put(got, rb, (size_t)n);
      for (int i = 0; i < n && bad < 0; ++i) {
        if (got[i] != (unsigned char)(peer + ((size_t)k * most + i) * 3)) bad = k;
      }
      if (c != n) bad = k;
    }
    check(bad < 0, "600 small messages through both of a node's queues, in the order sent",
          "message %d wrong", bad);
    mem_free(rb, 1);
    free(got);
  }
  /* A synchronous one (done when matched), one looked at with MPI_Probe first, and one into a
   * smaller receive (MPI_ERR_TRUNCATE, the part that fits, nothing past it). */
  if (sender) {
    MPI_Ssend(dsrc, 16, MPI_BYTE, peer, 21, MPI_COMM_WORLD);
    MPI_Send(dsrc + 16, 100, MPI_BYTE, peer, 22, MPI_COMM_WORLD);
    MPI_Send(dsrc + 116, 100, MPI_BYTE, peer, 23, MPI_COMM_WORLD);
  } else {
    unsigned char* rb = mem(100, 1);
    unsigned char got[100], want[100];
    for (int i = 0; i < 100; ++i) want[i] = (unsigned char)(peer + i * 3);
    usleep(5000);
    MPI_Recv(rb, 16, MPI_BYTE, peer, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    put(got, rb, 16);
    check(memcmp(got, want, 16) == 0, "a small synchronous device send", "wrong data");
    MPI_Status st;
    MPI_Probe(peer, 22, MPI_COMM_WORLD, &st);
    int c = -1;
    MPI_Get_count(&st, MPI_BYTE, &c);
    MPI_Recv(rb, 100, MPI_BYTE, peer, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    put(got, rb, 100);
    for (int i = 0; i < 100; ++i) want[i] = (unsigned char)(peer + (16 + i) * 3);
    check(c == 100 && memcmp(got, want, 100) == 0, "a small device message probed, then received",
          "count %d", c);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    torusmpi_memset(rb, 0, 100);
    const int rc = MPI_Recv(rb, 40, MPI_BYTE, peer, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    put(got, rb, 100);
    for (int i = 0; i < 100; ++i) want[i] = i < 40 ? (unsigned char)(peer + (116 + i) * 3) : 0;
    check(cls == MPI_ERR_TRUNCATE && memcmp(got, want, 100) == 0,
          "a small device message truncated: MPI_ERR_TRUNCATE, the part that fits", "class %d",
          cls);
    mem_free(rb, 1);
  }
  mem_free(dsrc, 1);
  free(hsrc);
}

/* only: device buffers on both sides, and none of the host or derived-datatype cases. */
static void test_p2p(int only) {
  const size_t sizes[] = {0, 1, 65537, 1 << 20};
  const int to = (g_rank + 1) % g_size, from = (g_rank + g_size - 1) % g_size;
  char what[128];
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
    const size_t n = sizes[s];
    unsigned char* src = malloc(n + 1);
    unsigned char* want = malloc(n + 1);
    for (size_t i = 0; i < n; ++i) {
      src[i] = (unsigned char)(g_rank * 31 + i * 7);
      want[i] = (unsigned char)(from * 31 + i * 7);
    }
    for (int kinds = only ? 3 : 0; kinds < 4; ++kinds) {
      const int send_dev = kinds & 1, recv_dev = (kinds >> 1) & 1;
      unsigned char* sb = mem(n, send_dev);
      unsigned char* rb = mem(n, recv_dev);
      if (n > 0) put(sb, src, n);
      MPI_Request r[2];
      MPI_Status st;
      MPI_Irecv(rb, (int)n, MPI_BYTE, from, 7, MPI_COMM_WORLD, &r[0]);
      MPI_Isend(sb, (int)n, MPI_BYTE, to, 7, MPI_COMM_WORLD, &r[1]);
      MPI_Wait(&r[1], MPI_STATUS_IGNORE);
      MPI_Wait(&r[0], &st);
      int count = -1;
      MPI_Get_count(&st, MPI_BYTE, &count);
      unsigned char* got = malloc(n + 1);
      if (n > 0) put(got, rb, n);
      snprintf(what, sizeof what, "ring %s->%s %zu B", send_dev ? "D" : "H", recv_dev ? "D" : "H",
               n);
      check(count == (int)n && (n == 0 || memcmp(got, want, n) == 0), what, "count %d", count);
      /* Self: blocking send to itself through the loopback, other kind on each side. */
      if (n > 0 && n <= 65537) {
        MPI_Request sr;
        MPI_Isend(sb, (int)n, MPI_BYTE, g_rank, 8, MPI_COMM_WORLD, &sr);
        MPI_Recv(rb, (int)n, MPI_BYTE, g_rank, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&sr, MPI_STATUS_IGNORE);
        put(got, rb, n);
        snprintf(what, sizeof what, "self %s->%s %zu B", send_dev ? "D" : "H", recv_dev ? "D" : "H",
                 n);
        check(memcmp(got, src, n) == 0, what, "");
      }
      free(got);
      mem_free(sb, send_dev);
      mem_free(rb, recv_dev);
    }
    free(src);
    free(want);
  }
  /* Small device messages are buffered as host ones are: every rank sends to its ring neighbour
   * with a blocking MPI_Send before it receives (what most programs do with small messages; a
   * send that waited for its receive would hang here), several in a row. Not when the script
   * turns eager sends off: then no send is buffered, host or device. */
  const char* eager = getenv("TORUSMPI_EAGER_LIMIT");
  if (eager == NULL || atoi(eager) > 0) {
    enum { n = 1000, rounds = 20 };
    int* sb = mem(n * sizeof(int), 1);
    int* rb = mem(n * sizeof(int), 1);
    int* h = malloc(n * sizeof(int));
    int bad = 0;
    for (int k = 0; k < rounds && !bad; ++k) {
      for (int i = 0; i < n; ++i) h[i] = g_rank * 100000 + k * 1000 + i;
      put(sb, h, n * sizeof(int));
      MPI_Send(sb, n, MPI_INT, to, 9, MPI_COMM_WORLD);
      MPI_Recv(rb, n, MPI_INT, from, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      put(h, rb, n * sizeof(int));
      for (int i = 0; i < n && !bad; ++i) bad = h[i] != from * 100000 + k * 1000 + i;
    }
    check(!bad, "send before receive around the ring, device 4000 B, 20 rounds", "wrong data");
    mem_free(sb, 1);
    mem_free(rb, 1);
    free(h);
  }
  /* Small device sends the receiver is slow to read. Their payload waits in the sender's buffer
   * for a reader that comes soon; one that does not come (it computes) must not hold the send
   * back: the sender moves the payload into its HBM ring and is done. After the send returns the
   * sender overwrites its buffer; the reader must get what was sent. Pairs: even rank -> odd. */
  if (eager == NULL || atoi(eager) > 0) {
    const int sender = g_rank % 2 == 0, peer = sender ? g_rank + 1 : g_rank - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (peer < g_size) {
      enum { n = 500 };
      int* b = mem(n * sizeof(int), 1);
      int h[n];
      for (int i = 0; i < n; ++i) h[i] = value(g_rank, i);
      put(b, h, sizeof h);
      if (sender) {
        const double t0 = MPI_Wtime();
        MPI_Send(b, n, MPI_INT, peer, 15, MPI_COMM_WORLD);
        const double took = MPI_Wtime() - t0;
        torusmpi_memset(b, 0x77, sizeof h);
        /* The reader sleeps 300 ms before its receive. */
        check(took < 0.15, "a small device send completes while its reader computes",
              "MPI_Send took %.0f ms", took * 1e3);
      } else {
        usleep(300000);
        MPI_Recv(b, n, MPI_INT, peer, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int want[n];
        for (int i = 0; i < n; ++i) want[i] = value(peer, i);
        expect_ints("... and its reader, late, gets what was sent", b, want, n);
      }
      /* Readers that come at about the time the sender gives up on them (a random 0-40 us of
       * computation first): the reader and the sender's move race for the payload, 2000 times;
       * every message must come out right whoever won. */
      int bad = -1;
      unsigned seed = 12345u + (unsigned)g_rank;
      for (int k = 0; k < 2000 && bad < 0; ++k) {
        if (sender) {
          h[0] = k;
          h[n - 1] = -k;
          put(b, h, sizeof h);
          MPI_Send(b, n, MPI_INT, peer, 16, MPI_COMM_WORLD);
          torusmpi_memset(b, 0x66, sizeof h);
        } else {
          seed = seed * 1103515245u + 12345u;
          const double until = MPI_Wtime() + (double)(seed >> 16 & 0xffff) / 65536.0 * 40e-6;
          while (MPI_Wtime() < until) {
          }
          int got[n];
          MPI_Recv(b, n, MPI_INT, peer, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          put(got, b, sizeof got);
          for (int i = 1; i < n - 1 && bad < 0; ++i) bad = got[i] != value(peer, i) ? k : -1;
          if (got[0] != k || got[n - 1] != -k) bad = k;
        }
      }
      if (!sender) {
        check(bad < 0, "2000 small device sends whose readers race the sender's move",
              "message %d wrong", bad);
      }
      /* A small device message into a smaller receive: MPI_ERR_TRUNCATE, the part that fits, and
       * the sender's ring goes on (the burst below uses all of it). */
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      if (sender) {
        h[0] = value(g_rank, 0);
        put(b, h, sizeof h);
        MPI_Send(b, n, MPI_INT, peer, 17, MPI_COMM_WORLD);
      } else {
        torusmpi_memset(b, 0, sizeof h);
        const int rc = MPI_Recv(b, 10, MPI_INT, peer, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        int want[n];
        for (int i = 0; i < n; ++i) want[i] = i < 10 ? value(peer, i) : 0;
        check(cls == MPI_ERR_TRUNCATE, "a small device message truncated is MPI_ERR_TRUNCATE",
              "class %d", cls);
        expect_ints("... with the part that fits, nothing past it", b, want, n);
      }
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
      mem_free(b, 1);
    }
  }
  if (eager == NULL || atoi(eager) > 0) test_inline();
  /* A burst: 300 device messages of mixed sizes, sent before the receiver looks (it sleeps first),
   * received in order. The small ones take more of the sender's HBM eager ring than it has, so
   * some wait for their receive; those read late must come out right, in order. */
  {
    enum { count = 300, kinds = 7 };
    const int sizes[kinds] = {1, 8, 100, 4096, 16384, 16385, 70000};
    size_t total = 0;
    for (int k = 0; k < count; ++k) total += (size_t)sizes[k % kinds];
    unsigned char* h = malloc(total);
    unsigned char* sb = mem(total, 1);
    unsigned char* rb = mem(70000, 1);
    for (size_t i = 0; i < total; ++i) h[i] = (unsigned char)(g_rank * 13 + i * 5 + i / 7);
    put(sb, h, total);
    MPI_Request* r = malloc(count * sizeof *r);
    size_t off = 0;
    for (int k = 0; k < count; ++k) {
      MPI_Isend(sb + off, sizes[k % kinds], MPI_BYTE, to, 10 + k % 3, MPI_COMM_WORLD, &r[k]);
      off += (size_t)sizes[k % kinds];
    }
    usleep(20000);
    int bad = -1;
    off = 0;
    for (int k = 0; k < count; ++k) {
      const int n = sizes[k % kinds];
      MPI_Status st;
      MPI_Recv(rb, n, MPI_BYTE, from, k % 2 ? MPI_ANY_TAG : 10 + k % 3, MPI_COMM_WORLD, &st);
      int got = -1;
      MPI_Get_count(&st, MPI_BYTE, &got);
      unsigned char* back = malloc((size_t)n);
      put(back, rb, (size_t)n);
      for (int i = 0; i < n && bad < 0; ++i) {
        const size_t at = off + (size_t)i;
        if (back[i] != (unsigned char)(from * 13 + at * 5 + at / 7)) bad = k;
      }
      if (got != n || st.MPI_TAG != 10 + k % 3) bad = k;
      free(back);
      off += (size_t)n;
      if (bad >= 0) break;
    }
    MPI_Waitall(count, r, MPI_STATUSES_IGNORE);
    check(bad < 0, "a burst of 300 device messages sent before their receives, in order",
          "message %d wrong", bad);
    free(r);
    free(h);
    mem_free(sb, 1);
    mem_free(rb, 1);
  }
  /* Self-send at a rendezvous size, device to device. */
  {
    const size_t n = 1 << 20;
    int* src = malloc(n);
    for (size_t i = 0; i < n / 4; ++i) src[i] = value(g_rank, i);
    int* sb = ints(src, n / 4, 1);
    int* rb = ints(NULL, n / 4, 1);
    MPI_Sendrecv(sb, (int)(n / 4), MPI_INT, g_rank, 9, rb, (int)(n / 4), MPI_INT, g_rank, 9,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect_ints("self Sendrecv D->D 1 MiB", rb, src, n / 4);
    mem_free(sb, 1);
    mem_free(rb, 1);
    free(src);
  }
  /* Truncation into device memory: MPI_ERR_TRUNCATE, and nothing past the buffer is written. */
  {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const size_t n = 100000;
    int* src = malloc(n * sizeof(int));
    for (size_t i = 0; i < n; ++i) src[i] = value(g_rank, i);
    int* sb = ints(src, n, 1);
    int* rb = ints(NULL, n, 1);
    MPI_Request sr;
    MPI_Isend(sb, (int)n, MPI_INT, to, 10, MPI_COMM_WORLD, &sr);
    int rc = MPI_Recv(rb, (int)(n / 2), MPI_INT, from, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    check(cls == MPI_ERR_TRUNCATE, "truncated rendezvous into device is MPI_ERR_TRUNCATE",
          "class %d", cls);
    int* want = malloc(n * sizeof(int));
    for (size_t i = 0; i < n; ++i) want[i] = i < n / 2 ? value(from, i) : 0x5a5a5a5a;
    expect_ints("truncated receive wrote its buffer and nothing past it", rb, want, n);
    free(want);
    free(src);
    mem_free(sb, 1);
    mem_free(rb, 1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  }
  /* Sendrecv_replace on device memory, eager and rendezvous. */
  const size_t counts[] = {1000, 300000};
  for (int k = 0; k < 2; ++k) {
    const size_t n = counts[k];
    int* src = malloc(n * sizeof(int));
    int* want = malloc(n * sizeof(int));
    for (size_t i = 0; i < n; ++i) {
      src[i] = value(g_rank, i);
      want[i] = value(from, i);
    }
    int* b = ints(src, n, 1);
    MPI_Sendrecv_replace(b, (int)n, MPI_INT, to, 11, from, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    snprintf(what, sizeof what, "Sendrecv_replace on device, %zu ints", n);
    expect_ints(what, b, want, n);
    mem_free(b, 1);
    free(src);
    free(want);
  }
  /* A vector type on device memory at both ends, point-to-point (eager and rendezvous sizes) and
   * in a broadcast: packed and unpacked by the device, staged in device memory, gaps kept. */
  for (int k = 0; k < 2; ++k) {
    const int nb = k == 0 ? 100 : 20000, bl = 2, stride = 5;
    const size_t span = (size_t)(nb - 1) * stride + bl;
    MPI_Datatype vec;
    MPI_Type_vector(nb, bl, stride, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int* mine = malloc(span * sizeof(int));
    int* want = malloc(span * sizeof(int));
    for (size_t i = 0; i < span; ++i) {
      mine[i] = value(g_rank, i);
      want[i] = i % stride < (size_t)bl ? value(from, i) : -7;
    }
    int* dv = ints(mine, span, 1);
    for (size_t i = 0; i < span; ++i) mine[i] = -7;
    int* dr = ints(mine, span, 1);
    MPI_Sendrecv(dv, 1, vec, to, 14, dr, 1, vec, from, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    snprintf(what, sizeof what, "vector(%d x 2 / 5) device -> device, gaps kept", nb);
    expect_ints(what, dr, want, span);
    for (size_t i = 0; i < span; ++i) {
      want[i] = i % stride < (size_t)bl ? value(0, i) : (g_rank == 0 ? value(0, i) : -7);
    }
    MPI_Bcast(g_rank == 0 ? dv : dr, 1, vec, 0, MPI_COMM_WORLD);
    snprintf(what, sizeof what, "MPI_Bcast of vector(%d x 2 / 5) on device", nb);
    expect_ints(what, g_rank == 0 ? dv : dr, want, span);
    MPI_Type_free(&vec);
    mem_free(dv, 1);
    mem_free(dr, 1);
    free(mine);
    free(want);
  }
  if (only) return;
  /* A vector type on device memory: sent from device to a contiguous host receive, and from host
   * into a device vector whose gaps must stay as they were. Eager and rendezvous. */
  const int blocks[] = {100, 20000};
  for (int k = 0; k < 2; ++k) {
    const int nb = blocks[k], bl = 2, stride = 5;
    const size_t span = (size_t)(nb - 1) * stride + bl, packed = (size_t)nb * bl;
    MPI_Datatype vec;
    MPI_Type_vector(nb, bl, stride, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int* layout = malloc(span * sizeof(int));
    int* from_layout = malloc(span * sizeof(int));
    int* stream = malloc(packed * sizeof(int));
    for (size_t i = 0; i < span; ++i) {
      layout[i] = value(g_rank, i);
      from_layout[i] = value(from, i);
    }
    for (int b = 0; b < nb; ++b) {
      for (int j = 0; j < bl; ++j) stream[b * bl + j] = from_layout[(size_t)b * stride + j];
    }
    int* dv = ints(layout, span, 1);
    int* hc = ints(NULL, packed, 0);
    MPI_Sendrecv(dv, 1, vec, to, 12, hc, (int)packed, MPI_INT, from, 12, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    snprintf(what, sizeof what, "vector(%d x 2 / 5) on device -> host ints", nb);
    expect_ints(what, hc, stream, packed);
    /* Back the other way: host ints into a device vector with sentinel gaps. */
    int* sentinel = malloc(span * sizeof(int));
    for (size_t i = 0; i < span; ++i) sentinel[i] = -7;
    int* dv2 = ints(sentinel, span, 1);
    int* mine = malloc(packed * sizeof(int));
    for (size_t i = 0; i < packed; ++i) mine[i] = value(g_rank, i);
    int* hs = ints(mine, packed, 0);
    MPI_Sendrecv(hs, (int)packed, MPI_INT, to, 13, dv2, 1, vec, from, 13, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int b = 0; b < nb; ++b) {
      for (int j = 0; j < bl; ++j)
        sentinel[(size_t)b * stride + j] = value(from, (size_t)b * bl + j);
    }
    snprintf(what, sizeof what, "host ints -> vector(%d x 2 / 5) on device, gaps kept", nb);
    expect_ints(what, dv2, sentinel, span);
    /* MPI_Pack / MPI_Unpack between a device vector and a host stream. */
    int pos = 0;
    int* packbuf = malloc(packed * sizeof(int));
    MPI_Pack(dv, 1, vec, packbuf, (int)(packed * sizeof(int)), &pos, MPI_COMM_WORLD);
    int* mystream = malloc(packed * sizeof(int));
    for (int b = 0; b < nb; ++b) {
      for (int j = 0; j < bl; ++j) mystream[b * bl + j] = layout[(size_t)b * stride + j];
    }
    check(
        pos == (int)(packed * sizeof(int)) && memcmp(packbuf, mystream, packed * sizeof(int)) == 0,
        "MPI_Pack from a device vector", "position %d", pos);
    free(mystream);
    free(packbuf);
    MPI_Type_free(&vec);
    mem_free(dv, 1);
    mem_free(dv2, 1);
    mem_free(hc, 0);
    mem_free(hs, 0);
    free(layout);
    free(from_layout);
    free(stream);
    free(sentinel);
    free(mine);
  }
  /* MPI_Reduce_local on device buffers. */
  {
    const size_t n = 5000;
    int *a = malloc(n * sizeof(int)), *b = malloc(n * sizeof(int)), *want = malloc(n * sizeof(int));
    for (size_t i = 0; i < n; ++i) {
      a[i] = value(g_rank, i);
      b[i] = value(g_rank + 1, i);
      want[i] = a[i] + b[i];
    }
    int* da = ints(a, n, 1);
    int* db = ints(b, n, 1);
    MPI_Reduce_local(da, db, (int)n, MPI_INT, MPI_SUM);
    expect_ints("MPI_Reduce_local on device", db, want, n);
    mem_free(da, 1);
    mem_free(db, 1);
    free(a);
    free(b);
    free(want);
  }
}

/* --- Collectives. mode 0: every rank device; 1: even ranks device, odd ranks host. */

static int on_dev(int mode) { return mode == 0 || g_rank % 2 == 0; }

static void test_collectives(int mode, size_t n) {
  const int p = g_size, me = g_rank, dev = on_dev(mode);
  const char* m = mode == 0 ? "device" : "mixed";
  char what[160];
  int* mine = malloc(n * p * sizeof(int) + 4);
  int* want = malloc(n * p * sizeof(int) + 4);
  for (size_t i = 0; i < n * p; ++i) mine[i] = value(me, i);
#define WHAT(name) (snprintf(what, sizeof what, "%s %s n=%zu", name, m, n), what)

  /* Allreduce, out of place and in place; Iallreduce. */
  for (size_t i = 0; i < n; ++i) {
    want[i] = 0;
    for (int r = 0; r < p; ++r) want[i] += value(r, i);
  }
  int* s = ints(mine, n, dev);
  int* r = ints(NULL, n, dev);
  MPI_Allreduce(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect_ints(WHAT("Allreduce"), r, want, n);
  MPI_Allreduce(MPI_IN_PLACE, s, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect_ints(WHAT("Allreduce in place"), s, want, n);
  put(s, mine, n * sizeof(int));
  MPI_Request req;
  MPI_Iallreduce(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect_ints(WHAT("Iallreduce"), r, want, n);
  /* Reduce to each root in turn (in place at the root once). */
  for (int root = 0; root < p; ++root) {
    torusmpi_memset(r, 0x5a, n * sizeof(int));
    if (root == 1 % p && me == root) {
      put(r, mine, n * sizeof(int));
      MPI_Reduce(MPI_IN_PLACE, r, (int)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    } else {
      MPI_Reduce(s, r, (int)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    }
    if (me == root) expect_ints(WHAT("Reduce at root"), r, want, n);
  }
  /* Scan and Exscan. */
  for (size_t i = 0; i < n; ++i) {
    want[i] = 0;
    for (int q = 0; q <= me; ++q) want[i] += value(q, i);
  }
  MPI_Scan(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect_ints(WHAT("Scan"), r, want, n);
  if (me > 0) {
    for (size_t i = 0; i < n; ++i) want[i] -= value(me, i);
    MPI_Exscan(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_ints(WHAT("Exscan"), r, want, n);
  } else {
    MPI_Exscan(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  mem_free(s, dev);
  mem_free(r, dev);

  /* Bcast from every root; Ibcast. */
  for (int root = 0; root < p; ++root) {
    for (size_t i = 0; i < n; ++i) want[i] = value(root, i);
    int* b = ints(me == root ? want : NULL, n, dev);
    MPI_Bcast(b, (int)n, MPI_INT, root, MPI_COMM_WORLD);
    expect_ints(WHAT("Bcast"), b, want, n);
    torusmpi_memset(b, 0, n * sizeof(int));
    if (me == root) put(b, want, n * sizeof(int));
    MPI_Ibcast(b, (int)n, MPI_INT, root, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    expect_ints(WHAT("Ibcast"), b, want, n);
    mem_free(b, dev);
  }

  /* Allgather (and in place), Iallgather, Allgatherv. */
  for (int q = 0; q < p; ++q) {
    for (size_t i = 0; i < n; ++i) want[q * n + i] = value(q, i);
  }
  s = ints(mine, n, dev);
  r = ints(NULL, n * p, dev);
  MPI_Allgather(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD);
  expect_ints(WHAT("Allgather"), r, want, n * p);
  torusmpi_memset(r, 0, n * p * sizeof(int));
  put(r + me * n, mine, n * sizeof(int));
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, (int)n, MPI_INT, MPI_COMM_WORLD);
  expect_ints(WHAT("Allgather in place"), r, want, n * p);
  torusmpi_memset(r, 0, n * p * sizeof(int));
  MPI_Iallgather(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect_ints(WHAT("Iallgather"), r, want, n * p);
  int* cnt = malloc(p * sizeof(int));
  int* dsp = malloc(p * sizeof(int));
  for (int q = 0; q < p; ++q) {
    cnt[q] = (int)n;
    dsp[q] = (int)(q * n);
  }
  torusmpi_memset(r, 0, n * p * sizeof(int));
  MPI_Allgatherv(s, (int)n, MPI_INT, r, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
  expect_ints(WHAT("Allgatherv"), r, want, n * p);
  /* Gather, Gatherv at root p-1. */
  const int root = p - 1;
  torusmpi_memset(r, 0, n * p * sizeof(int));
  MPI_Gather(s, (int)n, MPI_INT, r, (int)n, MPI_INT, root, MPI_COMM_WORLD);
  if (me == root) expect_ints(WHAT("Gather"), r, want, n * p);
  torusmpi_memset(r, 0, n * p * sizeof(int));
  MPI_Gatherv(s, (int)n, MPI_INT, r, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD);
  if (me == root) expect_ints(WHAT("Gatherv"), r, want, n * p);
  mem_free(s, dev);
  mem_free(r, dev);

  /* Scatter, Scatterv from root 0: block q of the root's buffer is value(0, q*n + i). */
  for (size_t i = 0; i < n; ++i) want[i] = value(0, me * n + i);
  s = ints(me == 0 ? mine : NULL, n * p, dev);
  r = ints(NULL, n, dev);
  MPI_Scatter(s, (int)n, MPI_INT, r, (int)n, MPI_INT, 0, MPI_COMM_WORLD);
  expect_ints(WHAT("Scatter"), r, want, n);
  torusmpi_memset(r, 0, n * sizeof(int));
  MPI_Scatterv(s, cnt, dsp, MPI_INT, r, (int)n, MPI_INT, 0, MPI_COMM_WORLD);
  expect_ints(WHAT("Scatterv"), r, want, n);
  mem_free(s, dev);
  mem_free(r, dev);

  /* Alltoall, Ialltoall, Alltoallv: block q of rank r's buffer goes to q. */
  for (int q = 0; q < p; ++q) {
    for (size_t i = 0; i < n; ++i) want[q * n + i] = value(q, me * n + i);
  }
  s = ints(mine, n * p, dev);
  r = ints(NULL, n * p, dev);
  MPI_Alltoall(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD);
  expect_ints(WHAT("Alltoall"), r, want, n * p);
  torusmpi_memset(r, 0, n * p * sizeof(int));
  MPI_Ialltoall(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect_ints(WHAT("Ialltoall"), r, want, n * p);
  torusmpi_memset(r, 0, n * p * sizeof(int));
  MPI_Alltoallv(s, cnt, dsp, MPI_INT, r, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
  expect_ints(WHAT("Alltoallv"), r, want, n * p);
  put(r, mine, n * p * sizeof(int));
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, (int)n, MPI_INT, MPI_COMM_WORLD);
  expect_ints(WHAT("Alltoall in place"), r, want, n * p);

  /* Reduce_scatter_block and Reduce_scatter: block me of the sum of everyone's buffers. */
  for (size_t i = 0; i < n; ++i) {
    want[i] = 0;
    for (int q = 0; q < p; ++q) want[i] += value(q, me * n + i);
  }
  torusmpi_memset(r, 0, n * sizeof(int));
  MPI_Reduce_scatter_block(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect_ints(WHAT("Reduce_scatter_block"), r, want, n);
  torusmpi_memset(r, 0, n * sizeof(int));
  MPI_Reduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect_ints(WHAT("Reduce_scatter"), r, want, n);
  put(r, mine, n * p * sizeof(int));
  MPI_Reduce_scatter_block(MPI_IN_PLACE, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect_ints(WHAT("Reduce_scatter_block in place"), r, want, n);
  mem_free(s, dev);
  mem_free(r, dev);
  MPI_Barrier(MPI_COMM_WORLD);
  free(cnt);
  free(dsp);
  free(mine);
  free(want);
#undef WHAT
}

/* Rank r's contribution to test_overlap's sums is r + i % 1000. */
static int sums_right(const int* h, int n) {
  for (int i = 0; i < n; ++i) {
    if (h[i] != g_size * (g_size - 1) / 2 + g_size * (i % 1000)) return 0;
  }
  return 1;
}

/* Overlap: the engine completes a nonblocking device collective while the program sleeps. */
static void test_overlap(void) {
  enum { n = 1 << 18 }; /* 1 MiB of ints */
  int* h = malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) h[i] = g_rank + i % 1000;
  int* d = ints(h, n, 1);
  int* out = ints(NULL, n, 1);
  double best = 1e9;
  for (int k = 0; k < 5; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Allreduce(d, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (t < best) best = t;
  }
  /* In every try one rank starts first and the others 2 ms later, so that the first cannot finish
   * inside its own MPI_Iallreduce call: a result in its output buffer after it slept or computed,
   * with no MPI call, its engine made. Without an engine it would wait for the next MPI call. Each
   * rank leads in turn. Phases: sleeping 2 ms more than twice the blocking time (the speed target:
   * reported, not checked, since on a loaded machine the engine's thread may not get a core that
   * soon); sleeping at least 20 ms (checked); spinning in computation for 100 ms (checked; the
   * engine's thread shares the cores with it: on this machine every core has a spinning rank). */
  enum { kTwice, kLong, kSpin, kPhases };
  int led[kPhases] = {0}, done[kPhases] = {0}, right = 1;
  const double twice_s = 0.002 + 2 * best, long_s = 0.002 + (2 * best > 0.02 ? 2 * best : 0.02);
  for (int phase = 0; phase < kPhases; ++phase) {
    for (int k = 0; k < 3 * g_size; ++k) {
      const int leader = k % g_size;
      torusmpi_memset(out, 0, n * sizeof(int));
      MPI_Barrier(MPI_COMM_WORLD);
      if (g_rank != leader) usleep(2000);
      MPI_Request r;
      MPI_Iallreduce(d, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
      if (phase == kSpin) {
        const double until = MPI_Wtime() + 0.1;
        volatile double x = 1;
        while (MPI_Wtime() < until) x = x * 1.0000001 + 1e-9;
      } else {
        usleep((useconds_t)((phase == kTwice ? twice_s : long_s) * 1e6) + 1);
      }
      /* Read by a device copy, which makes no MPI progress: MPI_Test could finish the rest. */
      torusmpi_memcpy(h, out, n * sizeof(int));
      if (g_rank == leader) {
        ++led[phase];
        done[phase] += sums_right(h, n);
      }
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      torusmpi_memcpy(h, out, n * sizeof(int));
      right = right && sums_right(h, n);
    }
  }
  if (g_rank == 0) {
    printf(
        "overlap: blocking %.0f us; leading, the result was there after sleeping %.0f us in %d "
        "of %d, %.0f us in %d of %d, spinning 100 ms in %d of %d\n",
        best * 1e6, twice_s * 1e6, done[kTwice], led[kTwice], long_s * 1e6, done[kLong], led[kLong],
        done[kSpin], led[kSpin]);
  }
  check(done[kLong] >= led[kLong] - 1, "overlap: result there after the sleep, before any MPI call",
        "in %d of %d tries (blocking call %.0f us)", done[kLong], led[kLong], best * 1e6);
  check(done[kSpin] == led[kSpin], "overlap: result there after 100 ms of spinning computation",
        "in %d of %d tries", done[kSpin], led[kSpin]);
  check(right, "overlap: right result", "wrong");
  mem_free(d, 1);
  mem_free(out, 1);
  free(h);
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_idle(void) {
  enum { n = 1 << 18 };
  int* d = ints(NULL, n, 1);
  int* out = ints(NULL, n, 1);
  MPI_Allreduce(d, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* connections made, scratch set */
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 1) usleep(1000000);
  const double cpu0 = cpu_seconds();
  MPI_Request r;
  MPI_Iallreduce(d, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
  if (g_rank == 0) usleep(1000000);
  const double cpu = cpu_seconds() - cpu0;
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (g_rank == 0) {
    printf("idle: %.3f s of CPU in the 1 s its allreduce waited\n", cpu);
    check(cpu < 0.2, "idle: the engine sleeps while its collective waits for a peer",
          "%.3f s of CPU in 1 s", cpu);
  }
  mem_free(d, 1);
  mem_free(out, 1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (torusmpi_device_malloc == NULL) {
    printf("FAIL %d torusmpi's device calls are not there: not running on torusmpi\n", g_rank);
    MPI_Finalize();
    return 1;
  }
  if (argc > 1 && strcmp(argv[1], "deref") == 0) {
    int* d = mem(64, 1);
    int zero = 0;
    put(d, &zero, sizeof zero);
    volatile int* v = d;
    printf("reading device pointer %p in host code\n", (void*)d);
    fflush(stdout);
    int x = *v; /* faults under TORUSMPI_DEVICE_GUARD=1 */
    printf("survived: read %d\n", x);
    torusmpi_device_free(d);
    MPI_Finalize();
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "overlap") == 0) {
    test_overlap();
    int rc = check_done(g_size);
    MPI_Finalize();
    return rc;
  }
  if (argc > 1 && strcmp(argv[1], "idle") == 0) {
    test_idle();
    int rc = check_done(g_size);
    MPI_Finalize();
    return rc;
  }
  if (argc > 1 && strcmp(argv[1], "overrun") == 0) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_overrun();
    int rc = check_done(g_size);
    MPI_Finalize();
    return rc;
  }
  const int only = argc > 1 && strcmp(argv[1], "only") == 0;
  if (!only) test_kinds();
  test_p2p(only);
  const size_t counts[] = {1, 3000, 70000};
  for (int mode = 0; mode < (only ? 1 : 2); ++mode) {
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k) test_collectives(mode, counts[k]);
  }
  int rc = check_done(g_size);
  MPI_Finalize();
  return rc;
}
