/* p2p_dtypes: point-to-point with derived datatypes (and MPI_DOUBLE_INT, whose extent is larger
 * than its size), on MPI_COMM_WORLD as a ring: each rank sends to its right neighbour, rank+1, and
 * receives from its left, rank-1; on one rank both are itself.
 *
 *   p2p_dtypes      any number of ranks, 1 included
 *
 * The reference is computed here. A buffer is an array of int slots, and each layout is a datatype
 * with its type map written out by hand: the slots of one element, from the element's origin, in
 * type-map order, and the extent in slots. A sender fills every slot of its buffer, gaps included,
 * with values that depend on its rank, the case and the slot (doubles hold integer values); the
 * receiver builds the packed stream it must get from the same formula and expects its buffer to
 * hold exactly that stream at the layout's slots, and its guard values everywhere else: before and
 * after the data and in the gaps of the layout.
 *
 * Layouts: contiguous (used in place), vector, hvector, indexed (blocks out of order),
 * indexed_block and hindexed (lb > 0), struct of int, double, int with gaps, resized with lb < 0
 * and an extent smaller than its true extent (elements interleave), resized MPI_INT (one element is
 * contiguous, several are not), subarray, MPI_DOUBLE_INT.
 *
 * Checked, one "ok/FAIL <rank> <check>" line per case, then "done <rank> ...":
 *  - every layout at counts 0, 1, 7 and about 1 MiB of data (past a 64 KiB eager limit), through
 *    Send, Ssend, Rsend, Bsend, Isend, Issend, Irsend, Ibsend, Recv, Sendrecv, persistent requests
 *    (Send_init/Recv_init, Startall, three rounds of new data), Probe + Get_count + Recv,
 *    Mprobe + Mrecv, Improbe + Imrecv, completion by Test, Waitany, Waitsome and
 *    Request_get_status, and sent as the layout but received as MPI_INT and the other way round:
 *    the data, the guards, the status (source, tag, Get_count, Get_elements, bytes);
 *  - truncation (a message one element too long): MPI_ERR_TRUNCATE from Recv and Wait under
 *    MPI_ERRORS_RETURN, eager and rendezvous, nothing written past what the datatype describes;
 *  - a partial element: 8 ints into a vector of 6 (Get_count MPI_UNDEFINED, Get_elements 8) and
 *    double, int, double into MPI_DOUBLE_INT (Get_elements 3);
 *  - MPI_Type_free while an Isend, an Irecv and persistent requests are in flight;
 *  - Sendrecv_replace with a vector (the gaps keep their own data);
 *  - Bsend, Ibsend and Bsend_init of a vector into a buffer of exactly MPI_Pack_size +
 *    MPI_BSEND_OVERHEAD bytes;
 *  - structs of absolute addresses sent from and received into MPI_BOTTOM;
 *  - a cancelled receive of a vector leaves its buffer alone;
 *  - an uncommitted datatype (and MPI_DATATYPE_NULL) in every call: MPI_ERR_TYPE, on torusmpi
 *    with a message naming the call.
 * MPI_ERRORS_RETURN is set so that a failing call is reported, not fatal. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int g_size, g_left, g_right, g_torusmpi;
static int g_case; /* every rank runs the same cases in the same order: tags and seeds follow it */

/* --- Problems of one case, gathered into one check line ------------------------------------- */
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
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    why("%s returned %d (%s)", call, rc, text);
  }
}
static int class_of(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}
/* Known deviations of the reference library from the standard: such a check is skipped there,
 * with one "skip <rank> <check>: ..." line, and made everywhere else, torusmpi included. */
static int deviation(const char* what, const char* text) {
  static const char* said[8];
  if (g_torusmpi) return 0;
  for (int i = 0; i < 8; ++i) {
    if (said[i] == what) return 1;
    if (said[i] == NULL) {
      said[i] = what;
      printf("skip %d %s: known Open MPI deviation: %s\n", g_rank, what, text);
      return 1;
    }
  }
  return 1;
}

/* The call failed with class cls; on torusmpi its message names the call (and `text`). */
static void rc_class(int rc, int cls, const char* call, const char* text) {
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
  if (class_of(rc) != cls) {
    why("%s returned class %d (%s), expected %d", call, class_of(rc), msg, cls);
  } else if (g_torusmpi && (strstr(msg, call) == NULL || (text && strstr(msg, text) == NULL))) {
    why("%s: the message does not name the call or say \"%s\": \"%s\"", call, text ? text : "",
        msg);
  }
}

/* --- Layouts ---------------------------------------------------------------------------------- */
enum { kMaxMap = 16, kGuardSlots = 16 };
typedef struct {
  const char* name;
  MPI_Datatype type;
  int n;            /* int slots of data in one element */
  int map[kMaxMap]; /* their offsets from the element's origin, in type-map order */
  int extent;       /* slots from one element's origin to the next */
  int ndoubles;
  int doubles[4]; /* slots where a double starts (both of its slots are in map) */
  int elements;   /* basic elements in one element (MPI_Get_elements) */
  int ints_only;  /* the type signature is n MPI_INTs */
} Layout;

static Layout g_layouts[16];
static int g_nlayouts;
static Layout g_int; /* MPI_INT: the stream itself */

static Layout* add_layout(const char* name, MPI_Datatype type, int n, const int* map, int extent) {
  Layout* L = &g_layouts[g_nlayouts++];
  memset(L, 0, sizeof *L);
  L->name = name;
  L->type = type;
  L->n = n;
  memcpy(L->map, map, sizeof(int) * (size_t)n);
  L->extent = extent;
  L->elements = n;
  L->ints_only = 1;
  if (type != MPI_DOUBLE_INT) MPI_Type_commit(&L->type);
  return L;
}
static void add_double(Layout* L, int slot) {
  L->doubles[L->ndoubles++] = slot;
  L->elements -= 1;
  L->ints_only = 0;
}

