/* datatypes: derived datatypes, packing and external32, against what MPI defines.
 *
 *   datatypes      any number of ranks (the exchange at the end needs 2; with 1 it is skipped)
 *
 * For every constructor (contiguous, vector, hvector, indexed, hindexed, indexed_block,
 * hindexed_block, struct, resized, subarray in C and Fortran order, darray with block, cyclic and
 * none distributions and default arguments, dup, and the removed MPI-1 forms Type_hvector,
 * Type_hindexed, Type_struct with MPI_LB/MPI_UB markers): size, lb, extent, true lb and extent,
 * the packed bytes of one and of two elements (buffers hold their own index, so the packed ints
 * are the indices a type map selects), the envelope and the exact contents. Then: reference
 * counts (a type freed while another is built on it), names, MPI_Type_match_size,
 * MPI_Get_elements / MPI_Get_count with partial elements, MPI_Status_set_elements,
 * MPI_Pack/Unpack at positions and MPI_Pack_size, external32 bytes (big-endian, MPI's sizes),
 * addresses, a million-element vector, packed data sent between two ranks; and bad arguments with
 * their classes (MPI_ERR_TYPE, MPI_ERR_COUNT, MPI_ERR_ARG, MPI_ERR_TRUNCATE), on torusmpi also a
 * message naming the call. One "ok/FAIL <rank> <check>" line per check, then "done <rank> ...".
 *
 * Open MPI 4.1 deviates from MPI in a few places, run on torusmpi only (a "skip" line on the
 * reference): external32 sizes of long, unsigned long, wchar_t and long double (it writes 8, 8, 4
 * bytes, and x87 bytes), datarep names other than "external32" (accepted), ndims = 0 in a
 * subarray and MPI_DISTRIBUTE_NONE over several processes (accepted); it returns MPI_ERR_TYPE for
 * a NULL newtype and MPI_ERR_INTERN for MPI_Type_get_contents on a predefined type or with short
 * arrays, where torusmpi says MPI_ERR_ARG (both accepted from the reference). */
#define OMPI_OMIT_MPI1_COMPAT_DECLS 0
#define OMPI_REMOVED_USE_STATIC_ASSERT 0
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Open MPI 4.1 exports MPI_LB and MPI_UB but its mpi.h hides them without MPI-1 compatibility. */
extern struct ompi_predefined_datatype_t ompi_mpi_lb, ompi_mpi_ub;
#define TM_LB ((MPI_Datatype)&ompi_mpi_lb)
#define TM_UB ((MPI_Datatype)&ompi_mpi_ub)

static int g_size;
static int g_torusmpi;

/* ints whose value is their index, reachable at negative indices too: g_ints[k] == k. */
static int g_storage[8192];
static int* const g_ints = g_storage + 4096;

