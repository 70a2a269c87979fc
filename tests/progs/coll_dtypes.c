/* coll_dtypes: every collective on derived datatypes, against the same collective on MPI_INT.
 *
 *   coll_dtypes      any number of ranks (1 to 6 tested)
 *
 * A collective moves a datatype's packed stream (count * size bytes in type-map order) whatever
 * its layout in memory. Five layouts, each a datatype of K ints per element within an extent of E
 * ints, the MPI buffer being the layout's start + S ints (S: the lower bound, in ints, below the
 * element's origin):
 *   L1-vector    MPI_Type_vector(2, 1, 2, MPI_INT) resized to 16 B     ints {0, 2}, E = 4
 *   L2-struct    one int at byte 4 (a struct), resized to lb 0, 12 B   ints {1},    E = 3
 *   L3-contig    MPI_Type_contiguous(3, MPI_INT): dense, used in place ints {0,1,2}, E = 3
 *   L4-indexed   blocks {2, 1} at {3, 0}, resized to 24 B              ints {3,4,0} in type-map
 *                                                                      order, E = 6
 *   L5-lb        MPI_INT resized to lb -4, extent 8                    ints {1}, S = 1, E = 2
 * For each layout, each collective and each count (0, 1, 7 and 3001: 12 to 36 KB a block, past
 * the eager limit of coll_dtypes.sh's TORUSMPI_EAGER_LIMIT=4096 job; buffers of several blocks go
 * past the default 64 KiB too), the reference is the same collective on MPI_INT over the packed
 * data (count * K ints where the call has count elements); then the call runs on the derived type
 * over the same data spread into the layout, the gaps between its ints filled with a sentinel
 * (-777), and the whole receive buffer is compared with the reference spread the same way: every
 * int of every element, every gap, the gaps between the blocks of vector collectives and 16 guard
 * ints either side. Receive buffers start with a pattern (not the sentinel) in their elements, so
 * that an element left unwritten shows, and so does one written where MPI leaves it alone. Send
 * buffers, guards and gaps included, must be left as they were. The order of the packed stream
 * (L4's type map is not in memory order) shows where one side is MPI_INT, in MPI_Pack (the
 * layout/<layout> checks) and in Alltoallw's mix of layouts.
 *
 * The collectives: Bcast and Reduce (MPI_SUM; also in place at the root) at every root; Allreduce
 * (MPI_SUM, MPI_MAX, MPI_SUM in place); Scan (also in place), Exscan (rank 0's result is undefined:
 * only its gaps and guards are checked); Reduce_scatter_block (also in place: the first block of
 * the result checked, the rest undefined); Reduce_scatter (uneven counts, rank 1's 0); Allgather
 * (also in place, also sending the derived type and receiving K * count MPI_INT); Allgatherv
 * (uneven counts, blocks in reverse rank order with gaps); Alltoall (also in place, also sending
 * K * count MPI_INT and receiving the derived type); Alltoallv (uneven counts, some 0; sent blocks
 * in rank order with gaps, received in reverse with gaps); Alltoallw (the layout under test and the
 * next one, chosen by pair of ranks, byte displacements with gaps); Gather, Gatherv, Scatter,
 * Scatterv at every root (Gather and Scatter also in place at the root); Neighbor_allgather and
 * Neighbor_alltoall on a periodic 1-D Cartesian communicator (one rank: its own neighbour twice);
 * and MPI_Iallreduce, MPI_Ialltoallv, MPI_Igather (every root), MPI_Ibcast (every root) with a
 * datatype made for the call and freed as soon as the call has started, before MPI_Wait (MPI
 * allows it).
 *
 * Then: a user-defined non-commutative operation on L1 (an element is an affine map x -> a*x + b
 * stored as (a, b), a in {1, 2}, b in 0..4; the operation composes maps in rank order) with
 * Allreduce, Reduce at root p-1 and Scan, against the serial composition computed here; the
 * operation also checks the datatype it is called with (L1's size, lb and extent). MPI_Allgather
 * of MPI_DOUBLE_INT (extent 16, size 12: the padding between elements must not be written).
 * MPI_BOTTOM with datatypes of absolute addresses (Bcast, Allreduce in place, Allgather). And
 * under MPI_ERRORS_RETURN: MPI_SUM over a struct of {int, double} is MPI_ERR_OP; an uncommitted
 * datatype is MPI_ERR_TYPE (Allreduce and Bcast); the communicator works afterwards.
 *
 * Then torusmpi's 16-bit floats, MPIX_BFLOAT16 and MPIX_C_FLOAT16 (torusmpi.h; left out, with a
 * "#" line, on a library without them): their queries (size 2, name, MPI_COMBINER_NAMED, a Fortran
 * number above Open MPI's, MPI_Type_free refused); every op but sum, product, max and min refused
 * with MPI_ERR_OP and MPI_FLOAT's text, the type's name in it; MPI_Pack/Unpack of a vector and
 * external32; MPI_Reduce_local, in host and device memory, on values whose results round (ties to
 * even, overflow, NaN, binary16's subnormals); Bcast and Allgather of NaN patterns (moved, never
 * converted); a vector and a struct of them through Allreduce (sum in place and not, max), Reduce
 * and Sendrecv, integer data; and MPI_SUM refused on a struct that mixes one with a float.
 *
 * On a library that is not torusmpi (no "torusmpi" in MPI_Get_library_version): where its error
 * class differs, a "skip <rank> <check>: ..." line instead of the check. Open MPI 4.1 deviates
 * twice more: it refuses MPI_SUM and MPI_MAX on derived datatypes (MPI_ERR_OP), so there the
 * reductions on derived types use user-defined equivalents (a "#" line says so) and everything else
 * of those checks runs; and its one-rank Alltoallw is wrong (skipped, a "skip" line). torusmpi gets
 * every check, with the predefined operations.
 *
 * Output: one "ok/FAIL <rank> <collective>/<layout>" line per collective (or form) and layout,
 * every count and root in it, with the number of problems and the first (its count and root) on
 * FAIL; "done <rank> of <p>: ..." last. All calls return errors (MPI_ERRORS_RETURN): a failing call
 * is a problem of its check. COLL_DTYPES_VERBOSE=1 prints every problem on a "# problem" line. */
#define _GNU_SOURCE /* dlsym's RTLD_DEFAULT */

#include <dlfcn.h>
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int g_size;
static int g_torusmpi;
static int g_open_mpi;  /* MPI_Get_library_version starts with "Open MPI" */
static MPI_Comm g_cart; /* periodic 1-D, all ranks, for the neighbourhood collectives */

/* --- Reporting: problems of one check, the first kept with the case it came from ------------ */
static char g_name[128]; /* the open check: "<collective>/<layout>" */
static char g_ctx[128];  /* the case being run: "count 7, root 2" */
static int g_count;      /* the count of the case */
static char g_first[512];
static int g_bad;
static int g_verbose;
static unsigned g_salt; /* changes with every case */

static void problem(const char* fmt, ...) {
  char text[sizeof g_first];
  int n = snprintf(text, sizeof text, "%s%s", g_ctx, g_ctx[0] ? ": " : "");
  if (n < 0 || (size_t)n >= sizeof text) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
  va_end(ap);
  if (g_bad++ == 0) memcpy(g_first, text, sizeof text);
  if (g_verbose) printf("# problem %d %s: %s\n", g_rank, g_name, text);
}
/* Reports the open check, if any. */
static void flush(void) {
  if (g_name[0]) check(g_bad == 0, g_name, "%d problems, the first: %s", g_bad, g_first);
  g_name[0] = '\0';
}
/* The cases of one check run one after another (each count, each root): a case of the open check
 * adds to it; another name reports it and opens the next. */
static void begin(const char* fmt, ...) {
  char name[sizeof g_name];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(name, sizeof name, fmt, ap);
  va_end(ap);
  snprintf(g_ctx, sizeof g_ctx, "count %d", g_count);
  if (strcmp(name, g_name) == 0) return;
  flush();
  memcpy(g_name, name, sizeof name);
  g_bad = 0;
  g_first[0] = '\0';
}
static void set_ctx(const char* fmt, ...) {
  int n = snprintf(g_ctx, sizeof g_ctx, "count %d", g_count);
  if (fmt[0] && n > 0 && (size_t)n < sizeof g_ctx - 2) {
    memcpy(g_ctx + n, ", ", 3);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_ctx + n + 2, sizeof g_ctx - (size_t)n - 2, fmt, ap);
    va_end(ap);
  }
  ++g_salt;
}
/* An MPI call returned rc. */
static int call(int rc, const char* fn) {
  if (rc == MPI_SUCCESS) return 1;
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, text, &len);
  problem("%s returned %d (%s)", fn, rc, text);
  return 0;
}

/* --- Layouts ------------------------------------------------------------------------------- */
enum { kLayouts = 5, kInt = kLayouts };
typedef struct {
  const char* name;
  int k, e, s; /* ints per element, extent in ints, lower bound shift in ints */
  int pos[3];  /* the ints of an element from the layout's start, in type-map order */
  MPI_Datatype type;
  int id;
} Layout;
static Layout g_layout[kLayouts + 1] = {
    {"L1-vector", 2, 4, 0, {0, 2}, MPI_DATATYPE_NULL, 0},
    {"L2-struct", 1, 3, 0, {1}, MPI_DATATYPE_NULL, 1},
    {"L3-contig", 3, 3, 0, {0, 1, 2}, MPI_DATATYPE_NULL, 2},
    {"L4-indexed", 3, 6, 0, {3, 4, 0}, MPI_DATATYPE_NULL, 3},
    {"L5-lb", 1, 2, 1, {1}, MPI_DATATYPE_NULL, 4},
    {"int", 1, 1, 0, {0}, MPI_DATATYPE_NULL, 5}, /* MPI_INT itself, for mixed calls */
};

/* A new committed datatype of layout id. */
static MPI_Datatype make_type(int id) {
  MPI_Datatype t = MPI_DATATYPE_NULL, inner = MPI_DATATYPE_NULL;
  switch (id) {
    case 0:
      MPI_Type_vector(2, 1, 2, MPI_INT, &inner);
      MPI_Type_create_resized(inner, 0, 16, &t);
      break;
    case 1: {
      int len = 1;
      MPI_Aint at = 4;
      MPI_Datatype type = MPI_INT;
      MPI_Type_create_struct(1, &len, &at, &type, &inner);
      MPI_Type_create_resized(inner, 0, 12, &t);
      break;
    }
    case 2:
      MPI_Type_contiguous(3, MPI_INT, &t);
      break;
    case 3: {
      const int lens[] = {2, 1}, displs[] = {3, 0};
      MPI_Type_indexed(2, lens, displs, MPI_INT, &inner);
      MPI_Type_create_resized(inner, 0, 24, &t);
      break;
    }
    case 4:
      MPI_Type_create_resized(MPI_INT, -4, 8, &t);
      break;
    default:
      return MPI_INT;
  }
  if (inner != MPI_DATATYPE_NULL) MPI_Type_free(&inner);
  MPI_Type_commit(&t);
  return t;
}

