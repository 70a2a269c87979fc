/* osu_io: MPI-IO bandwidth of a 3-D block decomposition, collective and independent. torusmpi's
 * own benchmark in the OSU layout (osu/compare runs it side by side on each library).
 *
 * A global array of doubles, dims[0] n x dims[1] n x dims[2] n, dims from MPI_Dims_create(p, 3):
 * every rank owns one n x n x n block, described to MPI-IO by a subarray filetype (its rows
 * interleave with the other ranks' in the file, as a simulation's checkpoint does). Per size, each
 * of -i iterations (after -x warm-up ones) opens the file, sets the view and times, between two
 * barriers (the slowest rank's time):
 *   Coll write   MPI_File_write_all of the block    (two-phase collective buffering)
 *   Coll read    MPI_File_read_all of it
 *   Indep write  MPI_File_write of it               (each rank alone: data sieving or one call
 *   Indep read   MPI_File_read of it                 per row, as the library does it)
 * and the row has each one's best bandwidth over the iterations, in GB/s (1e9 B/s) of the whole
 * file. -c checks every value read. Open and close are outside the timed part; nothing is synced
 * (close flushes nothing to disk either: the bandwidths are the file system's cached ones).
 *
 *   osu_io [-m min:max] [-i iters] [-x warmup] [-c] [-D dir] [-H key=value]...
 *     -m  file sizes in bytes, powers of 8 apart (n doubles by 2); each size is rounded down to
 *         p * n^3 * 8 bytes (default 1048576:67108864)
 *     -D  the directory of the file (default $TMPDIR, else /tmp); the file is deleted at the end
 *     -H  an MPI-IO hint given to MPI_File_open (cb_nodes=2, romio_cb_write=disable, ...)
 *
 *   # Size    Coll write(GB/s)    Coll read(GB/s)   Indep write(GB/s)    Indep read(GB/s)
 * [Validation]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_size;
static MPI_Info g_info = MPI_INFO_NULL;

static void usage(void) {
  if (g_rank == 0)
    printf(
        "usage: osu_io [-m min:max] [-i iters] [-x warmup] [-c] [-D dir] [-H key=value]...\n"
        "  sizes are bytes of the whole file (rounded down to p * n^3 doubles)\n");
}

/* The value of global element (x, y, z) of a gx x gy x gz array. */
static double value(long x, long y, long z, long gy, long gz) {
  return (double)((x * gy + y) * gz + z);
}

enum { kCollWrite, kCollRead, kIndepWrite, kIndepRead, kCases };