static int error_class(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

/* The call returned class a (or b, from the reference library only; -1 for none); on torusmpi
 * the message names the function. */
static void expect_error(int rc, int a, int b, const char* what, const char* fn) {
  int cls = error_class(rc);
  int ok = cls == a || (!g_torusmpi && b >= 0 && cls == b);
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
  if (ok && g_torusmpi && strstr(text, fn) == NULL) {
    check(0, what, "class right, but the message does not name %s: \"%s\"", fn, text);
    return;
  }
  check(ok, what, "returned class %d (%s), expected %d", cls, text, a);
}

/* Where the reference library deviates from MPI: checked on torusmpi only. */
static int torusmpi_only(const char* what, const char* why) {
  if (g_torusmpi) return 1;
  printf("skip %d %s: %s\n", g_rank, what, why);
  return 0;
}

static void expect_bounds(const char* what, MPI_Datatype t, int size, MPI_Aint lb, MPI_Aint extent,
                          MPI_Aint true_lb, MPI_Aint true_extent) {
  int s = -1;
  MPI_Aint l = -1, e = -1, tl = -1, te = -1;
  MPI_Count sx = -1, lx = -1, ex = -1, tlx = -1, tex = -1;
  char name[128];
  snprintf(name, sizeof name, "%s-bounds", what);
  int rc = MPI_Type_size(t, &s) | MPI_Type_get_extent(t, &l, &e) |
           MPI_Type_get_true_extent(t, &tl, &te) | MPI_Type_size_x(t, &sx) |
           MPI_Type_get_extent_x(t, &lx, &ex) | MPI_Type_get_true_extent_x(t, &tlx, &tex);
  check(rc == MPI_SUCCESS && s == size && l == lb && e == extent && tl == true_lb &&
            te == true_extent && sx == size && lx == lb && ex == extent && tlx == true_lb &&
            tex == true_extent,
        name,
        "rc %d: size %d lb %ld extent %ld true lb %ld extent %ld; expected %d %ld %ld %ld %ld", rc,
        s, (long)l, (long)e, (long)tl, (long)te, size, (long)lb, (long)extent, (long)true_lb,
        (long)true_extent);
}

/* Packs `count` elements from g_ints and compares with the expected indices. */
static void expect_packed(const char* what, MPI_Datatype t, int count, const int* want, int n) {
  int packed[512];
  int size = 0, position = 0;
  char name[128];
  snprintf(name, sizeof name, "%s-pack%d", what, count);
  MPI_Pack_size(count, t, MPI_COMM_WORLD, &size);
  int rc = MPI_Pack(g_ints, count, t, packed, sizeof packed, &position, MPI_COMM_WORLD);
  int ok = rc == MPI_SUCCESS && position == n * 4 && size == n * 4;
  for (int i = 0; ok && i < n; ++i) ok = packed[i] == want[i];
  char got[256] = "";
  for (int i = 0, at = 0; i < n && i < 24 && position == n * 4; ++i)
    at += snprintf(got + at, sizeof got - (size_t)at, " %d", packed[i]);
  check(ok, name, "rc %d position %d pack_size %d (expected %d), got%s", rc, position, size, n * 4,
        got);
  if (!ok) return;
  /* And back: unpacking into zeros restores exactly those ints. */
  static int out_storage[8192];
  int* out = out_storage + 4096;
  memset(out_storage, 0, sizeof out_storage);
  position = 0;
  snprintf(name, sizeof name, "%s-unpack%d", what, count);
  rc = MPI_Unpack(packed, n * 4, &position, out, count, t, MPI_COMM_WORLD);
  ok = rc == MPI_SUCCESS && position == n * 4;
  for (int i = 0; ok && i < n; ++i) ok = out[want[i]] == want[i];
  int touched = 0;
  for (int k = -4096; k < 4096; ++k) touched += out[k] != 0 || k == 0;
  int distinct = 1; /* index 0 counts even when it is not selected */
  for (int i = 0; i < n; ++i) {
    int seen = want[i] == 0;
    for (int j = 0; j < i; ++j) seen |= want[j] == want[i];
    distinct += !seen;
  }
  check(ok && touched == distinct, name, "rc %d position %d, %d ints written, expected %d", rc,
        position, touched, distinct);
}

static void expect_envelope(const char* what, MPI_Datatype t, int combiner, int ni, const int* ints,
                            int na, const MPI_Aint* aints, int nd, const MPI_Datatype* types) {
  int gi = -1, ga = -1, gd = -1, gc = -1;
  char name[128];
  snprintf(name, sizeof name, "%s-envelope", what);
  int rc = MPI_Type_get_envelope(t, &gi, &ga, &gd, &gc);
  check(rc == MPI_SUCCESS && gi == ni && ga == na && gd == nd && gc == combiner, name,
        "rc %d: %d integers %d addresses %d datatypes, combiner %d; expected %d %d %d %d", rc, gi,
        ga, gd, gc, ni, na, nd, combiner);
  if (gi != ni || ga != na || gd != nd) return;
  int ci[64];
  MPI_Aint ca[64];
  MPI_Datatype ct[64];
  snprintf(name, sizeof name, "%s-contents", what);
  rc = MPI_Type_get_contents(t, ni, na, nd, ci, ca, ct);
  int ok = rc == MPI_SUCCESS;
  for (int i = 0; ok && i < ni; ++i) ok = ci[i] == ints[i];
  for (int i = 0; ok && i < na; ++i) ok = ca[i] == aints[i];
  for (int i = 0; i < nd && rc == MPI_SUCCESS; ++i) {
    /* Predefined types come back as themselves; derived ones as equivalent types to free. */
    int ni2, na2, nd2, comb;
    MPI_Type_get_envelope(ct[i], &ni2, &na2, &nd2, &comb);
    if (comb == MPI_COMBINER_NAMED) {
      ok = ok && ct[i] == types[i];
    } else {
      int s1 = -1, s2 = -2;
      MPI_Type_size(ct[i], &s1);
      MPI_Type_size(types[i], &s2);
      ok = ok && s1 == s2;
      MPI_Type_free(&ct[i]);
    }
  }
  check(ok, name, "rc %d, or an argument differs", rc);
}

static MPI_Datatype committed(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

static void constructors(void) {
  MPI_Datatype t;
  { /* contiguous */
    MPI_Type_contiguous(3, MPI_INT, &t);
    committed(t);
    expect_bounds("contiguous", t, 12, 0, 12, 0, 12);
    const int one[] = {0, 1, 2}, two[] = {0, 1, 2, 3, 4, 5};
    expect_packed("contiguous", t, 1, one, 3);
    expect_packed("contiguous", t, 2, two, 6);
    const int ints[] = {3};
    const MPI_Datatype types[] = {MPI_INT};
    expect_envelope("contiguous", t, MPI_COMBINER_CONTIGUOUS, 1, ints, 0, NULL, 1, types);
    MPI_Type_free(&t);
    check(t == MPI_DATATYPE_NULL, "free-sets-null", "handle not MPI_DATATYPE_NULL");
  }
  { /* vector */
    MPI_Type_vector(3, 2, 4, MPI_INT, &t);
    MPI_Type_commit(&t);
    expect_bounds("vector", t, 24, 0, 40, 0, 40);
    const int one[] = {0, 1, 4, 5, 8, 9}, two[] = {0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19};
    expect_packed("vector", t, 1, one, 6);
    expect_packed("vector", t, 2, two, 12);
    const int ints[] = {3, 2, 4};
    const MPI_Datatype types[] = {MPI_INT};
    expect_envelope("vector", t, MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, types);
    MPI_Type_free(&t);
  }
  { /* vector with a negative stride */
    MPI_Type_vector(3, 1, -2, MPI_INT, &t);
    MPI_Type_commit(&t);
    expect_bounds("vector-negative", t, 12, -16, 20, -16, 20);
    const int one[] = {0, -2, -4}, two[] = {0, -2, -4, 5, 3, 1};
    expect_packed("vector-negative", t, 1, one, 3);
    expect_packed("vector-negative", t, 2, two, 6);
    MPI_Type_free(&t);
  }
  { /* hvector, and the MPI-1 Type_hvector */
    const int ints[] = {3, 2};
    const MPI_Aint aints[] = {20};
    const MPI_Datatype types[] = {MPI_INT};
    const int one[] = {0, 1, 5, 6, 10, 11}, two[] = {0, 1, 5, 6, 10, 11, 12, 13, 17, 18, 22, 23};
    MPI_Type_create_hvector(3, 2, 20, MPI_INT, &t);
    MPI_Type_commit(&t);
    expect_bounds("hvector", t, 24, 0, 48, 0, 48);
    expect_packed("hvector", t, 1, one, 6);
    expect_packed("hvector", t, 2, two, 12);
    expect_envelope("hvector", t, MPI_COMBINER_HVECTOR, 2, ints, 1, aints, 1, types);
    MPI_Type_free(&t);
    MPI_Type_hvector(3, 2, 20, MPI_INT, &t);
    MPI_Type_commit(&t);
    expect_packed("type_hvector", t, 1, one, 6);
    expect_envelope("type_hvector", t, MPI_COMBINER_HVECTOR, 2, ints, 1, aints, 1, types);
    MPI_Type_free(&t);
  }
  { /* indexed */
    const int bl[] = {2, 1, 3}, di[] = {0, 5, 8};
    MPI_Type_indexed(3, bl, di, MPI_INT, &t);
    MPI_Type_commit(&t);
    expect_bounds("indexed", t, 24, 0, 44, 0, 44);
    const int one[] = {0, 1, 5, 8, 9, 10}, two[] = {0, 1, 5, 8, 9, 10, 11, 12, 16, 19, 20, 21};
    expect_packed("indexed", t, 1, one, 6);
    expect_packed("indexed", t, 2, two, 12);
    const int ints[] = {3, 2, 1, 3, 0, 5, 8};
    const MPI_Datatype types[] = {MPI_INT};
    expect_envelope("indexed", t, MPI_COMBINER_INDEXED, 7, ints, 0, NULL, 1, types);
    MPI_Type_free(&t);
  }
  { /* hindexed, and the MPI-1 Type_hindexed */
    int bl[] = {2, 1};
    MPI_Aint di[] = {12, 0};
    const int ints[] = {2, 2, 1};
    const MPI_Datatype types[] = {MPI_INT};
    const int one[] = {3, 4, 0}, two[] = {3, 4, 0, 8, 9, 5};
    MPI_Type_create_hindexed(2, bl, di, MPI_INT, &t);
    MPI_Type_commit(&t);
    expect_bounds("hindexed", t, 12, 0, 20, 0, 20);
    expect_packed("hindexed", t, 1, one, 3);
    expect_packed("hindexed", t, 2, two, 6);
    expect_envelope("hindexed", t, MPI_COMBINER_HINDEXED, 3, ints, 2, di, 1, types);
    MPI_Type_free(&t);
    MPI_Type_hindexed(2, bl, di, MPI_INT, &t);
    MPI_Type_commit(&t);
    expect_packed("type_hindexed", t, 2, two, 6);
    expect_envelope("type_hindexed", t, MPI_COMBINER_HINDEXED, 3, ints, 2, di, 1, types);
    MPI_Type_free(&t);
  }
  { /* indexed_block */
    const int di[] = {1, 6, 3};
    MPI_Type_create_indexed_block(3, 2, di, MPI_INT, &t);
    MPI_Type_commit(&t);
    expect_bounds("indexed_block", t, 24, 4, 28, 4, 28);
    const int one[] = {1, 2, 6, 7, 3, 4}, two[] = {1, 2, 6, 7, 3, 4, 8, 9, 13, 14, 10, 11};
    expect_packed("indexed_block", t, 1, one, 6);
    expect_packed("indexed_block", t, 2, two, 12);
    const int ints[] = {3, 2, 1, 6, 3};
    const MPI_Datatype types[] = {MPI_INT};
    expect_envelope("indexed_block", t, MPI_COMBINER_INDEXED_BLOCK, 5, ints, 0, NULL, 1, types);
    MPI_Type_free(&t);
  }
  { /* hindexed_block */
    const MPI_Aint di[] = {0, 40};
    MPI_Type_create_hindexed_block(2, 3, di, MPI_INT, &t);
    MPI_Type_commit(&t);
    expect_bounds("hindexed_block", t, 24, 0, 52, 0, 52);
    const int one[] = {0, 1, 2, 10, 11, 12}, two[] = {0, 1, 2, 10, 11, 12, 13, 14, 15, 23, 24, 25};
    expect_packed("hindexed_block", t, 1, one, 6);
    expect_packed("hindexed_block", t, 2, two, 12);
    const int ints[] = {2, 3};
    const MPI_Datatype types[] = {MPI_INT};
    expect_envelope("hindexed_block", t, MPI_COMBINER_HINDEXED_BLOCK, 2, ints, 2, di, 1, types);
    MPI_Type_free(&t);
  }
  { /* resized */
    MPI_Datatype r;
    MPI_Type_create_resized(MPI_INT, -4, 16, &r);
    expect_bounds("resized", r, 4, -4, 16, 0, 4);
    MPI_Type_contiguous(3, r, &t);
    MPI_Type_commit(&t);
    expect_bounds("contiguous-of-resized", t, 12, -4, 48, 0, 36);
    const int one[] = {0, 4, 8}, two[] = {0, 4, 8, 12, 16, 20};
    expect_packed("contiguous-of-resized", t, 1, one, 3);
    expect_packed("contiguous-of-resized", t, 2, two, 6);
    const MPI_Aint aints[] = {-4, 16};
    const MPI_Datatype types[] = {MPI_INT};
    expect_envelope("resized", r, MPI_COMBINER_RESIZED, 0, NULL, 2, aints, 1, types);
    const int ints[] = {3};
    expect_envelope("contiguous-of-resized", t, MPI_COMBINER_CONTIGUOUS, 1, ints, 0, NULL, 1, &r);
    MPI_Type_free(&r);
    MPI_Type_free(&t);
  }
}

static void structs(void) {
  MPI_Datatype t;
  { /* struct {char; int; double[2]}, and the MPI-1 Type_struct */
    struct {
      char c;
      int i;
      double d[2];
    } s = {'x', 0x01020304, {1.5, -2.25}}, back;
    int bl[] = {1, 1, 2};
    MPI_Aint di[] = {0, 4, 8};
    MPI_Datatype ty[] = {MPI_CHAR, MPI_INT, MPI_DOUBLE};
    const int ints[] = {3, 1, 1, 2};
    for (int deprecated = 0; deprecated < 2; ++deprecated) {
      const char* what = deprecated ? "type_struct" : "struct";
      if (deprecated) {
        MPI_Type_struct(3, bl, di, ty, &t);
      } else {
        MPI_Type_create_struct(3, bl, di, ty, &t);
      }
      MPI_Type_commit(&t);
      expect_bounds(what, t, 21, 0, 24, 0, 24);
      expect_envelope(what, t, MPI_COMBINER_STRUCT, 4, ints, 3, di, 3, ty);
      unsigned char packed[64];
      int position = 0;
      int rc = MPI_Pack(&s, 1, t, packed, sizeof packed, &position, MPI_COMM_WORLD);
      unsigned char want[21];
      want[0] = 'x';
      memcpy(want + 1, &s.i, 4);
      memcpy(want + 5, s.d, 16);
      char name[64];
      snprintf(name, sizeof name, "%s-pack", what);
      check(rc == MPI_SUCCESS && position == 21 && memcmp(packed, want, 21) == 0, name,
            "rc %d position %d", rc, position);
      memset(&back, 0, sizeof back);
      position = 0;
      rc = MPI_Unpack(packed, 21, &position, &back, 1, t, MPI_COMM_WORLD);
      snprintf(name, sizeof name, "%s-unpack", what);
      check(rc == MPI_SUCCESS && back.c == 'x' && back.i == s.i && back.d[0] == 1.5 &&
                back.d[1] == -2.25,
            name, "rc %d", rc);
      MPI_Type_free(&t);
    }
  }
  { /* alignment padding: {double, char} has extent 16; a member's padding counts */
    int bl[] = {1, 1};
    MPI_Aint di[] = {0, 8};
    MPI_Datatype ty[] = {MPI_DOUBLE, MPI_CHAR}, inner;
    MPI_Type_create_struct(2, bl, di, ty, &inner);
    expect_bounds("struct-padded", inner, 9, 0, 16, 0, 9);
    di[1] = 1;
    ty[0] = MPI_CHAR;
    ty[1] = inner;
    MPI_Type_create_struct(2, bl, di, ty, &t);
    expect_bounds("struct-of-padded", t, 10, 0, 24, 0, 10);
    MPI_Type_free(&t);
    MPI_Type_free(&inner);
    di[0] = 4;
    di[1] = 8;
    ty[0] = MPI_INT;
    ty[1] = MPI_CHAR;
    MPI_Type_create_struct(2, bl, di, ty, &t);
    expect_bounds("struct-lb4", t, 5, 4, 8, 4, 5);
    MPI_Type_free(&t);
  }
  { /* MPI_LB and MPI_UB markers */
    int bl[] = {1, 1, 1};
    MPI_Aint di[] = {-8, 0, 20};
    MPI_Datatype ty[] = {TM_LB, MPI_INT, TM_UB}, two;
    MPI_Type_struct(3, bl, di, ty, &t);
    expect_bounds("markers", t, 4, -8, 28, 0, 4);
    MPI_Type_contiguous(2, t, &two);
    MPI_Type_commit(&two);
    expect_bounds("contiguous-of-markers", two, 8, -8, 56, 0, 32);
    const int one[] = {0, 7}, both[] = {0, 7, 14, 21};
    expect_packed("contiguous-of-markers", two, 1, one, 2);
    expect_packed("contiguous-of-markers", two, 2, both, 4);
    MPI_Aint lb = 0, ub = 0, extent = 0;
    int rc = MPI_Type_lb(t, &lb) | MPI_Type_ub(t, &ub) | MPI_Type_extent(t, &extent);
    check(rc == MPI_SUCCESS && lb == -8 && ub == 20 && extent == 28, "type_lb_ub_extent",
          "rc %d lb %ld ub %ld extent %ld", rc, (long)lb, (long)ub, (long)extent);
    MPI_Type_free(&two);
    /* A resize drops the markers: the new bounds are exact. */
    MPI_Type_create_resized(t, 0, 4, &two);
    expect_bounds("resized-markers", two, 4, 0, 4, 0, 4);
    MPI_Type_free(&two);
    MPI_Type_free(&t);
  }
  { /* absolute addresses from MPI_BOTTOM */
    int a = 11, b = 22;
    MPI_Aint addr[2];
    MPI_Get_address(&a, &addr[0]);
    MPI_Address(&b, &addr[1]);
    int bl[] = {1, 1};
    MPI_Datatype ty[] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, bl, addr, ty, &t);
    MPI_Type_commit(&t);
    int packed[2] = {0, 0}, position = 0;
    int rc = MPI_Pack(MPI_BOTTOM, 1, t, packed, sizeof packed, &position, MPI_COMM_WORLD);
    check(rc == MPI_SUCCESS && packed[0] == 11 && packed[1] == 22, "struct-mpi_bottom",
          "rc %d packed %d %d", rc, packed[0], packed[1]);
    MPI_Type_free(&t);
    MPI_Aint base;
    MPI_Get_address(g_ints, &base);
    check(MPI_Aint_add(base, 12) == (MPI_Aint)(g_ints + 3) &&
              MPI_Aint_diff((MPI_Aint)(g_ints + 5), base) == 20,
          "aint_add_diff", "wrong address arithmetic");
  }
}

static void subarrays(void) {
  MPI_Datatype t;
  const int sizes[] = {4, 5}, subsizes[] = {2, 3}, starts[] = {1, 1};
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t);
  MPI_Type_commit(&t);
  expect_bounds("subarray-c", t, 24, 0, 80, 24, 32);
  const int c_one[] = {6, 7, 8, 11, 12, 13},
            c_two[] = {6, 7, 8, 11, 12, 13, 26, 27, 28, 31, 32, 33};
  expect_packed("subarray-c", t, 1, c_one, 6);
  expect_packed("subarray-c", t, 2, c_two, 12);
  const int ints[] = {2, 4, 5, 2, 3, 1, 1, MPI_ORDER_C};
  const MPI_Datatype types[] = {MPI_INT};
  expect_envelope("subarray-c", t, MPI_COMBINER_SUBARRAY, 8, ints, 0, NULL, 1, types);
  MPI_Type_free(&t);
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
  MPI_Type_commit(&t);
  expect_bounds("subarray-fortran", t, 24, 0, 80, 20, 40);
  const int f_one[] = {5, 6, 9, 10, 13, 14};
  expect_packed("subarray-fortran", t, 1, f_one, 6);
  MPI_Type_free(&t);
  /* 3-d, of a resized element */
  MPI_Datatype r;
  MPI_Type_create_resized(MPI_INT, 0, 8, &r);
  const int s3[] = {3, 4, 2}, sub3[] = {2, 2, 1}, st3[] = {1, 2, 1};
  MPI_Type_create_subarray(3, s3, sub3, st3, MPI_ORDER_C, r, &t);
  MPI_Type_commit(&t);
  expect_bounds("subarray-3d", t, 16, 0, 192, 104, 84);
  /* element (i, j, k) at 2 * ((i * 4 + j) * 2 + k) ints */
  const int d3[] = {26, 30, 42, 46};
  expect_packed("subarray-3d", t, 1, d3, 4);
  MPI_Type_free(&t);
  MPI_Type_free(&r);
}