/* The datatype has the size, bounds and packed ints its layout says. */
static void check_layout(const Layout* l) {
  g_count = 0;
  begin("layout/%s", l->name);
  g_ctx[0] = '\0';
  int size = -1;
  MPI_Aint lb = -1, extent = -1;
  MPI_Type_size(l->type, &size);
  MPI_Type_get_extent(l->type, &lb, &extent);
  if (size != 4 * l->k || lb != -4 * l->s || extent != 4 * l->e)
    problem("size %d lb %ld extent %ld, expected %d %d %d", size, (long)lb, (long)extent, 4 * l->k,
            -4 * l->s, 4 * l->e);
  int mem[12], packed[6] = {0};
  for (int i = 0; i < 12; ++i) mem[i] = 100 + i;
  int position = 0;
  if (call(MPI_Pack(mem + l->s, 2, l->type, packed, sizeof packed, &position, MPI_COMM_SELF),
           "MPI_Pack")) {
    for (int i = 0; i < 2 * l->k; ++i) {
      int want = 100 + (i / l->k) * l->e + l->pos[i % l->k];
      if (packed[i] != want) {
        problem("packed int %d is %d, expected %d", i, packed[i], want);
        break;
      }
    }
  }
}

/* --- Data ---------------------------------------------------------------------------------- */
static uint32_t hash3(uint32_t a, uint32_t b, uint32_t c) {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  const uint32_t v[3] = {a, b, c};
  for (int k = 0; k < 3; ++k) {
    h ^= v[k] + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  return (uint32_t)(h >> 17);
}
/* n packed ints of rank r's input in this case: distinct-looking values, or for a reduction
 * -100..100 (so sums stay exact). */
static int* input(long n, int r, int reduction) {
  int* v = malloc((size_t)(n + 1) * sizeof *v);
  for (long i = 0; i < n; ++i) {
    uint32_t h = hash3((uint32_t)r, (uint32_t)i, g_salt);
    v[i] = reduction ? (int)(h % 201u) - 100 : (int)(h & 0x3fffffffu) + 1;
  }
  return v;
}
/* n packed ints a receive buffer starts with: not the sentinel, not anything sent. */
static int* initial(long n) {
  int* v = malloc((size_t)(n + 1) * sizeof *v);
  for (long i = 0; i < n; ++i) v[i] = -1000000 - (int)i;
  return v;
}
static int* copy_ints(const int* v, long n) {
  int* c = malloc((size_t)(n + 1) * sizeof *c);
  if (n > 0) memcpy(c, v, (size_t)n * sizeof *c);
  return c;
}

/* Uneven counts from a base n: rank 1 (of 2 or more) 0, the others n to n+2. */
static int uneven(int j, int n) {
  if (n == 0 || (g_size > 1 && j == 1)) return 0;
  return n + j % 3;
}
/* Alltoallv/w: what rank a sends rank b; some pairs 0. */
static int pair_count(int a, int b, int n) {
  if (n == 0 || (g_size > 1 && (a + 2 * b) % 3 == 1)) return 0;
  return n + (a + b) % 3;
}
/* Blocks in reverse rank order, a gap of (j % 2 + 1) elements before each; or in rank order with a
 * gap of 2. Displacements in elements; returns the elements spanned, a gap after the last. */
static long spaced(const int* counts, int* displs, int reverse) {
  long at = 0;
  for (int k = 0; k < g_size; ++k) {
    int j = reverse ? g_size - 1 - k : k;
    at += reverse ? 1 + j % 2 : 2;
    displs[j] = (int)at;
    at += counts[j];
  }
  return at + 1;
}
/* The reference's: packed in rank order, in ints. Returns the ints. */
static long packed_displs(const int* counts, int k, int* displs) {
  long at = 0;
  for (int j = 0; j < g_size; ++j) {
    displs[j] = (int)at;
    at += (long)counts[j] * k;
  }
  return at;
}
static int* scaled(const int* counts, int k) {
  int* v = malloc((size_t)g_size * sizeof *v);
  for (int j = 0; j < g_size; ++j) v[j] = counts[j] * k;
  return v;
}

/* --- Buffers in a layout ------------------------------------------------------------------- *
 * A Side is the memory of one buffer argument: kGuard ints, a region, kGuard ints, all the
 * sentinel but for the ints of its elements. where[j] maps packed int j of the reference's buffer
 * to its int in the region; blocks are added in the reference's order. */
enum { kGuard = 16 };
static const int kSentinel = -777;
typedef struct {
  long* where;
  long n, cap;
  long region; /* ints */
  int* mem;
  int* snap;
} Side;

/* count elements of layout l whose first element's origin is int `origin` of the region. */
static void side_block(Side* s, const Layout* l, long origin, long count) {
  if (count <= 0) return;
  if (origin - l->s < 0) abort(); /* a bug of this program */
  if (s->n + count * l->k > s->cap) {
    s->cap = 2 * (s->n + count * l->k);
    s->where = realloc(s->where, (size_t)s->cap * sizeof *s->where);
  }
  for (long e = 0; e < count; ++e)
    for (int k = 0; k < l->k; ++k) s->where[s->n++] = origin + e * l->e + l->pos[k] - l->s;
  long end = origin + count * l->e - l->s;
  if (end > s->region) s->region = end;
}
static void side_span(Side* s, long ints) {
  if (ints > s->region) s->region = ints;
}
/* Allocates the memory and puts the packed ints (s->n of them; none when NULL) in place. */
static void side_alloc(Side* s, const int* packed) {
  long total = s->region + 2 * kGuard;
  s->mem = malloc((size_t)total * sizeof *s->mem);
  for (long i = 0; i < total; ++i) s->mem[i] = kSentinel;
  for (long j = 0; packed && j < s->n; ++j) s->mem[kGuard + s->where[j]] = packed[j];
}
/* One buffer of count elements of l at the region's start, holding packed. */
static void side_one(Side* s, const Layout* l, long count, const int* packed) {
  side_block(s, l, l->s, count);
  side_alloc(s, packed);
}
/* The address of int `at` of the region (the MPI buffer argument: at = the layout's s). */
static void* side_at(const Side* s, long at) { return s->mem + kGuard + at; }
static void* side_buf(const Side* s, const Layout* l) { return side_at(s, l->s); }
static void side_snap(Side* s) {
  long total = s->region + 2 * kGuard;
  s->snap = copy_ints(s->mem, total);
}
static void side_free(Side* s) {
  free(s->where);
  free(s->mem);
  free(s->snap);
  memset(s, 0, sizeof *s);
}

/* Where int i of the memory is, for messages. */
static void describe(const Side* s, const long* index, long i, char* text, size_t size) {
  if (i < kGuard)
    snprintf(text, size, "guard int %ld before the buffer", kGuard - i);
  else if (i >= kGuard + s->region)
    snprintf(text, size, "guard int %ld after the buffer", i - kGuard - s->region + 1);
  else if (index[i] >= 0)
    snprintf(text, size, "int %ld of the region (packed int %ld)", i - kGuard, index[i]);
  else
    snprintf(text, size, "int %ld of the region (a gap)", i - kGuard);
}
/* The memory holds the packed ints `want` in place, the sentinel everywhere else. Only the first
 * `defined` packed ints are checked (the rest: what MPI leaves undefined); their gaps always. */
static void side_expect_first(const Side* s, const int* want, long defined, const char* what) {
  long total = s->region + 2 * kGuard;
  long* index = malloc((size_t)total * sizeof *index);
  for (long i = 0; i < total; ++i) index[i] = -1;
  for (long j = 0; j < s->n; ++j) index[kGuard + s->where[j]] = j;
  long bad = 0, first = -1;
  int got = 0, expected = 0;
  for (long i = 0; i < total; ++i) {
    if (index[i] >= defined) continue;
    int w = index[i] >= 0 ? want[index[i]] : kSentinel;
    if (s->mem[i] == w) continue;
    if (bad++ == 0) {
      first = i;
      got = s->mem[i];
      expected = w;
    }
  }
  if (bad > 0) {
    char where[96];
    describe(s, index, first, where, sizeof where);
    problem("%s: %ld ints wrong, the first %s: %d, expected %d", what, bad, where, got, expected);
  }
  free(index);
}
static void side_expect(const Side* s, const int* want, int data, const char* what) {
  side_expect_first(s, want, data ? s->n : 0, what);
}
/* The memory is as side_snap saw it. */
static void side_unchanged(const Side* s, const char* what) {
  long total = s->region + 2 * kGuard;
  long bad = 0, first = -1;
  for (long i = 0; i < total; ++i)
    if (s->mem[i] != s->snap[i] && bad++ == 0) first = i;
  if (bad == 0) return;
  long* index = malloc((size_t)total * sizeof *index);
  for (long i = 0; i < total; ++i) index[i] = -1;
  for (long j = 0; j < s->n; ++j) index[kGuard + s->where[j]] = j;
  char where[96];
  describe(s, index, first, where, sizeof where);
  problem("%s changed: %ld ints, the first %s: %d, was %d", what, bad, where, s->mem[first],
          s->snap[first]);
  free(index);
}

/* A nonblocking call's datatype: made for the call, freed once it has started. */
typedef struct {
  MPI_Request req;
  MPI_Datatype type;
} Nb;
static void nb_wait(Nb* nb, int rc, const char* fn) {
  MPI_Type_free(&nb->type);
  if (call(rc, fn)) call(MPI_Wait(&nb->req, MPI_STATUS_IGNORE), "MPI_Wait");
}

/* --- Predefined operations on derived datatypes ------------------------------------------- *
 * MPI_SUM and MPI_MAX apply to a derived datatype built of one predefined type (torusmpi, MPICH);
 * Open MPI 4.1 refuses them with MPI_ERR_OP (only MPI_Accumulate takes them there). Probed once: on
 * a reference library that refuses them, the reductions on derived datatypes use user-defined
 * equivalents (packing the operands, adding or taking the maximum, unpacking the result), so that
 * the rest of each check still runs there. torusmpi always gets MPI_SUM and MPI_MAX. */
static MPI_Op g_sum = MPI_SUM, g_max = MPI_MAX;
static void packed_op(void* in, void* inout, int* len, MPI_Datatype* type, int max) {
  int size = 0, position = 0;
  MPI_Type_size(*type, &size);
  long n = (long)*len * size / (long)sizeof(int);
  int* a = malloc((size_t)(n + 1) * sizeof *a);
  int* b = malloc((size_t)(n + 1) * sizeof *b);
  MPI_Pack(in, *len, *type, a, (int)(n * 4), &position, MPI_COMM_SELF);
  position = 0;
  MPI_Pack(inout, *len, *type, b, (int)(n * 4), &position, MPI_COMM_SELF);
  for (long i = 0; i < n; ++i) b[i] = max ? (a[i] > b[i] ? a[i] : b[i]) : a[i] + b[i];
  position = 0;
  MPI_Unpack(b, (int)(n * 4), &position, inout, *len, *type, MPI_COMM_SELF);
  free(a);
  free(b);
}
static void packed_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  packed_op(in, inout, len, type, 0);
}
static void packed_max(void* in, void* inout, int* len, MPI_Datatype* type) {
  packed_op(in, inout, len, type, 1);
}
static void choose_ops(void) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int in[3] = {1, 2, 3}, out[3] = {0};
  int rc = MPI_Allreduce(in, out, 1, g_layout[2].type, MPI_SUM, comm);
  MPI_Comm_free(&comm);
  if (rc == MPI_SUCCESS || g_torusmpi) return;
  if (g_rank == 0)
    printf(
        "# the reference library refuses MPI_SUM on a derived datatype (error %d): the "
        "reductions on derived datatypes use user-defined sum and max\n",
        rc);
  MPI_Op_create(packed_sum, 1, &g_sum);
  MPI_Op_create(packed_max, 1, &g_max);
}