static void make_layouts(void) {
  MPI_Datatype t, v;
  MPI_Type_contiguous(4, MPI_INT, &t);
  add_layout("contiguous", t, 4, (const int[]){0, 1, 2, 3}, 4);
  MPI_Type_vector(3, 2, 5, MPI_INT, &t);
  add_layout("vector", t, 6, (const int[]){0, 1, 5, 6, 10, 11}, 12);
  MPI_Type_create_hvector(2, 3, 28, MPI_INT, &t);
  add_layout("hvector", t, 6, (const int[]){0, 1, 2, 7, 8, 9}, 10);
  MPI_Type_indexed(3, (const int[]){2, 1, 3}, (const int[]){4, 0, 8}, MPI_INT, &t);
  add_layout("indexed", t, 6, (const int[]){4, 5, 0, 8, 9, 10}, 11);
  MPI_Type_create_indexed_block(3, 2, (const int[]){6, 1, 3}, MPI_INT, &t);
  add_layout("indexed_block", t, 6, (const int[]){6, 7, 1, 2, 3, 4}, 7); /* lb 1, ub 8 */
  MPI_Type_create_hindexed(2, (const int[]){1, 2}, (const MPI_Aint[]){20, 4}, MPI_INT, &t);
  add_layout("hindexed", t, 3, (const int[]){5, 1, 2}, 5); /* lb 1, ub 6 */
  /* struct { int; (gap) double; int; (gap) }: 24 bytes with the double's alignment. */
  MPI_Type_create_struct(3, (const int[]){1, 1, 1}, (const MPI_Aint[]){0, 8, 16},
                         (const MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_INT}, &t);
  add_double(add_layout("struct", t, 4, (const int[]){0, 2, 3, 4}, 6), 2);
  /* Slots 0 and 3 with lb -1 slot and extent 2: element e holds 2e and 2e + 3. */
  MPI_Type_vector(2, 1, 3, MPI_INT, &v);
  MPI_Type_create_resized(v, -4, 8, &t);
  MPI_Type_free(&v);
  add_layout("resized", t, 2, (const int[]){0, 3}, 2);
  MPI_Type_create_resized(MPI_INT, 0, 8, &t);
  add_layout("resized_int", t, 1, (const int[]){0}, 2);
  MPI_Type_create_subarray(2, (const int[]){4, 5}, (const int[]){2, 3}, (const int[]){1, 1},
                           MPI_ORDER_C, MPI_INT, &t);
  add_layout("subarray", t, 6, (const int[]){6, 7, 8, 11, 12, 13}, 20);
  add_double(add_layout("double_int", MPI_DOUBLE_INT, 3, (const int[]){0, 1, 2}, 4), 0);

  memset(&g_int, 0, sizeof g_int);
  g_int.name = "int";
  g_int.type = MPI_INT;
  g_int.n = 1;
  g_int.extent = 1;
  g_int.elements = 1;
  g_int.ints_only = 1;
}
static Layout* layout(const char* name) {
  for (int i = 0; i < g_nlayouts; ++i) {
    if (strcmp(g_layouts[i].name, name) == 0) return &g_layouts[i];
  }
  abort();
}
static void free_layouts(void) {
  for (int i = 0; i < g_nlayouts; ++i) {
    if (g_layouts[i].type != MPI_DOUBLE_INT) MPI_Type_free(&g_layouts[i].type);
  }
}

/* About 1 MiB of data. */
static int big_count(const Layout* L) { return (1 << 18) / L->n; }

/* --- Buffers of int slots ----------------------------------------------------------------------
 * A region holds the slots [lo, hi) around an element origin: every slot count elements of a
 * layout touch, and kGuardSlots more on each side. */
typedef struct {
  int* mem;
  long lo, hi;
} Region;
static int* origin(const Region* r) { return r->mem - r->lo; }

static Region region(const Layout* L, long count) {
  int mn = 0, mx = 0;
  for (int k = 0; k < L->n; ++k) {
    if (k == 0 || L->map[k] < mn) mn = L->map[k];
    if (k == 0 || L->map[k] + 1 > mx) mx = L->map[k] + 1;
  }
  Region r;
  r.lo = (count > 0 ? mn : 0) - kGuardSlots;
  r.hi = (count > 0 ? (count - 1) * L->extent + mx : 0) + kGuardSlots;
  r.mem = malloc(sizeof(int) * (size_t)(r.hi - r.lo));
  return r;
}

static int value(unsigned seed, long slot) {
  return (int)(seed * 1000003u + (unsigned)slot * 7u + 1u);
}
static int guard(long slot) { return (int)(0xA5A50000u ^ (unsigned)slot); }

static void fill_guard(Region* r) {
  for (long s = r->lo; s < r->hi; ++s) origin(r)[s] = guard(s);
}
/* What a sender sends: every slot from the seed, each double an integer value. */
static void fill_data(Region* r, const Layout* L, long count, unsigned seed) {
  for (long s = r->lo; s < r->hi; ++s) origin(r)[s] = value(seed, s);
  for (long e = 0; e < count; ++e) {
    for (int d = 0; d < L->ndoubles; ++d) {
      long s = e * L->extent + L->doubles[d];
      double x = (double)(value(seed, s) & 0xffffff);
      memcpy(&origin(r)[s], &x, sizeof x);
    }
  }
}
/* The slot of stream int i. */
static long slot_of(const Layout* L, long i) { return i / L->n * L->extent + L->map[i % L->n]; }

/* The packed stream of count elements filled from seed (count * n ints; at least one). */
static int* stream_of(const Layout* L, long count, unsigned seed) {
  Region r = region(L, count);
  fill_data(&r, L, count, seed);
  int* out = malloc(sizeof(int) * (size_t)(count * L->n + 1));
  for (long i = 0; i < count * L->n; ++i) out[i] = origin(&r)[slot_of(L, i)];
  free(r.mem);
  return out;
}