/* One timed access; returns seconds (the slowest rank's), or -1 on an error. */
static double access_once(const char* path, MPI_Datatype filetype, double* buf, int count,
                          int which) {
  MPI_File fh;
  int write = which == kCollWrite || which == kIndepWrite;
  int amode = write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
  int rc = MPI_File_open(MPI_COMM_WORLD, path, amode, g_info, &fh);
  if (rc == MPI_SUCCESS)
    rc = MPI_File_set_view(fh, 0, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL);
  MPI_Status st;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (rc == MPI_SUCCESS) {
    switch (which) {
      case kCollWrite:
        rc = MPI_File_write_all(fh, buf, count, MPI_DOUBLE, &st);
        break;
      case kCollRead:
        rc = MPI_File_read_all(fh, buf, count, MPI_DOUBLE, &st);
        break;
      case kIndepWrite:
        rc = MPI_File_write(fh, buf, count, MPI_DOUBLE, &st);
        break;
      default:
        rc = MPI_File_read(fh, buf, count, MPI_DOUBLE, &st);
        break;
    }
  }
  double mine = MPI_Wtime() - t0, slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_File_close(&fh);
  int bad = rc != MPI_SUCCESS, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (bad) {
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, s, &n);
    fprintf(stderr, "osu_io: rank %d: %s\n", g_rank, s);
  }
  return any ? -1 : slowest;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  long min_size = 1L << 20, max_size = 64L << 20;
  int iters = 5, warmup = 1, validate = 0;
  const char* dir = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
  int opt;
  while ((opt = getopt(argc, argv, "m:i:x:cD:H:h")) != -1) {
    switch (opt) {
      case 'm': {
        char* colon = strchr(optarg, ':');
        if (colon != NULL) {
          min_size = atol(optarg);
          max_size = atol(colon + 1);
        } else {
          max_size = atol(optarg);
        }
        break;
      }
      case 'i':
        iters = atoi(optarg);
        break;
      case 'x':
        warmup = atoi(optarg);
        break;
      case 'c':
        validate = 1;
        break;
      case 'D':
        dir = optarg;
        break;
      case 'H': {
        char* eq = strchr(optarg, '=');
        if (eq == NULL) {
          usage();
          MPI_Finalize();
          return 1;
        }
        *eq = '\0';
        if (g_info == MPI_INFO_NULL) MPI_Info_create(&g_info);
        MPI_Info_set(g_info, optarg, eq + 1);
        break;
      }
      default:
        usage();
        MPI_Finalize();
        return opt == 'h' ? 0 : 1;
    }
  }
  if (iters < 1 || min_size < 1 || max_size < min_size) {
    usage();
    MPI_Finalize();
    return 1;
  }
  int dims[3] = {0, 0, 0}, coords[3];
  MPI_Dims_create(g_size, 3, dims);
  int rest = g_rank;
  for (int d = 2; d >= 0; --d) {
    coords[d] = rest % dims[d];
    rest /= dims[d];
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/osu_io.%d.dat", dir, (int)getpid());
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (g_rank == 0) {
    printf("# torusmpi OSU-compatible MPI-IO 3-D Block Decomposition Test\n");
    printf("# %d ranks as %d x %d x %d blocks of n^3 doubles; best of %d iterations; file %s\n",
           g_size, dims[0], dims[1], dims[2], iters, path);
    printf("# %-8s%20s%20s%20s%20s%s\n", "Size", "Coll write(GB/s)", "Coll read(GB/s)",
           "Indep write(GB/s)", "Indep read(GB/s)", validate ? "        Validation" : "");
    fflush(stdout);
  }
  int status = 0;
  long last_n = 0;
  for (long size = min_size; size <= max_size; size *= 8) {
    /* The largest n with p * n^3 * 8 <= size. */
    long n = 1;
    while ((long)g_size * (n + 1) * (n + 1) * (n + 1) * 8 <= size) ++n;
    if (n == last_n) continue;
    last_n = n;
    int gsizes[3], lsizes[3] = {(int)n, (int)n, (int)n}, starts[3];
    for (int d = 0; d < 3; ++d) {
      gsizes[d] = dims[d] * (int)n;
      starts[d] = coords[d] * (int)n;
    }
    MPI_Datatype filetype;
    MPI_Type_create_subarray(3, gsizes, lsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &filetype);
    MPI_Type_commit(&filetype);
    int count = (int)(n * n * n);
    double* buf = malloc((size_t)count * sizeof(double));
    double best[kCases] = {0, 0, 0, 0};
    long errors = 0;
    double file_bytes = (double)g_size * (double)count * 8.0;
    for (int it = 0; it < warmup + iters && status == 0; ++it) {
      for (int which = 0; which < kCases && status == 0; ++which) {
        int write = which == kCollWrite || which == kIndepWrite;
        long i = 0;
        for (long x = 0; x < n; ++x)
          for (long y = 0; y < n; ++y)
            for (long z = 0; z < n; ++z, ++i)
              buf[i] =
                  write ? value(starts[0] + x, starts[1] + y, starts[2] + z, gsizes[1], gsizes[2])
                        : -1.0;
        double t = access_once(path, filetype, buf, count, which);
        if (t < 0) {
          status = 1;
          break;
        }
        if (it >= warmup && t > 0 && file_bytes / t / 1e9 > best[which])
          best[which] = file_bytes / t / 1e9;
        if (!write && validate) {
          i = 0;
          for (long x = 0; x < n; ++x)
            for (long y = 0; y < n; ++y)
              for (long z = 0; z < n; ++z, ++i)
                if (buf[i] !=
                    value(starts[0] + x, starts[1] + y, starts[2] + z, gsizes[1], gsizes[2]))
                  ++errors;
        }
      }
    }
    long all_errors = 0;
    MPI_Reduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0 && status == 0) {
      printf("%-10ld%20.2f%20.2f%20.2f%20.2f%s\n", (long)file_bytes, best[0], best[1], best[2],
             best[3],
             validate ? (all_errors == 0 ? "              Pass" : "              Fail") : "");
      fflush(stdout);
    }
    if (all_errors != 0) status = 1;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(buf);
    MPI_Type_free(&filetype);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) MPI_File_delete(path, MPI_INFO_NULL);
  if (g_info != MPI_INFO_NULL) MPI_Info_free(&g_info);
  MPI_Finalize();
  return status;
}
