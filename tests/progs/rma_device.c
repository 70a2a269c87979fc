/* rma_device.c: one-sided communication on device memory (torusmpi's emulated HBM). For the
 * flavors that take device memory (MPI_Win_create on it, MPI_Win_allocate with the info key
 * torusmpi_memory_kind=device, device memory attached to an MPI_Win_create_dynamic window) and
 * origin buffers on the host and on the device:
 *   - puts in fence epochs, contiguous and into a vector target datatype, from every rank to every
 *     rank; gets of every rank's part back, contiguous and into a vector origin datatype;
 *   - under lock_all with flushes: MPI_SUM and MPI_MAX accumulates on one element from every rank,
 *     MPI_REPLACE from one, MPI_Get_accumulate with MPI_NO_OP and with MPI_SUM, MPI_Fetch_and_op,
 *     MPI_Compare_and_swap from every rank where exactly one must win;
 *   - every predefined op on MPI_INT from every rank to every rank, in shared lock epochs;
 *   - an exclusive-lock read-modify-write (get, add, put) of one counter by every rank: none lost;
 *   - post/start/complete/wait: a put to the right neighbour;
 * every target element then read back through torusmpi_memcpy and compared with the reference.
 * Then the refusals: MPI_Win_allocate_shared with the device key, a bad key value, a freed
 * device buffer, MPI_Win_shared_query of device memory, a put past the window, an op the type does
 * not take.
 *
 *   rma_device         every rank's part of each window on the device
 *   rma_device mixed   even ranks' parts on the device, odd ranks' on the host
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

extern int torusmpi_device_malloc(void** ptr, size_t bytes) __attribute__((weak));
extern int torusmpi_device_free(void* ptr) __attribute__((weak));
extern int torusmpi_memcpy(void* dst, const void* src, size_t bytes) __attribute__((weak));

static int g_size;
static int g_mixed;

enum { kCreate, kAllocate, kDynamic, kFlavors };
static const char* const kFlavorNames[kFlavors] = {"create", "allocate", "dynamic"};

/* The layout of each rank's part, in ints. */
static int slots(void) { return 3 * g_size; }                /* [0, 3p): 3 ints put by each rank */
static int strided(void) { return slots(); }                 /* [3p, 5p): a vector put, stride p */
static int counters(void) { return strided() + 2 * g_size; } /* [5p, 5p+8): one-element ops */
static int op_cells(void) { return counters() + 8; } /* [5p+8, 5p+18): one per predefined op */
static int part_ints(void) { return op_cells() + 10; }

/* Every predefined op that takes MPI_INT (MPI_REPLACE is one origin's, above), its cell's first
 * value, and what each origin brings. */
enum { kOps = 10 };
static int op_start(int i) { return i == 1 ? 1 : 0x35 + i; }
static int op_value(int r) { return (r * 5 + 3) % 7; }
static int fold(int i, int a, int b) {
  switch (i) {
    case 0:
      return (int)((unsigned)a + (unsigned)b);
    case 1:
      return (int)((unsigned)a * (unsigned)b);
    case 2:
      return a > b ? a : b;
    case 3:
      return a < b ? a : b;
    case 4:
      return a && b;
    case 5:
      return a || b;
    case 6:
      return !a != !b;
    case 7:
      return a & b;
    case 8:
      return a | b;
    default:
      return a ^ b;
  }
}

enum { kSum, kMax, kReplace, kNoOp, kFetch, kCas, kLocked, kRing };