/* got holds the first m ints of the stream at L's slots and, everywhere else, guard values
 * (bg_seed 0) or the data of count elements filled from bg_seed. */
static void expect(const Region* got, const Layout* L, const int* stream, long m, unsigned bg_seed,
                   long count) {
  Region want = *got;
  want.mem = malloc(sizeof(int) * (size_t)(got->hi - got->lo));
  if (bg_seed == 0) {
    fill_guard(&want);
  } else {
    fill_data(&want, L, count, bg_seed);
  }
  for (long i = 0; i < m; ++i) origin(&want)[slot_of(L, i)] = stream[i];
  for (long s = got->lo; s < got->hi; ++s) {
    int g = origin(got)[s], w = origin(&want)[s];
    if (g == w) continue;
    /* Name the slot: data of the message, a gap between its slots, or a guard outside them. */
    int in_data = 0;
    long first = 0, last = -1;
    for (long i = 0; i < m; ++i) {
      long at = slot_of(L, i);
      in_data |= at == s;
      if (i == 0 || at < first) first = at;
      if (i == 0 || at > last) last = at;
    }
    why("slot %ld (%s) is %d, expected %d", s,
        in_data                 ? "data"
        : s > first && s < last ? "gap"
                                : "guard",
        g, w);
    break;
  }
  free(want.mem);
}

static void status_is(const MPI_Status* st, int source, int tag, const Layout* R, long count,
                      long bytes) {
  if (st->MPI_SOURCE != source) why("source %d, expected %d", st->MPI_SOURCE, source);
  if (st->MPI_TAG != tag) why("tag %d, expected %d", st->MPI_TAG, tag);
  int n = -7, elements = -7, nbytes = -7;
  MPI_Count elements_x = -7;
  MPI_Get_count(st, R->type, &n);
  MPI_Get_elements(st, R->type, &elements);
  MPI_Get_elements_x(st, R->type, &elements_x);
  MPI_Get_count(st, MPI_BYTE, &nbytes);
  if (n != count) why("Get_count %d, expected %ld", n, count);
  /* MPI_DOUBLE_INT is a struct of a double and an int: two basic elements (MPI-3.1 5.9.4). */
  if (R->type == MPI_DOUBLE_INT &&
      deviation("get_elements-double_int",
                "Get_elements counts MPI_DOUBLE_INT items, not their basic elements"))
    elements = (int)(elements_x = count * R->elements);
  if (elements != count * R->elements || elements_x != count * R->elements)
    why("Get_elements %d (_x %lld), expected %ld", elements, (long long)elements_x,
        count * R->elements);
  if (nbytes != bytes) why("Get_count(MPI_BYTE) %d, expected %ld", nbytes, bytes);
}

static unsigned seed_of(int rank, int c) { return (unsigned)(rank * 7919 + c * 31 + 1); }

/* --- The matrix: every layout, count and way of sending and receiving ------------------------ */
enum How {
  kSend,
  kSsend,
  kRsend,
  kBsend,
  kIsend,
  kIssend,
  kIrsend,
  kIbsend,     /* send modes; Irecv + Wait */
  kRecv,       /* Isend, then a blocking Recv */
  kSendrecv,   /* Sendrecv */
  kPersistent, /* Send_init + Recv_init, Startall + Waitall, three rounds */
  kProbe,      /* Isend, Probe + Get_count, Recv */
  kMprobe,     /* Isend, Mprobe, Mrecv */
  kImprobe,    /* Isend, Improbe until found, Imrecv, Wait */
  kTest,       /* Irecv completed by Test */
  kWaitany,    /* Irecv and Isend completed by Waitany */
  kWaitsome,   /* ... by Waitsome */
  kGetStatus,  /* Request_get_status until complete: the data is there before the Wait */
  kSendInts,   /* the stream sent as MPI_INTs, received as the layout */
  kRecvInts,   /* the layout sent, received as MPI_INTs */
  kHows
};
static const char* const kHowName[kHows] = {
    "send",   "ssend",   "rsend",    "bsend",      "isend",     "issend",   "irsend",
    "ibsend", "recv",    "sendrecv", "persistent", "probe",     "mprobe",   "improbe",
    "test",   "waitany", "waitsome", "get_status", "send_ints", "recv_ints"};

static int send_mode(int how, const void* buf, int n, MPI_Datatype type, int tag,
                     MPI_Request* req) {
  *req = MPI_REQUEST_NULL;
  switch (how) {
    case kSend:
      return MPI_Send(buf, n, type, g_right, tag, MPI_COMM_WORLD);
    case kSsend:
      return MPI_Ssend(buf, n, type, g_right, tag, MPI_COMM_WORLD);
    case kRsend:
      return MPI_Rsend(buf, n, type, g_right, tag, MPI_COMM_WORLD);
    case kBsend:
      return MPI_Bsend(buf, n, type, g_right, tag, MPI_COMM_WORLD);
    case kIssend:
      return MPI_Issend(buf, n, type, g_right, tag, MPI_COMM_WORLD, req);
    case kIrsend:
      return MPI_Irsend(buf, n, type, g_right, tag, MPI_COMM_WORLD, req);
    case kIbsend:
      return MPI_Ibsend(buf, n, type, g_right, tag, MPI_COMM_WORLD, req);
    default:
      return MPI_Isend(buf, n, type, g_right, tag, MPI_COMM_WORLD, req);
  }
}

