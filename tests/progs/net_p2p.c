/* net_p2p: point-to-point between emulated instances (TORUSMPI_INSTANCES), i.e. through the
 * network transport, beside shared memory inside an instance.
 *
 *   net_p2p PER [mode]   PER: ranks per instance (ranks fill instance 0, then 1, ...)
 *     (no mode)  the checks below, then "done <rank> of <size>: ..."
 *     stats      rank 0 sends 1000000 B then 100 B to the last rank, nothing else crosses
 *     kill       a loop of MPI_Allreduce in which the last rank SIGKILLs itself at round 50
 *     local      rank PER sends rank 0 4 MiB (a rendezvous: the RMA read) and computes for 500 ms
 *                without an MPI call; meanwhile rank 0's MPI_Test loop must stay local: no call
 *                may wait (150 ms or more) for the sender, whose progress serves the read under
 *                tcp, and the message is right once the sender waits
 *
 * Checks (rank 0 = instance 0, rank PER = the first rank of instance 1):
 *  - order: rank 1 (shared memory) and rank PER (network) each send 40 messages of sizes mixing
 *    empty, eager and rendezvous; rank 0 receives them with MPI_ANY_SOURCE/MPI_ANY_TAG and each
 *    sender's must come in the order sent (tags count up), every byte right;
 *  - both ways between 0 and PER: Send, Ssend and Isend of 0, 1, 1000, 16 KiB, 64 KiB and
 *    4 MiB + 3 bytes (the single-copy RMA read), and 8 MiB;
 *  - truncation, eager and rendezvous: MPI_ERR_TRUNCATE, the job goes on;
 *  - device buffers (when torusmpi_device_malloc is there): eager and 3 MiB (pipelined) messages
 *    device to device and device to host across instances. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

extern int torusmpi_device_malloc(void** ptr, size_t bytes) __attribute__((weak));
extern int torusmpi_device_free(void* ptr) __attribute__((weak));
extern int torusmpi_memcpy(void* dst, const void* src, size_t bytes) __attribute__((weak));

static int g_size, g_per;

static unsigned char pattern(int sender, int msg, size_t i) {
  return (unsigned char)(sender * 31 + msg * 7 + i * 13 + (i >> 9));
}
static void fill(unsigned char* p, size_t n, int sender, int msg) {
  for (size_t i = 0; i < n; ++i) p[i] = pattern(sender, msg, i);
}
static long first_bad(const unsigned char* p, size_t n, int sender, int msg) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != pattern(sender, msg, i)) return (long)i;
  }
  return -1;
}

/* Sizes of the order test: empty, eager over both transports, rendezvous over both. */
static const size_t kOrderSizes[] = {0, 8, 12000, 40000, 200000};
#define kOrderMsgs 40