static void* dev_alloc(size_t bytes) {
  void* p = NULL;
  if (torusmpi_device_malloc(&p, bytes) != MPI_SUCCESS || p == NULL) {
    printf("FAIL %d cannot allocate %zu B of device memory\n", g_rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* n ints of either kind, holding src. */
static int* ints(const int* src, int n, int on_device) {
  int* p = on_device ? dev_alloc((size_t)n * sizeof(int)) : malloc((size_t)n * sizeof(int));
  torusmpi_memcpy(p, src, (size_t)n * sizeof(int));
  return p;
}
static void ints_free(int* p, int on_device) {
  if (on_device) {
    torusmpi_device_free(p);
  } else {
    free(p);
  }
}

typedef struct {
  MPI_Win win;
  int* part;       /* this rank's part */
  int part_device; /* ... is device memory */
  int flavor;
  MPI_Aint* origin; /* per rank: the displacement of its int 0 (an address for dynamic) */
  int* own;         /* memory this program gave (create, dynamic) */
} Win;

static MPI_Aint disp(const Win* w, int rank, int i) {
  return w->flavor == kDynamic ? w->origin[rank] + (MPI_Aint)i * (MPI_Aint)sizeof(int) : i;
}

static int part_on_device(int rank) { return !g_mixed || rank % 2 == 0; }

static void win_make(int flavor, Win* w) {
  const MPI_Aint bytes = (MPI_Aint)part_ints() * (MPI_Aint)sizeof(int);
  memset(w, 0, sizeof *w);
  w->flavor = flavor;
  w->part_device = part_on_device(g_rank);
  w->origin = calloc((size_t)g_size, sizeof(MPI_Aint));
  int rc = MPI_ERR_OTHER;
  if (flavor == kAllocate) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "torusmpi_memory_kind", w->part_device ? "device" : "host");
    rc = MPI_Win_allocate(bytes, sizeof(int), info, MPI_COMM_WORLD, &w->part, &w->win);
    MPI_Info_free(&info);
  } else {
    w->own = w->part_device ? dev_alloc((size_t)bytes) : malloc((size_t)bytes);
    w->part = w->own;
    if (flavor == kCreate) {
      rc = MPI_Win_create(w->part, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
    } else {
      rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
      if (rc == MPI_SUCCESS) rc = MPI_Win_attach(w->win, w->part, bytes);
      MPI_Aint mine;
      MPI_Get_address(w->part, &mine);
      MPI_Allgather(&mine, 1, MPI_AINT, w->origin, 1, MPI_AINT, MPI_COMM_WORLD);
    }
  }
  char what[96];
  snprintf(what, sizeof what, "%s: window made (%s part)", kFlavorNames[flavor],
           w->part_device ? "device" : "host");
  check_rc(rc, what);
  if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
  /* MPI_WIN_BASE is the part itself, of the kind asked for. */
  if (flavor != kDynamic) {
    void* base = NULL;
    int flag = 0;
    MPI_Win_get_attr(w->win, MPI_WIN_BASE, &base, &flag);
    snprintf(what, sizeof what, "%s: MPI_WIN_BASE is the part", kFlavorNames[flavor]);
    check(flag && base == w->part, what, "flag %d base %p part %p", flag, base, (void*)w->part);
  }
}

static void win_free(Win* w) {
  if (w->flavor == kDynamic) MPI_Win_detach(w->win, w->part);
  int rc = MPI_Win_free(&w->win);
  char what[64];
  snprintf(what, sizeof what, "%s: MPI_Win_free", kFlavorNames[w->flavor]);
  check(rc == MPI_SUCCESS && w->win == MPI_WIN_NULL, what, "rc %d", rc);
  if (w->own != NULL) ints_free(w->own, w->part_device);
  free(w->origin);
}

/* The value origin o puts into element k of target t's slots. */
static int slot_value(int o, int t, int k) { return 100000 + 1000 * o + 10 * t + k; }

/* Compares this rank's part (read through torusmpi_memcpy) with want; one check line. */
static void expect_part(const Win* w, const char* what, const int* want) {
  const int n = part_ints();
  int* got = malloc((size_t)n * sizeof(int));
  torusmpi_memcpy(got, w->part, (size_t)n * sizeof(int));
  int bad = -1;
  for (int i = 0; i < n && bad < 0; ++i) {
    if (got[i] != want[i]) bad = i;
  }
  check(bad < 0, what, "element %d is %d, expected %d", bad, bad >= 0 ? got[bad] : 0,
        bad >= 0 ? want[bad] : 0);
  free(got);
}

static void run(int flavor, int origin_device) {
  const int p = g_size, me = g_rank, n = part_ints();
  char what[160];
  const char* fl = kFlavorNames[flavor];
  const char* ok = origin_device ? "device" : "host";
  Win w;
  win_make(flavor, &w);

  /* Every element starts at -1, the one-element ops' at known values. */
  int* init = malloc((size_t)n * sizeof(int));
  for (int i = 0; i < n; ++i) init[i] = -1;
  const int c = counters();
  init[c + kSum] = 0;
  init[c + kMax] = -50;
  init[c + kNoOp] = 777 + me;
  init[c + kFetch] = 0;
  init[c + kLocked] = 0;
  for (int i = 0; i < kOps; ++i) init[op_cells() + i] = op_start(i);
  torusmpi_memcpy(w.part, init, (size_t)n * sizeof(int));
  MPI_Barrier(MPI_COMM_WORLD);

  /* Puts in fence epochs: 3 ints into each target's slot of this rank, and 2 ints into the
   * strided area through a vector target type. */
  int rc = MPI_Win_fence(0, w.win);
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, p, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int** bufs = malloc((size_t)p * sizeof(int*));
  for (int t = 0; t < p; ++t) {
    int v[5] = {slot_value(me, t, 0), slot_value(me, t, 1), slot_value(me, t, 2),
                -slot_value(me, t, 3), -slot_value(me, t, 4)};
    bufs[t] = ints(v, 5, origin_device);
    rc |= MPI_Put(bufs[t], 3, MPI_INT, t, disp(&w, t, 3 * me), 3, MPI_INT, w.win);
    rc |= MPI_Put(bufs[t] + 3, 2, MPI_INT, t, disp(&w, t, strided() + me), 1, vec, w.win);
  }
  rc |= MPI_Win_fence(0, w.win);
  for (int t = 0; t < p; ++t) ints_free(bufs[t], origin_device);
  int* want = malloc((size_t)n * sizeof(int));
  memcpy(want, init, (size_t)n * sizeof(int));
  for (int o = 0; o < p; ++o) {
    for (int k = 0; k < 3; ++k) want[3 * o + k] = slot_value(o, me, k);
    want[strided() + o] = -slot_value(o, me, 3);
    want[strided() + o + p] = -slot_value(o, me, 4);
  }
  snprintf(what, sizeof what, "%s, %s origin: puts (contiguous, vector target) in fences", fl, ok);
  check(rc == MPI_SUCCESS, what, "rc %d", rc);
  expect_part(&w, what, want);

  /* Gets of every rank's slots back: contiguous, and into a vector origin type (host origins:
   * a derived type on device memory is packed through the host). */
  rc = MPI_Win_fence(0, w.win);
  int* unset = malloc((size_t)(7 * p) * sizeof(int));
  for (int i = 0; i < 7 * p; ++i) unset[i] = -1;
  int* got = ints(unset, 7 * p, origin_device);
  free(unset);
  MPI_Datatype ovec;
  MPI_Type_vector(2, 1, 2, MPI_INT, &ovec);
  MPI_Type_commit(&ovec);
  for (int t = 0; t < p; ++t) {
    rc |= MPI_Get(got + 3 * t, 3, MPI_INT, t, disp(&w, t, 3 * me), 3, MPI_INT, w.win);
    if (!origin_device) {
      rc |= MPI_Get(got + 3 * p + 4 * t, 1, ovec, t, disp(&w, t, strided() + me), 1, vec, w.win);
    }
  }
  rc |= MPI_Win_fence(0, w.win);
  int* host_got = malloc((size_t)(7 * p) * sizeof(int));
  torusmpi_memcpy(host_got, got, (size_t)(7 * p) * sizeof(int));
  int bad = -1;
  for (int t = 0; t < p && bad < 0; ++t) {
    for (int k = 0; k < 3; ++k) {
      if (host_got[3 * t + k] != slot_value(me, t, k)) bad = 3 * t + k;
    }
    if (!origin_device && (host_got[3 * p + 4 * t] != -slot_value(me, t, 3) ||
                           host_got[3 * p + 4 * t + 2] != -slot_value(me, t, 4) ||
                           host_got[3 * p + 4 * t + 1] != -1)) {
      bad = 3 * p + 4 * t;
    }
  }
  snprintf(what, sizeof what, "%s, %s origin: gets of every rank's part%s", fl, ok,
           origin_device ? "" : " (contiguous, vector on both sides)");
  check(rc == MPI_SUCCESS && bad < 0, what, "rc %d, first bad element %d is %d", rc, bad,
        bad >= 0 ? host_got[bad] : 0);
  free(host_got);
  ints_free(got, origin_device);
  MPI_Type_free(&ovec);

  /* One-element operations under lock_all, on every target. */
  rc = MPI_Win_lock_all(0, w.win);
  int v[6] = {me + 1, me * 7, 4242 + me, 5, me, -1};
  int* ob = ints(v, 6, origin_device);
  int* res = ints(init, 4 * p, origin_device);
  for (int t = 0; t < p; ++t) {
    rc |= MPI_Accumulate(ob, 1, MPI_INT, t, disp(&w, t, c + kSum), 1, MPI_INT, MPI_SUM, w.win);
    rc |= MPI_Accumulate(ob + 1, 1, MPI_INT, t, disp(&w, t, c + kMax), 1, MPI_INT, MPI_MAX, w.win);
    if (t == (me + 1) % p) {
      rc |= MPI_Accumulate(ob + 2, 1, MPI_INT, t, disp(&w, t, c + kReplace), 1, MPI_INT,
                           MPI_REPLACE, w.win);
    }
    rc |= MPI_Get_accumulate(NULL, 0, MPI_INT, res + 4 * t, 1, MPI_INT, t, disp(&w, t, c + kNoOp),
                             1, MPI_INT, MPI_NO_OP, w.win);
    rc |= MPI_Fetch_and_op(ob + 3, res + 4 * t + 1, MPI_INT, t, disp(&w, t, c + kFetch), MPI_SUM,
                           w.win);
    rc |= MPI_Compare_and_swap(ob + 4, ob + 5, res + 4 * t + 2, MPI_INT, t, disp(&w, t, c + kCas),
                               w.win);
    rc |= MPI_Win_flush(t, w.win);
  }
  rc |= MPI_Win_unlock_all(w.win);
  int* r = malloc((size_t)(4 * p) * sizeof(int));
  torusmpi_memcpy(r, res, (size_t)(4 * p) * sizeof(int));
  int bad_noop = -1, bad_fetch = -1;
  int* wins = calloc((size_t)p, sizeof(int));
  for (int t = 0; t < p; ++t) {
    if (r[4 * t] != 777 + t) bad_noop = t;
    /* Fetch-and-op results: multiples of 5 below 5p (their sum lands in the counter: below). */
    if (r[4 * t + 1] % 5 != 0 || r[4 * t + 1] < 0 || r[4 * t + 1] >= 5 * p) bad_fetch = t;
    wins[t] = r[4 * t + 2] == -1; /* this rank's compare-and-swap on t won */
  }
  int* all_wins = calloc((size_t)p, sizeof(int));
  MPI_Allreduce(wins, all_wins, p, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int bad_cas = -1;
  for (int t = 0; t < p; ++t) {
    if (all_wins[t] != 1) bad_cas = t;
  }
  snprintf(what, sizeof what,
           "%s, %s origin: accumulates, get_accumulate, fetch_and_op, compare_and_swap under "
           "lock_all",
           fl, ok);
  check(rc == MPI_SUCCESS && bad_noop < 0 && bad_fetch < 0 && bad_cas < 0, what,
        "rc %d, no-op fetch wrong at target %d, fetch-and-op at %d, compare-and-swap winners "
        "not one at %d",
        rc, bad_noop, bad_fetch, bad_cas);
  ints_free(ob, origin_device);
  ints_free(res, origin_device);
  free(r);
  free(wins);
  free(all_wins);

  /* Every predefined op from every rank into its cell of every target, in shared lock epochs. */
  const MPI_Op ops[kOps] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
                            MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
  const int mine_value = op_value(me);
  int* ov = ints(&mine_value, 1, origin_device);
  rc = MPI_SUCCESS;
  for (int t = 0; t < p; ++t) {
    rc |= MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w.win);
    for (int i = 0; i < kOps; ++i) {
      rc |=
          MPI_Accumulate(ov, 1, MPI_INT, t, disp(&w, t, op_cells() + i), 1, MPI_INT, ops[i], w.win);
    }
    rc |= MPI_Win_unlock(t, w.win);
  }
  ints_free(ov, origin_device);
  for (int i = 0; i < kOps; ++i) {
    int x = op_start(i);
    for (int o = 0; o < p; ++o) x = fold(i, x, op_value(o));
    want[op_cells() + i] = x;
  }
  snprintf(what, sizeof what, "%s, %s origin: every predefined op on MPI_INT", fl, ok);
  check_rc(rc, what);

  /* An exclusive-lock read-modify-write of one counter by every rank. */
  int* cell = ints(init, 1, origin_device);
  rc = MPI_SUCCESS;
  for (int t = 0; t < p; ++t) {
    rc |= MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w.win);
    rc |= MPI_Get(cell, 1, MPI_INT, t, disp(&w, t, c + kLocked), 1, MPI_INT, w.win);
    rc |= MPI_Win_flush(t, w.win);
    int x;
    torusmpi_memcpy(&x, cell, sizeof x);
    ++x;
    torusmpi_memcpy(cell, &x, sizeof x);
    rc |= MPI_Put(cell, 1, MPI_INT, t, disp(&w, t, c + kLocked), 1, MPI_INT, w.win);
    rc |= MPI_Win_unlock(t, w.win);
  }
  ints_free(cell, origin_device);
  snprintf(what, sizeof what, "%s, %s origin: exclusive-lock increments", fl, ok);
  check_rc(rc, what);

  /* Post/start/complete/wait: this rank's number into its right neighbour's ring element. */
  MPI_Group world, left_group, right_group;
  MPI_Win_get_group(w.win, &world);
  const int right = (me + 1) % p, left = (me + p - 1) % p;
  MPI_Group_incl(world, 1, &left, &left_group);
  MPI_Group_incl(world, 1, &right, &right_group);
  int mine = 9000 + me;
  int* ring = ints(&mine, 1, origin_device);
  rc = MPI_Win_post(left_group, 0, w.win);
  rc |= MPI_Win_start(right_group, 0, w.win);
  rc |= MPI_Put(ring, 1, MPI_INT, right, disp(&w, right, c + kRing), 1, MPI_INT, w.win);
  rc |= MPI_Win_complete(w.win);
  rc |= MPI_Win_wait(w.win);
  ints_free(ring, origin_device);
  MPI_Group_free(&left_group);
  MPI_Group_free(&right_group);
  MPI_Group_free(&world);
  snprintf(what, sizeof what, "%s, %s origin: post/start/complete/wait", fl, ok);
  check_rc(rc, what);

  /* Everything that landed in this rank's part. */
  MPI_Barrier(MPI_COMM_WORLD);
  want[c + kSum] = p * (p + 1) / 2;
  want[c + kMax] = (p - 1) * 7;
  want[c + kReplace] = 4242 + (me + p - 1) % p;
  want[c + kFetch] = 5 * p;
  want[c + kLocked] = p;
  want[c + kRing] = 9000 + left;
  /* The compare-and-swap's winner is whoever came first: read it, then check it is a rank. */
  int cas = -2;
  torusmpi_memcpy(&cas, w.part + c + kCas, sizeof cas);
  want[c + kCas] = cas >= 0 && cas < p ? cas : -3;
  snprintf(what, sizeof what, "%s, %s origin: every element of this rank's part", fl, ok);
  expect_part(&w, what, want);

  MPI_Type_free(&vec);
  free(bufs);
  free(init);
  free(want);
  win_free(&w);
}

/* The refusals, on every rank alike (so none is left in a collective). */
static void run_errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "torusmpi_memory_kind", "device");
  int* base = NULL;
  MPI_Win win = MPI_WIN_NULL;
  int cls = MPI_SUCCESS;
  int rc = MPI_Win_allocate_shared(64, 1, info, MPI_COMM_WORLD, &base, &win);
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_INFO_VALUE, "MPI_Win_allocate_shared on the device: MPI_ERR_INFO_VALUE",
        "class %d", cls);
  if (rc == MPI_SUCCESS) MPI_Win_free(&win);

  /* MPI_Win_shared_query of device memory: there is nothing a host load could reach. */
  rc = MPI_Win_allocate(64, 1, info, MPI_COMM_WORLD, &base, &win);
  check_rc(rc, "MPI_Win_allocate on the device");
  if (rc == MPI_SUCCESS) {
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Aint size = 0;
    int unit = 0;
    void* q = NULL;
    rc = MPI_Win_shared_query(win, 0, &size, &unit, &q);
    MPI_Error_class(rc, &cls);
    check(cls == MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query of device memory: MPI_ERR_RMA_FLAVOR",
          "class %d", cls);
    /* Past the window's end, and an op the type does not take. */
    int* one = NULL;
    one = dev_alloc(64);
    MPI_Win_lock_all(0, win);
    rc = MPI_Put(one, 4, MPI_INT, 0, 60, 4, MPI_INT, win);
    MPI_Error_class(rc, &cls);
    check(cls == MPI_ERR_RMA_RANGE, "MPI_Put past a device window: MPI_ERR_RMA_RANGE", "class %d",
          cls);
    rc = MPI_Accumulate(one, 1, MPI_FLOAT, 0, 0, 1, MPI_FLOAT, MPI_BAND, win);
    MPI_Error_class(rc, &cls);
    check(cls == MPI_ERR_OP, "MPI_BAND on MPI_FLOAT into a device window: MPI_ERR_OP", "class %d",
          cls);
    MPI_Win_unlock_all(win);
    torusmpi_device_free(one);
    MPI_Win_free(&win);
  }

  MPI_Info_set(info, "torusmpi_memory_kind", "hbm");
  rc = MPI_Win_allocate(64, 1, info, MPI_COMM_WORLD, &base, &win);
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_INFO_VALUE, "torusmpi_memory_kind=hbm: MPI_ERR_INFO_VALUE", "class %d", cls);
  if (rc == MPI_SUCCESS) MPI_Win_free(&win);
  MPI_Info_free(&info);

  void* freed = dev_alloc(256);
  torusmpi_device_free(freed);
  rc = MPI_Win_create(freed, 256, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_BASE, "MPI_Win_create on freed device memory: MPI_ERR_BASE", "class %d",
        cls);
  if (rc == MPI_SUCCESS) MPI_Win_free(&win);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_mixed = argc > 1 && strcmp(argv[1], "mixed") == 0;
  if (torusmpi_device_malloc == NULL) {
    printf("FAIL %d not running on torusmpi (no device memory)\n", g_rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int f = 0; f < kFlavors; ++f) {
    run(f, 1);
    run(f, 0);
  }
  run_errors();
  int rc = check_done(g_size);
  MPI_Finalize();
  return rc;
}
