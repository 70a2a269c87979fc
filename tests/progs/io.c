/* io.c: MPI-IO's independent half. Files in the directory argv[1] (the script makes and removes
 * it). Every check writes integer patterns that say where each int belongs, reads them back
 * through MPI and with plain POSIX reads, and compares bytes:
 *  - explicit offsets (read_at, write_at) and the individual pointer (seek, get_position, read,
 *    write), their nonblocking forms completed by MPI_Wait and MPI_Test, statuses' counts;
 *  - views of every layout kind (contiguous, vector, subarray, darray, indexed, struct resized
 *    with holes): each rank's filetype takes its share of one global array G (G[i] = i), the rank
 *    packs its share of G with MPI_Pack through the same type, writes it through the view, and the
 *    file must be G; every view with data sieving forced on and off (romio_ds_read/write), so
 *    concurrent read-modify-writes must not lose each other's bytes;
 *  - noncontiguous memory types, get_byte_offset, get_type_extent, get_view;
 *  - data representations: external32 (big-endian bytes computed here), a user one
 *    (MPI_Register_datarep, its conversion an XOR);
 *  - sizes, preallocate, sync, atomicity, info hints in force, group, amode, MPI_MODE_APPEND,
 *    DELETE_ON_CLOSE, MPI_File_delete;
 *  - error classes under files' default MPI_ERRORS_RETURN, MPI_File_set_errhandler on a file and
 *    on MPI_FILE_NULL.
 * Where Open MPI (the reference) answers differently and MPI allows it, it prints "skip" lines.
 *
 *   io DIR          the checks above
 *   io DIR device   reads into and writes from device memory (torusmpi only)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

extern int torusmpi_device_malloc(void** ptr, size_t bytes) __attribute__((weak));
extern int torusmpi_device_free(void* ptr) __attribute__((weak));
extern int torusmpi_memcpy(void* dst, const void* src, size_t bytes) __attribute__((weak));

static int g_size;
static int g_torusmpi;
static const char* g_dir;

static void path_of(char* out, size_t n, const char* name) {
  snprintf(out, n, "%s/%s", g_dir, name);
}

/* The whole file by plain POSIX reads; *bytes its size. */
static char* posix_read(const char* path, long* bytes) {
  *bytes = -1;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return NULL;
  struct stat st;
  fstat(fd, &st);
  char* buf = malloc((size_t)st.st_size + 1);
  long got = 0;
  while (got < st.st_size) {
    ssize_t n = read(fd, buf + got, (size_t)(st.st_size - got));
    if (n <= 0) break;
    got += n;
  }
  close(fd);
  *bytes = got;
  return buf;
}

/* Checks that the file holds `n` ints G[i] = i (by POSIX). */
static void check_file_is_g(const char* path, int n, const char* what) {
  long bytes = 0;
  int* g = (int*)posix_read(path, &bytes);
  int bad = -1;
  if (g != NULL && bytes == (long)n * 4) {
    for (int i = 0; i < n; ++i) {
      if (g[i] != i) {
        bad = i;
        break;
      }
    }
  }
  check(g != NULL && bytes == (long)n * 4 && bad < 0, what, "size %ld (want %d), int %d is %d",
        bytes, n * 4, bad, bad >= 0 && g != NULL ? g[bad] : -1);
  free(g);
}

static MPI_File open_file(const char* name, int amode, MPI_Info info) {
  char path[512];
  path_of(path, sizeof path, name);
  MPI_File fh = MPI_FILE_NULL;
  int rc = MPI_File_open(MPI_COMM_WORLD, path, amode, info, &fh);
  check_rc(rc, "MPI_File_open");
  return fh;
}

static int error_class(int rc) {
  int cls = rc;
  MPI_Error_class(rc, &cls);
  return cls;
}

/* An expected error class: exact on torusmpi; the reference need only fail. */
static void check_class(int rc, int want, const char* what) {
  int cls = error_class(rc);
  if (cls == want) {
    check(1, what, "");
  } else if (!g_torusmpi) {
    printf("skip %d %s: the reference gives class %d, not %d\n", g_rank, what, cls, want);
  } else {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    text[0] = '\0';
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
    check(0, what, "class %d, want %d (%s)", cls, want, text);
  }
}