/* What process `rank` of a darray owns, in order: the global indices (C or Fortran order) of the
 * elements whose coordinates map to its grid coordinates. */
static int darray_expected(int rank, int ndims, const int* g, const int* dist, const int* darg,
                           const int* p, int order, int* out) {
  int coords[8], r = rank;
  for (int i = ndims - 1; i >= 0; --i) {
    coords[i] = r % p[i];
    r /= p[i];
  }
  int total = 1;
  for (int i = 0; i < ndims; ++i) total *= g[i];
  int n = 0;
  for (int lin = 0; lin < total; ++lin) {
    /* The lin-th element in storage order, as coordinates. */
    int idx[8], rest = lin;
    for (int k = 0; k < ndims; ++k) {
      int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
      idx[d] = rest % g[d];
      rest /= g[d];
    }
    int mine = 1;
    for (int d = 0; d < ndims && mine; ++d) {
      int owner = 0;
      if (dist[d] == MPI_DISTRIBUTE_BLOCK) {
        int b = darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? (g[d] + p[d] - 1) / p[d] : darg[d];
        owner = idx[d] / b;
      } else if (dist[d] == MPI_DISTRIBUTE_CYCLIC) {
        int b = darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg[d];
        owner = idx[d] / b % p[d];
      }
      mine = owner == coords[d];
    }
    if (mine) out[n++] = lin;
  }
  return n;
}