/* Waits for the send (when there is one) and the receive; the receive's status in *st. */
static void complete(int how, MPI_Request* sreq, MPI_Request* rreq, MPI_Status* st, const Region* r,
                     const Layout* R, const int* want, long m) {
  MPI_Request both[2] = {*rreq, *sreq};
  MPI_Status sts[2];
  int flag = 0, index = -1, out = 0, indices[2];
  double t0 = MPI_Wtime();
  switch (how) {
    case kTest:
      while (!flag && MPI_Wtime() - t0 < 30) rc_ok(MPI_Test(rreq, &flag, st), "Test");
      if (!flag) why("Test: the receive did not complete in 30 s");
      break;
    case kWaitany:
      for (int done = 0; done < 2; ++done) {
        rc_ok(MPI_Waitany(2, both, &index, &sts[0]), "Waitany");
        if (index == 0) *st = sts[0];
      }
      *rreq = both[0];
      *sreq = both[1];
      break;
    case kWaitsome:
      for (int done = 0; done < 2 && g_why[0] == '\0'; done += out) {
        rc_ok(MPI_Waitsome(2, both, &out, indices, sts), "Waitsome");
        for (int k = 0; k < out; ++k) {
          if (indices[k] == 0) *st = sts[k];
        }
      }
      *rreq = both[0];
      *sreq = both[1];
      break;
    case kGetStatus:
      while (!flag && MPI_Wtime() - t0 < 30) {
        rc_ok(MPI_Request_get_status(*rreq, &flag, st), "Request_get_status");
      }
      if (!flag) why("Request_get_status: the receive did not complete in 30 s");
      /* Complete: the data is in the buffer, though the request lives on. */
      expect(r, R, want, m, 0, 0);
      rc_ok(MPI_Wait(rreq, MPI_STATUS_IGNORE), "Wait(recv)");
      break;
    default:
      rc_ok(MPI_Wait(rreq, st), "Wait(recv)");
  }
  rc_ok(MPI_Wait(sreq, MPI_STATUS_IGNORE), "Wait(send)");
  if (*rreq != MPI_REQUEST_NULL || *sreq != MPI_REQUEST_NULL) why("request not freed");
}

static void run_case(const Layout* L, int count, int how) {
  if ((how == kSendInts || how == kRecvInts) && !L->ints_only) return;
  int c = ++g_case, tag = c;
  const Layout* S = how == kSendInts ? &g_int : L;
  const Layout* R = how == kRecvInts ? &g_int : L;
  int scount = how == kSendInts ? count * L->n : count;
  int rcount = how == kRecvInts ? count * L->n : count;
  long m = (long)count * L->n, bytes = m * 4;
  begin();
  Region s = region(S, scount), r = region(R, rcount);
  if (how == kSendInts) {
    int* mine = stream_of(L, count, seed_of(g_rank, c));
    fill_guard(&s);
    memcpy(origin(&s), mine, sizeof(int) * (size_t)m);
    free(mine);
  } else {
    fill_data(&s, S, scount, seed_of(g_rank, c));
  }
  fill_guard(&r);
  int* want = stream_of(L, count, seed_of(g_left, c));
  MPI_Status st;
  memset(&st, 0x5c, sizeof st);
  MPI_Request sreq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
  MPI_Message msg = MPI_MESSAGE_NULL;
  int flag = 0, n = -7;
  unsigned sent_seed = seed_of(g_rank, c); /* what the send buffer holds at the end */
  double t0;
  switch (how) {
    case kRecv:
      rc_ok(MPI_Isend(origin(&s), scount, S->type, g_right, tag, MPI_COMM_WORLD, &sreq), "Isend");
      rc_ok(MPI_Recv(origin(&r), rcount, R->type, g_left, tag, MPI_COMM_WORLD, &st), "Recv");
      rc_ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "Wait(send)");
      break;
    case kSendrecv:
      rc_ok(MPI_Sendrecv(origin(&s), scount, S->type, g_right, tag, origin(&r), rcount, R->type,
                         g_left, tag, MPI_COMM_WORLD, &st),
            "Sendrecv");
      break;
    case kProbe:
      rc_ok(MPI_Isend(origin(&s), scount, S->type, g_right, tag, MPI_COMM_WORLD, &sreq), "Isend");
      rc_ok(MPI_Probe(g_left, tag, MPI_COMM_WORLD, &st), "Probe");
      status_is(&st, g_left, tag, R, rcount, bytes);
      MPI_Get_count(&st, R->type, &n);
      rc_ok(MPI_Recv(origin(&r), n, R->type, g_left, tag, MPI_COMM_WORLD, &st), "Recv");
      rc_ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "Wait(send)");
      break;
    case kMprobe:
    case kImprobe:
      rc_ok(MPI_Isend(origin(&s), scount, S->type, g_right, tag, MPI_COMM_WORLD, &sreq), "Isend");
      if (how == kMprobe) {
        rc_ok(MPI_Mprobe(g_left, tag, MPI_COMM_WORLD, &msg, &st), "Mprobe");
      } else {
        for (t0 = MPI_Wtime(); !flag && MPI_Wtime() - t0 < 30;)
          rc_ok(MPI_Improbe(g_left, tag, MPI_COMM_WORLD, &flag, &msg, &st), "Improbe");
      }
      status_is(&st, g_left, tag, R, rcount, bytes);
      if (how == kMprobe) {
        rc_ok(MPI_Mrecv(origin(&r), rcount, R->type, &msg, &st), "Mrecv");
      } else {
        rc_ok(MPI_Imrecv(origin(&r), rcount, R->type, &msg, &rreq), "Imrecv");
        rc_ok(MPI_Wait(&rreq, &st), "Wait(Imrecv)");
      }
      rc_ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "Wait(send)");
      break;
    case kPersistent: {
      MPI_Request reqs[2];
      rc_ok(MPI_Recv_init(origin(&r), rcount, R->type, g_left, tag, MPI_COMM_WORLD, &reqs[0]),
            "Recv_init");
      rc_ok(MPI_Send_init(origin(&s), scount, S->type, g_right, tag, MPI_COMM_WORLD, &reqs[1]),
            "Send_init");
      for (int round = 0; round < 3 && g_why[0] == '\0'; ++round) {
        /* New data each round: a send packs at its start, a receive unpacks at its completion. */
        sent_seed = seed_of(g_rank, c) + 100000u * (unsigned)round;
        fill_data(&s, S, scount, sent_seed);
        fill_guard(&r);
        rc_ok(MPI_Startall(2, reqs), "Startall");
        MPI_Status sts[2];
        rc_ok(MPI_Waitall(2, reqs, sts), "Waitall");
        st = sts[0];
        free(want);
        want = stream_of(L, count, seed_of(g_left, c) + 100000u * (unsigned)round);
        if (round < 2) {
          expect(&r, R, want, m, 0, rcount);
          status_is(&st, g_left, tag, R, rcount, bytes);
        }
      }
      rc_ok(MPI_Request_free(&reqs[0]), "Request_free(recv)");
      rc_ok(MPI_Request_free(&reqs[1]), "Request_free(send)");
      break;
    }
    default:
      rc_ok(MPI_Irecv(origin(&r), rcount, R->type, g_left, tag, MPI_COMM_WORLD, &rreq), "Irecv");
      if (how == kRsend || how == kIrsend) MPI_Barrier(MPI_COMM_WORLD); /* receives posted */
      rc_ok(send_mode(how >= kTest ? kIsend : how, origin(&s), scount, S->type, tag, &sreq),
            kHowName[how]);
      complete(how, &sreq, &rreq, &st, &r, R, want, m);
  }
  status_is(&st, g_left, tag, R, rcount, bytes);
  expect(&r, R, want, m, 0, rcount);
  /* The send buffer is read only. */
  Region again = region(S, scount);
  if (how == kSendInts) {
    int* mine = stream_of(L, count, seed_of(g_rank, c));
    fill_guard(&again);
    memcpy(origin(&again), mine, sizeof(int) * (size_t)m);
    free(mine);
  } else {
    fill_data(&again, S, scount, sent_seed);
  }
  for (long k = s.lo; k < s.hi; ++k) {
    if (origin(&again)[k] != origin(&s)[k]) {
      why("the send buffer changed: slot %ld is %d, was %d", k, origin(&s)[k], origin(&again)[k]);
      break;
    }
  }
  free(again.mem);
  free(want);
  free(s.mem);
  free(r.mem);
  end("%s-%d-%s", L->name, count, kHowName[how]);
}