/* --- Rooted and reducing collectives ------------------------------------------------------ */
static void t_bcast(const Layout* l, int n, int nonblocking) {
  const char* fn = nonblocking ? "MPI_Ibcast" : "MPI_Bcast";
  begin("%s/%s", nonblocking ? "ibcast" : "bcast", l->name);
  long nk = (long)n * l->k;
  for (int root = 0; root < g_size; ++root) {
    set_ctx("root %d", root);
    int* ref = g_rank == root ? input(nk, root, 0) : initial(nk);
    Side b = {0};
    side_one(&b, l, n, ref);
    call(MPI_Bcast(ref, (int)nk, MPI_INT, root, MPI_COMM_WORLD), "MPI_Bcast(MPI_INT)");
    if (nonblocking) {
      Nb nb = {MPI_REQUEST_NULL, make_type(l->id)};
      nb_wait(&nb, MPI_Ibcast(side_buf(&b, l), n, nb.type, root, MPI_COMM_WORLD, &nb.req), fn);
    } else {
      call(MPI_Bcast(side_buf(&b, l), n, l->type, root, MPI_COMM_WORLD), fn);
    }
    side_expect(&b, ref, 1, "buffer");
    side_free(&b);
    free(ref);
  }
}

/* Reduce, also in place at the root. */
static void t_reduce(const Layout* l, int n, int in_place_root) {
  begin("%s/%s", in_place_root ? "reduce-inplace" : "reduce-sum", l->name);
  long nk = (long)n * l->k;
  for (int root = 0; root < g_size; ++root) {
    set_ctx("root %d", root);
    int here = g_rank == root, in_place = in_place_root && here;
    int* in = input(nk, g_rank, 1);
    int* ref = in_place ? copy_ints(in, nk) : initial(nk);
    Side s = {0}, r = {0};
    side_one(&s, l, in_place ? 0 : n, in);
    side_snap(&s);
    side_one(&r, l, here ? n : 0, ref);
    call(MPI_Reduce(in_place ? MPI_IN_PLACE : in, here ? ref : NULL, (int)nk, MPI_INT, MPI_SUM,
                    root, MPI_COMM_WORLD),
         "MPI_Reduce(MPI_INT)");
    call(MPI_Reduce(in_place ? MPI_IN_PLACE : side_buf(&s, l), here ? side_buf(&r, l) : NULL, n,
                    l->type, g_sum, root, MPI_COMM_WORLD),
         "MPI_Reduce");
    side_unchanged(&s, "send buffer");
    if (here) side_expect(&r, ref, 1, "receive buffer");
    side_free(&s);
    side_free(&r);
    free(in);
    free(ref);
  }
}

/* Allreduce (which: 0 sum, 1 max, 2 sum in place, 3 Iallreduce sum), Scan (4; 6 in place),
 * Exscan (5). */