static void darrays(void) {
  struct {
    const char* name;
    int size, ndims, g[3], dist[3], darg[3], p[3];
  } cases[] = {
      {"darray-block-cyclic2",
       4,
       2,
       {10, 7},
       {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
       {MPI_DISTRIBUTE_DFLT_DARG, 2},
       {2, 2}},
      {"darray-cyclic-none-block3",
       6,
       3,
       {5, 4, 6},
       {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK},
       {MPI_DISTRIBUTE_DFLT_DARG, 0, 3},
       {3, 1, 2}},
      {"darray-1d-cyclic3", 3, 1, {20}, {MPI_DISTRIBUTE_CYCLIC}, {3}, {3}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    for (int order = MPI_ORDER_C; order <= MPI_ORDER_FORTRAN; ++order) {
      for (int rank = 0; rank < cases[c].size; ++rank) {
        char name[96];
        snprintf(name, sizeof name, "%s-%s-rank%d", cases[c].name,
                 order == MPI_ORDER_C ? "c" : "fortran", rank);
        MPI_Datatype t;
        int rc =
            MPI_Type_create_darray(cases[c].size, rank, cases[c].ndims, cases[c].g, cases[c].dist,
                                   cases[c].darg, cases[c].p, order, MPI_INT, &t);
        if (rc != MPI_SUCCESS) {
          check(0, name, "MPI_Type_create_darray returned %d", rc);
          continue;
        }
        MPI_Type_commit(&t);
        int want[256];
        int n = darray_expected(rank, cases[c].ndims, cases[c].g, cases[c].dist, cases[c].darg,
                                cases[c].p, order, want);
        int total = 1;
        for (int i = 0; i < cases[c].ndims; ++i) total *= cases[c].g[i];
        MPI_Aint lb = -1, extent = -1;
        int size = -1;
        MPI_Type_get_extent(t, &lb, &extent);
        MPI_Type_size(t, &size);
        char what[112];
        snprintf(what, sizeof what, "%s-extent", name);
        check(lb == 0 && extent == total * 4 && size == n * 4, what,
              "lb %ld extent %ld size %d; expected 0 %d %d", (long)lb, (long)extent, size,
              total * 4, n * 4);
        expect_packed(name, t, 1, want, n);
        if (rank == 1 && order == MPI_ORDER_C) {
          int ints[4 * 3 + 4];
          int k = 0, nd = cases[c].ndims;
          ints[k++] = cases[c].size;
          ints[k++] = rank;
          ints[k++] = nd;
          for (int i = 0; i < nd; ++i) ints[k + i] = cases[c].g[i];
          for (int i = 0; i < nd; ++i) ints[k + nd + i] = cases[c].dist[i];
          for (int i = 0; i < nd; ++i) ints[k + 2 * nd + i] = cases[c].darg[i];
          for (int i = 0; i < nd; ++i) ints[k + 3 * nd + i] = cases[c].p[i];
          ints[k + 4 * nd] = order;
          const MPI_Datatype types[] = {MPI_INT};
          expect_envelope(name, t, MPI_COMBINER_DARRAY, 4 * nd + 4, ints, 0, NULL, 1, types);
        }
        MPI_Type_free(&t);
      }
    }
  }
}

static void lifetimes_and_names(void) {
  MPI_Datatype v, c, d;
  /* A type freed while another is built on it lives on inside it. */
  MPI_Type_vector(3, 2, 4, MPI_INT, &v);
  MPI_Type_contiguous(2, v, &c);
  MPI_Type_free(&v);
  MPI_Type_commit(&c);
  const int two[] = {0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19};
  expect_packed("built-on-freed", c, 1, two, 12);
  int ni, na, nd, comb;
  MPI_Type_get_envelope(c, &ni, &na, &nd, &comb);
  int ints[1];
  MPI_Datatype inner = MPI_DATATYPE_NULL;
  int rc = MPI_Type_get_contents(c, 1, 0, 1, ints, NULL, &inner);
  int size = -1;
  if (rc == MPI_SUCCESS) MPI_Type_size(inner, &size);
  check(rc == MPI_SUCCESS && ints[0] == 2 && size == 24, "contents-of-freed-member",
        "rc %d count %d size %d", rc, ints[0], size);
  if (rc == MPI_SUCCESS) {
    MPI_Type_commit(&inner);
    const int one[] = {0, 1, 4, 5, 8, 9};
    expect_packed("contents-member", inner, 1, one, 6);
    check_rc(MPI_Type_free(&inner), "contents-member-free");
  }
  /* dup: same layout, committed like the original, envelope DUP */
  MPI_Type_dup(c, &d);
  expect_packed("dup", d, 1, two, 12);
  const MPI_Datatype types[] = {c};
  expect_envelope("dup", d, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, types);
  MPI_Type_free(&c);
  expect_packed("dup-of-freed", d, 1, two, 12);
  MPI_Datatype di;
  MPI_Type_dup(MPI_INT, &di);
  const MPI_Datatype int_type[] = {MPI_INT};
  expect_envelope("dup-predefined", di, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, int_type);
  expect_bounds("dup-predefined", di, 4, 0, 4, 0, 4);
  MPI_Type_free(&di);

  /* Names */
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  rc = MPI_Type_get_name(d, name, &len);
  check(rc == MPI_SUCCESS && len == (int)strlen(name), "name-default", "rc %d len %d", rc, len);
  MPI_Type_set_name(d, "my vector pair");
  rc = MPI_Type_get_name(d, name, &len);
  check(rc == MPI_SUCCESS && strcmp(name, "my vector pair") == 0 && len == 14, "name-set",
        "rc %d \"%s\" %d", rc, name, len);
  rc = MPI_Type_get_name(MPI_INT, name, &len);
  check(rc == MPI_SUCCESS && strcmp(name, "MPI_INT") == 0 && len == 7, "name-predefined",
        "rc %d \"%s\" %d", rc, name, len);
  MPI_Type_set_name(MPI_DOUBLE, "renamed double");
  MPI_Type_get_name(MPI_DOUBLE, name, &len);
  check(strcmp(name, "renamed double") == 0, "name-predefined-set", "\"%s\"", name);
  MPI_Type_set_name(MPI_DOUBLE, "MPI_DOUBLE");
  MPI_Type_free(&d);

  /* Type_match_size: the answers of Open MPI 4.1 */
  struct {
    int typeclass, size;
    MPI_Datatype want;
    const char* what;
  } matches[] = {
      {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1, "match-integer1"},
      {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER, "match-integer4"},
      {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8, "match-integer8"},
      {MPI_TYPECLASS_REAL, 4, MPI_REAL, "match-real4"},
      {MPI_TYPECLASS_REAL, 8, MPI_REAL8, "match-real8"},
      {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16, "match-complex16"},
  };
  for (size_t i = 0; i < sizeof matches / sizeof matches[0]; ++i) {
    MPI_Datatype got = MPI_DATATYPE_NULL;
    rc = MPI_Type_match_size(matches[i].typeclass, matches[i].size, &got);
    check(rc == MPI_SUCCESS && got == matches[i].want, matches[i].what, "rc %d", rc);
  }
}

/* Attributes follow a datatype through MPI_Type_dup (copy callback) and MPI_Type_free (delete
 * callback). */
static int g_deleted;
static int count_delete(MPI_Datatype type, int keyval, void* value, void* extra) {
  (void)type;
  (void)keyval;
  (void)value;
  (void)extra;
  ++g_deleted;
  return MPI_SUCCESS;
}

static void attributes(void) {
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &keyval, NULL);
  MPI_Datatype t, d;
  MPI_Type_contiguous(2, MPI_INT, &t);
  static int value = 5;
  MPI_Type_set_attr(t, keyval, &value);
  int rc = MPI_Type_dup(t, &d);
  void* got = NULL;
  int flag = 0;
  MPI_Type_get_attr(d, keyval, &got, &flag);
  check(rc == MPI_SUCCESS && flag && got == &value, "dup-copies-attributes", "rc %d flag %d", rc,
        flag);
  g_deleted = 0;
  MPI_Type_free(&t);
  MPI_Type_free(&d);
  check(g_deleted == 2, "free-deletes-attributes", "%d delete callbacks", g_deleted);
  MPI_Type_free_keyval(&keyval);
}

static void elements(void) {
  MPI_Datatype t;
  MPI_Type_contiguous(3, MPI_DOUBLE_INT, &t);
  MPI_Type_commit(&t);
  MPI_Status st;
  int n = -7, count = -7;
  MPI_Count nx = -7;
  /* 32 bytes: two whole double-int pairs and a double. */
  MPI_Status_set_elements(&st, MPI_BYTE, 32);
  MPI_Get_elements(&st, t, &n);
  MPI_Get_count(&st, t, &count);
  MPI_Get_elements_x(&st, t, &nx);
  check(n == 5 && nx == 5 && count == MPI_UNDEFINED, "elements-partial",
        "elements %d %lld count %d", n, (long long)nx, count);
  MPI_Status_set_elements(&st, MPI_BYTE, 34); /* ends inside an int */
  MPI_Get_elements(&st, t, &n);
  check(n == MPI_UNDEFINED, "elements-inside", "elements %d", n);
  MPI_Status_set_elements(&st, MPI_BYTE, 72);
  MPI_Get_elements(&st, t, &n);
  MPI_Get_count(&st, t, &count);
  check(n == 12 && count == 2, "elements-whole", "elements %d count %d", n, count);
  /* Status_set_elements counts basic elements: 7 is two pairs of the first type, plus... */
  MPI_Status_set_elements(&st, t, 7);
  MPI_Get_count(&st, MPI_BYTE, &count);
  MPI_Get_elements(&st, t, &n);
  check(count == 44 && n == 7, "set_elements", "bytes %d elements %d", count, n);
  MPI_Status_set_elements_x(&st, t, 6);
  MPI_Get_count(&st, t, &count);
  check(count == 1, "set_elements_x", "count %d", count);
  MPI_Type_free(&t);
  /* A type with no data: 0 whatever the bytes. */
  MPI_Type_contiguous(0, MPI_INT, &t);
  MPI_Type_commit(&t);
  MPI_Status_set_elements(&st, MPI_BYTE, 0);
  MPI_Get_elements(&st, t, &n);
  MPI_Get_count(&st, t, &count);
  check(n == 0 && count == 0, "elements-empty-type", "elements %d count %d", n, count);
  expect_bounds("empty", t, 0, 0, 0, 0, 0);
  MPI_Type_free(&t);
}

static void packing(void) {
  /* Several items into one buffer, positions adding up, and back. */
  MPI_Datatype v;
  MPI_Type_vector(2, 1, 3, MPI_SHORT, &v);
  MPI_Type_commit(&v);
  short s[8] = {10, 11, 12, 13, 14, 15, 16, 17};
  double d = 2.5;
  int k = 42;
  unsigned char buf[64];
  int position = 0, size_v = 0, size_d = 0, size_k = 0;
  MPI_Pack_size(2, v, MPI_COMM_WORLD, &size_v);
  MPI_Pack_size(1, MPI_DOUBLE, MPI_COMM_WORLD, &size_d);
  MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &size_k);
  int rc = MPI_Pack(&k, 1, MPI_INT, buf, sizeof buf, &position, MPI_COMM_WORLD);
  rc |= MPI_Pack(s, 2, v, buf, sizeof buf, &position, MPI_COMM_WORLD);
  rc |= MPI_Pack(&d, 1, MPI_DOUBLE, buf, sizeof buf, &position, MPI_COMM_WORLD);
  short want_s[4] = {10, 13, 14, 17};
  check(rc == MPI_SUCCESS && position == 4 + 8 + 8 && size_v == 8 && size_d == 8 && size_k == 4 &&
            memcmp(buf + 4, want_s, 8) == 0,
        "pack-sequence", "rc %d position %d sizes %d %d %d", rc, position, size_v, size_d, size_k);
  int total = position, k2 = 0;
  short s2[8] = {0};
  double d2 = 0;
  position = 0;
  rc = MPI_Unpack(buf, total, &position, &k2, 1, MPI_INT, MPI_COMM_WORLD);
  rc |= MPI_Unpack(buf, total, &position, s2, 2, v, MPI_COMM_WORLD);
  rc |= MPI_Unpack(buf, total, &position, &d2, 1, MPI_DOUBLE, MPI_COMM_WORLD);
  check(rc == MPI_SUCCESS && position == total && k2 == 42 && d2 == 2.5 && s2[0] == 10 &&
            s2[3] == 13 && s2[4] == 14 && s2[7] == 17 && s2[1] == 0,
        "unpack-sequence", "rc %d position %d", rc, position);
  MPI_Type_free(&v);

  /* A million doubles, every other one. */
  const int n = 1 << 20;
  double* src = malloc((size_t)n * 2 * sizeof(double));
  double* packed = malloc((size_t)n * sizeof(double));
  double* back = calloc((size_t)n * 2, sizeof(double));
  for (int i = 0; i < 2 * n; ++i) src[i] = i;
  MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &v);
  MPI_Type_commit(&v);
  position = 0;
  rc = MPI_Pack(src, 1, v, packed, n * 8, &position, MPI_COMM_WORLD);
  int ok = rc == MPI_SUCCESS && position == n * 8;
  for (int i = 0; ok && i < n; ++i) ok = packed[i] == 2.0 * i;
  position = 0;
  rc = MPI_Unpack(packed, n * 8, &position, back, 1, v, MPI_COMM_WORLD);
  for (int i = 0; ok && i < 2 * n; ++i) ok = back[i] == (i % 2 == 0 ? (double)i : 0.0);
  check(ok && rc == MPI_SUCCESS, "vector-million", "rc %d position %d", rc, position);
  MPI_Type_free(&v);
  free(src);
  free(packed);
  free(back);
}