static void test_order(void) {
  const int net = g_per, shm = 1;
  const size_t max = 200000;
  unsigned char* buf = malloc(max);
  if (g_rank == shm || g_rank == net) {
    for (int i = 0; i < kOrderMsgs; ++i) {
      size_t n = kOrderSizes[i % 5];
      fill(buf, n, g_rank, i);
      MPI_Send(buf, (int)n, MPI_BYTE, 0, i, MPI_COMM_WORLD);
    }
  } else if (g_rank == 0) {
    int next[2] = {0, 0}, bad = 0;
    for (int k = 0; k < 2 * kOrderMsgs; ++k) {
      MPI_Status st;
      MPI_Recv(buf, (int)max, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      int count = -1;
      MPI_Get_count(&st, MPI_BYTE, &count);
      int s = st.MPI_SOURCE == net;
      if (st.MPI_SOURCE != net && st.MPI_SOURCE != shm) {
        check(0, "order-source", "message from rank %d", st.MPI_SOURCE);
        bad = 1;
        break;
      }
      if (st.MPI_TAG != next[s]) {
        check(0, "order-non-overtaking", "from rank %d: tag %d, expected %d", st.MPI_SOURCE,
              st.MPI_TAG, next[s]);
        bad = 1;
        break;
      }
      size_t n = kOrderSizes[st.MPI_TAG % 5];
      long b = first_bad(buf, n, st.MPI_SOURCE, st.MPI_TAG);
      if (count != (int)n || b >= 0) {
        check(0, "order-data", "from rank %d message %d: %d B (expected %zu), byte %ld wrong",
              st.MPI_SOURCE, st.MPI_TAG, count, n, b);
        bad = 1;
        break;
      }
      ++next[s];
    }
    if (!bad) check(1, "order: any source/tag from a shm and a network peer, in order", "");
  }
  free(buf);
  MPI_Barrier(MPI_COMM_WORLD);
}

static const size_t kSizes[] = {0, 1, 1000, 16384, 65536, 4 * 1048576 + 3, 8 * 1048576};
#define kNumSizes ((int)(sizeof kSizes / sizeof kSizes[0]))

/* a sends, b receives, with each mode at each size. */
static void one_way(int a, int b, int msg_base) {
  size_t max = 8 * 1048576;
  unsigned char* buf = malloc(max);
  for (int mode = 0; mode < 3; ++mode) {
    for (int s = 0; s < kNumSizes; ++s) {
      size_t n = kSizes[s];
      int msg = msg_base + mode * kNumSizes + s;
      if (mode == 1 && n > 65536 && s != kNumSizes - 2) continue; /* one big Ssend is enough */
      if (g_rank == a) {
        fill(buf, n, a, msg);
        int rc;
        if (mode == 0) {
          rc = MPI_Send(buf, (int)n, MPI_BYTE, b, msg, MPI_COMM_WORLD);
        } else if (mode == 1) {
          rc = MPI_Ssend(buf, (int)n, MPI_BYTE, b, msg, MPI_COMM_WORLD);
        } else {
          MPI_Request r;
          rc = MPI_Isend(buf, (int)n, MPI_BYTE, b, msg, MPI_COMM_WORLD, &r);
          if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        if (rc != MPI_SUCCESS) check(0, "send", "mode %d %zu B: %d", mode, n, rc);
      } else if (g_rank == b) {
        memset(buf, 0xee, n);
        MPI_Status st;
        int rc = MPI_Recv(buf, (int)max, MPI_BYTE, a, msg, MPI_COMM_WORLD, &st);
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        long bad = first_bad(buf, n, a, msg);
        char what[96];
        snprintf(what, sizeof what, "%s %zu B from rank %d",
                 mode == 0   ? "send"
                 : mode == 1 ? "ssend"
                             : "isend",
                 n, a);
        check(rc == MPI_SUCCESS && count == (int)n && bad < 0, what, "rc %d, count %d, byte %ld",
              rc, count, bad);
      }
    }
  }
  free(buf);
}

static void test_truncate(int a, int b) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const size_t sizes[2] = {1000, 300000};
  unsigned char* buf = malloc(sizes[1]);
  for (int i = 0; i < 2; ++i) {
    if (g_rank == a) {
      fill(buf, sizes[i], a, 900 + i);
      MPI_Send(buf, (int)sizes[i], MPI_BYTE, b, 900 + i, MPI_COMM_WORLD);
    } else if (g_rank == b) {
      MPI_Status st;
      int rc = MPI_Recv(buf, 10, MPI_BYTE, a, 900 + i, MPI_COMM_WORLD, &st);
      int cls = -1;
      MPI_Error_class(rc, &cls);
      check(cls == MPI_ERR_TRUNCATE && first_bad(buf, 10, a, 900 + i) < 0,
            i == 0 ? "truncation, eager" : "truncation, rendezvous", "class %d", cls);
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  free(buf);
}

static void test_device(int a, int b) {
  if (torusmpi_device_malloc == NULL) {
    if (g_rank == 0) printf("# no torusmpi_device_malloc: device checks skipped\n");
    return;
  }
  const size_t sizes[2] = {1000, 3 * 1048576};
  unsigned char* host = malloc(sizes[1]);
  for (int i = 0; i < 2; ++i) {
    for (int to_host = 0; to_host < 2; ++to_host) {
      size_t n = sizes[i];
      int msg = 950 + 2 * i + to_host;
      void* dev = NULL;
      if (torusmpi_device_malloc(&dev, n) != MPI_SUCCESS) {
        check(0, "device malloc", "%zu B", n);
        continue;
      }
      if (g_rank == a) {
        fill(host, n, a, msg);
        torusmpi_memcpy(dev, host, n);
        MPI_Send(dev, (int)n, MPI_BYTE, b, msg, MPI_COMM_WORLD);
      } else if (g_rank == b) {
        memset(host, 0, n);
        MPI_Status st;
        int rc =
            MPI_Recv(to_host ? (void*)host : dev, (int)n, MPI_BYTE, a, msg, MPI_COMM_WORLD, &st);
        if (!to_host) torusmpi_memcpy(host, dev, n);
        long bad = first_bad(host, n, a, msg);
        char what[96];
        snprintf(what, sizeof what, "device %zu B to %s across instances", n,
                 to_host ? "host" : "device");
        check(rc == MPI_SUCCESS && bad < 0, what, "rc %d, byte %ld", rc, bad);
      }
      torusmpi_device_free(dev);
    }
  }
  free(host);
}

static void test_local_test(void) {
  enum { n = 4 << 20 };
  unsigned char* buf = malloc(n);
  // One message of the same size first, untimed: libfabric sets up the RMA read path at its first
  // read (it zeroes a pool of its own, 80 ms here), inside whichever call polls then.
  if (g_rank == g_per) {
    fill(buf, n, g_per, 8);
    MPI_Send(buf, n, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
  } else if (g_rank == 0) {
    MPI_Recv(buf, n, MPI_BYTE, g_per, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == g_per) {
    fill(buf, n, g_per, 9);
    MPI_Request r;
    MPI_Isend(buf, n, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &r);
    usleep(500000);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (g_rank == 0) {
    MPI_Request r;
    MPI_Irecv(buf, n, MPI_BYTE, g_per, 9, MPI_COMM_WORLD, &r);
    double longest = 0;
    const double t0 = MPI_Wtime();
    for (int flag = 0; !flag && MPI_Wtime() - t0 < 30;) {
      const double t = MPI_Wtime();
      MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
      if (MPI_Wtime() - t > longest) longest = MPI_Wtime() - t;
      if (!flag) usleep(1000);
    }
    printf("# local: longest MPI_Test %.1f ms, complete after %.0f ms\n", longest * 1e3,
           (MPI_Wtime() - t0) * 1e3);
    check(longest < 0.15, "local: MPI_Test never waits for a computing sender",
          "one call took %.0f ms", longest * 1e3);
    check(first_bad(buf, n, g_per, 9) < 0, "local: 4 MiB right", "wrong data");
  }
  free(buf);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_per = argc > 1 ? atoi(argv[1]) : 2;
  const char* mode = argc > 2 ? argv[2] : "";
  if (g_per < 2 || g_size < 2 * g_per) {
    printf("FAIL %d usage: net_p2p PER [mode] with at least 2 instances of PER >= 2 ranks\n",
           g_rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (strcmp(mode, "stats") == 0) {
    int last = g_size - 1;
    unsigned char* buf = malloc(1000000);
    if (g_rank == 0) {
      fill(buf, 1000000, 0, 1);
      MPI_Send(buf, 1000000, MPI_BYTE, last, 1, MPI_COMM_WORLD);
      MPI_Send(buf, 100, MPI_BYTE, last, 2, MPI_COMM_WORLD);
    } else if (g_rank == last) {
      MPI_Recv(buf, 1000000, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      check(first_bad(buf, 1000000, 0, 1) < 0, "stats: 1000000 B", "wrong data");
      MPI_Recv(buf, 100, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    free(buf);
  } else if (strcmp(mode, "local") == 0) {
    test_local_test();
  } else if (strcmp(mode, "kill") == 0) {
    double t0 = MPI_Wtime();
    for (int round = 0; MPI_Wtime() - t0 < 60; ++round) {
      long v = g_rank, sum = 0;
      if (round == 50 && g_rank == g_size - 1) {
        printf("# rank %d kills itself at round %d\n", g_rank, round);
        fflush(stdout);
        raise(SIGKILL);
      }
      MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    check(0, "kill", "still running after 60 s");
  } else {
    test_order();
    one_way(0, g_per, 0);
    one_way(g_per, 0, 100);
    /* The last instance too, when there are three. */
    if (g_size >= 3 * g_per) one_way(2 * g_per + 1, 1, 200);
    MPI_Barrier(MPI_COMM_WORLD);
    test_truncate(g_per, 0);
    test_device(0, g_per);
    test_device(g_per + 1, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return check_done(g_size);
}