static void test_matrix(void) {
  static const int kBigHows[] = {kSend,       kSsend,  kBsend, kIsend,    kRecv,    kSendrecv,
                                 kPersistent, kMprobe, kTest,  kSendInts, kRecvInts};
  for (int i = 0; i < g_nlayouts; ++i) {
    const Layout* L = &g_layouts[i];
    for (int count = 0; count <= 7; count += count < 1 ? 1 : 6) {
      for (int how = 0; how < kHows; ++how) run_case(L, count, how);
    }
    for (size_t k = 0; k < sizeof kBigHows / sizeof kBigHows[0]; ++k)
      run_case(L, big_count(L), kBigHows[k]);
  }
}

/* --- Truncation: a message one element longer than the receive ------------------------------- */
static void truncate_case(const Layout* L, int count, int blocking) {
  int c = ++g_case, tag = c;
  begin();
  Region s = region(L, count + 1), r = region(L, count);
  fill_data(&s, L, count + 1, seed_of(g_rank, c));
  fill_guard(&r);
  int* want = stream_of(L, count + 1, seed_of(g_left, c));
  MPI_Request sreq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
  MPI_Status st;
  if (blocking) {
    rc_ok(MPI_Isend(origin(&s), count + 1, L->type, g_right, tag, MPI_COMM_WORLD, &sreq), "Isend");
    rc_class(MPI_Recv(origin(&r), count, L->type, g_left, tag, MPI_COMM_WORLD, &st),
             MPI_ERR_TRUNCATE, "MPI_Recv", NULL);
  } else {
    rc_ok(MPI_Irecv(origin(&r), count, L->type, g_left, tag, MPI_COMM_WORLD, &rreq), "Irecv");
    rc_ok(MPI_Isend(origin(&s), count + 1, L->type, g_right, tag, MPI_COMM_WORLD, &sreq), "Isend");
    rc_class(MPI_Wait(&rreq, &st), MPI_ERR_TRUNCATE, "MPI_Wait", NULL);
  }
  rc_ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "Wait(send)");
  /* What the buffer describes holds the message's first count elements; nothing past it. */
  Region upto = r;
  if (count * L->n > 4096 && L->extent == L->n &&
      deviation("truncate-contiguous-rendezvous",
                "a truncated rendezvous receive into contiguous memory writes past the buffer"))
    upto.hi = (long)count * L->extent; /* the data only */
  expect(&upto, L, want, (long)count * L->n, 0, count);
  free(want);
  free(s.mem);
  free(r.mem);
  end("truncate-%s-%d-%s", L->name, count, blocking ? "recv" : "wait");
}

static void test_truncate(void) {
  static const char* const kNames[] = {"contiguous", "vector", "resized_int", "struct",
                                       "double_int"};
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; ++i) {
    const Layout* L = layout(kNames[i]);
    for (int blocking = 0; blocking < 2; ++blocking) {
      truncate_case(L, 3, blocking);
      truncate_case(L, big_count(L), blocking);
    }
  }
}