static void t_allreduce(const Layout* l, int n, int which) {
  static const char* const names[] = {"allreduce-sum",  "allreduce-max", "allreduce-inplace",
                                      "iallreduce-sum", "scan-sum",      "exscan-sum",
                                      "scan-inplace"};
  begin("%s/%s", names[which], l->name);
  set_ctx("");
  long nk = (long)n * l->k;
  MPI_Op op = which == 1 ? MPI_MAX : MPI_SUM, dop = which == 1 ? g_max : g_sum;
  int in_place = which == 2 || which == 6;
  int* in = input(nk, g_rank, 1);
  int* ref = in_place ? copy_ints(in, nk) : initial(nk);
  Side s = {0}, r = {0};
  side_one(&s, l, in_place ? 0 : n, in);
  side_snap(&s);
  side_one(&r, l, n, ref);
  const void* ref_in = in_place ? MPI_IN_PLACE : in;
  const void* buf_in = in_place ? MPI_IN_PLACE : side_buf(&s, l);
  MPI_Comm w = MPI_COMM_WORLD;
  int data = 1;
  switch (which) {
    case 4:
    case 6:
      call(MPI_Scan(ref_in, ref, (int)nk, MPI_INT, op, w), "MPI_Scan(MPI_INT)");
      call(MPI_Scan(buf_in, side_buf(&r, l), n, l->type, dop, w), "MPI_Scan");
      break;
    case 5:
      call(MPI_Exscan(in, ref, (int)nk, MPI_INT, op, w), "MPI_Exscan(MPI_INT)");
      call(MPI_Exscan(buf_in, side_buf(&r, l), n, l->type, dop, w), "MPI_Exscan");
      data = g_rank != 0;
      break;
    case 3: {
      MPI_Request req;
      call(MPI_Iallreduce(in, ref, (int)nk, MPI_INT, op, w, &req), "MPI_Iallreduce(MPI_INT)");
      call(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait(MPI_INT)");
      Nb nb = {MPI_REQUEST_NULL, make_type(l->id)};
      nb_wait(&nb, MPI_Iallreduce(buf_in, side_buf(&r, l), n, nb.type, dop, w, &nb.req),
              "MPI_Iallreduce");
      break;
    }
    default:
      call(MPI_Allreduce(ref_in, ref, (int)nk, MPI_INT, op, w), "MPI_Allreduce(MPI_INT)");
      call(MPI_Allreduce(buf_in, side_buf(&r, l), n, l->type, dop, w), "MPI_Allreduce");
  }
  side_unchanged(&s, "send buffer");
  side_expect(&r, ref, data, "receive buffer");
  side_free(&s);
  side_free(&r);
  free(in);
  free(ref);
}

/* Reduce_scatter_block (mode 0; 2 in place) or Reduce_scatter with uneven counts (1). In place,
 * the input is the whole receive buffer and the result its first block, the rest undefined. */
static void t_reduce_scatter(const Layout* l, int n, int mode) {
  static const char* const names[] = {"reduce_scatter_block", "reduce_scatter",
                                      "reduce_scatter_block-inplace"};
  begin("%s/%s", names[mode], l->name);
  set_ctx("");
  const int p = g_size, vary = mode == 1, in_place = mode == 2;
  int* counts = malloc((size_t)p * sizeof *counts);
  long total = 0;
  for (int j = 0; j < p; ++j) total += counts[j] = vary ? uneven(j, n) : n;
  int mine = counts[g_rank];
  int* in = input(total * l->k, g_rank, 1);
  int* ref = in_place ? copy_ints(in, total * l->k) : initial((long)mine * l->k);
  Side s = {0}, r = {0};
  side_one(&s, l, in_place ? 0 : total, in);
  side_snap(&s);
  side_one(&r, l, in_place ? total : mine, ref);
  if (in_place) {
    call(MPI_Reduce_scatter_block(MPI_IN_PLACE, ref, n * l->k, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         "MPI_Reduce_scatter_block(MPI_INT)");
    call(MPI_Reduce_scatter_block(MPI_IN_PLACE, side_buf(&r, l), n, l->type, g_sum, MPI_COMM_WORLD),
         "MPI_Reduce_scatter_block");
  } else if (vary) {
    int* kcounts = scaled(counts, l->k);
    call(MPI_Reduce_scatter(in, ref, kcounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         "MPI_Reduce_scatter(MPI_INT)");
    call(MPI_Reduce_scatter(side_buf(&s, l), side_buf(&r, l), counts, l->type, g_sum,
                            MPI_COMM_WORLD),
         "MPI_Reduce_scatter");
    free(kcounts);
  } else {
    call(MPI_Reduce_scatter_block(in, ref, n * l->k, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         "MPI_Reduce_scatter_block(MPI_INT)");
    call(MPI_Reduce_scatter_block(side_buf(&s, l), side_buf(&r, l), n, l->type, g_sum,
                                  MPI_COMM_WORLD),
         "MPI_Reduce_scatter_block");
  }
  side_unchanged(&s, "send buffer");
  side_expect_first(&r, ref, (long)mine * l->k, "receive buffer");
  side_free(&s);
  side_free(&r);
  free(counts);
  free(in);
  free(ref);
}

/* --- Gathering and scattering -------------------------------------------------------------- */
/* Allgather: mode 0 plain, 1 in place, 2 sending the derived type and receiving K * n MPI_INT. */
static void t_allgather(const Layout* l, int n, int mode) {
  static const char* const names[] = {"allgather", "allgather-inplace", "allgather-recv-int"};
  begin("%s/%s", names[mode], l->name);
  set_ctx("");
  const int p = g_size;
  long nk = (long)n * l->k;
  int* in = input(nk, g_rank, 0);
  int* ref = initial(p * nk);
  if (mode == 1 && nk > 0) memcpy(ref + g_rank * nk, in, (size_t)nk * sizeof *in);
  Side s = {0}, r = {0};
  side_one(&s, l, mode == 1 ? 0 : n, in);
  side_snap(&s);
  if (mode == 2)
    side_one(&r, &g_layout[kInt], p * nk, ref);
  else
    side_one(&r, l, (long)p * n, ref);
  call(MPI_Allgather(mode == 1 ? MPI_IN_PLACE : in, (int)nk, MPI_INT, ref, (int)nk, MPI_INT,
                     MPI_COMM_WORLD),
       "MPI_Allgather(MPI_INT)");
  if (mode == 2)
    call(MPI_Allgather(side_buf(&s, l), n, l->type, side_at(&r, 0), (int)nk, MPI_INT,
                       MPI_COMM_WORLD),
         "MPI_Allgather");
  else
    call(MPI_Allgather(mode == 1 ? MPI_IN_PLACE : side_buf(&s, l), n, l->type, side_buf(&r, l), n,
                       l->type, MPI_COMM_WORLD),
         "MPI_Allgather");
  side_unchanged(&s, "send buffer");
  side_expect(&r, ref, 1, "receive buffer");
  side_free(&s);
  side_free(&r);
  free(in);
  free(ref);
}

/* Receive side of a vector collective: counts[j] elements from rank j at displs[j] (elements),
 * added in rank order. */
static void side_spaced(Side* s, const Layout* l, const int* counts, const int* displs, long span) {
  for (int j = 0; j < g_size; ++j) side_block(s, l, l->s + (long)displs[j] * l->e, counts[j]);
  side_span(s, span * l->e);
}

static void t_allgatherv(const Layout* l, int n, int mode) {
  (void)mode;
  begin("allgatherv/%s", l->name);
  set_ctx("");
  const int p = g_size;
  int* counts = malloc((size_t)p * sizeof *counts);
  int* displs = malloc((size_t)p * sizeof *displs);
  int* rdispls = malloc((size_t)p * sizeof *rdispls);
  for (int j = 0; j < p; ++j) counts[j] = uneven(j, n);
  int mine = counts[g_rank];
  int* kcounts = scaled(counts, l->k);
  long total = packed_displs(counts, l->k, rdispls);
  long span = spaced(counts, displs, 1);
  int* in = input((long)mine * l->k, g_rank, 0);
  int* ref = initial(total);
  Side s = {0}, r = {0};
  side_one(&s, l, mine, in);
  side_snap(&s);
  side_spaced(&r, l, counts, displs, span);
  side_alloc(&r, ref);
  call(MPI_Allgatherv(in, kcounts[g_rank], MPI_INT, ref, kcounts, rdispls, MPI_INT, MPI_COMM_WORLD),
       "MPI_Allgatherv(MPI_INT)");
  call(MPI_Allgatherv(side_buf(&s, l), mine, l->type, side_buf(&r, l), counts, displs, l->type,
                      MPI_COMM_WORLD),
       "MPI_Allgatherv");
  side_unchanged(&s, "send buffer");
  side_expect(&r, ref, 1, "receive buffer");
  side_free(&s);
  side_free(&r);
  free(counts);
  free(displs);
  free(rdispls);
  free(kcounts);
  free(in);
  free(ref);
}

/* Gather (mode 0), in place at the root (1), Igather with a freed type (2). */
static void t_gather(const Layout* l, int n, int mode) {
  static const char* const names[] = {"gather", "gather-inplace", "igather"};
  begin("%s/%s", names[mode], l->name);
  const int p = g_size;
  long nk = (long)n * l->k;
  for (int root = 0; root < p; ++root) {
    set_ctx("root %d", root);
    int here = g_rank == root, in_place = mode == 1 && here;
    int* in = input(nk, g_rank, 0);
    int* ref = initial(here ? p * nk : 0);
    if (in_place && nk > 0) memcpy(ref + g_rank * nk, in, (size_t)nk * sizeof *in);
    Side s = {0}, r = {0};
    side_one(&s, l, in_place ? 0 : n, in);
    side_snap(&s);
    side_one(&r, l, here ? (long)p * n : 0, ref);
    const void* ref_in = in_place ? MPI_IN_PLACE : in;
    const void* buf_in = in_place ? MPI_IN_PLACE : side_buf(&s, l);
    void* buf_out = here ? side_buf(&r, l) : NULL;
    call(MPI_Gather(ref_in, (int)nk, MPI_INT, here ? ref : NULL, (int)nk, MPI_INT, root,
                    MPI_COMM_WORLD),
         "MPI_Gather(MPI_INT)");
    if (mode == 2) {
      Nb nb = {MPI_REQUEST_NULL, make_type(l->id)};
      nb_wait(&nb,
              MPI_Igather(buf_in, n, nb.type, buf_out, n, nb.type, root, MPI_COMM_WORLD, &nb.req),
              "MPI_Igather");
    } else {
      call(MPI_Gather(buf_in, n, l->type, buf_out, n, l->type, root, MPI_COMM_WORLD), "MPI_Gather");
    }
    side_unchanged(&s, "send buffer");
    if (here) side_expect(&r, ref, 1, "receive buffer");
    side_free(&s);
    side_free(&r);
    free(in);
    free(ref);
  }
}

static void t_gatherv(const Layout* l, int n, int mode) {
  (void)mode;
  begin("gatherv/%s", l->name);
  const int p = g_size;
  int* counts = malloc((size_t)p * sizeof *counts);
  int* displs = malloc((size_t)p * sizeof *displs);
  int* rdispls = malloc((size_t)p * sizeof *rdispls);
  for (int j = 0; j < p; ++j) counts[j] = uneven(j, n);
  int* kcounts = scaled(counts, l->k);
  long total = packed_displs(counts, l->k, rdispls);
  long span = spaced(counts, displs, 1);
  int mine = counts[g_rank];
  for (int root = 0; root < p; ++root) {
    set_ctx("root %d", root);
    int here = g_rank == root;
    int* in = input((long)mine * l->k, g_rank, 0);
    int* ref = initial(here ? total : 0);
    Side s = {0}, r = {0};
    side_one(&s, l, mine, in);
    side_snap(&s);
    if (here) side_spaced(&r, l, counts, displs, span);
    side_alloc(&r, ref);
    call(MPI_Gatherv(in, kcounts[g_rank], MPI_INT, here ? ref : NULL, here ? kcounts : NULL,
                     here ? rdispls : NULL, MPI_INT, root, MPI_COMM_WORLD),
         "MPI_Gatherv(MPI_INT)");
    call(MPI_Gatherv(side_buf(&s, l), mine, l->type, here ? side_buf(&r, l) : NULL,
                     here ? counts : NULL, here ? displs : NULL, l->type, root, MPI_COMM_WORLD),
         "MPI_Gatherv");
    side_unchanged(&s, "send buffer");
    if (here) side_expect(&r, ref, 1, "receive buffer");
    side_free(&s);
    side_free(&r);
    free(in);
    free(ref);
  }
  free(counts);
  free(displs);
  free(rdispls);
  free(kcounts);
}

/* Scatter, also in place at the root. */
static void t_scatter(const Layout* l, int n, int in_place_root) {
  begin("%s/%s", in_place_root ? "scatter-inplace" : "scatter", l->name);
  const int p = g_size;
  long nk = (long)n * l->k;
  for (int root = 0; root < p; ++root) {
    set_ctx("root %d", root);
    int here = g_rank == root, in_place = in_place_root && here;
    int* in = input(here ? p * nk : 0, g_rank, 0);
    int* ref = initial(nk);
    Side s = {0}, r = {0};
    side_one(&s, l, here ? (long)p * n : 0, in);
    side_snap(&s);
    side_one(&r, l, in_place ? 0 : n, ref);
    call(MPI_Scatter(here ? in : NULL, (int)nk, MPI_INT, in_place ? MPI_IN_PLACE : ref, (int)nk,
                     MPI_INT, root, MPI_COMM_WORLD),
         "MPI_Scatter(MPI_INT)");
    call(MPI_Scatter(here ? side_buf(&s, l) : NULL, n, l->type,
                     in_place ? MPI_IN_PLACE : side_buf(&r, l), n, l->type, root, MPI_COMM_WORLD),
         "MPI_Scatter");
    side_unchanged(&s, "send buffer");
    side_expect(&r, ref, 1, "receive buffer");
    side_free(&s);
    side_free(&r);
    free(in);
    free(ref);
  }
}

static void t_scatterv(const Layout* l, int n, int mode) {
  (void)mode;
  begin("scatterv/%s", l->name);
  const int p = g_size;
  int* counts = malloc((size_t)p * sizeof *counts);
  int* displs = malloc((size_t)p * sizeof *displs);
  int* sdispls = malloc((size_t)p * sizeof *sdispls);
  for (int j = 0; j < p; ++j) counts[j] = uneven(j, n);
  int* kcounts = scaled(counts, l->k);
  long total = packed_displs(counts, l->k, sdispls);
  long span = spaced(counts, displs, 1);
  int mine = counts[g_rank];
  for (int root = 0; root < p; ++root) {
    set_ctx("root %d", root);
    int here = g_rank == root;
    int* in = input(here ? total : 0, g_rank, 0);
    int* ref = initial((long)mine * l->k);
    Side s = {0}, r = {0};
    if (here) side_spaced(&s, l, counts, displs, span);
    side_alloc(&s, in);
    side_snap(&s);
    side_one(&r, l, mine, ref);
    call(MPI_Scatterv(here ? in : NULL, here ? kcounts : NULL, here ? sdispls : NULL, MPI_INT, ref,
                      kcounts[g_rank], MPI_INT, root, MPI_COMM_WORLD),
         "MPI_Scatterv(MPI_INT)");
    call(MPI_Scatterv(here ? side_buf(&s, l) : NULL, here ? counts : NULL, here ? displs : NULL,
                      l->type, side_buf(&r, l), mine, l->type, root, MPI_COMM_WORLD),
         "MPI_Scatterv");
    side_unchanged(&s, "send buffer");
    side_expect(&r, ref, 1, "receive buffer");
    side_free(&s);
    side_free(&r);
    free(in);
    free(ref);
  }
  free(counts);
  free(displs);
  free(sdispls);
  free(kcounts);
}

/* --- All to all ---------------------------------------------------------------------------- */
/* Alltoall: mode 0 plain, 1 sending K * n MPI_INT and receiving the derived type, 2 in place. */
static void t_alltoall(const Layout* l, int n, int mode) {
  static const char* const names[] = {"alltoall", "alltoall-send-int", "alltoall-inplace"};
  begin("%s/%s", names[mode], l->name);
  set_ctx("");
  const int p = g_size;
  long nk = (long)n * l->k;
  int* in = input(p * nk, g_rank, 0);
  int* ref = mode == 2 ? copy_ints(in, p * nk) : initial(p * nk);
  Side s = {0}, r = {0};
  if (mode == 1)
    side_one(&s, &g_layout[kInt], p * nk, in);
  else
    side_one(&s, l, mode == 2 ? 0 : (long)p * n, in);
  side_snap(&s);
  side_one(&r, l, (long)p * n, ref);
  call(MPI_Alltoall(mode == 2 ? MPI_IN_PLACE : in, (int)nk, MPI_INT, ref, (int)nk, MPI_INT,
                    MPI_COMM_WORLD),
       "MPI_Alltoall(MPI_INT)");
  if (mode == 2)
    call(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, side_buf(&r, l), n, l->type,
                      MPI_COMM_WORLD),
         "MPI_Alltoall");
  else if (mode == 1)
    call(
        MPI_Alltoall(side_at(&s, 0), (int)nk, MPI_INT, side_buf(&r, l), n, l->type, MPI_COMM_WORLD),
        "MPI_Alltoall");
  else
    call(MPI_Alltoall(side_buf(&s, l), n, l->type, side_buf(&r, l), n, l->type, MPI_COMM_WORLD),
         "MPI_Alltoall");
  side_unchanged(&s, "send buffer");
  side_expect(&r, ref, 1, "receive buffer");
  side_free(&s);
  side_free(&r);
  free(in);
  free(ref);
}

/* Alltoallv (or Ialltoallv with a freed type): uneven counts, sent blocks in rank order with gaps,
 * received in reverse with gaps. */
static void t_alltoallv(const Layout* l, int n, int nonblocking) {
  begin("%s/%s", nonblocking ? "ialltoallv" : "alltoallv", l->name);
  set_ctx("");
  const int p = g_size;
  int *sc = malloc((size_t)p * sizeof(int)), *rc = malloc((size_t)p * sizeof(int));
  int *sd = malloc((size_t)p * sizeof(int)), *rd = malloc((size_t)p * sizeof(int));
  int *psd = malloc((size_t)p * sizeof(int)), *prd = malloc((size_t)p * sizeof(int));
  for (int j = 0; j < p; ++j) {
    sc[j] = pair_count(g_rank, j, n);
    rc[j] = pair_count(j, g_rank, n);
  }
  int *ksc = scaled(sc, l->k), *krc = scaled(rc, l->k);
  long stotal = packed_displs(sc, l->k, psd), rtotal = packed_displs(rc, l->k, prd);
  long sspan = spaced(sc, sd, 0), rspan = spaced(rc, rd, 1);
  int* in = input(stotal, g_rank, 0);
  int* ref = initial(rtotal);
  Side s = {0}, r = {0};
  side_spaced(&s, l, sc, sd, sspan);
  side_alloc(&s, in);
  side_snap(&s);
  side_spaced(&r, l, rc, rd, rspan);
  side_alloc(&r, ref);
  call(MPI_Alltoallv(in, ksc, psd, MPI_INT, ref, krc, prd, MPI_INT, MPI_COMM_WORLD),
       "MPI_Alltoallv(MPI_INT)");
  if (nonblocking) {
    Nb nb = {MPI_REQUEST_NULL, make_type(l->id)};
    nb_wait(&nb,
            MPI_Ialltoallv(side_buf(&s, l), sc, sd, nb.type, side_buf(&r, l), rc, rd, nb.type,
                           MPI_COMM_WORLD, &nb.req),
            "MPI_Ialltoallv");
  } else {
    call(MPI_Alltoallv(side_buf(&s, l), sc, sd, l->type, side_buf(&r, l), rc, rd, l->type,
                       MPI_COMM_WORLD),
         "MPI_Alltoallv");
  }
  side_unchanged(&s, "send buffer");
  side_expect(&r, ref, 1, "receive buffer");
  side_free(&s);
  side_free(&r);
  free(sc), free(rc), free(sd), free(rd), free(psd), free(prd), free(ksc), free(krc);
  free(in);
  free(ref);
}

/* Alltoallw: between ranks a and b, layout l when a + b is even, the next layout when odd (both
 * ways). */
static void t_alltoallw(const Layout* l, int n, int mode) {
  (void)mode;
  const Layout* other = &g_layout[(l->id + 1) % kLayouts];
  static int said;
  if (g_open_mpi && g_size == 1) {
    if (!said++)
      printf(
          "skip %d alltoallw: known Open MPI deviation: coll/self's Alltoallw multiplies the "
          "byte displacements by the extent (4.1)\n",
          g_rank);
    return;
  }
  begin("alltoallw/%s+%s", l->name, other->name);
  set_ctx("");
  const int p = g_size;
  const size_t bytes = (size_t)p * sizeof(int);
  int *sc = malloc(bytes), *rc = malloc(bytes), *sd = malloc(bytes), *rd = malloc(bytes);
  int *ksc = malloc(bytes), *krc = malloc(bytes), *psd = malloc(bytes), *prd = malloc(bytes);
  MPI_Datatype* types = malloc((size_t)p * sizeof *types);
  MPI_Datatype* ints = malloc((size_t)p * sizeof *ints);
  const Layout** lay = malloc((size_t)p * sizeof *lay);
  long stotal = 0, rtotal = 0;
  for (int j = 0; j < p; ++j) {
    lay[j] = (g_rank + j) % 2 ? other : l;
    types[j] = lay[j]->type;
    ints[j] = MPI_INT;
    sc[j] = pair_count(g_rank, j, n);
    rc[j] = pair_count(j, g_rank, n);
    ksc[j] = sc[j] * lay[j]->k;
    krc[j] = rc[j] * lay[j]->k;
    psd[j] = (int)(4 * stotal);
    prd[j] = (int)(4 * rtotal);
    stotal += ksc[j];
    rtotal += krc[j];
  }
  int* in = input(stotal, g_rank, 0);
  int* ref = initial(rtotal);
  /* Blocks in ints from the buffer (the region's start): sent in rank order after a gap of 2 ints,
   * received in reverse order after a gap of 1 or 2. */
  Side s = {0}, r = {0};
  long at = 0;
  for (int j = 0; j < p; ++j) {
    at += 2;
    sd[j] = (int)(4 * (at + lay[j]->s));
    at += (long)sc[j] * lay[j]->e;
  }
  side_span(&s, at + 1);
  at = 0;
  for (int j = p - 1; j >= 0; --j) {
    at += 1 + j % 2;
    rd[j] = (int)(4 * (at + lay[j]->s));
    at += (long)rc[j] * lay[j]->e;
  }
  side_span(&r, at + 1);
  for (int j = 0; j < p; ++j) {
    side_block(&s, lay[j], sd[j] / 4, sc[j]);
    side_block(&r, lay[j], rd[j] / 4, rc[j]);
  }
  side_alloc(&s, in);
  side_snap(&s);
  side_alloc(&r, ref);
  call(MPI_Alltoallw(in, ksc, psd, ints, ref, krc, prd, ints, MPI_COMM_WORLD),
       "MPI_Alltoallw(MPI_INT)");
  call(MPI_Alltoallw(side_at(&s, 0), sc, sd, types, side_at(&r, 0), rc, rd, types, MPI_COMM_WORLD),
       "MPI_Alltoallw");
  side_unchanged(&s, "send buffer");
  side_expect(&r, ref, 1, "receive buffer");
  side_free(&s);
  side_free(&r);
  free(sc), free(rc), free(sd), free(rd), free(ksc), free(krc), free(psd), free(prd);
  free(types), free(ints), free(lay);
  free(in);
  free(ref);
}

/* Neighbor_allgather (alltoall = 0) or Neighbor_alltoall on the periodic ring g_cart: two
 * neighbours, the left then the right (one rank: itself twice). */
static void t_neighbor(const Layout* l, int n, int alltoall) {
  begin("%s/%s", alltoall ? "neighbor_alltoall" : "neighbor_allgather", l->name);
  set_ctx("");
  long nk = (long)n * l->k;
  long sent = alltoall ? 2 : 1;
  int* in = input(sent * nk, g_rank, 0);
  int* ref = initial(2 * nk);
  Side s = {0}, r = {0};
  side_one(&s, l, sent * n, in);
  side_snap(&s);
  side_one(&r, l, 2L * n, ref);
  if (alltoall) {
    call(MPI_Neighbor_alltoall(in, (int)nk, MPI_INT, ref, (int)nk, MPI_INT, g_cart),
         "MPI_Neighbor_alltoall(MPI_INT)");
    call(MPI_Neighbor_alltoall(side_buf(&s, l), n, l->type, side_buf(&r, l), n, l->type, g_cart),
         "MPI_Neighbor_alltoall");
  } else {
    call(MPI_Neighbor_allgather(in, (int)nk, MPI_INT, ref, (int)nk, MPI_INT, g_cart),
         "MPI_Neighbor_allgather(MPI_INT)");
    call(MPI_Neighbor_allgather(side_buf(&s, l), n, l->type, side_buf(&r, l), n, l->type, g_cart),
         "MPI_Neighbor_allgather");
  }
  side_unchanged(&s, "send buffer");
  side_expect(&r, ref, 1, "receive buffer");
  side_free(&s);
  side_free(&r);
  free(in);
  free(ref);
}

/* --- A non-commutative operation ----------------------------------------------------------- *
 * An element of L1 is a map x -> a*x + b, a in {1, 2}, b in 0..4; in op inout is "in, then inout":
 * (a, b) = (a_in * a_io, a_io * b_in + b_io). Over ranks 0..p-1 the maps compose in rank order. */
static int g_op_bad;
static void compose(void* in, void* inout, int* len, MPI_Datatype* type) {
  int size = 0;
  MPI_Aint lb = -1, extent = 0;
  MPI_Type_size(*type, &size);
  MPI_Type_get_extent(*type, &lb, &extent);
  if (size != 8 || lb != 0 || extent != 16) {
    ++g_op_bad; /* not called with L1's type */
    return;
  }
  const int* x = in;
  int* y = inout;
  for (int i = 0; i < *len; ++i) {
    int a = x[4 * i] * y[4 * i], b = y[4 * i] * x[4 * i + 2] + y[4 * i + 2];
    y[4 * i] = a;
    y[4 * i + 2] = b;
  }
}
static void affine(int r, long i, int* ab) {
  uint32_t h = hash3((uint32_t)r, (uint32_t)i, g_salt ^ 0xAFu);
  ab[0] = 1 + (int)(h & 1u);
  ab[1] = (int)((h >> 1) % 5u);
}
/* which: 0 Allreduce, 1 Reduce at root p-1, 2 Scan. */
static void t_noncommutative(MPI_Op op, int n, int which) {
  static const char* const names[] = {"allreduce", "reduce", "scan"};
  const Layout* l = &g_layout[0];
  begin("noncommutative-%s/%s", names[which], l->name);
  set_ctx("");
  const int p = g_size, root = p - 1;
  int here = which != 1 || g_rank == root;
  int last = which == 2 ? g_rank : p - 1; /* the result composes ranks 0..last */
  long nk = 2L * n;
  int* in = malloc((size_t)(nk + 1) * sizeof *in);
  int* want = malloc((size_t)(nk + 1) * sizeof *want);
  for (long i = 0; i < n; ++i) {
    affine(g_rank, i, in + 2 * i);
    int a = 1, b = 0, f[2];
    for (int q = 0; q <= last; ++q) {
      affine(q, i, f);
      a *= f[0];
      b = f[0] * b + f[1];
    }
    want[2 * i] = a;
    want[2 * i + 1] = b;
  }
  int* init = initial(nk);
  Side s = {0}, r = {0};
  side_one(&s, l, n, in);
  side_snap(&s);
  side_one(&r, l, here ? n : 0, init);
  g_op_bad = 0;
  void* out = here ? side_buf(&r, l) : NULL;
  if (which == 0)
    call(MPI_Allreduce(side_buf(&s, l), out, n, l->type, op, MPI_COMM_WORLD), "MPI_Allreduce");
  else if (which == 1)
    call(MPI_Reduce(side_buf(&s, l), out, n, l->type, op, root, MPI_COMM_WORLD), "MPI_Reduce");
  else
    call(MPI_Scan(side_buf(&s, l), out, n, l->type, op, MPI_COMM_WORLD), "MPI_Scan");
  if (g_op_bad) problem("the operation was called %d times with a type other than L1's", g_op_bad);
  side_unchanged(&s, "send buffer");
  if (here) side_expect(&r, want, 1, "receive buffer");
  side_free(&s);
  side_free(&r);
  free(in);
  free(want);
  free(init);
}

/* --- MPI_DOUBLE_INT: 12 bytes of data in 16 of extent -------------------------------------- */
typedef struct {
  double d;
  int i;
} DoubleInt;
static void t_double_int(int n) {
  begin("allgather-double_int");
  set_ctx("");
  const int p = g_size;
  MPI_Aint lb, extent;
  MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &extent);
  if (extent != (MPI_Aint)sizeof(DoubleInt)) {
    problem("MPI_DOUBLE_INT's extent is %ld, expected %zu", (long)extent, sizeof(DoubleInt));
    return;
  }
  const unsigned char kFill = 0xA5;
  size_t guard = 64, rbytes = (size_t)p * (size_t)n * sizeof(DoubleInt);
  DoubleInt* in = malloc((size_t)(n + 1) * sizeof *in);
  memset(in, kFill, (size_t)(n + 1) * sizeof *in);
  for (int i = 0; i < n; ++i) {
    in[i].d = (double)g_rank * 1e6 + i + 0.5;
    in[i].i = -(g_rank * 100000 + i);
  }
  unsigned char* snap = malloc((size_t)(n + 1) * sizeof *in);
  memcpy(snap, in, (size_t)(n + 1) * sizeof *in);
  unsigned char* mem = malloc(rbytes + 2 * guard);
  memset(mem, kFill, rbytes + 2 * guard);
  call(MPI_Allgather(in, n, MPI_DOUBLE_INT, mem + guard, n, MPI_DOUBLE_INT, MPI_COMM_WORLD),
       "MPI_Allgather");
  if (memcmp(in, snap, (size_t)(n + 1) * sizeof *in) != 0) problem("send buffer changed");
  long bad = 0;
  char first[160] = "";
  for (size_t b = 0; b < rbytes + 2 * guard; ++b) {
    size_t at = b - guard;
    int inside = b >= guard && b < guard + rbytes;
    size_t field = at % sizeof(DoubleInt);
    if (inside && field < offsetof(DoubleInt, i) + sizeof(int)) continue; /* data: below */
    if (mem[b] != kFill && bad++ == 0)
      snprintf(first, sizeof first, "byte %ld from the buffer (%s) is 0x%02x",
               (long)b - (long)guard, inside ? "padding" : "guard", mem[b]);
  }
  const DoubleInt* out = (const DoubleInt*)(mem + guard);
  for (int q = 0; q < p; ++q)
    for (int i = 0; i < n; ++i) {
      DoubleInt e;
      memcpy(&e, &out[(long)q * n + i], sizeof e);
      if ((e.d != (double)q * 1e6 + i + 0.5 || e.i != -(q * 100000 + i)) && bad++ == 0)
        snprintf(first, sizeof first, "element %d from rank %d is (%.17g, %d)", i, q, e.d, e.i);
    }
  if (bad) problem("%ld wrong, the first: %s", bad, first);
  free(in);
  free(snap);
  free(mem);
}

/* --- Errors -------------------------------------------------------------------------------- */
static void expect_class(int rc, int want, const char* what) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
  if (cls != want && !g_torusmpi) {
    printf("skip %d %s: the reference library returned class %d (%s), not %d\n", g_rank, what, cls,
           text, want);
    return;
  }
  check(cls == want, what, "returned class %d (%s), expected %d", cls, text, want);
}
static void t_errors(void) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  struct {
    int i;
    double d;
  } a[2] = {{1, 1.0}, {2, 2.0}}, b[2];
  int lens[] = {1, 1};
  MPI_Aint displs[] = {0, 8};
  MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE}, st, vec;
  MPI_Type_create_struct(2, lens, displs, types, &st);
  MPI_Type_commit(&st);
  expect_class(MPI_Allreduce(a, b, 1, st, MPI_SUM, comm), MPI_ERR_OP,
               "error/allreduce-sum-on-struct");
  MPI_Type_free(&st);
  int v[8] = {0}, w[8] = {0};
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec); /* not committed */
  expect_class(MPI_Allreduce(v, w, 1, vec, MPI_SUM, comm), MPI_ERR_TYPE,
               "error/allreduce-uncommitted");
  expect_class(MPI_Bcast(v, 1, vec, 0, comm), MPI_ERR_TYPE, "error/bcast-uncommitted");
  MPI_Type_free(&vec);
  /* The communicator still works. */
  int one = 1, sum = 0;
  check_rc(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm), "error/after");
  check(sum == g_size, "error/after-sum", "sum %d, expected %d", sum, g_size);
  MPI_Comm_free(&comm);
}