/* ---- explicit offsets and the individual pointer, default view */
static void test_basic(void) {
  enum { N = 1000 };
  char path[512];
  path_of(path, sizeof path, "basic");
  MPI_File fh = open_file("basic", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
  int* mine = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i) mine[i] = g_rank * N + i;
  MPI_Status st;
  int rc = MPI_File_write_at(fh, (MPI_Offset)g_rank * N * 4, mine, N, MPI_INT, &st);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  check(rc == MPI_SUCCESS && count == N, "write_at: count", "rc %d count %d", rc, count);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  check_file_is_g(path, g_size * N, "write_at: the file by POSIX");
  int* all = malloc((size_t)g_size * N * sizeof(int));
  memset(all, 0xff, (size_t)g_size * N * sizeof(int));
  rc = MPI_File_read_at(fh, 0, all, g_size * N, MPI_INT, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  int bad = 0;
  for (int i = 0; i < g_size * N; ++i) bad += all[i] != i;
  check(rc == MPI_SUCCESS && count == g_size * N && bad == 0, "read_at: all of it",
        "rc %d count %d bad %d", rc, count, bad);
  /* Past the end: a short count. */
  rc = MPI_File_read_at(fh, (MPI_Offset)(g_size * N - 10) * 4, all, 20, MPI_INT, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  check(rc == MPI_SUCCESS && count == 10 && all[0] == g_size * N - 10,
        "read_at across the end: count 10", "rc %d count %d", rc, count);
  rc = MPI_File_read_at(fh, (MPI_Offset)g_size * N * 4 + 100, all, 5, MPI_INT, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  check(rc == MPI_SUCCESS && count == 0, "read_at past the end: count 0", "rc %d count %d", rc,
        count);
  /* Half an element: MPI_Get_count undefined, MPI_Get_elements the whole ones. */
  rc = MPI_File_read_at(fh, (MPI_Offset)g_size * N * 4 - 6, all, 2, MPI_INT, &st);
  int elements = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  MPI_Get_elements(&st, MPI_INT, &elements);
  check(rc == MPI_SUCCESS && count == MPI_UNDEFINED && elements == MPI_UNDEFINED,
        "read_at of 6 bytes into 2 ints: count and elements undefined", "count %d elements %d",
        count, elements);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Individual pointer: each rank rewrites its part (values + 7) in two writes. */
  for (int i = 0; i < N; ++i) mine[i] = g_rank * N + i + 7;
  rc = MPI_File_seek(fh, (MPI_Offset)g_rank * N * 4, MPI_SEEK_SET);
  rc |= MPI_File_write(fh, mine, N / 2, MPI_INT, &st);
  rc |= MPI_File_write(fh, mine + N / 2, N - N / 2, MPI_INT, &st);
  MPI_Offset pos = -1;
  MPI_File_get_position(fh, &pos);
  check(rc == MPI_SUCCESS && pos == (MPI_Offset)(g_rank + 1) * N * 4,
        "write with the individual pointer: position after", "rc %d pos %lld", rc, (long long)pos);
  rc = MPI_File_seek(fh, -(MPI_Offset)N * 4, MPI_SEEK_CUR);
  memset(all, 0, N * sizeof(int));
  rc |= MPI_File_read(fh, all, N, MPI_INT, &st);
  bad = 0;
  for (int i = 0; i < N; ++i) bad += all[i] != g_rank * N + i + 7;
  check(rc == MPI_SUCCESS && bad == 0, "seek back (MPI_SEEK_CUR) and read", "rc %d bad %d", rc,
        bad);
  rc = MPI_File_seek(fh, -4, MPI_SEEK_END);
  MPI_File_get_position(fh, &pos);
  check(rc == MPI_SUCCESS && pos == (MPI_Offset)g_size * N * 4 - 4, "MPI_SEEK_END", "pos %lld",
        (long long)pos);
  rc = MPI_File_seek(fh, -1, MPI_SEEK_SET);
  check_class(rc, MPI_ERR_ARG, "seek to a negative position: MPI_ERR_ARG");

  /* Nonblocking forms. */
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) mine[i] = g_rank * N + i;
  MPI_Request req[2];
  rc = MPI_File_iwrite_at(fh, (MPI_Offset)g_rank * N * 4, mine, N / 2, MPI_INT, &req[0]);
  rc |= MPI_File_seek(fh, (MPI_Offset)(g_rank * N + N / 2) * 4, MPI_SEEK_SET);
  rc |= MPI_File_iwrite(fh, mine + N / 2, N - N / 2, MPI_INT, &req[1]);
  MPI_Status sts[2];
  rc |= MPI_Waitall(2, req, sts);
  int c0 = -1, c1 = -1;
  MPI_Get_count(&sts[0], MPI_INT, &c0);
  MPI_Get_count(&sts[1], MPI_INT, &c1);
  check(rc == MPI_SUCCESS && c0 == N / 2 && c1 == N - N / 2 && req[0] == MPI_REQUEST_NULL,
        "iwrite_at and iwrite, MPI_Waitall: counts", "rc %d counts %d %d", rc, c0, c1);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  check_file_is_g(path, g_size * N, "iwrite_at/iwrite: the file by POSIX");
  memset(all, 0, (size_t)g_size * N * sizeof(int));
  MPI_Request r;
  rc = MPI_File_iread_at(fh, 0, all, g_size * N, MPI_INT, &r);
  int flag = 0;
  while (rc == MPI_SUCCESS && !flag) rc = MPI_Test(&r, &flag, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  bad = 0;
  for (int i = 0; i < g_size * N; ++i) bad += all[i] != i;
  check(rc == MPI_SUCCESS && count == g_size * N && bad == 0, "iread_at, MPI_Test",
        "rc %d count %d bad %d", rc, count, bad);
  MPI_File_seek(fh, 8, MPI_SEEK_SET);
  rc = MPI_File_iread(fh, all, 3, MPI_INT, &r);
  rc |= MPI_Wait(&r, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  MPI_File_get_position(fh, &pos);
  check(rc == MPI_SUCCESS && count == 3 && all[0] == 2 && all[2] == 4 && pos == 20,
        "iread with the pointer: data and position", "rc %d count %d [%d %d] pos %lld", rc, count,
        all[0], all[2], (long long)pos);

  /* A noncontiguous memory type: every other int of a buffer. */
  MPI_Datatype every_other;
  MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int* spread = malloc(2 * N * sizeof(int));
  memset(spread, 0, 2 * N * sizeof(int));
  rc = MPI_File_read_at(fh, (MPI_Offset)g_rank * N * 4, spread, 1, every_other, &st);
  bad = 0;
  for (int i = 0; i < N; ++i) bad += spread[2 * i] != g_rank * N + i || spread[2 * i + 1] != 0;
  MPI_Get_elements(&st, MPI_INT, &elements);
  check(rc == MPI_SUCCESS && bad == 0 && elements == N, "read_at into a vector memory type",
        "rc %d bad %d elements %d", rc, bad, elements);
  MPI_Type_free(&every_other);
  free(spread);

  MPI_Offset size = -1;
  MPI_File_get_size(fh, &size);
  check(size == (MPI_Offset)g_size * N * 4, "get_size", "%lld", (long long)size);
  MPI_Barrier(MPI_COMM_WORLD);
  /* (set_size need not synchronize: Open MPI's returns on some ranks before the size is set.) */
  rc = MPI_File_set_size(fh, 400);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_get_size(fh, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  check(rc == MPI_SUCCESS && size == 400, "set_size shrinks", "rc %d size %lld", rc,
        (long long)size);
  rc = MPI_File_set_size(fh, 100000);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_get_size(fh, &size);
  check(rc == MPI_SUCCESS && size == 100000, "set_size grows", "rc %d size %lld", rc,
        (long long)size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_torusmpi) {
    /* (Open MPI 4.1's preallocate rewrites the file's bytes in pieces and grows it past the
     * size asked for: the reference skips these.) */
    rc = MPI_File_preallocate(fh, 200000);
    MPI_File_get_size(fh, &size);
    check(rc == MPI_SUCCESS && size == 200000, "preallocate", "rc %d size %lld", rc,
          (long long)size);
    rc = MPI_File_preallocate(fh, 10);
    MPI_File_get_size(fh, &size);
    check(rc == MPI_SUCCESS && size == 200000, "preallocate never shrinks", "rc %d size %lld", rc,
          (long long)size);
  } else {
    printf("skip %d preallocate: not checked on the reference\n", g_rank);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int amode = 0;
  MPI_File_get_amode(fh, &amode);
  check(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "get_amode", "0x%x", amode);
  MPI_Group g, world;
  MPI_File_get_group(fh, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int cmp = -1;
  MPI_Group_compare(g, world, &cmp);
  check(cmp == MPI_IDENT, "get_group: the world's", "%d", cmp);
  MPI_Group_free(&g);
  MPI_Group_free(&world);
  int atomic = -1;
  MPI_File_get_atomicity(fh, &atomic);
  check(atomic == 0, "atomicity starts off", "%d", atomic);
  rc = MPI_File_set_atomicity(fh, 1);
  MPI_File_get_atomicity(fh, &atomic);
  check(rc == MPI_SUCCESS && atomic == 1, "set_atomicity", "rc %d flag %d", rc, atomic);
  /* Atomic mode: the same writes and reads, under locks. */
  rc = MPI_File_write_at(fh, (MPI_Offset)g_rank * N * 4, mine, N, MPI_INT, &st);
  MPI_Barrier(MPI_COMM_WORLD);
  rc |= MPI_File_read_at(fh, 0, all, g_size * N, MPI_INT, &st);
  bad = 0;
  for (int i = 0; i < g_size * N; ++i) bad += all[i] != i;
  check(rc == MPI_SUCCESS && bad == 0, "atomic mode: write_at then read_at", "rc %d bad %d", rc,
        bad);
  MPI_File_set_atomicity(fh, 0);
  MPI_Errhandler eh;
  MPI_File_get_errhandler(fh, &eh);
  check(eh == MPI_ERRORS_RETURN, "a file's default error handler is MPI_ERRORS_RETURN", "");
  MPI_Errhandler_free(&eh);
  rc = MPI_File_close(&fh);
  check(rc == MPI_SUCCESS && fh == MPI_FILE_NULL, "close", "rc %d", rc);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    rc = MPI_File_delete(path, MPI_INFO_NULL);
    check(rc == MPI_SUCCESS && access(path, F_OK) != 0, "MPI_File_delete", "rc %d", rc);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(mine);
  free(all);
}

/* ---- views: a filetype per layout kind, each rank's share of G */
enum { kContig, kVector, kSubarray, kDarray, kIndexed, kStruct, kKinds };
static const char* const kKindNames[kKinds] = {"contiguous", "vector",  "subarray",
                                               "darray",     "indexed", "struct-resized"};

/* The filetype of rank `rank` for a layout kind, the ints G has (*total) and how many elements
 * of the filetype the rank writes (*instances; G is covered when every rank writes them). */
static MPI_Datatype make_filetype(int kind, int rank, int* total, int* instances,
                                  MPI_Offset* disp) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  int p = g_size;
  *instances = 1;
  *disp = 0;
  switch (kind) {
    case kContig: {
      /* A contiguous block each, at its own displacement. */
      MPI_Type_contiguous(37, MPI_INT, &t);
      *total = 37 * p;
      *disp = (MPI_Offset)rank * 37 * 4;
      break;
    }
    case kVector: {
      /* Blocks of 3 ints, round robin, 5 rounds; the rank's first block at 3 * rank ints. */
      MPI_Datatype v;
      MPI_Type_vector(5, 3, 3 * p, MPI_INT, &v);
      MPI_Type_create_resized(v, 0, (MPI_Aint)5 * 3 * p * 4, &t);
      MPI_Type_free(&v);
      *total = 5 * 3 * p * 2;
      *instances = 2;
      *disp = (MPI_Offset)rank * 3 * 4;
      break;
    }
    case kSubarray: {
      /* A 6 x (4p) array in C order, each rank a 6 x 4 column block. */
      int sizes[2] = {6, 4 * p}, subsizes[2] = {6, 4}, starts[2] = {0, 4 * rank};
      MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t);
      *total = 6 * 4 * p;
      break;
    }
    case kDarray: {
      /* A 7 x 10 array over a 2-D process grid, block rows, cyclic(2) columns, Fortran order. */
      int dims[2] = {0, 0};
      MPI_Dims_create(p, 2, dims);
      int gsizes[2] = {7, 10};
      int distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
      int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2};
      MPI_Type_create_darray(p, rank, 2, gsizes, distribs, dargs, dims, MPI_ORDER_FORTRAN, MPI_INT,
                             &t);
      *total = 70;
      break;
    }
    case kIndexed: {
      /* Pieces of 1, 2, 3, 4, 1, 2, ... ints, owned round robin. */
      int lens[64], displs[64], n = 0, at = 0;
      for (int j = 0; j < 8 * p; ++j) {
        int len = 1 + j % 4;
        if (j % p == rank) {
          lens[n] = len;
          displs[n] = at;
          ++n;
        }
        at += len;
      }
      MPI_Datatype ix;
      MPI_Type_indexed(n, lens, displs, MPI_INT, &ix);
      /* Tiled twice: the extent must be the whole round. */
      MPI_Type_create_resized(ix, 0, (MPI_Aint)at * 4, &t);
      MPI_Type_free(&ix);
      *total = 2 * at;
      *instances = 2;
      break;
    }
    case kStruct: {
      /* Two ints at 8 * rank bytes and one at 8p + 4 * rank: holes between, extent 12p. */
      int lens[2] = {2, 1};
      MPI_Aint displs[2] = {(MPI_Aint)rank * 8, (MPI_Aint)p * 8 + rank * 4};
      MPI_Datatype types[2] = {MPI_INT, MPI_INT}, s;
      MPI_Type_create_struct(2, lens, displs, types, &s);
      MPI_Type_create_resized(s, 0, (MPI_Aint)p * 12, &t);
      MPI_Type_free(&s);
      *total = 3 * p * 4;
      *instances = 4;
      break;
    }
  }
  MPI_Type_commit(&t);
  return t;
}

static void test_views(const char* ds) {
  for (int kind = 0; kind < kKinds; ++kind) {
    char name[64], path[512], what[160];
    snprintf(name, sizeof name, "view-%s-%s", kKindNames[kind], ds);
    path_of(path, sizeof path, name);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_read", ds);
    MPI_Info_set(info, "romio_ds_write", ds);
    /* Small sieving buffers: windows of a few blocks, several per access. */
    MPI_Info_set(info, "ind_rd_buffer_size", "64");
    MPI_Info_set(info, "ind_wr_buffer_size", "64");
    MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    int total = 0, instances = 0;
    MPI_Offset disp = 0;
    MPI_Datatype ft = make_filetype(kind, g_rank, &total, &instances, &disp);
    int ftsize = 0;
    MPI_Type_size(ft, &ftsize);
    int n = ftsize / 4 * instances;
    /* The rank's share of G: G packed through the filetype (tiled from the displacement). */
    MPI_Aint lb, extent;
    MPI_Type_get_extent(ft, &lb, &extent);
    int* g = malloc((size_t)(total + 64) * sizeof(int));
    for (int i = 0; i < total + 64; ++i) g[i] = i;
    int* share = malloc((size_t)n * sizeof(int) + 4);
    int pos = 0;
    for (int k = 0; k < instances; ++k) {
      MPI_Pack((char*)g + disp + k * extent, 1, ft, share, n * 4, &pos, MPI_COMM_SELF);
    }
    int rc = MPI_File_set_view(fh, disp, MPI_INT, ft, "native", info);
    MPI_Status st;
    /* In two parts: the first at an explicit offset, the rest at the individual pointer. */
    int half = n / 2;
    rc |= MPI_File_write_at(fh, 0, share, half, MPI_INT, &st);
    rc |= MPI_File_seek(fh, half, MPI_SEEK_SET);
    rc |= MPI_File_write(fh, share + half, n - half, MPI_INT, &st);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    snprintf(what, sizeof what, "%s view, ds %s: writes", kKindNames[kind], ds);
    check(rc == MPI_SUCCESS && count == n - half, what, "rc %d count %d", rc, count);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    snprintf(what, sizeof what, "%s view, ds %s: the file by POSIX is G", kKindNames[kind], ds);
    check_file_is_g(path, total, what);
    int* back = malloc((size_t)n * sizeof(int) + 4);
    memset(back, 0xff, (size_t)n * sizeof(int));
    rc = MPI_File_read_at(fh, 0, back, n, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += back[i] != share[i];
    snprintf(what, sizeof what, "%s view, ds %s: read_at back", kKindNames[kind], ds);
    check(rc == MPI_SUCCESS && count == n && bad == 0, what, "rc %d count %d bad %d", rc, count,
          bad);
    /* The last element alone, through the pointer; its byte offset. (A darray's block can be
     * empty: its last is the displacement.) */
    MPI_File_seek(fh, n > 0 ? n - 1 : 0, MPI_SEEK_SET);
    int last = n > 0 ? -1 : 0;
    if (n == 0) share[0] = 0;
    rc = MPI_File_read(fh, &last, n > 0 ? 1 : 0, MPI_INT, &st);
    MPI_Offset byte = -1;
    MPI_File_get_byte_offset(fh, n > 0 ? n - 1 : 0, &byte);
    snprintf(what, sizeof what, "%s view: get_byte_offset of the last etype", kKindNames[kind]);
    int want_last = n > 0 ? share[n - 1] : 0;
    check(rc == MPI_SUCCESS && last == want_last && byte == (MPI_Offset)want_last * 4, what,
          "rc %d last %d byte %lld", rc, last, (long long)byte);
    MPI_Offset d = -1;
    MPI_Datatype et = MPI_DATATYPE_NULL, ft2 = MPI_DATATYPE_NULL;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_File_get_view(fh, &d, &et, &ft2, rep);
    int tsize = 0;
    MPI_Type_size(ft2, &tsize);
    snprintf(what, sizeof what, "%s view: get_view", kKindNames[kind]);
    check(d == disp && et == MPI_INT && tsize == ftsize && strcmp(rep, "native") == 0, what,
          "disp %lld size %d rep %s", (long long)d, tsize, rep);
    if (ft2 != MPI_DATATYPE_NULL && ft2 != MPI_INT) MPI_Type_free(&ft2);
    if (kind == kStruct) {
      /* get_info reports the hints in force. */
      MPI_Info used;
      MPI_File_get_info(fh, &used);
      char v[64] = "";
      int flag = 0;
      MPI_Info_get(used, "ind_rd_buffer_size", sizeof v - 1, v, &flag);
      check(flag && strcmp(v, "64") == 0, "get_info: ind_rd_buffer_size in force", "'%s'", v);
      MPI_Info_free(&used);
    }
    MPI_File_close(&fh);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) unlink(path);
    free(g);
    free(share);
    free(back);
  }
}

/* ---- data representations */
/* Write: file <- user ^ mask; read: user <- file ^ mask. */
static int xor_write(void* userbuf, MPI_Datatype datatype, int count, void* filebuf,
                     MPI_Offset position, void* extra_state) {
  if (datatype != MPI_INT) return MPI_ERR_TYPE;
  const int* u = (const int*)userbuf + position;
  int* f = filebuf;
  for (int i = 0; i < count; ++i) f[i] = u[i] ^ *(int*)extra_state;
  return MPI_SUCCESS;
}
static int xor_read(void* userbuf, MPI_Datatype datatype, int count, void* filebuf,
                    MPI_Offset position, void* extra_state) {
  if (datatype != MPI_INT) return MPI_ERR_TYPE;
  int* u = (int*)userbuf + position;
  const int* f = filebuf;
  for (int i = 0; i < count; ++i) u[i] = f[i] ^ *(int*)extra_state;
  return MPI_SUCCESS;
}
static int xor_extent(MPI_Datatype datatype, MPI_Aint* extent, void* extra_state) {
  (void)extra_state;
  MPI_Aint lb;
  return MPI_Type_get_extent(datatype, &lb, extent);
}

static void test_datareps(void) {
  enum { N = 64 };
  char path[512];
  path_of(path, sizeof path, "external32");
  MPI_File fh = open_file("external32", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
  /* Each rank: N ints then N doubles, at its own displacement. */
  MPI_Offset disp = (MPI_Offset)g_rank * N * 12;
  int ints[N], iback[N];
  double dbl[N], dback[N];
  for (int i = 0; i < N; ++i) {
    ints[i] = (g_rank << 20) - 3 * i - 1;
    dbl[i] = g_rank * 1000.0 + i * 0.5;
  }
  int rc = MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL);
  if (rc != MPI_SUCCESS && !g_torusmpi) {
    printf("skip %d external32: the reference has no external32 views\n", g_rank);
    MPI_File_close(&fh);
  } else {
    MPI_Status st;
    rc |= MPI_File_write_at(fh, 0, ints, N, MPI_INT, &st);
    rc |= MPI_File_write_at(fh, N * 4, dbl, N, MPI_DOUBLE, &st);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    long bytes = 0;
    unsigned char* f = (unsigned char*)posix_read(path, &bytes);
    int bad = 0;
    for (int r = 0; r < g_size && f != NULL && bytes == (long)g_size * N * 12; ++r) {
      const unsigned char* at = f + r * N * 12;
      for (int i = 0; i < N; ++i) {
        uint32_t v = (uint32_t)((r << 20) - 3 * i - 1);
        for (int b = 0; b < 4; ++b) bad += at[4 * i + b] != (unsigned char)(v >> (24 - 8 * b));
        double d = r * 1000.0 + i * 0.5;
        uint64_t u;
        memcpy(&u, &d, 8);
        for (int b = 0; b < 8; ++b)
          bad += at[N * 4 + 8 * i + b] != (unsigned char)(u >> (56 - 8 * b));
      }
    }
    check(rc == MPI_SUCCESS && f != NULL && bytes == (long)g_size * N * 12 && bad == 0,
          "external32: big-endian bytes in the file", "rc %d size %ld bad %d", rc, bytes, bad);
    free(f);
    rc = MPI_File_read_at(fh, 0, iback, N, MPI_INT, &st);
    rc |= MPI_File_read_at(fh, N * 4, dback, N, MPI_DOUBLE, &st);
    check(rc == MPI_SUCCESS && memcmp(ints, iback, sizeof ints) == 0 &&
              memcmp(dbl, dback, sizeof dbl) == 0,
          "external32: read back", "rc %d", rc);
    MPI_Aint ext = 0;
    MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext);
    MPI_Aint ext2 = 0;
    MPI_File_get_type_extent(fh, MPI_SHORT, &ext2);
    check(ext == 8 && ext2 == 2, "external32: get_type_extent of MPI_DOUBLE and MPI_SHORT",
          "%ld %ld", (long)ext, (long)ext2);
    MPI_File_close(&fh);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) unlink(path);

  /* A user representation. */
  static int mask = 0x5a5a5a5a;
  rc = MPI_Register_datarep("xor5a", xor_read, xor_write, xor_extent, &mask);
  if (rc != MPI_SUCCESS && !g_torusmpi) {
    printf("skip %d MPI_Register_datarep: the reference refuses it (class %d)\n", g_rank,
           error_class(rc));
    return;
  }
  check_rc(rc, "MPI_Register_datarep");
  rc = MPI_Register_datarep("xor5a", xor_read, xor_write, xor_extent, &mask);
  check_class(rc, MPI_ERR_DUP_DATAREP, "MPI_Register_datarep twice: MPI_ERR_DUP_DATAREP");
  path_of(path, sizeof path, "xor");
  fh = open_file("xor", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
  rc = MPI_File_set_view(fh, (MPI_Offset)g_rank * N * 4, MPI_INT, MPI_INT, "xor5a", MPI_INFO_NULL);
  if (rc != MPI_SUCCESS && !g_torusmpi) {
    printf("skip %d user datarep: the reference refuses the view\n", g_rank);
  } else {
    MPI_Status st;
    rc |= MPI_File_write_at(fh, 0, ints, N, MPI_INT, &st);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    long bytes = 0;
    int* f = (int*)posix_read(path, &bytes);
    int bad = 0;
    for (int r = 0; r < g_size && f != NULL && bytes == (long)g_size * N * 4; ++r) {
      for (int i = 0; i < N; ++i) bad += f[r * N + i] != (((r << 20) - 3 * i - 1) ^ mask);
    }
    check(rc == MPI_SUCCESS && bytes == (long)g_size * N * 4 && bad == 0,
          "user datarep: converted bytes in the file", "rc %d size %ld bad %d", rc, bytes, bad);
    free(f);
    memset(iback, 0, sizeof iback);
    rc = MPI_File_read_at(fh, 0, iback, N, MPI_INT, &st);
    check(rc == MPI_SUCCESS && memcmp(ints, iback, sizeof ints) == 0, "user datarep: read back",
          "rc %d", rc);
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset d;
    MPI_Datatype et, ft;
    MPI_File_get_view(fh, &d, &et, &ft, rep);
    check(strcmp(rep, "xor5a") == 0, "user datarep: get_view names it", "%s", rep);
  }
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) unlink(path);
}

/* ---- modes */
static void test_modes(void) {
  char path[512];
  path_of(path, sizeof path, "append");
  if (g_rank == 0) {
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    int pre[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    check(write(fd, pre, sizeof pre) == sizeof pre, "append: a file of 40 bytes", "");
    close(fd);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File fh = open_file("append", MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL);
  MPI_Offset pos = -1;
  MPI_File_get_position(fh, &pos);
  check(pos == 40, "MPI_MODE_APPEND: the pointer starts at the end", "%lld", (long long)pos);
  int v = 10 + g_rank;
  MPI_Status st;
  int rc = MPI_File_write_at(fh, 40 + 4 * g_rank, &v, 1, MPI_INT, &st);
  check_rc(rc, "append: write_at after the end");
  int dummy;
  rc = MPI_File_read_at(fh, 0, &dummy, 1, MPI_INT, &st);
  check_class(rc, MPI_ERR_ACCESS, "read on an MPI_MODE_WRONLY file: MPI_ERR_ACCESS");
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  check_file_is_g(path, 10 + g_size, "append: the file by POSIX");
  MPI_Barrier(MPI_COMM_WORLD);

  fh = open_file("append", MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN,
                 MPI_INFO_NULL);
  rc = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, &st);
  check_class(rc, MPI_ERR_READ_ONLY, "write on an MPI_MODE_RDONLY file: MPI_ERR_READ_ONLY");
  if (g_torusmpi) {
    rc = MPI_File_set_size(fh, 0);
    check_class(rc, MPI_ERR_READ_ONLY, "set_size on an MPI_MODE_RDONLY file: MPI_ERR_READ_ONLY");
  }
  rc = MPI_File_read_at(fh, 4 * (10 + g_rank), &dummy, 1, MPI_INT, &st);
  check(rc == MPI_SUCCESS && dummy == 10 + g_rank, "read_at on a read-only file", "rc %d v %d", rc,
        dummy);
  /* An error handler of the file's own. */
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  check(access(path, F_OK) != 0, "MPI_MODE_DELETE_ON_CLOSE: the file is gone", "");

  /* MPI_MODE_SEQUENTIAL: the individual pointer only; explicit offsets and seeks refused. */
  fh = open_file("sequential",
                 MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL | MPI_MODE_DELETE_ON_CLOSE,
                 MPI_INFO_NULL);
  if (g_torusmpi) {
    rc = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, &st);
    check_class(rc, MPI_ERR_UNSUPPORTED_OPERATION,
                "write_at on an MPI_MODE_SEQUENTIAL file: MPI_ERR_UNSUPPORTED_OPERATION");
    rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    check_class(rc, MPI_ERR_UNSUPPORTED_OPERATION,
                "seek on an MPI_MODE_SEQUENTIAL file: MPI_ERR_UNSUPPORTED_OPERATION");
    rc = MPI_File_set_size(fh, 0);
    check_class(rc, MPI_ERR_UNSUPPORTED_OPERATION,
                "set_size on an MPI_MODE_SEQUENTIAL file: MPI_ERR_UNSUPPORTED_OPERATION");
  }
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Existing file with CREATE | EXCL. */
  path_of(path, sizeof path, "excl");
  fh = open_file("excl", MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL);
  MPI_File_close(&fh);
  rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                     MPI_INFO_NULL, &fh);
  check_class(rc, MPI_ERR_FILE_EXISTS, "MPI_MODE_EXCL on a file that exists: MPI_ERR_FILE_EXISTS");
  if (rc == MPI_SUCCESS) MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    rc = MPI_File_delete(path, MPI_INFO_NULL);
    check_rc(rc, "MPI_File_delete");
    rc = MPI_File_delete(path, MPI_INFO_NULL);
    check_class(rc, MPI_ERR_NO_SUCH_FILE, "MPI_File_delete again: MPI_ERR_NO_SUCH_FILE");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- errors */
static int g_handled;
static void count_errors(MPI_File* fh, int* code, ...) {
  (void)fh;
  (void)code;
  ++g_handled;
}

static void test_errors(void) {
  char path[512];
  path_of(path, sizeof path, "no/such/file");
  MPI_File fh = MPI_FILE_NULL;
  int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  check_class(rc, MPI_ERR_NO_SUCH_FILE, "open of a missing file: MPI_ERR_NO_SUCH_FILE");
  if (g_torusmpi) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    check(strstr(text, "MPI_File_open") != NULL && strstr(text, path) != NULL &&
              strstr(text, strerror(ENOENT)) != NULL,
          "its message names the call, the file and the OS error", "'%s'", text);
  }
  path_of(path, sizeof path, "amode");
  rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  check_class(rc, MPI_ERR_AMODE, "RDONLY | RDWR: MPI_ERR_AMODE");
  rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
  check_class(rc, MPI_ERR_AMODE, "RDONLY | CREATE: MPI_ERR_AMODE");
  rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh);
  check_class(rc, MPI_ERR_AMODE, "RDWR | SEQUENTIAL: MPI_ERR_AMODE");
  rc = MPI_File_open(MPI_COMM_WORLD, g_dir, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  check_class(rc, MPI_ERR_BAD_FILE, "open of a directory: MPI_ERR_BAD_FILE");
  if (rc == MPI_SUCCESS) MPI_File_close(&fh);
  if (g_torusmpi) {
    /* (Open MPI 4.1's shared file pointer component overflows a buffer on such a name.) */
    char longname[5000];
    memset(longname, 'x', sizeof longname);
    memcpy(longname, g_dir, strlen(g_dir));
    longname[strlen(g_dir)] = '/';
    longname[sizeof longname - 1] = '\0';
    rc = MPI_File_open(MPI_COMM_WORLD, longname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    check_class(rc, MPI_ERR_BAD_FILE, "open of a name too long: MPI_ERR_BAD_FILE");
  }
  MPI_Status st;
  int v = 0;
  rc = MPI_File_read_at(MPI_FILE_NULL, 0, &v, 1, MPI_INT, &st);
  check_class(rc, MPI_ERR_FILE, "read_at on MPI_FILE_NULL: MPI_ERR_FILE");
  /* /dev/full: every write fails with ENOSPC. */
  if (access("/dev/full", W_OK) == 0) {
    rc = MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) {
      rc = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, &st);
      check_class(rc, MPI_ERR_NO_SPACE, "write to /dev/full: MPI_ERR_NO_SPACE");
      MPI_File_close(&fh);
    } else if (g_torusmpi) {
      check(0, "open /dev/full", "rc %d", rc);
    }
  }
  /* A FIFO has no offsets: pread fails (ESPIPE), an MPI_ERR_IO naming the OS error. */
  char fifo[512], fname[64];
  snprintf(fname, sizeof fname, "fifo-%d", g_rank);
  path_of(fifo, sizeof fifo, fname);
  if (mkfifo(fifo, 0600) == 0) {
    rc = MPI_File_open(MPI_COMM_SELF, fifo, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) {
      rc = MPI_File_read_at(fh, 0, &v, 1, MPI_INT, &st);
      check_class(rc, MPI_ERR_IO, "read_at on a FIFO: MPI_ERR_IO");
      if (g_torusmpi) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        check(strstr(text, "MPI_File_read_at") != NULL && strstr(text, "pread") != NULL &&
                  strstr(text, strerror(ESPIPE)) != NULL,
              "its message names the call, the system call and the OS error", "'%s'", text);
      }
      MPI_File_close(&fh);
    } else {
      check_class(rc, MPI_ERR_IO, "open of a FIFO");
    }
    unlink(fifo);
  } else {
    check(0, "mkfifo", "%s", strerror(errno));
  }
  /* EACCES and EROFS where this system gives them to a plain open(). */
  const char* const tries[] = {"/proc/version", "/sys/kernel/mpi-io-test", NULL};
  for (int i = 0; tries[i] != NULL; ++i) {
    int fd = open(tries[i], O_RDWR | O_CREAT, 0644);
    int e = errno;
    if (fd >= 0) {
      close(fd);
      continue;
    }
    int want = e == EACCES || e == EPERM ? MPI_ERR_ACCESS : e == EROFS ? MPI_ERR_READ_ONLY : -1;
    if (want < 0) continue;
    rc =
        MPI_File_open(MPI_COMM_SELF, tries[i], MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    char what[128];
    snprintf(what, sizeof what, "open of %s (%s): %s", tries[i], strerror(e),
             want == MPI_ERR_ACCESS ? "MPI_ERR_ACCESS" : "MPI_ERR_READ_ONLY");
    check_class(rc, want, what);
    if (rc == MPI_SUCCESS) MPI_File_close(&fh);
  }

  /* Error handlers: on MPI_FILE_NULL (the default of files to come, and open's), then a file's. */
  MPI_Errhandler eh;
  MPI_File_create_errhandler(count_errors, &eh);
  MPI_File_set_errhandler(MPI_FILE_NULL, eh);
  g_handled = 0;
  path_of(path, sizeof path, "missing");
  rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  check(rc != MPI_SUCCESS && g_handled == 1, "MPI_FILE_NULL's handler takes open's error",
        "rc %d handled %d", rc, g_handled);
  MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
  fh = open_file("handler", MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                 MPI_INFO_NULL);
  MPI_File_set_errhandler(fh, eh);
  MPI_Errhandler got;
  MPI_File_get_errhandler(fh, &got);
  check(got == eh, "MPI_File_get_errhandler gives the one set", "");
  MPI_Errhandler_free(&got);
  g_handled = 0;
  rc = MPI_File_read_at(fh, 0, &v, -1, MPI_INT, &st);
  check(rc != MPI_SUCCESS && g_handled == 1, "a file's own handler takes its errors",
        "rc %d handled %d", rc, g_handled);
  rc = MPI_File_call_errhandler(fh, MPI_ERR_IO);
  check(rc == MPI_SUCCESS && g_handled == 2, "MPI_File_call_errhandler", "rc %d handled %d", rc,
        g_handled);
  MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
  MPI_File_close(&fh);
  MPI_Errhandler_free(&eh);
}

/* ---- device buffers (torusmpi): reads into and writes from device memory */
static int test_device(void) {
  if (torusmpi_device_malloc == NULL) {
    printf("skip %d device: not torusmpi\n", g_rank);
    return check_done(g_size);
  }
  enum { N = 4096 };
  char path[512];
  path_of(path, sizeof path, "device");
  int* host = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i) host[i] = g_rank * N + i;
  void* dev = NULL;
  int rc = torusmpi_device_malloc(&dev, N * sizeof(int));
  check(rc == MPI_SUCCESS && dev != NULL, "device memory", "rc %d", rc);
  torusmpi_memcpy(dev, host, N * sizeof(int));
  MPI_File fh = open_file("device", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
  MPI_Status st;
  /* Contiguous, from device memory. */
  rc = MPI_File_write_at(fh, (MPI_Offset)g_rank * N * 4, dev, N, MPI_INT, &st);
  check_rc(rc, "write_at from device memory");
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  check_file_is_g(path, g_size * N, "device: the file by POSIX");
  /* Back into device memory, through a vector memory type (even ints only), and nonblocking. */
  void* dev2 = NULL;
  torusmpi_device_malloc(&dev2, 2 * N * sizeof(int));
  int* zero = calloc(2 * N, sizeof(int));
  torusmpi_memcpy(dev2, zero, 2 * N * sizeof(int));
  MPI_Datatype evens;
  MPI_Type_vector(N, 1, 2, MPI_INT, &evens);
  MPI_Type_commit(&evens);
  MPI_Request r;
  int peer = (g_rank + 1) % g_size;
  rc = MPI_File_iread_at(fh, (MPI_Offset)peer * N * 4, dev2, 1, evens, &r);
  rc |= MPI_Wait(&r, &st);
  int count = -1;
  MPI_Get_elements(&st, MPI_INT, &count);
  int* back = malloc(2 * N * sizeof(int));
  torusmpi_memcpy(back, dev2, 2 * N * sizeof(int));
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += back[2 * i] != peer * N + i || back[2 * i + 1] != 0;
  check(rc == MPI_SUCCESS && count == N && bad == 0, "iread_at into device memory (vector type)",
        "rc %d count %d bad %d", rc, count, bad);
  /* external32 from device memory. */
  rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL);
  rc |= MPI_File_write_at(fh, (MPI_Offset)g_rank * N, dev, N, MPI_INT, &st);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  long bytes = 0;
  unsigned char* f = (unsigned char*)posix_read(path, &bytes);
  bad = 0;
  for (int i = 0; f != NULL && i < N; ++i) {
    uint32_t v = (uint32_t)(g_rank * N + i);
    const unsigned char* at = f + ((long)g_rank * N + i) * 4;
    bad += at[0] != (v >> 24) || at[1] != ((v >> 16) & 255) || at[3] != (v & 255);
  }
  check(rc == MPI_SUCCESS && bad == 0, "external32 from device memory", "rc %d bad %d", rc, bad);
  free(f);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) unlink(path);
  MPI_Type_free(&evens);
  torusmpi_device_free(dev);
  torusmpi_device_free(dev2);
  free(host);
  free(zero);
  free(back);
  return check_done(g_size);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  g_torusmpi = strstr(version, "torusmpi") != NULL;
  if (argc < 2) {
    if (g_rank == 0) fprintf(stderr, "usage: io DIR [device]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  g_dir = argv[1];
  int rc;
  if (argc > 2 && strcmp(argv[2], "device") == 0) {
    rc = test_device();
  } else {
    test_basic();
    test_views("enable");
    test_views("disable");
    test_datareps();
    test_modes();
    test_errors();
    rc = check_done(g_size);
  }
  MPI_Finalize();
  return rc;
}