/* --- A partial last element ------------------------------------------------------------------- */
static void test_partial(void) {
  { /* 8 ints into 2 vectors of 6: one whole element and two ints of the next. */
    const Layout* L = layout("vector");
    int c = ++g_case, tag = c;
    begin();
    int* mine = stream_of(L, 2, seed_of(g_rank, c));
    int* want = stream_of(L, 2, seed_of(g_left, c));
    Region r = region(L, 2);
    fill_guard(&r);
    MPI_Request sreq;
    MPI_Status st;
    rc_ok(MPI_Isend(mine, 8, MPI_INT, g_right, tag, MPI_COMM_WORLD, &sreq), "Isend");
    rc_ok(MPI_Recv(origin(&r), 2, L->type, g_left, tag, MPI_COMM_WORLD, &st), "Recv");
    rc_ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "Wait(send)");
    int n = -7, e = -7, ints = -7;
    MPI_Get_count(&st, L->type, &n);
    MPI_Get_elements(&st, L->type, &e);
    MPI_Get_count(&st, MPI_INT, &ints);
    if (n != MPI_UNDEFINED) why("Get_count(vector) %d, expected MPI_UNDEFINED", n);
    if (e != 8) why("Get_elements(vector) %d, expected 8", e);
    if (ints != 8) why("Get_count(MPI_INT) %d, expected 8", ints);
    expect(&r, L, want, 8, 0, 2);
    free(mine);
    free(want);
    free(r.mem);
    end("partial-vector");
  }
  { /* double, int, double into 2 MPI_DOUBLE_INT: the second one's int is not there. */
    const Layout* L = layout("double_int");
    MPI_Datatype t;
    MPI_Type_create_struct(3, (const int[]){1, 1, 1}, (const MPI_Aint[]){0, 8, 16},
                           (const MPI_Datatype[]){MPI_DOUBLE, MPI_INT, MPI_DOUBLE}, &t);
    MPI_Type_commit(&t);
    Layout D = {"dbl_int_dbl", t, 5, {0, 1, 2, 4, 5}, 6, 2, {0, 4}, 3, 0};
    int c = ++g_case, tag = c;
    begin();
    Region s = region(&D, 1), r = region(L, 2);
    fill_data(&s, &D, 1, seed_of(g_rank, c));
    fill_guard(&r);
    int* want = stream_of(&D, 1, seed_of(g_left, c));
    MPI_Request sreq;
    MPI_Status st;
    rc_ok(MPI_Isend(origin(&s), 1, t, g_right, tag, MPI_COMM_WORLD, &sreq), "Isend");
    rc_ok(MPI_Recv(origin(&r), 2, MPI_DOUBLE_INT, g_left, tag, MPI_COMM_WORLD, &st), "Recv");
    rc_ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "Wait(send)");
    int n = -7, e = -7, b = -7;
    MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &e);
    MPI_Get_count(&st, MPI_BYTE, &b);
    if (n != MPI_UNDEFINED) why("Get_count(MPI_DOUBLE_INT) %d, expected MPI_UNDEFINED", n);
    if (e != 3 && !deviation("get_elements-double_int",
                             "Get_elements counts MPI_DOUBLE_INT items, not their basic elements"))
      why("Get_elements(MPI_DOUBLE_INT) %d, expected 3", e);
    if (b != 20) why("Get_count(MPI_BYTE) %d, expected 20", b);
    expect(&r, L, want, 5, 0, 2);
    MPI_Type_free(&t);
    free(want);
    free(s.mem);
    free(r.mem);
    end("partial-double_int");
  }
}

/* --- MPI_Type_free while operations are in flight --------------------------------------------- */
static MPI_Datatype new_vector(void) {
  MPI_Datatype t;
  MPI_Type_vector(3, 2, 5, MPI_INT, &t);
  MPI_Type_commit(&t);
  return t;
}

static void test_type_free(void) {
  const Layout* L = layout("vector");
  for (int big = 0; big < 2; ++big) {
    int count = big ? big_count(L) : 7;
    int c = ++g_case, tag = c;
    begin();
    Region s = region(L, count), r = region(L, count);
    fill_data(&s, L, count, seed_of(g_rank, c));
    fill_guard(&r);
    int* want = stream_of(L, count, seed_of(g_left, c));
    MPI_Datatype ts = new_vector(), tr = new_vector();
    MPI_Request reqs[2];
    MPI_Status sts[2];
    rc_ok(MPI_Irecv(origin(&r), count, tr, g_left, tag, MPI_COMM_WORLD, &reqs[0]), "Irecv");
    rc_ok(MPI_Type_free(&tr), "Type_free(recv)");
    rc_ok(MPI_Isend(origin(&s), count, ts, g_right, tag, MPI_COMM_WORLD, &reqs[1]), "Isend");
    rc_ok(MPI_Type_free(&ts), "Type_free(send)");
    /* New types may take the freed ones' places. */
    MPI_Datatype other[4];
    for (int k = 0; k < 4; ++k) {
      MPI_Type_contiguous(k + 2, MPI_DOUBLE, &other[k]);
      MPI_Type_commit(&other[k]);
    }
    rc_ok(MPI_Waitall(2, reqs, sts), "Waitall");
    status_is(&sts[0], g_left, tag, L, count, (long)count * L->n * 4);
    expect(&r, L, want, (long)count * L->n, 0, count);
    for (int k = 0; k < 4; ++k) MPI_Type_free(&other[k]);
    free(want);
    end("type_free-in_flight-%d", count);

    /* Persistent requests outlive their types across starts. */
    c = ++g_case;
    tag = c;
    begin();
    ts = new_vector();
    tr = new_vector();
    rc_ok(MPI_Recv_init(origin(&r), count, tr, g_left, tag, MPI_COMM_WORLD, &reqs[0]), "Recv_init");
    rc_ok(MPI_Send_init(origin(&s), count, ts, g_right, tag, MPI_COMM_WORLD, &reqs[1]),
          "Send_init");
    MPI_Type_free(&tr);
    MPI_Type_free(&ts);
    for (int round = 0; round < 2 && g_why[0] == '\0'; ++round) {
      fill_data(&s, L, count, seed_of(g_rank, c) + (unsigned)round);
      fill_guard(&r);
      rc_ok(MPI_Start(&reqs[0]), "Start(recv)");
      rc_ok(MPI_Start(&reqs[1]), "Start(send)");
      rc_ok(MPI_Waitall(2, reqs, sts), "Waitall");
      want = stream_of(L, count, seed_of(g_left, c) + (unsigned)round);
      expect(&r, L, want, (long)count * L->n, 0, count);
      free(want);
    }
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
    free(s.mem);
    free(r.mem);
    end("type_free-persistent-%d", count);
  }
}