static int bytes_are(const unsigned char* got, const unsigned char* want, int n) {
  return memcmp(got, want, (size_t)n) == 0;
}

static void external32(void) {
  unsigned char buf[128];
  MPI_Aint position = 0, size = 0;
  /* int, short, double: big-endian IEEE and two's complement */
  int i = 0x01020304;
  short h = -2;
  double d = 1.0;
  int rc = MPI_Pack_external("external32", &i, 1, MPI_INT, buf, sizeof buf, &position);
  rc |= MPI_Pack_external("external32", &h, 1, MPI_SHORT, buf, sizeof buf, &position);
  rc |= MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof buf, &position);
  const unsigned char want[] = {1, 2, 3, 4, 0xff, 0xfe, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
  check(rc == MPI_SUCCESS && position == 14 && bytes_are(buf, want, 14), "external32-basic",
        "rc %d position %ld", rc, (long)position);
  int i2 = 0;
  short h2 = 0;
  double d2 = 0;
  MPI_Aint in = 0;
  rc = MPI_Unpack_external("external32", buf, position, &in, &i2, 1, MPI_INT);
  rc |= MPI_Unpack_external("external32", buf, position, &in, &h2, 1, MPI_SHORT);
  rc |= MPI_Unpack_external("external32", buf, position, &in, &d2, 1, MPI_DOUBLE);
  check(rc == MPI_SUCCESS && in == 14 && i2 == i && h2 == h && d2 == d, "external32-back",
        "rc %d position %ld", rc, (long)in);

  /* A struct: no padding, each element big-endian. */
  struct {
    char c;
    int i;
    float f[2];
  } s = {'q', -1, {1.0f, -2.0f}}, s2;
  int bl[] = {1, 1, 2};
  MPI_Aint di[] = {0, 4, 8};
  MPI_Datatype ty[] = {MPI_CHAR, MPI_INT, MPI_FLOAT}, t;
  MPI_Type_create_struct(3, bl, di, ty, &t);
  MPI_Type_commit(&t);
  MPI_Pack_external_size("external32", 2, t, &size);
  check(size == 26, "external32-size-struct", "size %ld", (long)size);
  position = 0;
  rc = MPI_Pack_external("external32", &s, 1, t, buf, sizeof buf, &position);
  const unsigned char want_s[] = {'q', 0xff, 0xff, 0xff, 0xff, 0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0};
  check(rc == MPI_SUCCESS && position == 13 && bytes_are(buf, want_s, 13), "external32-struct",
        "rc %d position %ld", rc, (long)position);
  memset(&s2, 0, sizeof s2);
  in = 0;
  rc = MPI_Unpack_external("external32", buf, position, &in, &s2, 1, t);
  check(rc == MPI_SUCCESS && s2.c == 'q' && s2.i == -1 && s2.f[1] == -2.0f,
        "external32-struct-back", "rc %d", rc);
  MPI_Type_free(&t);

  /* MPI's sizes for long, wchar_t and long double, which Open MPI 4.1 does not follow. */
  if (torusmpi_only("external32-long", "Open MPI 4.1 sizes long as 8 bytes in external32")) {
    long l[2] = {0x0102030405060708L, -3};
    MPI_Pack_external_size("external32", 2, MPI_LONG, &size);
    position = 0;
    rc = MPI_Pack_external("external32", l, 2, MPI_LONG, buf, sizeof buf, &position);
    const unsigned char want_l[] = {5, 6, 7, 8, 0xff, 0xff, 0xff, 0xfd};
    long l2[2] = {0, 0};
    in = 0;
    rc |= MPI_Unpack_external("external32", buf, position, &in, l2, 2, MPI_LONG);
    check(rc == MPI_SUCCESS && size == 8 && position == 8 && bytes_are(buf, want_l, 8) &&
              l2[0] == 0x05060708L && l2[1] == -3,
          "external32-long", "rc %d size %ld position %ld", rc, (long)size, (long)position);
    MPI_Pack_external_size("external32", 1, MPI_WCHAR, &size);
    MPI_Aint pair = 0;
    MPI_Pack_external_size("external32", 1, MPI_LONG_INT, &pair);
    check(size == 2 && pair == 8, "external32-wchar-long_int", "sizes %ld %ld", (long)size,
          (long)pair);
  }
  if (torusmpi_only("external32-long-double", "Open MPI 4.1 writes x87 bytes, not binary128")) {
    long double x = 1.5L, x2 = 0;
    position = 0;
    rc = MPI_Pack_external("external32", &x, 1, MPI_LONG_DOUBLE, buf, sizeof buf, &position);
    const unsigned char want_x[16] = {0x3f, 0xff, 0x80};
    in = 0;
    rc |= MPI_Unpack_external("external32", buf, position, &in, &x2, 1, MPI_LONG_DOUBLE);
    check(rc == MPI_SUCCESS && position == 16 && bytes_are(buf, want_x, 16) && x2 == 1.5L,
          "external32-long-double", "rc %d position %ld", rc, (long)position);
  }
}