/* --- torusmpi's 16-bit floats ------------------------------------------------------------- *
 * MPIX_BFLOAT16 and MPIX_C_FLOAT16 (torusmpi.h), looked up at run time (the objects behind the
 * handles): this program builds with Open MPI's mpicc, and on a library without them (the
 * reference) the section is left out with a "#" line; on torusmpi their absence fails. Values are
 * 16-bit patterns; the ones the checks compute with are exact in both formats. */
typedef struct {
  const char* name;
  MPI_Datatype type;
  int half; /* binary16, else bfloat16 */
} F16;
static F16 g_f16[2] = {{"MPIX_BFLOAT16", MPI_DATATYPE_NULL, 0},
                       {"MPIX_C_FLOAT16", MPI_DATATYPE_NULL, 1}};

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
/* An exactly representable float as the format's bits (a float's upper half for bfloat16). */
static uint16_t f16_of(const F16* t, float f) {
  const uint32_t u = f32_bits(f);
  if (!t->half) return (uint16_t)(u >> 16);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  const int e = (int)((u >> 23) & 0xffu) - 127;
  const uint32_t m = (u & 0x7fffffu) | 0x800000u;
  if ((u & 0x7fffffffu) == 0) return sign;
  if (e == 128) return (uint16_t)(sign | 0x7c00u | ((u & 0x7fffffu) ? 0x200u : 0u));
  if (e >= -14)
    return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | (uint16_t)((m >> 13) & 0x3ffu));
  return (uint16_t)(sign | (uint16_t)(m >> (13 + (-14 - e)))); /* subnormal */
}
static int f16_is_nan(const F16* t, uint16_t h) {
  return t->half ? (h & 0x7fffu) > 0x7c00u : (h & 0x7fffu) > 0x7f80u;
}