/* --- Sendrecv_replace with a vector: the layout's slots take the left neighbour's data, its gaps
 * keep this rank's. */
static void test_sendrecv_replace(void) {
  const char* const kNames[] = {"vector", "contiguous", "struct"};
  for (size_t i = 0; i < sizeof kNames / sizeof kNames[0]; ++i) {
    const Layout* L = layout(kNames[i]);
    for (int big = 0; big < 2; ++big) {
      int count = big ? big_count(L) : 7;
      int c = ++g_case, tag = c;
      begin();
      Region b = region(L, count);
      fill_data(&b, L, count, seed_of(g_rank, c));
      int* want = stream_of(L, count, seed_of(g_left, c));
      MPI_Status st;
      rc_ok(MPI_Sendrecv_replace(origin(&b), count, L->type, g_right, tag, g_left, tag,
                                 MPI_COMM_WORLD, &st),
            "Sendrecv_replace");
      status_is(&st, g_left, tag, L, count, (long)count * L->n * 4);
      expect(&b, L, want, (long)count * L->n, seed_of(g_rank, c), count);
      free(want);
      free(b.mem);
      end("sendrecv_replace-%s-%d", L->name, count);
    }
  }
}

/* --- Buffered sends into an attached buffer of exactly MPI_Pack_size + MPI_BSEND_OVERHEAD ---- */
static void test_bsend_exact(void* attached, int attached_size) {
  const Layout* L = layout("vector");
  const int count = 7;
  void* old = NULL;
  int old_size = 0;
  MPI_Buffer_detach(&old, &old_size);
  for (int mode = 0; mode < 3; ++mode) {
    int c = ++g_case, tag = c;
    begin();
    int pack_size = -1;
    rc_ok(MPI_Pack_size(count, L->type, MPI_COMM_WORLD, &pack_size), "Pack_size");
    if (pack_size != count * L->n * 4)
      why("Pack_size %d, expected %d", pack_size, count * L->n * 4);
    int size = pack_size + MPI_BSEND_OVERHEAD;
    void* exact = malloc((size_t)size);
    rc_ok(MPI_Buffer_attach(exact, size), "Buffer_attach");
    Region s = region(L, count), r = region(L, count);
    fill_data(&s, L, count, seed_of(g_rank, c));
    fill_guard(&r);
    int* want = stream_of(L, count, seed_of(g_left, c));
    MPI_Request rreq, sreq = MPI_REQUEST_NULL;
    MPI_Status st;
    rc_ok(MPI_Irecv(origin(&r), count, L->type, g_left, tag, MPI_COMM_WORLD, &rreq), "Irecv");
    if (mode == 0) {
      rc_ok(MPI_Bsend(origin(&s), count, L->type, g_right, tag, MPI_COMM_WORLD), "Bsend");
    } else if (mode == 1) {
      rc_ok(MPI_Ibsend(origin(&s), count, L->type, g_right, tag, MPI_COMM_WORLD, &sreq), "Ibsend");
    } else {
      rc_ok(MPI_Bsend_init(origin(&s), count, L->type, g_right, tag, MPI_COMM_WORLD, &sreq),
            "Bsend_init");
      rc_ok(MPI_Start(&sreq), "Start");
    }
    /* The data is copied: the send buffer may change at once. */
    fill_guard(&s);
    rc_ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "Wait(send)");
    if (mode == 2) MPI_Request_free(&sreq);
    rc_ok(MPI_Wait(&rreq, &st), "Wait(recv)");
    status_is(&st, g_left, tag, L, count, (long)count * L->n * 4);
    expect(&r, L, want, (long)count * L->n, 0, count);
    void* back = NULL;
    int back_size = 0;
    rc_ok(MPI_Buffer_detach(&back, &back_size), "Buffer_detach");
    free(exact);
    free(want);
    free(s.mem);
    free(r.mem);
    end("bsend_exact-%s", mode == 0 ? "bsend" : mode == 1 ? "ibsend" : "bsend_init");
  }
  MPI_Buffer_attach(attached, attached_size);
}

/* --- Absolute addresses from MPI_BOTTOM ------------------------------------------------------- */
static void test_bottom(void) {
  int c = ++g_case, tag = c;
  begin();
  int a[3], b[5], x[4], y[4];
  for (int k = 0; k < 3; ++k) a[k] = value(seed_of(g_rank, c), k);
  for (int k = 0; k < 5; ++k) b[k] = value(seed_of(g_rank, c), 10 + k);
  for (int k = 0; k < 4; ++k) x[k] = y[k] = guard(k);
  MPI_Aint sd[2], rd[2];
  MPI_Get_address(&a[0], &sd[0]);
  MPI_Get_address(&b[2], &sd[1]);
  MPI_Get_address(&x[1], &rd[0]);
  MPI_Get_address(&y[0], &rd[1]);
  MPI_Datatype st_type, rt_type;
  MPI_Type_create_struct(2, (const int[]){3, 2}, sd, (const MPI_Datatype[]){MPI_INT, MPI_INT},
                         &st_type);
  MPI_Type_create_struct(2, (const int[]){2, 3}, rd, (const MPI_Datatype[]){MPI_INT, MPI_INT},
                         &rt_type);
  MPI_Type_commit(&st_type);
  MPI_Type_commit(&rt_type);
  MPI_Request sreq;
  MPI_Status st;
  rc_ok(MPI_Isend(MPI_BOTTOM, 1, st_type, g_right, tag, MPI_COMM_WORLD, &sreq), "Isend");
  rc_ok(MPI_Recv(MPI_BOTTOM, 1, rt_type, g_left, tag, MPI_COMM_WORLD, &st), "Recv");
  rc_ok(MPI_Wait(&sreq, MPI_STATUS_IGNORE), "Wait(send)");
  unsigned ls = seed_of(g_left, c);
  int want_x[4] = {guard(0), value(ls, 0), value(ls, 1), guard(3)};
  int want_y[4] = {value(ls, 2), value(ls, 12), value(ls, 13), guard(3)};
  for (int k = 0; k < 4; ++k) {
    if (x[k] != want_x[k]) why("x[%d] is %d, expected %d", k, x[k], want_x[k]);
    if (y[k] != want_y[k]) why("y[%d] is %d, expected %d", k, y[k], want_y[k]);
  }
  int n = -7;
  MPI_Get_count(&st, rt_type, &n);
  if (n != 1) why("Get_count %d, expected 1", n);
  MPI_Type_free(&st_type);
  MPI_Type_free(&rt_type);
  end("mpi_bottom-absolute_struct");
}