static void bad_arguments(void) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  int bl[] = {1, -1}, di[] = {0, 4};
  MPI_Aint ad[] = {0, 8};
  MPI_Datatype ty[] = {MPI_INT, MPI_DATATYPE_NULL};
  expect_error(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT, -1, "err-contiguous-count",
               "MPI_Type_contiguous");
  expect_error(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE, -1,
               "err-contiguous-null-type", "MPI_Type_contiguous");
  expect_error(MPI_Type_contiguous(2, MPI_INT, NULL), MPI_ERR_ARG, MPI_ERR_TYPE,
               "err-contiguous-null-newtype", "MPI_Type_contiguous");
  expect_error(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG, -1, "err-vector-blocklength",
               "MPI_Type_vector");
  expect_error(MPI_Type_vector(-2, 1, 1, MPI_INT, &t), MPI_ERR_COUNT, -1, "err-vector-count",
               "MPI_Type_vector");
  expect_error(MPI_Type_indexed(2, bl, di, MPI_INT, &t), MPI_ERR_ARG, -1, "err-indexed-blocklength",
               "MPI_Type_indexed");
  expect_error(MPI_Type_indexed(2, NULL, di, MPI_INT, &t), MPI_ERR_ARG, -1,
               "err-indexed-null-array", "MPI_Type_indexed");
  int good[] = {1, 1};
  expect_error(MPI_Type_create_struct(2, good, ad, ty, &t), MPI_ERR_TYPE, -1,
               "err-struct-null-member", "MPI_Type_create_struct");
  const int sizes[] = {4}, big[] = {5}, sub[] = {2}, late[] = {3}, zero[] = {0};
  expect_error(MPI_Type_create_subarray(1, sizes, big, zero, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
               -1, "err-subarray-subsize", "MPI_Type_create_subarray");
  expect_error(MPI_Type_create_subarray(1, sizes, sub, late, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
               -1, "err-subarray-start", "MPI_Type_create_subarray");
  expect_error(MPI_Type_create_subarray(1, sizes, sub, zero, 7, MPI_INT, &t), MPI_ERR_ARG, -1,
               "err-subarray-order", "MPI_Type_create_subarray");
  if (torusmpi_only("err-subarray-ndims", "Open MPI 4.1 accepts ndims = 0")) {
    expect_error(MPI_Type_create_subarray(0, sizes, sub, zero, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG, -1, "err-subarray-ndims", "MPI_Type_create_subarray");
  }
  int g[] = {10}, block[] = {MPI_DISTRIBUTE_BLOCK}, none[] = {MPI_DISTRIBUTE_NONE}, two[] = {2},
      dflt[] = {MPI_DISTRIBUTE_DFLT_DARG}, three[] = {3};
  expect_error(MPI_Type_create_darray(2, 0, 1, g, block, two, two, MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG, -1, "err-darray-block-too-small", "MPI_Type_create_darray");
  expect_error(MPI_Type_create_darray(2, 0, 1, g, block, dflt, three, MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG, -1, "err-darray-psizes", "MPI_Type_create_darray");
  expect_error(MPI_Type_create_darray(2, 2, 1, g, block, dflt, two, MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG, -1, "err-darray-rank", "MPI_Type_create_darray");
  if (torusmpi_only("err-darray-none", "Open MPI 4.1 accepts MPI_DISTRIBUTE_NONE over 2")) {
    expect_error(MPI_Type_create_darray(2, 0, 1, g, none, dflt, two, MPI_ORDER_C, MPI_INT, &t),
                 MPI_ERR_ARG, -1, "err-darray-none", "MPI_Type_create_darray");
  }
  MPI_Datatype predefined = MPI_INT, null = MPI_DATATYPE_NULL;
  expect_error(MPI_Type_free(&predefined), MPI_ERR_TYPE, -1, "err-free-predefined",
               "MPI_Type_free");
  expect_error(MPI_Type_free(&null), MPI_ERR_TYPE, -1, "err-free-null", "MPI_Type_free");
  expect_error(MPI_Type_commit(&null), MPI_ERR_TYPE, -1, "err-commit-null", "MPI_Type_commit");
  int size;
  expect_error(MPI_Type_size(MPI_DATATYPE_NULL, &size), MPI_ERR_TYPE, -1, "err-size-null",
               "MPI_Type_size");
  int ints[4];
  MPI_Aint aints[4];
  MPI_Datatype types[4];
  expect_error(MPI_Type_get_contents(MPI_INT, 4, 4, 4, ints, aints, types), MPI_ERR_ARG,
               MPI_ERR_INTERN, "err-contents-named", "MPI_Type_get_contents");
  MPI_Type_vector(2, 1, 2, MPI_INT, &t);
  expect_error(MPI_Type_get_contents(t, 2, 0, 1, ints, aints, types), MPI_ERR_ARG, MPI_ERR_INTERN,
               "err-contents-short", "MPI_Type_get_contents");
  /* Packing */
  int src[4] = {1, 2, 3, 4}, position = 0;
  unsigned char buf[16];
  expect_error(MPI_Pack(src, 1, t, buf, sizeof buf, &position, MPI_COMM_WORLD), MPI_ERR_TYPE, -1,
               "err-pack-uncommitted", "MPI_Pack");
  MPI_Type_commit(&t);
  expect_error(MPI_Pack(src, -1, t, buf, sizeof buf, &position, MPI_COMM_WORLD), MPI_ERR_COUNT, -1,
               "err-pack-count", "MPI_Pack");
  position = 10;
  expect_error(MPI_Pack(src, 1, t, buf, sizeof buf, &position, MPI_COMM_WORLD), MPI_ERR_TRUNCATE,
               -1, "err-pack-overflow", "MPI_Pack");
  check(position == 10, "err-pack-overflow-position", "position %d", position);
  position = 0;
  MPI_Pack(src, 1, t, buf, sizeof buf, &position, MPI_COMM_WORLD);
  int out[4] = {0}, in = 4;
  expect_error(MPI_Unpack(buf, 8, &in, out, 1, t, MPI_COMM_WORLD), MPI_ERR_TRUNCATE, -1,
               "err-unpack-overrun", "MPI_Unpack");
  in = 0;
  expect_error(MPI_Unpack(buf, 8, &in, out, 2, t, MPI_COMM_WORLD), MPI_ERR_TRUNCATE, -1,
               "err-unpack-overrun-count", "MPI_Unpack");
  MPI_Aint apos = 0;
  if (torusmpi_only("err-datarep", "Open MPI 4.1 accepts any datarep")) {
    expect_error(MPI_Pack_external("native", src, 1, MPI_INT, buf, sizeof buf, &apos), MPI_ERR_ARG,
                 -1, "err-datarep", "MPI_Pack_external");
  }
  apos = 14;
  expect_error(MPI_Pack_external("external32", src, 1, t, buf, sizeof buf, &apos), MPI_ERR_TRUNCATE,
               -1, "err-pack-external-overflow", "MPI_Pack_external");
  MPI_Type_free(&t);
  MPI_Status st;
  expect_error(MPI_Status_set_elements(&st, MPI_INT, -1), MPI_ERR_COUNT, -1,
               "err-set-elements-count", "MPI_Status_set_elements");
  MPI_Datatype m;
  expect_error(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &m), MPI_ERR_ARG, -1, "err-match-size",
               "MPI_Type_match_size");
}

/* Rank 0 packs a struct array and a strided column and sends the bytes as MPI_PACKED; rank 1
 * unpacks them into its own layout. Then the same in external32. */
static void exchange(void) {
  struct item {
    int id;
    double value;
  };
  int bl[] = {1, 1};
  MPI_Aint di[] = {0, 8};
  MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE}, item_type, column;
  MPI_Type_create_struct(2, bl, di, ty, &item_type);
  MPI_Type_commit(&item_type);
  MPI_Type_vector(4, 1, 5, MPI_INT, &column); /* column 2 of a 4x5 matrix */
  MPI_Type_commit(&column);
  unsigned char buf[256];
  int position = 0;
  if (g_rank == 0) {
    struct item items[3] = {{1, 0.5}, {2, 1.5}, {3, 2.5}};
    int matrix[20];
    for (int i = 0; i < 20; ++i) matrix[i] = 100 + i;
    MPI_Pack(items, 3, item_type, buf, sizeof buf, &position, MPI_COMM_WORLD);
    MPI_Pack(matrix + 2, 1, column, buf, sizeof buf, &position, MPI_COMM_WORLD);
    MPI_Send(buf, position, MPI_PACKED, 1, 7, MPI_COMM_WORLD);
    MPI_Aint apos = 0;
    MPI_Pack_external("external32", items, 3, item_type, buf, sizeof buf, &apos);
    MPI_Send(buf, (int)apos, MPI_BYTE, 1, 8, MPI_COMM_WORLD);
  } else if (g_rank == 1) {
    MPI_Status st;
    MPI_Recv(buf, sizeof buf, MPI_PACKED, 0, 7, MPI_COMM_WORLD, &st);
    int bytes = 0;
    MPI_Get_count(&st, MPI_PACKED, &bytes);
    struct item items[3];
    memset(items, 0, sizeof items);
    int col[4] = {0};
    MPI_Unpack(buf, bytes, &position, items, 3, item_type, MPI_COMM_WORLD);
    MPI_Unpack(buf, bytes, &position, col, 4, MPI_INT, MPI_COMM_WORLD);
    check(bytes == 3 * 12 + 16 && position == bytes && items[2].id == 3 && items[2].value == 2.5 &&
              col[0] == 102 && col[3] == 117,
          "exchange-packed", "bytes %d position %d", bytes, position);
    MPI_Recv(buf, sizeof buf, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    memset(items, 0, sizeof items);
    MPI_Aint apos = 0;
    MPI_Unpack_external("external32", buf, bytes, &apos, items, 3, item_type);
    /* big-endian on the wire: the first id is 00 00 00 01 */
    check(bytes == 36 && buf[3] == 1 && buf[0] == 0 && items[1].id == 2 && items[1].value == 1.5,
          "exchange-external32", "bytes %d", bytes);
  }
  MPI_Type_free(&item_type);
  MPI_Type_free(&column);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(version, &len);
  g_torusmpi = strncmp(version, "torusmpi", 8) == 0;
  for (int k = -4096; k < 4096; ++k) g_ints[k] = k;

  constructors();
  structs();
  subarrays();
  darrays();
  lifetimes_and_names();
  attributes();
  elements();
  packing();
  external32();
  bad_arguments();
  if (g_size >= 2) {
    exchange();
  } else {
    printf("skip %d exchange: needs 2 ranks\n", g_rank);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int status = check_done(g_size);
  MPI_Finalize();
  return status;
}