/* The class and text of an error, and whether it names the call and the type. */
static void expect_op_error(int rc, const char* fn, const char* type_name, const char* what) {
  int cls = rc;
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) {
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
  }
  check(cls == MPI_ERR_OP && strstr(text, fn) != NULL && strstr(text, type_name) != NULL, what,
        "returned class %d (%s), expected MPI_ERR_OP naming %s and %s", cls, text, fn, type_name);
}

/* MPI_Reduce_local on hand-picked values where the result rounds (ties to even, overflow, NaN,
 * binary16's subnormals): each case in = a, inout = b, want the result's bits. */
typedef struct {
  MPI_Op op;
  float a, b, want; /* want: NaN means any NaN */
} Case16;
static void t_f16_reduce_local(const F16* t, void* (*dev_alloc)(size_t), void (*dev_free)(void*),
                               int (*dev_copy)(void*, const void*, size_t)) {
  const float inf = 1.0f / 0.0f, nan = 0.0f / 0.0f;
  const float max_bf16 = 3.3895313892515355e38f; /* 0x7f7f */
  const Case16 kBf16[] = {
      {MPI_SUM, 255, 2, 256},               /* 257: a tie, 256 is even */
      {MPI_SUM, 256, 3, 260},               /* 259: a tie, 260 is even */
      {MPI_SUM, 1, 0.00390625f, 1},         /* 1 + 2^-8: a tie */
      {MPI_SUM, 1, 0.01171875f, 1.015625f}, /* 1 + 3 2^-8: a tie, up */
      {MPI_SUM, max_bf16, max_bf16, inf},
      {MPI_SUM, nan, 1, nan},
      {MPI_SUM, -3, 3, 0},
      {MPI_PROD, 3, 87, 260}, /* 261: a tie */
      {MPI_PROD, -16, 16, -256},
      {MPI_PROD, inf, 0, nan},
      {MPI_MAX, -1, -2, -1},
      {MPI_MIN, inf, 5, 5},
  };
  const Case16 kHalf[] = {
      {MPI_SUM, 2047, 2, 2048},  /* 2049: a tie */
      {MPI_SUM, 2050, 1, 2052},  /* 2051: a tie, up */
      {MPI_SUM, 65504, 16, inf}, /* 65520: a tie past the largest */
      {MPI_SUM, 65504, 15, 65504},
      {MPI_SUM, 5.9604644775390625e-8f, 5.9604644775390625e-8f, 1.1920928955078125e-7f},
      {MPI_SUM, 6.103515625e-5f, -5.9604644775390625e-8f, 6.097555160522461e-5f}, /* 0x03ff */
      {MPI_SUM, nan, 1, nan},
      {MPI_PROD, 683, 3, 2048},                                           /* 2049: a tie */
      {MPI_PROD, 2.44140625e-4f, 2.44140625e-4f, 5.9604644775390625e-8f}, /* 2^-24 */
      {MPI_PROD, 1.220703125e-4f, 2.44140625e-4f, 0},                     /* 2^-25: a tie */
      {MPI_MAX, -1, -2, -1},
      {MPI_MIN, -inf, 5, -inf},
  };
  const Case16* cases = t->half ? kHalf : kBf16;
  enum { n = 12 };
  uint16_t in[n], inout[n], first[n];
  /* Each case alone, then all at once (the kernels' vector loop), in host memory and in device
   * memory (the device's kernels). */
  for (int device = 0; device < 2; ++device) {
    if (device && dev_alloc == NULL) break;
    begin("float16/reduce_local%s/%s", device ? "-device" : "", t->name);
    g_ctx[0] = '\0';
    for (int whole = 0; whole < 2; ++whole) {
      for (int i = 0; i < n; ++i) {
        in[i] = f16_of(t, cases[i].a);
        inout[i] = f16_of(t, cases[i].b);
      }
      for (int i = 0; i < n; i += whole ? n : 1) {
        const int len = whole ? n : 1;
        const size_t bytes = sizeof(uint16_t) * (size_t)len;
        void* din = &in[i];
        void* dinout = &inout[i];
        if (device) {
          din = dev_alloc(bytes);
          dinout = dev_alloc(bytes);
          dev_copy(din, &in[i], bytes);
          dev_copy(dinout, &inout[i], bytes);
        }
        /* Whole: one op for all, so the vector holds the cases of its op only. */
        if (whole) {
          for (int op = 0; op < 4; ++op) {
            const MPI_Op ops[4] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
            uint16_t a[n], b[n];
            int m = 0;
            for (int k = 0; k < n; ++k)
              if (cases[k].op == ops[op]) a[m] = in[k], b[m++] = inout[k];
            if (device) {
              dev_copy(din, a, sizeof(uint16_t) * (size_t)m);
              dev_copy(dinout, b, sizeof(uint16_t) * (size_t)m);
            }
            call(MPI_Reduce_local(device ? din : a, device ? dinout : b, m, t->type, ops[op]),
                 "MPI_Reduce_local");
            if (device) dev_copy(b, dinout, sizeof(uint16_t) * (size_t)m);
            m = 0;
            for (int k = 0; k < n; ++k)
              if (cases[k].op == ops[op]) inout[k] = b[m++];
          }
        } else {
          call(MPI_Reduce_local(din, dinout, len, t->type, cases[i].op), "MPI_Reduce_local");
          if (device) dev_copy(&inout[i], dinout, bytes);
        }
        if (device) {
          dev_free(din);
          dev_free(dinout);
        }
      }
      for (int i = 0; i < n; ++i) {
        const uint16_t got = inout[i];
        const float w = cases[i].want;
        const int ok = w != w ? f16_is_nan(t, got) : got == f16_of(t, w);
        if (!ok)
          problem("%s, case %d (%g, %g): got 0x%04x, expected %g", whole ? "all at once" : "alone",
                  i, (double)cases[i].a, (double)cases[i].b, got, (double)w);
        if (whole && got != first[i])
          problem("case %d: 0x%04x alone, 0x%04x with the others", i, first[i], got);
        first[i] = got;
      }
    }
  }
  flush();
}