/* --- A cancelled receive of a vector ---------------------------------------------------------- */
static void test_cancel(void) {
  const Layout* L = layout("vector");
  begin();
  Region r = region(L, 7);
  fill_guard(&r);
  MPI_Request req;
  MPI_Status st;
  int flag = 0;
  rc_ok(MPI_Irecv(origin(&r), 7, L->type, g_left, 32000, MPI_COMM_WORLD, &req), "Irecv");
  rc_ok(MPI_Cancel(&req), "Cancel");
  rc_ok(MPI_Wait(&req, &st), "Wait");
  MPI_Test_cancelled(&st, &flag);
  if (!flag) why("Test_cancelled says not cancelled");
  expect(&r, L, NULL, 0, 0, 7);
  free(r.mem);
  end("cancel-vector");
}

/* --- Datatypes that cannot be used: MPI_ERR_TYPE from every call ------------------------------ */
static void test_bad_types(void) {
  MPI_Datatype u;
  MPI_Type_vector(3, 2, 5, MPI_INT, &u); /* not committed */
  int buf[64] = {0};
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Status st;
  const char* why_text = g_torusmpi ? "not committed" : NULL;
  struct {
    MPI_Datatype t;
    const char* name;
    const char* text;
  } bad[] = {{u, "uncommitted", why_text}, {MPI_DATATYPE_NULL, "null", "MPI_DATATYPE_NULL"}};
  for (int b = 0; b < 2; ++b) {
    MPI_Datatype t = bad[b].t;
    const char* text = bad[b].text;
    begin();
    rc_class(MPI_Send(buf, 1, t, g_right, 1, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send", text);
    rc_class(MPI_Ssend(buf, 1, t, g_right, 1, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Ssend", text);
    rc_class(MPI_Rsend(buf, 1, t, g_right, 1, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Rsend", text);
    rc_class(MPI_Bsend(buf, 1, t, g_right, 1, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Bsend", text);
    rc_class(MPI_Recv(buf, 1, t, g_left, 1, MPI_COMM_WORLD, &st), MPI_ERR_TYPE, "MPI_Recv", text);
    rc_class(MPI_Isend(buf, 1, t, g_right, 1, MPI_COMM_WORLD, &req), MPI_ERR_TYPE, "MPI_Isend",
             text);
    rc_class(MPI_Issend(buf, 1, t, g_right, 1, MPI_COMM_WORLD, &req), MPI_ERR_TYPE, "MPI_Issend",
             text);
    rc_class(MPI_Ibsend(buf, 1, t, g_right, 1, MPI_COMM_WORLD, &req), MPI_ERR_TYPE, "MPI_Ibsend",
             text);
    rc_class(MPI_Irecv(buf, 1, t, g_left, 1, MPI_COMM_WORLD, &req), MPI_ERR_TYPE, "MPI_Irecv",
             text);
    rc_class(MPI_Send_init(buf, 1, t, g_right, 1, MPI_COMM_WORLD, &req), MPI_ERR_TYPE,
             "MPI_Send_init", text);
    rc_class(MPI_Recv_init(buf, 1, t, g_left, 1, MPI_COMM_WORLD, &req), MPI_ERR_TYPE,
             "MPI_Recv_init", text);
    rc_class(
        MPI_Sendrecv(buf, 1, t, g_right, 1, buf + 32, 1, MPI_INT, g_left, 1, MPI_COMM_WORLD, &st),
        MPI_ERR_TYPE, "MPI_Sendrecv", g_torusmpi ? "sendtype" : NULL);
    rc_class(
        MPI_Sendrecv(buf, 1, MPI_INT, g_right, 1, buf + 32, 1, t, g_left, 1, MPI_COMM_WORLD, &st),
        MPI_ERR_TYPE, "MPI_Sendrecv", g_torusmpi ? "recvtype" : NULL);
    rc_class(MPI_Sendrecv_replace(buf, 1, t, g_right, 1, g_left, 1, MPI_COMM_WORLD, &st),
             MPI_ERR_TYPE, "MPI_Sendrecv_replace", text);
    if (req != MPI_REQUEST_NULL) why("a failed call made a request");
    end("bad_type-%s", bad[b].name);
  }
  MPI_Type_free(&u);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(version, &len);
  g_torusmpi = strncmp(version, "torusmpi", 8) == 0;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  g_left = (g_rank + g_size - 1) % g_size;
  g_right = (g_rank + 1) % g_size;
  /* Room for several of the largest buffered messages at once. */
  int attach_size = 4 * (8 << 20);
  void* attach = malloc((size_t)attach_size);
  check_rc(MPI_Buffer_attach(attach, attach_size), "buffer_attach");
  make_layouts();

  test_matrix();
  MPI_Barrier(MPI_COMM_WORLD);
  test_truncate();
  test_partial();
  test_type_free();
  test_sendrecv_replace();
  test_bsend_exact(attach, attach_size);
  test_bottom();
  test_cancel();
  MPI_Barrier(MPI_COMM_WORLD);
  test_bad_types();

  free_layouts();
  void* detached = NULL;
  int detached_size = -1;
  check_rc(MPI_Buffer_detach(&detached, &detached_size), "buffer_detach");
  free(attach);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return check_done(g_size);
}