/* Queries, handles, errors, packing, MPI_Reduce_local. */
static void t_f16_type(const F16* t) {
  begin("float16/queries/%s", t->name);
  g_ctx[0] = '\0';
  int size = 0, len = 0, ni = -1, na = -1, nd = -1, combiner = -1;
  MPI_Aint lb = -1, extent = -1, tlb = -1, textent = -1;
  char name[MPI_MAX_OBJECT_NAME] = "";
  call(MPI_Type_size(t->type, &size), "MPI_Type_size");
  call(MPI_Type_get_extent(t->type, &lb, &extent), "MPI_Type_get_extent");
  call(MPI_Type_get_true_extent(t->type, &tlb, &textent), "MPI_Type_get_true_extent");
  call(MPI_Type_get_name(t->type, name, &len), "MPI_Type_get_name");
  call(MPI_Type_get_envelope(t->type, &ni, &na, &nd, &combiner), "MPI_Type_get_envelope");
  if (size != 2 || lb != 0 || extent != 2 || tlb != 0 || textent != 2)
    problem("size %d, lb %ld, extent %ld, true lb %ld, true extent %ld: expected 2, 0, 2, 0, 2",
            size, (long)lb, (long)extent, (long)tlb, (long)textent);
  if (strcmp(name, t->name) != 0 || len != (int)strlen(t->name))
    problem("name \"%s\" (%d), expected \"%s\"", name, len, t->name);
  if (combiner != MPI_COMBINER_NAMED || ni != 0 || na != 0 || nd != 0)
    problem("envelope %d %d %d combiner %d, expected 0 0 0 MPI_COMBINER_NAMED", ni, na, nd,
            combiner);
  /* Fortran: a number of its own, above Open MPI's predefined ones (0 to 72), and back; the
   * datatypes a program makes are still numbered from Open MPI's next (below 1000). */
  const MPI_Fint f = MPI_Type_c2f(t->type);
  if (f <= 72 || MPI_Type_f2c(f) != t->type) problem("MPI_Type_c2f gives %d", (int)f);
  MPI_Datatype contig;
  call(MPI_Type_contiguous(2, t->type, &contig), "MPI_Type_contiguous");
  const MPI_Fint fc = MPI_Type_c2f(contig);
  if (fc < 73 || fc >= 1000 || fc == f)
    problem("a contiguous type's Fortran number is %d", (int)fc);
  MPI_Type_free(&contig);
  /* Predefined: MPI_Type_free refuses it, as MPI_FLOAT. */
  MPI_Datatype copy = t->type;
  int rc = MPI_Type_free(&copy), cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_TYPE || copy != t->type)
    problem("MPI_Type_free returned class %d, expected MPI_ERR_TYPE and the handle kept", cls);
  flush();

  /* Ops other than sum, product, max and min: refused as on MPI_FLOAT, naming the call and the
   * type (MPI_REPLACE: as for one-sided accumulates only, a text without a type). */
  float fx[2] = {1, 2}, fy[2];
  uint16_t x[2] = {f16_of(t, 1), f16_of(t, 2)}, y[2];
  const MPI_Op refused[] = {MPI_BAND, MPI_LAND, MPI_BXOR, MPI_LOR, MPI_MAXLOC, MPI_REPLACE};
  const char* const refused_name[] = {"MPI_BAND", "MPI_LAND",   "MPI_BXOR",
                                      "MPI_LOR",  "MPI_MAXLOC", "MPI_REPLACE"};
  for (int k = 0; k < 6; ++k) {
    char what[96], want[MPI_MAX_ERROR_STRING] = "", got[MPI_MAX_ERROR_STRING] = "";
    int wlen = 0, glen = 0;
    rc = MPI_Allreduce(x, y, 2, t->type, refused[k], MPI_COMM_WORLD);
    MPI_Error_string(rc, got, &glen); /* its text is the thread's last error's: now */
    if (refused[k] != MPI_REPLACE) {
      snprintf(what, sizeof what, "float16/%s-refused/%s", refused_name[k], t->name);
      expect_op_error(rc, "MPI_Allreduce", t->name, what);
    }
    /* The same class and text as MPI_FLOAT's, the type's name for MPI_FLOAT's. */
    int cls_float = MPI_SUCCESS, cls_got = rc;
    const int rc_float = MPI_Allreduce(fx, fy, 2, MPI_FLOAT, refused[k], MPI_COMM_WORLD);
    if (rc_float != MPI_SUCCESS) MPI_Error_class(rc_float, &cls_float);
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls_got);
    MPI_Error_string(rc_float, want, &wlen);
    char expected[MPI_MAX_ERROR_STRING] = "";
    char* at = strstr(want, "MPI_FLOAT");
    if (at != NULL)
      snprintf(expected, sizeof expected, "%.*s%s%s", (int)(at - want), want, t->name, at + 9);
    else
      snprintf(expected, sizeof expected, "%s", want);
    snprintf(what, sizeof what, "float16/%s-refused-as-for-float/%s", refused_name[k], t->name);
    check(cls_float == MPI_ERR_OP && cls_got == MPI_ERR_OP && strcmp(expected, got) == 0, what,
          "\"%s\", for MPI_FLOAT \"%s\"", got, want);
  }
  expect_op_error(MPI_Reduce_local(x, y, 2, t->type, MPI_BOR), "MPI_Reduce_local", t->name,
                  t->half ? "float16/reduce_local-bor-refused/MPIX_C_FLOAT16"
                          : "float16/reduce_local-bor-refused/MPIX_BFLOAT16");
  MPI_Datatype pair;
  MPI_Type_contiguous(2, t->type, &pair);
  MPI_Type_commit(&pair);
  expect_op_error(MPI_Allreduce(x, y, 1, pair, MPI_BAND, MPI_COMM_WORLD), "MPI_Allreduce", t->name,
                  t->half ? "float16/derived-band-refused/MPIX_C_FLOAT16"
                          : "float16/derived-band-refused/MPIX_BFLOAT16");
  MPI_Type_free(&pair);

  /* MPI_Pack of a vector: the elements in order, 2 bytes each; external32 big-endian. */
  begin("float16/pack/%s", t->name);
  g_ctx[0] = '\0';
  MPI_Datatype vec;
  MPI_Type_vector(3, 1, 2, t->type, &vec);
  MPI_Type_commit(&vec);
  uint16_t mem[12], back[12], packed[6] = {0};
  for (int i = 0; i < 12; ++i) mem[i] = (uint16_t)(0x3c00u + 17u * (unsigned)i);
  mem[2] = t->half ? 0x7c01u : 0x7f81u; /* a signaling NaN: moved, never converted */
  int psize = 0, position = 0;
  call(MPI_Pack_size(2, vec, MPI_COMM_WORLD, &psize), "MPI_Pack_size");
  if (psize < 12) problem("MPI_Pack_size of 2 vectors is %d, below 12", psize);
  call(MPI_Pack(mem, 2, vec, packed, sizeof packed, &position, MPI_COMM_WORLD), "MPI_Pack");
  if (position != 12) problem("MPI_Pack wrote %d bytes, expected 12", position);
  /* A vector of 3 strided by 2, extent 5 elements: elements 0 2 4, then 5 7 9. */
  const int at[6] = {0, 2, 4, 5, 7, 9};
  for (int i = 0; i < 6; ++i)
    if (packed[i] != mem[at[i]])
      problem("packed element %d is 0x%04x, expected 0x%04x", i, packed[i], mem[at[i]]);
  for (int i = 0; i < 12; ++i) back[i] = 0xdead;
  position = 0;
  call(MPI_Unpack(packed, sizeof packed, &position, back, 2, vec, MPI_COMM_WORLD), "MPI_Unpack");
  for (int i = 0; i < 12; ++i) {
    int in_type = 0;
    for (int k = 0; k < 6; ++k) in_type |= at[k] == i;
    if (back[i] != (in_type ? mem[i] : 0xdead))
      problem("unpacked element %d is 0x%04x", i, back[i]);
  }
  unsigned char ext[12];
  MPI_Aint ext_pos = 0, ext_size = 0;
  call(MPI_Pack_external_size("external32", 2, vec, &ext_size), "MPI_Pack_external_size");
  call(MPI_Pack_external("external32", mem, 2, vec, ext, sizeof ext, &ext_pos),
       "MPI_Pack_external");
  if (ext_size != 12 || ext_pos != 12 || ext[0] != (mem[0] >> 8) || ext[1] != (mem[0] & 0xff))
    problem("external32: %ld bytes (size %ld), first 0x%02x%02x, expected 12 and 0x%04x big-endian",
            (long)ext_pos, (long)ext_size, ext[0], ext[1], mem[0]);
  MPI_Type_free(&vec);
  flush();
}

/* Collectives and point-to-point on the types and on datatypes built of them, with exact data. */
static void t_f16_comm(const F16* t) {
  const int p = g_size;
  const int n = 7;
  /* Bcast, Allgather: the bits, NaNs included, arrive as they were sent. */
  begin("float16/bcast-allgather/%s", t->name);
  g_ctx[0] = '\0';
  uint16_t b[7], all[3 * 64];
  for (int root = 0; root < p; ++root) {
    for (int i = 0; i < n; ++i)
      b[i] = g_rank == root ? (uint16_t)(0x7c01u + (unsigned)(i * 7 + root)) : 0;
    call(MPI_Bcast(b, n, t->type, root, MPI_COMM_WORLD), "MPI_Bcast");
    for (int i = 0; i < n; ++i)
      if (b[i] != (uint16_t)(0x7c01u + (unsigned)(i * 7 + root)))
        problem("root %d: element %d is 0x%04x", root, i, b[i]);
  }
  if (p <= 64) {
    uint16_t mine[3] = {(uint16_t)(g_rank + 1), (uint16_t)(0x8000u | (unsigned)g_rank), 0xffffu};
    call(MPI_Allgather(mine, 3, t->type, all, 3, t->type, MPI_COMM_WORLD), "MPI_Allgather");
    for (int r = 0; r < p; ++r)
      if (all[3 * r] != r + 1 || all[3 * r + 1] != (0x8000u | (unsigned)r) ||
          all[3 * r + 2] != 0xffffu)
        problem("block of rank %d: 0x%04x 0x%04x 0x%04x", r, all[3 * r], all[3 * r + 1],
                all[3 * r + 2]);
  }
  flush();

  /* Derived datatypes: a vector (every other element) and a struct of two members with a gap,
   * reduced with MPI_SUM and MPI_MAX by Allreduce (in place and not) and Reduce (root p-1);
   * integer data, sums within 256. The gaps are left as they were. */
  MPI_Datatype vec, vec2, st, st1;
  MPI_Type_vector(2, 1, 2, t->type, &vec2);
  MPI_Type_create_resized(vec2, 0, 8, &vec); /* elements 0 and 2 of 4 */
  int lens[2] = {1, 1};
  MPI_Aint displs[2] = {0, 6};
  MPI_Datatype types[2] = {t->type, t->type};
  MPI_Type_create_struct(2, lens, displs, types, &st1);
  MPI_Type_create_resized(st1, 0, 8, &st); /* elements 0 and 3 of 4 */
  MPI_Type_commit(&vec);
  MPI_Type_commit(&st);
  const struct {
    const char* name;
    MPI_Datatype type;
    int pos[2];
  } layouts[2] = {{"vector", vec, {0, 2}}, {"struct", st, {0, 3}}};
  const int count = 301;
  uint16_t* in = malloc(sizeof(uint16_t) * 4 * count);
  uint16_t* out = malloc(sizeof(uint16_t) * 4 * count);
  const uint16_t gap = 0xbeef;
  for (int l = 0; l < 2; ++l) {
    for (int mode = 0; mode < 5; ++mode) {
      /* 0 Allreduce SUM, 1 Allreduce SUM in place, 2 Allreduce MAX, 3 Reduce SUM, 4 Sendrecv */
      static const char* const kMode[5] = {"allreduce-sum", "allreduce-sum-in-place",
                                           "allreduce-max", "reduce-sum", "sendrecv"};
      begin("float16/%s/%s/%s", kMode[mode], layouts[l].name, t->name);
      g_ctx[0] = '\0';
      const int root = p - 1;
      for (int e = 0; e < count; ++e)
        for (int k = 0; k < 4; ++k) {
          const int member = k == layouts[l].pos[0] ? 0 : k == layouts[l].pos[1] ? 1 : -1;
          const int v = ((e * 2 + member) % 7 + 1) * (g_rank % 4 + 1) - 8;
          in[4 * e + k] = member < 0 ? gap : f16_of(t, (float)v);
          out[4 * e + k] = mode == 1 ? in[4 * e + k] : gap;
        }
      int rc;
      const int right = (g_rank + 1) % p, left = (g_rank + p - 1) % p;
      switch (mode) {
        case 0:
          rc = MPI_Allreduce(in, out, count, layouts[l].type, MPI_SUM, MPI_COMM_WORLD);
          break;
        case 1:
          rc = MPI_Allreduce(MPI_IN_PLACE, out, count, layouts[l].type, MPI_SUM, MPI_COMM_WORLD);
          break;
        case 2:
          rc = MPI_Allreduce(in, out, count, layouts[l].type, MPI_MAX, MPI_COMM_WORLD);
          break;
        case 3:
          rc = MPI_Reduce(in, out, count, layouts[l].type, MPI_SUM, root, MPI_COMM_WORLD);
          break;
        default:
          rc = MPI_Sendrecv(in, count, layouts[l].type, right, 16, out, count, layouts[l].type,
                            left, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      call(rc, kMode[mode]);
      const int defined = mode != 3 || g_rank == root;
      for (int e = 0; e < count && rc == MPI_SUCCESS; ++e)
        for (int k = 0; k < 4; ++k) {
          const int member = k == layouts[l].pos[0] ? 0 : k == layouts[l].pos[1] ? 1 : -1;
          const int base = (e * 2 + member) % 7 + 1;
          long want = 0;
          if (mode == 4) {
            want = base * (left % 4 + 1) - 8;
          } else {
            for (int r = 0; r < p; ++r) {
              const int v = base * (r % 4 + 1) - 8;
              want = mode == 2 ? (r == 0 || v > want ? v : want) : want + v;
            }
          }
          const uint16_t w = member < 0 ? gap : f16_of(t, (float)want);
          if (defined && out[4 * e + k] != w) {
            problem("element %d, member at %d: 0x%04x, expected 0x%04x", e, k, out[4 * e + k], w);
            e = count;
            break;
          }
        }
    }
  }
  flush();
  /* A struct of a 16-bit float and a float is not one predefined type: MPI_SUM is MPI_ERR_OP. */
  MPI_Datatype mixed;
  MPI_Datatype mixed_types[2] = {t->type, MPI_FLOAT};
  MPI_Aint mixed_displs[2] = {0, 4};
  MPI_Type_create_struct(2, lens, mixed_displs, mixed_types, &mixed);
  MPI_Type_commit(&mixed);
  int rc = MPI_Allreduce(in, out, 1, mixed, MPI_SUM, MPI_COMM_WORLD), cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  check(cls == MPI_ERR_OP,
        t->half ? "float16/mixed-struct-sum-refused/MPIX_C_FLOAT16"
                : "float16/mixed-struct-sum-refused/MPIX_BFLOAT16",
        "returned class %d", cls);
  MPI_Type_free(&mixed);
  MPI_Type_free(&vec);
  MPI_Type_free(&vec2);
  MPI_Type_free(&st);
  MPI_Type_free(&st1);
  free(in);
  free(out);
}

static struct {
  int (*malloc)(void** ptr, size_t bytes);
  int (*free)(void* ptr);
  int (*memcpy)(void* dst, const void* src, size_t bytes);
} g_dev;
static void* dev_alloc(size_t bytes) {
  void* p = NULL;
  return g_dev.malloc(&p, bytes) == MPI_SUCCESS ? p : NULL;
}
static void dev_free(void* p) { g_dev.free(p); }

static void t_float16(void) {
  void* bf16 = dlsym(RTLD_DEFAULT, "torusmpi_mpix_bfloat16");
  void* half = dlsym(RTLD_DEFAULT, "torusmpi_mpix_c_float16");
  if (bf16 == NULL || half == NULL) {
    if (g_torusmpi)
      check(0, "float16/handles", "torusmpi has no torusmpi_mpix_bfloat16 and _c_float16");
    else if (g_rank == 0)
      printf("# no MPIX_BFLOAT16 and MPIX_C_FLOAT16 here (not torusmpi): 16-bit floats left out\n");
    return;
  }
  g_f16[0].type = (MPI_Datatype)bf16;
  g_f16[1].type = (MPI_Datatype)half;
  *(void**)&g_dev.malloc = dlsym(RTLD_DEFAULT, "torusmpi_device_malloc");
  *(void**)&g_dev.free = dlsym(RTLD_DEFAULT, "torusmpi_device_free");
  *(void**)&g_dev.memcpy = dlsym(RTLD_DEFAULT, "torusmpi_memcpy");
  const int device = g_dev.malloc != NULL && g_dev.free != NULL && g_dev.memcpy != NULL;
  g_count = 0;
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* MPI_Reduce_local's */
  for (int i = 0; i < 2; ++i) {
    t_f16_type(&g_f16[i]);
    t_f16_reduce_local(&g_f16[i], device ? dev_alloc : NULL, dev_free, g_dev.memcpy);
    t_f16_comm(&g_f16[i]);
  }
}

/* --- The sweep ----------------------------------------------------------------------------- */
static const int kCounts[] = {0, 1, 7, 3001};
enum { kNumCounts = sizeof kCounts / sizeof *kCounts };

/* The sweep of one layout, in this order, each test at every count. */
typedef void (*Test)(const Layout* l, int n, int mode);
static const struct {
  Test run;
  int mode;
} kSweep[] = {
    {t_bcast, 0},
    {t_reduce, 0},
    {t_reduce, 1},         /* in place at the root */
    {t_allreduce, 0},      /* sum */
    {t_allreduce, 1},      /* max */
    {t_allreduce, 2},      /* sum in place */
    {t_allreduce, 4},      /* scan */
    {t_allreduce, 6},      /* scan in place */
    {t_allreduce, 5},      /* exscan */
    {t_reduce_scatter, 0}, /* block */
    {t_reduce_scatter, 1}, /* uneven */
    {t_reduce_scatter, 2}, /* block, in place */
    {t_allgather, 0},
    {t_allgather, 1}, /* in place */
    {t_allgather, 2}, /* received as MPI_INT */
    {t_allgatherv, 0},
    {t_alltoall, 0},
    {t_alltoall, 1}, /* sent as MPI_INT */
    {t_alltoall, 2}, /* in place */
    {t_alltoallv, 0},
    {t_alltoallw, 0},
    {t_gather, 0},
    {t_gather, 1}, /* in place at the root */
    {t_gatherv, 0},
    {t_scatter, 0},
    {t_scatter, 1}, /* in place at the root */
    {t_scatterv, 0},
    {t_neighbor, 0}, /* allgather */
    {t_neighbor, 1}, /* alltoall */
    /* Nonblocking, the datatype freed before the wait. */
    {t_allreduce, 3},
    {t_alltoallv, 1},
    {t_gather, 2},
    {t_bcast, 1},
};

/* --- MPI_BOTTOM ---------------------------------------------------------------------------- *
 * Datatypes of absolute addresses (MPI_Get_address of separate variables, in a struct) with
 * MPI_BOTTOM, which is NULL, as the buffer: the collective takes the addresses as they are,
 * packing when the ints are apart (a, b[0], b[1], c) and in place when they are next to each other
 * (b[0], b[1] alone). Bcast at every root; Allreduce (g_sum: the members are ints) from one such
 * variable into another, and in place; Allgather sending from MPI_BOTTOM, receiving MPI_INT. */
typedef struct {
  int a;
  int pad[3];
  int b[2];
  int c;
} Scattered;

/* The type of v's ints: all four, or b[0] and b[1] alone. */
static MPI_Datatype bottom_type(Scattered* v, int only_b) {
  MPI_Aint at[3];
  MPI_Get_address(&v->a, &at[0]);
  MPI_Get_address(&v->b[0], &at[1]);
  MPI_Get_address(&v->c, &at[2]);
  int lens[3] = {1, 2, 1};
  MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_INT}, t;
  if (only_b) {
    MPI_Type_create_struct(1, &lens[1], &at[1], &types[1], &t);
  } else {
    MPI_Type_create_struct(3, lens, at, types, &t);
  }
  MPI_Type_commit(&t);
  return t;
}

static void set4(Scattered* v, int a, int b0, int b1, int c) {
  v->a = a, v->b[0] = b0, v->b[1] = b1, v->c = c;
  v->pad[0] = v->pad[1] = v->pad[2] = kSentinel;
}

static void t_bottom(void) {
  Scattered v;
  g_count = 1;
  for (int only_b = 0; only_b < 2; ++only_b) {
    MPI_Datatype t = bottom_type(&v, only_b);
    begin("bottom/bcast%s", only_b ? "-dense" : "");
    for (int root = 0; root < g_size; ++root) {
      set_ctx("root %d", root);
      if (g_rank == root) {
        set4(&v, 10 + root, 20, 30, 40);
      } else {
        set4(&v, -1, -1, -1, -1);
      }
      if (!call(MPI_Bcast(MPI_BOTTOM, 1, t, root, MPI_COMM_WORLD), "MPI_Bcast")) continue;
      const int moved = !only_b || g_rank == root; /* a and c: in the type, or the root's own */
      if (v.a != (moved ? 10 + root : -1) || v.b[0] != 20 || v.b[1] != 30 ||
          v.c != (moved ? 40 : -1) || v.pad[2] != kSentinel)
        problem("got %d %d %d %d (pad %d)", v.a, v.b[0], v.b[1], v.c, v.pad[2]);
    }
    MPI_Type_free(&t);
  }

  /* One datatype serves both buffers of an Allreduce, so with absolute addresses only the in-place
   * form has them apart from each other. */
  const int p = g_size, triangle = p * (p - 1) / 2;
  MPI_Datatype t = bottom_type(&v, 0);
  begin("bottom/allreduce");
  set_ctx("in place");
  set4(&v, g_rank, 2 * g_rank, 1, 3);
  if (call(MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, t, g_sum, MPI_COMM_WORLD), "MPI_Allreduce") &&
      (v.a != triangle || v.b[0] != 2 * triangle || v.b[1] != p || v.c != 3 * p ||
       v.pad[0] != kSentinel))
    problem("got %d %d %d %d (pad %d)", v.a, v.b[0], v.b[1], v.c, v.pad[0]);

  begin("bottom/allgather");
  set_ctx("");
  set4(&v, 100 + g_rank, 200 + g_rank, 300 + g_rank, 400 + g_rank);
  int* all = malloc(sizeof(int) * 4 * (size_t)g_size);
  if (call(MPI_Allgather(MPI_BOTTOM, 1, t, all, 4, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather")) {
    for (int r = 0; r < g_size; ++r) {
      const int* got = all + 4 * r;
      if (got[0] != 100 + r || got[1] != 200 + r || got[2] != 300 + r || got[3] != 400 + r)
        problem("block of rank %d: %d %d %d %d", r, got[0], got[1], got[2], got[3]);
    }
  }
  flush();
  free(all);
  MPI_Type_free(&t);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  g_torusmpi = strstr(version, "torusmpi") != NULL;
  g_open_mpi = strncmp(version, "Open MPI", 8) == 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char* verbose = getenv("COLL_DTYPES_VERBOSE");
  g_verbose = verbose && strcmp(verbose, "1") == 0;

  int dims[1] = {g_size}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &g_cart);
  /* A call that fails is a problem of its check, not the end of the job. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(g_cart, MPI_ERRORS_RETURN);
  for (int i = 0; i < kLayouts; ++i) {
    g_layout[i].type = make_type(i);
    check_layout(&g_layout[i]);
  }
  g_layout[kInt].type = MPI_INT;
  choose_ops();

  for (int i = 0; i < kLayouts; ++i) {
    for (size_t t = 0; t < sizeof kSweep / sizeof *kSweep; ++t)
      for (int c = 0; c < kNumCounts; ++c)
        kSweep[t].run(&g_layout[i], g_count = kCounts[c], kSweep[t].mode);
  }
  MPI_Op op;
  MPI_Op_create(compose, 0, &op);
  for (int which = 0; which < 3; ++which)
    for (int c = 0; c < kNumCounts; ++c) t_noncommutative(op, g_count = kCounts[c], which);
  for (int c = 0; c < kNumCounts; ++c) t_double_int(g_count = kCounts[c]);
  t_bottom();
  flush();
  MPI_Op_free(&op);
  t_errors();
  t_float16();

  for (int i = 0; i < kLayouts; ++i) MPI_Type_free(&g_layout[i].type);
  if (g_sum != MPI_SUM) MPI_Op_free(&g_sum);
  if (g_max != MPI_MAX) MPI_Op_free(&g_max);
  MPI_Comm_free(&g_cart);
  int status = check_done(g_size);
  MPI_Finalize();
  return status;
}
