/* attr_info: attributes and keyvals, info objects, error classes and codes, error handlers.
 *
 *   attr_info       any number of ranks, 1 included (and a singleton)
 *
 * Every rank runs the same calls (MPI_Comm_dup and MPI_Comm_free are collective). Checked, one
 * "ok/FAIL <rank> <check>" line per case, then "done <rank> of <size> ...":
 * - the predefined attributes of communicators (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL,
 *   MPI_UNIVERSE_SIZE, MPI_APPNUM, MPI_LASTUSEDCODE), read-only, on MPI_COMM_WORLD and a dup;
 * - user keyvals on communicators: set, get, replace (the delete callback sees the old value),
 *   delete; copy callbacks on MPI_Comm_dup (user, MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN; flag 0
 *   leaves the attribute out; extra_state passed), delete callbacks on MPI_Comm_free; a freed
 *   keyval lives on while attributes use it; a failing copy callback fails MPI_Comm_dup with its
 *   error (the attributes already copied are deleted again); a failing delete callback fails
 *   MPI_Comm_delete_attr, MPI_Comm_set_attr and MPI_Comm_free and keeps the value;
 * - the MPI-1 forms MPI_Keyval_create, MPI_Keyval_free, MPI_Attr_put, MPI_Attr_get,
 *   MPI_Attr_delete; the predefined callback functions, called directly;
 * - datatype keyvals and attributes (copied by MPI_Type_dup, deleted by MPI_Type_free); window
 *   keyvals on MPI_WIN_NULL (MPI_ERR_WIN; tests/progs/rma.c checks them on live windows);
 * - MPI_Add_error_class, MPI_Add_error_code, MPI_Add_error_string with MPI_Error_class,
 *   MPI_Error_string and MPI_LASTUSEDCODE;
 * - error handlers: communicator handlers (and the MPI-1 MPI_Errhandler_create/set/get), window
 *   and file handlers (only attachable to their kind; MPI_FILE_NULL's handler gets file errors);
 * - info objects: every call, MPI_MAX_INFO_KEY / MPI_MAX_INFO_VAL limits, MPI_INFO_ENV;
 * - at MPI_Finalize, MPI_COMM_SELF's attributes are deleted first, while MPI still works, then
 *   MPI_COMM_WORLD's.
 * Every bad argument under MPI_ERRORS_RETURN with its class; on torusmpi the message names the
 * call. Where Open MPI 4.1 answers with another class (mostly MPI_ERR_OTHER for bad keyvals) it is
 * accepted on the reference only; cases Open MPI 4.1 gets wrong or crashes on run on torusmpi only,
 * with a "skip" line elsewhere. */
/* The MPI-1 error handler functions are removed from MPI-3, but Open MPI's library has them. */
#define OMPI_OMIT_MPI1_COMPAT_DECLS 0
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static int g_size;
static int g_torusmpi;

static int error_class(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

/* The call returned class `cls`, or on a reference library `ref_cls` (-1: none), which Open MPI
 * 4.1 gives instead; on torusmpi the message also names `fn`. */
static void expect_ref(int rc, int cls, int ref_cls, const char* what, const char* fn) {
  int got = error_class(rc);
  int ok = got == cls || (!g_torusmpi && ref_cls >= 0 && got == ref_cls);
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
  if (ok && g_torusmpi && fn != NULL && strstr(text, fn) == NULL) {
    check(0, what, "class right, but the message does not name %s: \"%s\"", fn, text);
    return;
  }
  check(ok, what, "returned %d, class %d (%s), expected class %d", rc, got, text, cls);
}

static void expect(int rc, int cls, const char* what, const char* fn) {
  expect_ref(rc, cls, -1, what, fn);
}

/* Cases the reference library gets wrong or crashes on: torusmpi only, "skip" elsewhere. */
static int torusmpi_only(const char* what, const char* why) {
  if (g_torusmpi) return 1;
  printf("skip %d %s: %s\n", g_rank, what, why);
  return 0;
}

/* --- Callbacks that record what they saw. */

static int g_extra; /* its address is the extra_state */

typedef struct {
  int calls;
  int keyval;
  long value;
  void* extra;
  long values[16]; /* in call order */
} Seen;

static Seen g_copy, g_del;
static int g_del_fail; /* while set, deleting the value 99 fails */

static void seen(Seen* s, int keyval, long value, void* extra) {
  if (s->calls < 16) s->values[s->calls] = value;
  s->calls++;
  s->keyval = keyval;
  s->value = value;
  s->extra = extra;
}

static void reset(void) {
  memset(&g_copy, 0, sizeof g_copy);
  memset(&g_del, 0, sizeof g_del);
}

/* Copies value v as v + 1000. */
static int copy_cb(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)comm;
  seen(&g_copy, keyval, (long)in, extra);
  *(void**)out = (void*)((long)in + 1000);
  *flag = 1;
  return MPI_SUCCESS;
}

static int delete_cb(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm;
  seen(&g_del, keyval, (long)value, extra);
  return (long)value == 99 && g_del_fail ? MPI_ERR_ACCESS : MPI_SUCCESS;
}

static int failing_copy(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)comm, (void)keyval, (void)extra, (void)in, (void)out;
  *flag = 0;
  return MPI_ERR_ACCESS;
}

static int type_copy_cb(MPI_Datatype type, int keyval, void* extra, void* in, void* out,
                        int* flag) {
  (void)type;
  seen(&g_copy, keyval, (long)in, extra);
  *(void**)out = (void*)((long)in + 1000);
  *flag = 1;
  return MPI_SUCCESS;
}

static int type_delete_cb(MPI_Datatype type, int keyval, void* value, void* extra) {
  (void)type;
  seen(&g_del, keyval, (long)value, extra);
  return MPI_SUCCESS;
}

/* Reads a pointer-sized attribute: flag and value. */
static int get(MPI_Comm comm, int keyval, long* value) {
  void* v = NULL;
  int flag = -1;
  int rc = MPI_Comm_get_attr(comm, keyval, &v, &flag);
  *value = (long)v;
  return rc != MPI_SUCCESS ? -1 : flag;
}

/* --- Predefined attributes. */

static void test_predefined(void) {
  int* v = NULL;
  int flag = 0, rc;
  rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
  check(rc == 0 && flag && *v >= 32767, "tag_ub", "rc %d flag %d", rc, flag);
  int tag_ub = flag ? *v : -1;
  rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag);
  check(rc == 0 && flag && (*v == MPI_PROC_NULL || (*v >= 0 && *v < g_size)), "host",
        "rc %d flag %d", rc, flag);
  rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag);
  check(
      rc == 0 && flag && (*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || (*v >= 0 && *v < g_size)),
      "io", "rc %d flag %d", rc, flag);
  rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag);
  check(rc == 0 && flag && (*v == 0 || *v == 1), "wtime_is_global", "rc %d flag %d", rc, flag);
  rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag);
  /* May be below the size: Open MPI counts slots, which --oversubscribe exceeds. */
  check(rc == 0 && (!flag || *v >= 1), "universe_size", "rc %d flag %d value %d", rc, flag,
        flag ? *v : -1);
  rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag);
  check(rc == 0 && (!flag || *v >= 0), "appnum", "rc %d flag %d", rc, flag);
  rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag);
  check(rc == 0 && flag && *v >= MPI_ERR_LASTCODE, "lastusedcode", "rc %d flag %d value %d", rc,
        flag, flag ? *v : -1);
  rc = MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
  check(rc == 0 && flag && *v == tag_ub, "attr_get-tag_ub", "rc %d flag %d", rc, flag);

  /* Read-only. Open MPI 4.1: MPI_ERR_OTHER. */
  int value = 1, key = MPI_TAG_UB;
  expect_ref(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value), MPI_ERR_KEYVAL, MPI_ERR_OTHER,
             "set_attr-predefined", "MPI_Comm_set_attr");
  expect_ref(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL, MPI_ERR_OTHER,
             "delete_attr-predefined", "MPI_Comm_delete_attr");
  expect_ref(MPI_Comm_free_keyval(&key), MPI_ERR_KEYVAL, MPI_ERR_OTHER, "free_keyval-predefined",
             "MPI_Comm_free_keyval");
  expect_ref(MPI_Attr_put(MPI_COMM_WORLD, MPI_TAG_UB, &value), MPI_ERR_KEYVAL, MPI_ERR_OTHER,
             "attr_put-predefined", "MPI_Attr_put");
  rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
  check(rc == 0 && flag && *v == tag_ub, "tag_ub-unchanged", "rc %d flag %d", rc, flag);
  if (torusmpi_only("get_attr-window-keyval", "Open MPI 4.1 answers flag 0"))
    expect(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WIN_BASE, &v, &flag), MPI_ERR_KEYVAL,
           "get_attr-window-keyval", "MPI_Comm_get_attr");

  MPI_Comm d = MPI_COMM_NULL;
  rc = MPI_Comm_dup(MPI_COMM_WORLD, &d);
  check_rc(rc, "dup-for-predefined");
  if (rc != MPI_SUCCESS) return;
  rc = MPI_Comm_get_attr(d, MPI_TAG_UB, &v, &flag);
  check(rc == 0 && flag && *v == tag_ub, "tag_ub-on-dup", "rc %d flag %d", rc, flag);
  MPI_Comm_free(&d);
}

/* --- Communicator attributes and their callbacks. */

static void test_comm_attrs(void) {
  int ka = MPI_KEYVAL_INVALID, kn = MPI_KEYVAL_INVALID, kd = MPI_KEYVAL_INVALID, rc;
  long v;
  check_rc(MPI_Comm_create_keyval(copy_cb, delete_cb, &ka, &g_extra), "create_keyval-user");
  check_rc(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &kn, &g_extra),
           "create_keyval-null-copy");
  check_rc(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, delete_cb, &kd, &g_extra),
           "create_keyval-dup-fn");
  check(ka != MPI_KEYVAL_INVALID && kn != MPI_KEYVAL_INVALID && kd != MPI_KEYVAL_INVALID &&
            ka != kn && kn != kd && ka != kd,
        "keyvals-distinct", "%d %d %d", ka, kn, kd);

  MPI_Comm d = MPI_COMM_NULL;
  rc = MPI_Comm_dup(MPI_COMM_WORLD, &d);
  check_rc(rc, "dup-world");
  if (rc != MPI_SUCCESS) return;
  check(get(d, ka, &v) == 0, "get-before-set", "flag not 0");
  check_rc(MPI_Comm_set_attr(d, ka, (void*)1L), "set-a");
  check_rc(MPI_Comm_set_attr(d, kn, (void*)2L), "set-n");
  check_rc(MPI_Comm_set_attr(d, kd, (void*)3L), "set-d");
  check(get(d, ka, &v) == 1 && v == 1, "get-a", "value %ld", v);
  check(get(d, kn, &v) == 1 && v == 2, "get-n", "value %ld", v);
  check(get(d, kd, &v) == 1 && v == 3, "get-d", "value %ld", v);
  check(get(MPI_COMM_WORLD, ka, &v) == 0, "get-a-on-world", "set on the dup only, but found");

  /* Replacing runs the delete callback on the old value. */
  reset();
  check_rc(MPI_Comm_set_attr(d, ka, (void*)11L), "replace-a");
  check(g_del.calls == 1 && g_del.value == 1 && g_del.keyval == ka && g_del.extra == &g_extra,
        "replace-deletes-old", "calls %d value %ld keyval %d extra ok %d", g_del.calls, g_del.value,
        g_del.keyval, g_del.extra == &g_extra);
  check(get(d, ka, &v) == 1 && v == 11, "get-replaced", "value %ld", v);

  /* Duplication: the user callback copies, MPI_COMM_NULL_COPY_FN does not, MPI_COMM_DUP_FN gives
   * the same value. */
  reset();
  MPI_Comm d2 = MPI_COMM_NULL;
  check_rc(MPI_Comm_dup(d, &d2), "dup-with-attrs");
  check(g_copy.calls == 1 && g_copy.value == 11 && g_copy.keyval == ka && g_copy.extra == &g_extra,
        "copy-callback", "calls %d value %ld keyval %d", g_copy.calls, g_copy.value, g_copy.keyval);
  check(g_del.calls == 0, "dup-deletes-nothing", "%d delete calls", g_del.calls);
  check(get(d2, ka, &v) == 1 && v == 1011, "dup-copied-a", "value %ld", v);
  check(get(d2, kn, &v) == 0, "dup-null-copy-left-out", "flag not 0 (value %ld)", v);
  check(get(d2, kd, &v) == 1 && v == 3, "dup-dup-fn", "value %ld", v);
  check(get(d, ka, &v) == 1 && v == 11, "dup-keeps-old", "value %ld", v);

  reset();
  check_rc(MPI_Comm_delete_attr(d2, ka), "delete_attr");
  check(g_del.calls == 1 && g_del.value == 1011, "delete_attr-callback", "calls %d value %ld",
        g_del.calls, g_del.value);
  check(get(d2, ka, &v) == 0, "delete_attr-gone", "still there: %ld", v);
  if (torusmpi_only("delete_attr-unset", "Open MPI 4.1 returns MPI_ERR_OTHER")) {
    reset();
    check(MPI_Comm_delete_attr(d2, ka) == MPI_SUCCESS && g_del.calls == 0, "delete_attr-unset",
          "failed, or ran a callback (%d)", g_del.calls);
  }
  reset();
  check(MPI_Comm_free(&d2) == MPI_SUCCESS && d2 == MPI_COMM_NULL, "free-dup", "failed");
  check(g_del.calls == 1 && g_del.value == 3 && g_del.keyval == kd, "free-deletes", "calls %d",
        g_del.calls);

  /* A freed keyval lives on while attributes use it: its callbacks still run. */
  int ka_was = ka;
  check(MPI_Comm_free_keyval(&ka) == MPI_SUCCESS && ka == MPI_KEYVAL_INVALID, "free_keyval-in-use",
        "failed or keyval not MPI_KEYVAL_INVALID (%d)", ka);
  reset();
  MPI_Comm d3 = MPI_COMM_NULL;
  check_rc(MPI_Comm_dup(d, &d3), "dup-after-keyval-free");
  check(g_copy.calls == 1 && g_copy.keyval == ka_was && g_copy.value == 11, "freed-keyval-copies",
        "calls %d", g_copy.calls);
  reset();
  check_rc(MPI_Comm_free(&d3), "free-d3");
  check(g_del.calls == 2, "free-d3-deletes", "calls %d", g_del.calls);

  reset();
  check(MPI_Comm_free(&d) == MPI_SUCCESS && d == MPI_COMM_NULL, "free-d", "failed");
  check(g_del.calls == 3, "free-d-deletes-all", "calls %d", g_del.calls);
  if (torusmpi_only("free-d-order", "MPI leaves the order open; Open MPI 4.1 follows its hash")) {
    check(g_del.calls == 3 && g_del.values[0] == 3 && g_del.values[1] == 2 && g_del.values[2] == 11,
          "free-d-order", "last set deleted first expected: %ld %ld %ld", g_del.values[0],
          g_del.values[1], g_del.values[2]);
  }
  check_rc(MPI_Comm_free_keyval(&kn), "free_keyval-n");
  check_rc(MPI_Comm_free_keyval(&kd), "free_keyval-d");
}

/* --- Callbacks that fail. */

static void test_failing_callbacks(void) {
  int kf, kg, kx, rc;
  long v;
  check_rc(MPI_Comm_create_keyval(failing_copy, delete_cb, &kf, NULL), "create_keyval-failing");
  check_rc(MPI_Comm_create_keyval(copy_cb, delete_cb, &kg, NULL), "create_keyval-g");
  check_rc(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &kx, NULL), "create_keyval-x");
  MPI_Comm d = MPI_COMM_NULL, d2 = MPI_COMM_NULL;
  rc = MPI_Comm_dup(MPI_COMM_WORLD, &d);
  check_rc(rc, "dup-for-failing");
  if (rc != MPI_SUCCESS) return;

  /* kf's copy fails: the dup fails with kf's error, and a copy already made (kg's, made first on
   * torusmpi, which copies in the order attributes were set) is deleted again. */
  check_rc(MPI_Comm_set_attr(d, kg, (void*)5L), "set-g");
  check_rc(MPI_Comm_set_attr(d, kf, (void*)6L), "set-f");
  reset();
  rc = MPI_Comm_dup(d, &d2);
  expect(rc, MPI_ERR_ACCESS, "dup-copy-fails", "MPI_Comm_dup");
  check(d2 == MPI_COMM_NULL, "dup-copy-fails-null", "newcomm is not MPI_COMM_NULL");
  check(g_del.calls == g_copy.calls && (g_del.calls == 0 || g_del.value == 1005) &&
            (!g_torusmpi || g_copy.calls == 1),
        "dup-copy-fails-cleans", "%d copies, %d deletes (value %ld)", g_copy.calls, g_del.calls,
        g_del.value);
  if (rc == MPI_SUCCESS && d2 != MPI_COMM_NULL) MPI_Comm_free(&d2);
  check_rc(MPI_Comm_delete_attr(d, kf), "delete-f");

  /* A failing delete callback keeps the value. Open MPI 4.1: MPI_ERR_OTHER. */
  g_del_fail = 1;
  check_rc(MPI_Comm_set_attr(d, kx, (void*)99L), "set-x-99");
  expect_ref(MPI_Comm_delete_attr(d, kx), MPI_ERR_ACCESS, MPI_ERR_OTHER, "delete_attr-fails",
             "MPI_Comm_delete_attr");
  check(get(d, kx, &v) == 1 && v == 99, "delete_attr-fails-keeps", "flag/value %ld", v);
  expect_ref(MPI_Comm_set_attr(d, kx, (void*)7L), MPI_ERR_ACCESS, MPI_ERR_OTHER, "replace-fails",
             "MPI_Comm_set_attr");
  check(get(d, kx, &v) == 1 && v == 99, "replace-fails-keeps", "value %ld", v);
  g_del_fail = 0;
  check_rc(MPI_Comm_set_attr(d, kx, (void*)7L), "replace-works");
  check(get(d, kx, &v) == 1 && v == 7, "replace-works-value", "value %ld", v);

  /* MPI_Comm_free fails when a delete callback does. */
  check_rc(MPI_Comm_set_attr(d, kx, (void*)99L), "set-x-99-again");
  g_del_fail = 1;
  expect_ref(MPI_Comm_free(&d), MPI_ERR_ACCESS, MPI_ERR_OTHER, "free-fails", "MPI_Comm_free");
  g_del_fail = 0;
  check(MPI_Comm_free(&d) == MPI_SUCCESS && d == MPI_COMM_NULL, "free-after-failure", "failed");
  check_rc(MPI_Comm_free_keyval(&kf), "free_keyval-f");
  check_rc(MPI_Comm_free_keyval(&kg), "free_keyval-g");
  check_rc(MPI_Comm_free_keyval(&kx), "free_keyval-x");
}

/* --- The MPI-1 forms. */

static void test_mpi1(void) {
  int k1, k2, k3, flag, rc;
  void* v;
  check_rc(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k1, NULL), "keyval_create-dup");
  check_rc(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k2, NULL),
           "keyval_create-null");
  check_rc(MPI_Keyval_create(copy_cb, delete_cb, &k3, &g_extra), "keyval_create-user");
  check_rc(MPI_Attr_put(MPI_COMM_WORLD, k1, (void*)41L), "attr_put-1");
  check_rc(MPI_Attr_put(MPI_COMM_WORLD, k2, (void*)42L), "attr_put-2");
  check_rc(MPI_Attr_put(MPI_COMM_WORLD, k3, (void*)43L), "attr_put-3");
  rc = MPI_Attr_get(MPI_COMM_WORLD, k2, &v, &flag);
  check(rc == 0 && flag && (long)v == 42, "attr_get", "rc %d flag %d value %ld", rc, flag, (long)v);
  MPI_Comm d = MPI_COMM_NULL;
  reset();
  rc = MPI_Comm_dup(MPI_COMM_WORLD, &d);
  check_rc(rc, "dup-mpi1");
  if (rc == MPI_SUCCESS) {
    long x;
    check(get(d, k1, &x) == 1 && x == 41, "mpi1-dup-fn", "value %ld", x);
    check(get(d, k2, &x) == 0, "mpi1-null-copy-fn", "copied: %ld", x);
    check(get(d, k3, &x) == 1 && x == 1043, "mpi1-user-copy", "value %ld", x);
    reset();
    check_rc(MPI_Attr_delete(d, k3), "attr_delete-dup");
    check(g_del.calls == 1 && g_del.value == 1043, "attr_delete-callback", "calls %d", g_del.calls);
    MPI_Comm_free(&d);
  }
  reset();
  check_rc(MPI_Attr_delete(MPI_COMM_WORLD, k1), "attr_delete-1");
  check_rc(MPI_Attr_delete(MPI_COMM_WORLD, k2), "attr_delete-2");
  check_rc(MPI_Attr_delete(MPI_COMM_WORLD, k3), "attr_delete-3");
  check(g_del.calls == 1 && g_del.value == 43, "attr_delete-world-callback", "calls %d",
        g_del.calls);
  rc = MPI_Attr_get(MPI_COMM_WORLD, k1, &v, &flag);
  check(rc == 0 && !flag, "attr_get-deleted", "rc %d flag %d", rc, flag);
  check(MPI_Keyval_free(&k1) == MPI_SUCCESS && k1 == MPI_KEYVAL_INVALID, "keyval_free", "failed");
  check_rc(MPI_Keyval_free(&k2), "keyval_free-2");
  check_rc(MPI_Keyval_free(&k3), "keyval_free-3");
  expect_ref(MPI_Keyval_free(&k3), MPI_ERR_KEYVAL, MPI_ERR_OTHER, "keyval_free-invalid",
             "MPI_Keyval_free");
}

/* --- The predefined callback functions, called as an application's callback would be. */

static void test_predefined_fns(void) {
  void* out = NULL;
  int flag = -1;
  int rc = MPI_COMM_DUP_FN(MPI_COMM_WORLD, 0, NULL, (void*)7L, &out, &flag);
  check(rc == 0 && out == (void*)7L && flag == 1, "comm_dup_fn", "rc %d flag %d", rc, flag);
  rc = MPI_COMM_NULL_COPY_FN(MPI_COMM_WORLD, 0, NULL, (void*)7L, &out, &flag);
  check(rc == 0 && flag == 0, "comm_null_copy_fn", "rc %d flag %d", rc, flag);
  check(MPI_COMM_NULL_DELETE_FN(MPI_COMM_WORLD, 0, (void*)7L, NULL) == 0, "comm_null_delete_fn",
        "failed");
  out = NULL;
  rc = MPI_TYPE_DUP_FN(MPI_INT, 0, NULL, (void*)8L, &out, &flag);
  check(rc == 0 && out == (void*)8L && flag == 1, "type_dup_fn", "rc %d flag %d", rc, flag);
  rc = MPI_TYPE_NULL_COPY_FN(MPI_INT, 0, NULL, (void*)8L, &out, &flag);
  check(rc == 0 && flag == 0, "type_null_copy_fn", "rc %d flag %d", rc, flag);
  check(MPI_TYPE_NULL_DELETE_FN(MPI_INT, 0, (void*)8L, NULL) == 0, "type_null_delete_fn", "failed");
  out = NULL;
  rc = MPI_WIN_DUP_FN(MPI_WIN_NULL, 0, NULL, (void*)9L, &out, &flag);
  check(rc == 0 && out == (void*)9L && flag == 1, "win_dup_fn", "rc %d flag %d", rc, flag);
  rc = MPI_WIN_NULL_COPY_FN(MPI_WIN_NULL, 0, NULL, (void*)9L, &out, &flag);
  check(rc == 0 && flag == 0, "win_null_copy_fn", "rc %d flag %d", rc, flag);
  check(MPI_WIN_NULL_DELETE_FN(MPI_WIN_NULL, 0, (void*)9L, NULL) == 0, "win_null_delete_fn",
        "failed");
  out = NULL;
  rc = MPI_DUP_FN(MPI_COMM_WORLD, 0, NULL, (void*)10L, &out, &flag);
  check(rc == 0 && out == (void*)10L && flag == 1, "dup_fn", "rc %d flag %d", rc, flag);
  rc = MPI_NULL_COPY_FN(MPI_COMM_WORLD, 0, NULL, (void*)10L, &out, &flag);
  check(rc == 0 && flag == 0, "null_copy_fn", "rc %d flag %d", rc, flag);
  check(MPI_NULL_DELETE_FN(MPI_COMM_WORLD, 0, (void*)10L, NULL) == 0, "null_delete_fn", "failed");
}

/* --- Datatype and window attributes. */

static void test_type_attrs(void) {
  int kt, kc, flag, rc;
  void* v = NULL;
  check_rc(MPI_Type_create_keyval(type_copy_cb, type_delete_cb, &kt, &g_extra),
           "type_create_keyval");
  check_rc(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kc, NULL),
           "comm-keyval-for-type");
  check_rc(MPI_Type_set_attr(MPI_INT, kt, (void*)21L), "type_set_attr");
  rc = MPI_Type_get_attr(MPI_INT, kt, &v, &flag);
  check(rc == 0 && flag && (long)v == 21, "type_get_attr", "rc %d flag %d", rc, flag);
  rc = MPI_Type_get_attr(MPI_DOUBLE, kt, &v, &flag);
  check(rc == 0 && !flag, "type_get_attr-other-type", "rc %d flag %d", rc, flag);
  reset();
  check_rc(MPI_Type_set_attr(MPI_INT, kt, (void*)22L), "type_replace");
  check(g_del.calls == 1 && g_del.value == 21 && g_del.extra == &g_extra, "type_replace-deletes",
        "calls %d value %ld", g_del.calls, g_del.value);

  reset();
  MPI_Datatype t = MPI_DATATYPE_NULL;
  rc = MPI_Type_dup(MPI_INT, &t);
  check_rc(rc, "type_dup");
  if (rc == MPI_SUCCESS) {
    check(g_copy.calls == 1 && g_copy.value == 22 && g_copy.keyval == kt, "type_dup-copies",
          "calls %d value %ld", g_copy.calls, g_copy.value);
    rc = MPI_Type_get_attr(t, kt, &v, &flag);
    check(rc == 0 && flag && (long)v == 1022, "type_dup-value", "rc %d flag %d value %ld", rc, flag,
          (long)v);
    reset();
    check_rc(MPI_Type_free(&t), "type_free");
    check(g_del.calls == 1 && g_del.value == 1022, "type_free-deletes", "calls %d value %ld",
          g_del.calls, g_del.value);
  }
  reset();
  check_rc(MPI_Type_delete_attr(MPI_INT, kt), "type_delete_attr");
  check(g_del.calls == 1 && g_del.value == 22, "type_delete_attr-callback", "calls %d",
        g_del.calls);
  rc = MPI_Type_get_attr(MPI_INT, kt, &v, &flag);
  check(rc == 0 && !flag, "type_get_attr-deleted", "rc %d flag %d", rc, flag);

  expect(MPI_Type_set_attr(MPI_DATATYPE_NULL, kt, NULL), MPI_ERR_TYPE, "type_set_attr-null-type",
         "MPI_Type_set_attr");
  expect(MPI_Type_get_attr(MPI_DATATYPE_NULL, kt, &v, &flag), MPI_ERR_TYPE,
         "type_get_attr-null-type", "MPI_Type_get_attr");
  expect(MPI_Type_delete_attr(MPI_DATATYPE_NULL, kt), MPI_ERR_TYPE, "type_delete_attr-null-type",
         "MPI_Type_delete_attr");
  expect(MPI_Type_get_attr(MPI_INT, kt, NULL, &flag), MPI_ERR_ARG, "type_get_attr-null-value",
         "MPI_Type_get_attr");
  /* A communicator's keyval on a datatype. Open MPI 4.1: MPI_ERR_OTHER, and success for get. */
  expect_ref(MPI_Type_set_attr(MPI_INT, kc, NULL), MPI_ERR_KEYVAL, MPI_ERR_OTHER,
             "type_set_attr-comm-keyval", "MPI_Type_set_attr");
  if (torusmpi_only("type_get_attr-comm-keyval", "Open MPI 4.1 answers flag 0"))
    expect(MPI_Type_get_attr(MPI_INT, kc, &v, &flag), MPI_ERR_KEYVAL, "type_get_attr-comm-keyval",
           "MPI_Type_get_attr");
  expect_ref(MPI_Type_free_keyval(&kc), MPI_ERR_KEYVAL, MPI_ERR_OTHER, "type_free_keyval-comm",
             "MPI_Type_free_keyval");
  expect_ref(MPI_Comm_set_attr(MPI_COMM_WORLD, kt, NULL), MPI_ERR_KEYVAL, MPI_ERR_OTHER,
             "comm_set_attr-type-keyval", "MPI_Comm_set_attr");
  check(MPI_Type_free_keyval(&kt) == MPI_SUCCESS && kt == MPI_KEYVAL_INVALID, "type_free_keyval",
        "failed");
  check_rc(MPI_Comm_free_keyval(&kc), "comm-keyval-for-type-free");
}

static void test_win_attrs(void) {
  int kw, kc, flag;
  void* v;
  check_rc(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kw, NULL),
           "win_create_keyval");
  check_rc(MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &kc, NULL),
           "win_create_keyval-dup");
  expect(MPI_Win_set_attr(MPI_WIN_NULL, kw, NULL), MPI_ERR_WIN, "win_set_attr-null",
         "MPI_Win_set_attr");
  expect(MPI_Win_get_attr(MPI_WIN_NULL, kw, &v, &flag), MPI_ERR_WIN, "win_get_attr-null",
         "MPI_Win_get_attr");
  expect(MPI_Win_delete_attr(MPI_WIN_NULL, kw), MPI_ERR_WIN, "win_delete_attr-null",
         "MPI_Win_delete_attr");
  expect_ref(MPI_Comm_free_keyval(&kc), MPI_ERR_KEYVAL, MPI_ERR_OTHER, "comm_free_keyval-win",
             "MPI_Comm_free_keyval");
  check(MPI_Win_free_keyval(&kw) == MPI_SUCCESS && kw == MPI_KEYVAL_INVALID, "win_free_keyval",
        "failed");
  check_rc(MPI_Win_free_keyval(&kc), "win_free_keyval-dup");
  expect(MPI_Win_free_keyval(NULL), MPI_ERR_ARG, "win_free_keyval-null", "MPI_Win_free_keyval");
}

/* --- Keyval and attribute argument errors. */

static void test_keyval_errors(void) {
  int k = MPI_KEYVAL_INVALID, flag, value = 0;
  void* v;
  expect(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, NULL, NULL),
         MPI_ERR_ARG, "create_keyval-null-out", "MPI_Comm_create_keyval");
  expect(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, NULL, NULL),
         MPI_ERR_ARG, "type_create_keyval-null-out", "MPI_Type_create_keyval");
  expect(MPI_Comm_free_keyval(NULL), MPI_ERR_ARG, "free_keyval-null", "MPI_Comm_free_keyval");
  /* Open MPI 4.1 gives MPI_ERR_OTHER for a bad keyval everywhere but in MPI_Comm_get_attr. */
  expect_ref(MPI_Comm_free_keyval(&k), MPI_ERR_KEYVAL, MPI_ERR_OTHER, "free_keyval-invalid",
             "MPI_Comm_free_keyval");
  expect(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag), MPI_ERR_KEYVAL,
         "get_attr-invalid-keyval", "MPI_Comm_get_attr");
  expect_ref(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &value), MPI_ERR_KEYVAL,
             MPI_ERR_OTHER, "set_attr-invalid-keyval", "MPI_Comm_set_attr");
  expect_ref(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID), MPI_ERR_KEYVAL,
             MPI_ERR_OTHER, "delete_attr-invalid-keyval", "MPI_Comm_delete_attr");
  expect(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL, &flag), MPI_ERR_ARG,
         "get_attr-null-value", "MPI_Comm_get_attr");
  expect(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, NULL), MPI_ERR_ARG, "get_attr-null-flag",
         "MPI_Comm_get_attr");
  expect(MPI_Comm_set_attr(MPI_COMM_NULL, MPI_TAG_UB, &value), MPI_ERR_COMM, "set_attr-comm-null",
         "MPI_Comm_set_attr");
  expect(MPI_Comm_get_attr(MPI_COMM_NULL, MPI_TAG_UB, &v, &flag), MPI_ERR_COMM,
         "get_attr-comm-null", "MPI_Comm_get_attr");
  expect(MPI_Comm_delete_attr(MPI_COMM_NULL, MPI_TAG_UB), MPI_ERR_COMM, "delete_attr-comm-null",
         "MPI_Comm_delete_attr");
  /* Open MPI 4.1 does not check the communicator of MPI_Attr_get. */
  expect_ref(MPI_Attr_get(MPI_COMM_NULL, MPI_TAG_UB, &v, &flag), MPI_ERR_COMM, MPI_SUCCESS,
             "attr_get-comm-null", "MPI_Attr_get");
  if (torusmpi_only("get_attr-freed-keyval", "Open MPI 4.1 hands the number out again")) {
    int freed;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &freed, NULL);
    int number = freed;
    MPI_Comm_free_keyval(&freed);
    expect(MPI_Comm_get_attr(MPI_COMM_WORLD, number, &v, &flag), MPI_ERR_KEYVAL,
           "get_attr-freed-keyval", "MPI_Comm_get_attr");
  }
}

/* --- Error classes, codes and strings. */

static int g_code; /* a code added here, for the error handlers' tests */

static void test_error_codes(void) {
  int cls = -1, code = -1, code2 = -1, got = -1, flag = 0, len = -1, x;
  int* last = NULL;
  char text[MPI_MAX_ERROR_STRING];
  check(MPI_Add_error_class(&cls) == MPI_SUCCESS && cls > MPI_ERR_LASTCODE, "add_error_class",
        "class %d", cls);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
  check(flag && *last >= cls, "lastusedcode-class", "%d < %d", flag ? *last : -1, cls);
  check(MPI_Add_error_code(cls, &code) == MPI_SUCCESS && code > MPI_ERR_LASTCODE && code != cls,
        "add_error_code", "code %d", code);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
  check(flag && *last >= code && *last >= cls, "lastusedcode-code", "%d < %d", flag ? *last : -1,
        code);
  check(MPI_Error_class(code, &got) == MPI_SUCCESS && got == cls, "error_class-of-code",
        "class %d, expected %d", got, cls);
  if (torusmpi_only("error_class-of-class", "Open MPI 4.1 answers MPI_ERR_UNKNOWN")) {
    check(MPI_Error_class(cls, &got) == MPI_SUCCESS && got == cls, "error_class-of-class",
          "class %d, expected %d", got, cls);
  }
  check(MPI_Add_error_code(MPI_ERR_ARG, &code2) == MPI_SUCCESS, "add_error_code-predefined",
        "failed");
  check(MPI_Error_class(code2, &got) == MPI_SUCCESS && got == MPI_ERR_ARG,
        "error_class-predefined-class", "class %d", got);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
  check(flag && *last >= code2, "lastusedcode-code2", "%d < %d", flag ? *last : -1, code2);

  check(MPI_Error_string(code, text, &len) == MPI_SUCCESS && len == 0 && text[0] == '\0',
        "error_string-unset", "\"%s\" (%d)", text, len);
  check_rc(MPI_Add_error_string(code, "attr_info test code"), "add_error_string");
  check(MPI_Error_string(code, text, &len) == MPI_SUCCESS &&
            strcmp(text, "attr_info test code") == 0 && len == (int)strlen(text),
        "error_string-code", "\"%s\" (%d)", text, len);
  check_rc(MPI_Add_error_string(cls, "attr_info test class"), "add_error_string-class");
  check(
      MPI_Error_string(cls, text, &len) == MPI_SUCCESS && strcmp(text, "attr_info test class") == 0,
      "error_string-class", "\"%s\"", text);
  check_rc(MPI_Add_error_string(code, "replaced"), "add_error_string-again");
  check(MPI_Error_string(code, text, &len) == MPI_SUCCESS && strcmp(text, "replaced") == 0,
        "error_string-replaced", "\"%s\"", text);

  expect(MPI_Add_error_class(NULL), MPI_ERR_ARG, "add_error_class-null", "MPI_Add_error_class");
  expect(MPI_Add_error_code(cls, NULL), MPI_ERR_ARG, "add_error_code-null", "MPI_Add_error_code");
  expect(MPI_Add_error_code(12345678, &x), MPI_ERR_ARG, "add_error_code-bad-class",
         "MPI_Add_error_code");
  expect(MPI_Add_error_code(code, &x), MPI_ERR_ARG, "add_error_code-of-code", "MPI_Add_error_code");
  expect(MPI_Add_error_string(MPI_ERR_ARG, "x"), MPI_ERR_ARG, "add_error_string-predefined",
         "MPI_Add_error_string");
  expect(MPI_Add_error_string(code2 + 100000, "x"), MPI_ERR_ARG, "add_error_string-unknown",
         "MPI_Add_error_string");
  if (torusmpi_only("add_error_string-null", "Open MPI 4.1 crashes")) {
    expect(MPI_Add_error_string(code, NULL), MPI_ERR_ARG, "add_error_string-null",
           "MPI_Add_error_string");
    char long_text[MPI_MAX_ERROR_STRING + 1];
    memset(long_text, 'e', MPI_MAX_ERROR_STRING);
    long_text[MPI_MAX_ERROR_STRING] = '\0';
    expect(MPI_Add_error_string(code, long_text), MPI_ERR_ARG, "add_error_string-too-long",
           "MPI_Add_error_string");
  }
  expect(MPI_Error_class(-3, &x), MPI_ERR_ARG, "error_class-negative", "MPI_Error_class");
  expect(MPI_Error_class(code2 + 100000, &x), MPI_ERR_ARG, "error_class-unknown",
         "MPI_Error_class");
  /* Under MPI_ERRORS_RETURN, raising an added code returns. */
  check(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code) == MPI_SUCCESS, "call_errhandler-code",
        "failed");
  g_code = code;
}

/* --- Error handlers. */

static int g_handler_calls, g_handler_code;
static MPI_Comm g_handler_comm;
static int g_file_calls, g_file_code, g_file_was_null;

static void comm_handler(MPI_Comm* comm, int* code, ...) {
  ++g_handler_calls;
  g_handler_comm = *comm;
  g_handler_code = *code;
}

static void win_handler(MPI_Win* win, int* code, ...) { (void)win, (void)code; }

static void file_handler(MPI_File* file, int* code, ...) {
  ++g_file_calls;
  g_file_code = *code;
  g_file_was_null = *file == MPI_FILE_NULL;
}

static void test_errhandlers(void) {
  MPI_Errhandler h = MPI_ERRHANDLER_NULL, g = MPI_ERRHANDLER_NULL;
  int flag, rc;
  void* v;
  check_rc(MPI_Comm_create_errhandler(comm_handler, &h), "create_errhandler");
  check_rc(MPI_Comm_set_errhandler(MPI_COMM_SELF, h), "set_errhandler-self");
  g_handler_calls = 0;
  rc = MPI_Comm_get_attr(MPI_COMM_SELF, MPI_KEYVAL_INVALID, &v, &flag);
  check(g_handler_calls == 1 && error_class(g_handler_code) == MPI_ERR_KEYVAL &&
            g_handler_comm == MPI_COMM_SELF && error_class(rc) == MPI_ERR_KEYVAL,
        "handler-sees-keyval-error", "calls %d code %d rc %d", g_handler_calls, g_handler_code, rc);
  rc = MPI_Comm_call_errhandler(MPI_COMM_SELF, g_code);
  check(rc == MPI_SUCCESS && g_handler_calls == 2 && g_handler_code == g_code,
        "call_errhandler-added-code", "rc %d calls %d code %d", rc, g_handler_calls,
        g_handler_code);
  check(MPI_Comm_get_errhandler(MPI_COMM_SELF, &g) == MPI_SUCCESS && g == h, "get_errhandler",
        "not the handler set");
  check(MPI_Errhandler_free(&g) == MPI_SUCCESS && g == MPI_ERRHANDLER_NULL, "free-got", "failed");
  check(MPI_Errhandler_free(&h) == MPI_SUCCESS && h == MPI_ERRHANDLER_NULL, "free-created",
        "failed");
  /* Freed by the application, still attached: it keeps working. */
  rc = MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER);
  check(rc == MPI_SUCCESS && g_handler_calls == 3 && g_handler_code == MPI_ERR_OTHER,
        "freed-handler-still-attached", "calls %d", g_handler_calls);
  check_rc(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), "set-return-self");

  /* The MPI-1 forms. */
  MPI_Errhandler h1 = MPI_ERRHANDLER_NULL, g1 = MPI_ERRHANDLER_NULL;
  check_rc(MPI_Errhandler_create(comm_handler, &h1), "errhandler_create");
  check_rc(MPI_Errhandler_set(MPI_COMM_SELF, h1), "errhandler_set");
  check(MPI_Errhandler_get(MPI_COMM_SELF, &g1) == MPI_SUCCESS && g1 == h1, "errhandler_get",
        "not the handler set");
  rc = MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER);
  check(rc == MPI_SUCCESS && g_handler_calls == 4, "errhandler_create-called", "calls %d",
        g_handler_calls);
  check_rc(MPI_Errhandler_free(&g1), "errhandler_free-got1");
  check_rc(MPI_Errhandler_set(MPI_COMM_SELF, MPI_ERRORS_RETURN), "errhandler_set-return");
  check_rc(MPI_Errhandler_free(&h1), "errhandler_free-h1");
  MPI_Errhandler w = MPI_ERRHANDLER_NULL;
  check(MPI_Errhandler_get(MPI_COMM_WORLD, &w) == MPI_SUCCESS && w == MPI_ERRORS_RETURN,
        "errhandler_get-world", "not MPI_ERRORS_RETURN");
  check(MPI_Errhandler_free(&w) == MPI_SUCCESS && w == MPI_ERRHANDLER_NULL,
        "errhandler_free-predefined", "failed");

  /* Window handlers: made and freed; attachable to windows only. */
  MPI_Errhandler wh = MPI_ERRHANDLER_NULL;
  check_rc(MPI_Win_create_errhandler(win_handler, &wh), "win_create_errhandler");
  expect(MPI_Comm_set_errhandler(MPI_COMM_SELF, wh), MPI_ERR_ARG, "comm_set-win-handler",
         "MPI_Comm_set_errhandler");
  expect(MPI_File_set_errhandler(MPI_FILE_NULL, wh), MPI_ERR_ARG, "file_set-win-handler",
         "MPI_File_set_errhandler");
  expect(MPI_Win_set_errhandler(MPI_WIN_NULL, wh), MPI_ERR_WIN, "win_set_errhandler-null",
         "MPI_Win_set_errhandler");
  expect(MPI_Win_get_errhandler(MPI_WIN_NULL, &g), MPI_ERR_WIN, "win_get_errhandler-null",
         "MPI_Win_get_errhandler");
  expect(MPI_Win_call_errhandler(MPI_WIN_NULL, MPI_ERR_OTHER), MPI_ERR_WIN,
         "win_call_errhandler-null", "MPI_Win_call_errhandler");
  check(MPI_Errhandler_free(&wh) == MPI_SUCCESS && wh == MPI_ERRHANDLER_NULL, "free-win-handler",
        "failed");

  /* File handlers: MPI_FILE_NULL's handler takes the errors of MPI_File_open. */
  MPI_Errhandler fh = MPI_ERRHANDLER_NULL;
  check_rc(MPI_File_create_errhandler(file_handler, &fh), "file_create_errhandler");
  expect(MPI_Comm_set_errhandler(MPI_COMM_SELF, fh), MPI_ERR_ARG, "comm_set-file-handler",
         "MPI_Comm_set_errhandler");
  check(MPI_File_get_errhandler(MPI_FILE_NULL, &g) == MPI_SUCCESS && g == MPI_ERRORS_RETURN,
        "file_get_errhandler-default", "not MPI_ERRORS_RETURN");
  MPI_Errhandler_free(&g);
  check_rc(MPI_File_set_errhandler(MPI_FILE_NULL, fh), "file_set_errhandler");
  check(MPI_File_get_errhandler(MPI_FILE_NULL, &g) == MPI_SUCCESS && g == fh, "file_get_errhandler",
        "not the handler set");
  MPI_Errhandler_free(&g);
  MPI_File file = MPI_FILE_NULL;
  g_file_calls = 0;
  rc = MPI_File_open(MPI_COMM_WORLD, "/nonexistent/torusmpi-attr-info", MPI_MODE_RDONLY,
                     MPI_INFO_NULL, &file);
  check(rc != MPI_SUCCESS && g_file_calls == 1 && g_file_was_null && g_file_code == rc,
        "file-handler-called", "rc %d calls %d on MPI_FILE_NULL %d code %d", rc, g_file_calls,
        g_file_was_null, g_file_code);
  if (torusmpi_only("file_call_errhandler-null",
                    "Open MPI 4.1 raises MPI_ERR_ARG on MPI_COMM_WORLD")) {
    g_file_calls = 0;
    expect(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_IO), MPI_ERR_FILE,
           "file_call_errhandler-null", "MPI_File_call_errhandler");
    check(g_file_calls == 1 && g_file_code == MPI_ERR_FILE, "file_call_errhandler-handler",
          "calls %d code %d", g_file_calls, g_file_code);
  }
  check_rc(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), "file_set-return");
  check_rc(MPI_Errhandler_free(&fh), "free-file-handler");

  /* Bad arguments. */
  MPI_Errhandler null = MPI_ERRHANDLER_NULL;
  expect(MPI_Errhandler_free(NULL), MPI_ERR_ARG, "errhandler_free-null-ptr", "MPI_Errhandler_free");
  expect(MPI_Errhandler_free(&null), MPI_ERR_ARG, "errhandler_free-null", "MPI_Errhandler_free");
  expect(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ARG,
         "set_errhandler-null", "MPI_Comm_set_errhandler");
  expect(MPI_Comm_set_errhandler(MPI_COMM_NULL, MPI_ERRORS_RETURN), MPI_ERR_COMM,
         "set_errhandler-comm-null", "MPI_Comm_set_errhandler");
  expect(MPI_Comm_get_errhandler(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "get_errhandler-null",
         "MPI_Comm_get_errhandler");
  expect(MPI_Comm_create_errhandler(comm_handler, NULL), MPI_ERR_ARG, "create_errhandler-null-out",
         "MPI_Comm_create_errhandler");
}

/* --- Info objects. */

static void test_info(void) {
  MPI_Info info = MPI_INFO_NULL, dup = MPI_INFO_NULL;
  char value[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
  int flag = -1, n = -1, len = -1, rc;
  check(MPI_Info_create(&info) == MPI_SUCCESS && info != MPI_INFO_NULL, "info_create", "failed");
  check(MPI_Info_get_nkeys(info, &n) == MPI_SUCCESS && n == 0, "info-empty", "nkeys %d", n);
  check_rc(MPI_Info_set(info, "b", "12345"), "info_set-b");
  check_rc(MPI_Info_set(info, "a", "x"), "info_set-a");
  check_rc(MPI_Info_set(info, "c", "third"), "info_set-c");
  check(MPI_Info_get_nkeys(info, &n) == MPI_SUCCESS && n == 3, "info_get_nkeys", "nkeys %d", n);
  check(MPI_Info_get_nthkey(info, 0, key) == MPI_SUCCESS && strcmp(key, "b") == 0,
        "info_get_nthkey-0", "\"%s\"", key);
  check(MPI_Info_get_nthkey(info, 2, key) == MPI_SUCCESS && strcmp(key, "c") == 0,
        "info_get_nthkey-2", "\"%s\"", key);
  rc = MPI_Info_get(info, "b", MPI_MAX_INFO_VAL, value, &flag);
  check(rc == 0 && flag && strcmp(value, "12345") == 0, "info_get", "rc %d flag %d \"%s\"", rc,
        flag, value);
  memset(value, '#', sizeof value);
  rc = MPI_Info_get(info, "b", 3, value, &flag);
  check(rc == 0 && flag && strcmp(value, "123") == 0, "info_get-truncated", "\"%.8s\"", value);
  rc = MPI_Info_get(info, "zz", MPI_MAX_INFO_VAL, value, &flag);
  check(rc == 0 && !flag, "info_get-missing", "rc %d flag %d", rc, flag);
  rc = MPI_Info_get_valuelen(info, "c", &len, &flag);
  check(rc == 0 && flag && len == 5, "info_get_valuelen", "rc %d flag %d len %d", rc, flag, len);
  rc = MPI_Info_get_valuelen(info, "zz", &len, &flag);
  check(rc == 0 && !flag, "info_get_valuelen-missing", "rc %d flag %d", rc, flag);
  check_rc(MPI_Info_set(info, "b", "new"), "info_set-replace");
  rc = MPI_Info_get(info, "b", MPI_MAX_INFO_VAL, value, &flag);
  check(rc == 0 && flag && strcmp(value, "new") == 0 && MPI_Info_get_nkeys(info, &n) == 0 && n == 3,
        "info_set-replaced", "\"%s\" nkeys %d", value, n);

  check_rc(MPI_Info_dup(info, &dup), "info_dup");
  check_rc(MPI_Info_delete(info, "a"), "info_delete");
  check(MPI_Info_get_nkeys(info, &n) == MPI_SUCCESS && n == 2, "info_delete-nkeys", "nkeys %d", n);
  check(MPI_Info_get_nthkey(info, 1, key) == MPI_SUCCESS && strcmp(key, "c") == 0,
        "info_delete-order", "\"%s\"", key);
  check(MPI_Info_get_nkeys(dup, &n) == MPI_SUCCESS && n == 3, "info_dup-independent", "nkeys %d",
        n);
  rc = MPI_Info_get(dup, "a", MPI_MAX_INFO_VAL, value, &flag);
  check(rc == 0 && flag && strcmp(value, "x") == 0, "info_dup-value", "flag %d", flag);

  /* Limits: keys of 1 to MPI_MAX_INFO_KEY - 1 characters, values of 1 to MPI_MAX_INFO_VAL - 1. */
  char long_key[MPI_MAX_INFO_KEY + 1], long_value[MPI_MAX_INFO_VAL + 1];
  memset(long_key, 'k', MPI_MAX_INFO_KEY - 1);
  long_key[MPI_MAX_INFO_KEY - 1] = '\0';
  memset(long_value, 'v', MPI_MAX_INFO_VAL - 1);
  long_value[MPI_MAX_INFO_VAL - 1] = '\0';
  check_rc(MPI_Info_set(info, long_key, long_value), "info_set-longest");
  rc = MPI_Info_get_valuelen(info, long_key, &len, &flag);
  check(rc == 0 && flag && len == MPI_MAX_INFO_VAL - 1, "info-longest-valuelen", "len %d", len);
  check(MPI_Info_get_nthkey(info, 2, key) == MPI_SUCCESS && strcmp(key, long_key) == 0,
        "info_get_nthkey-longest", "\"%s\"", key);
  long_key[MPI_MAX_INFO_KEY - 1] = 'k';
  long_key[MPI_MAX_INFO_KEY] = '\0';
  long_value[MPI_MAX_INFO_VAL - 1] = 'v';
  long_value[MPI_MAX_INFO_VAL] = '\0';
  expect(MPI_Info_set(info, long_key, "x"), MPI_ERR_INFO_KEY, "info_set-key-too-long",
         "MPI_Info_set");
  expect(MPI_Info_set(info, "a", long_value), MPI_ERR_INFO_VALUE, "info_set-value-too-long",
         "MPI_Info_set");
  expect(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY, "info_set-key-empty", "MPI_Info_set");
  expect(MPI_Info_set(info, "a", ""), MPI_ERR_INFO_VALUE, "info_set-value-empty", "MPI_Info_set");
  expect(MPI_Info_set(info, NULL, "x"), MPI_ERR_INFO_KEY, "info_set-key-null", "MPI_Info_set");
  expect(MPI_Info_set(info, "a", NULL), MPI_ERR_INFO_VALUE, "info_set-value-null", "MPI_Info_set");
  expect(MPI_Info_get(info, long_key, 10, value, &flag), MPI_ERR_INFO_KEY, "info_get-key-too-long",
         "MPI_Info_get");
  expect(MPI_Info_get(info, NULL, 10, value, &flag), MPI_ERR_INFO_KEY, "info_get-key-null",
         "MPI_Info_get");
  expect(MPI_Info_get(info, "b", -1, value, &flag), MPI_ERR_ARG, "info_get-negative-valuelen",
         "MPI_Info_get");
  /* Open MPI 4.1: MPI_ERR_INFO_VALUE for a NULL value buffer. */
  expect_ref(MPI_Info_get(info, "b", 10, NULL, &flag), MPI_ERR_ARG, MPI_ERR_INFO_VALUE,
             "info_get-null-value", "MPI_Info_get");
  expect(MPI_Info_get(info, "b", 10, value, NULL), MPI_ERR_ARG, "info_get-null-flag",
         "MPI_Info_get");
  expect(MPI_Info_get_valuelen(info, long_key, &len, &flag), MPI_ERR_INFO_KEY,
         "info_get_valuelen-key-too-long", "MPI_Info_get_valuelen");
  expect(MPI_Info_get_valuelen(info, "b", NULL, &flag), MPI_ERR_ARG,
         "info_get_valuelen-null-valuelen", "MPI_Info_get_valuelen");
  expect(MPI_Info_get_valuelen(info, "b", &len, NULL), MPI_ERR_ARG, "info_get_valuelen-null-flag",
         "MPI_Info_get_valuelen");
  expect(MPI_Info_delete(info, "zz"), MPI_ERR_INFO_NOKEY, "info_delete-missing", "MPI_Info_delete");
  expect(MPI_Info_delete(info, long_key), MPI_ERR_INFO_KEY, "info_delete-key-too-long",
         "MPI_Info_delete");
  expect(MPI_Info_delete(info, NULL), MPI_ERR_INFO_KEY, "info_delete-key-null", "MPI_Info_delete");
  MPI_Info_get_nkeys(info, &n);
  /* Open MPI 4.1: MPI_ERR_INFO_KEY for n past the last key and for a NULL key buffer. */
  expect_ref(MPI_Info_get_nthkey(info, n, key), MPI_ERR_ARG, MPI_ERR_INFO_KEY,
             "info_get_nthkey-past-end", "MPI_Info_get_nthkey");
  expect(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG, "info_get_nthkey-negative",
         "MPI_Info_get_nthkey");
  expect_ref(MPI_Info_get_nthkey(info, 0, NULL), MPI_ERR_ARG, MPI_ERR_INFO_KEY,
             "info_get_nthkey-null-key", "MPI_Info_get_nthkey");
  expect(MPI_Info_get_nkeys(info, NULL), MPI_ERR_ARG, "info_get_nkeys-null", "MPI_Info_get_nkeys");
  /* Open MPI 4.1: MPI_ERR_INFO for a NULL output handle. */
  expect_ref(MPI_Info_dup(info, NULL), MPI_ERR_ARG, MPI_ERR_INFO, "info_dup-null-out",
             "MPI_Info_dup");
  expect_ref(MPI_Info_create(NULL), MPI_ERR_ARG, MPI_ERR_INFO, "info_create-null",
             "MPI_Info_create");
  expect_ref(MPI_Info_free(NULL), MPI_ERR_ARG, MPI_ERR_INFO, "info_free-null", "MPI_Info_free");

  MPI_Info null = MPI_INFO_NULL;
  expect(MPI_Info_set(MPI_INFO_NULL, "a", "b"), MPI_ERR_INFO, "info_set-info-null", "MPI_Info_set");
  expect(MPI_Info_get(MPI_INFO_NULL, "a", 10, value, &flag), MPI_ERR_INFO, "info_get-info-null",
         "MPI_Info_get");
  expect(MPI_Info_get_valuelen(MPI_INFO_NULL, "a", &len, &flag), MPI_ERR_INFO,
         "info_get_valuelen-info-null", "MPI_Info_get_valuelen");
  expect(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO, "info_get_nkeys-info-null",
         "MPI_Info_get_nkeys");
  expect(MPI_Info_get_nthkey(MPI_INFO_NULL, 0, key), MPI_ERR_INFO, "info_get_nthkey-info-null",
         "MPI_Info_get_nthkey");
  expect(MPI_Info_delete(MPI_INFO_NULL, "a"), MPI_ERR_INFO, "info_delete-info-null",
         "MPI_Info_delete");
  expect(MPI_Info_dup(MPI_INFO_NULL, &null), MPI_ERR_INFO, "info_dup-info-null", "MPI_Info_dup");
  expect(MPI_Info_free(&null), MPI_ERR_INFO, "info_free-info-null", "MPI_Info_free");

  check(MPI_Info_free(&info) == MPI_SUCCESS && info == MPI_INFO_NULL, "info_free", "failed");
  expect(MPI_Info_free(&info), MPI_ERR_INFO, "info_free-twice", "MPI_Info_free");
  check(MPI_Info_free(&dup) == MPI_SUCCESS && dup == MPI_INFO_NULL, "info_free-dup", "failed");
}

static const char* base_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash != NULL ? slash + 1 : path;
}

/* value of key in MPI_INFO_ENV, or NULL. */
static const char* env_value(const char* key, char* value) {
  int flag = 0;
  if (MPI_Info_get(MPI_INFO_ENV, key, MPI_MAX_INFO_VAL, value, &flag) != MPI_SUCCESS || !flag)
    return NULL;
  return value;
}

static void test_info_env(const char* argv0) {
  char value[MPI_MAX_INFO_VAL + 1];
  int n = -1, m = -1;
  check(MPI_Info_get_nkeys(MPI_INFO_ENV, &n) == MPI_SUCCESS && n >= 1, "info_env-nkeys", "nkeys %d",
        n);
  const char* v = env_value("command", value);
  check(v != NULL && strcmp(base_name(v), base_name(argv0)) == 0, "info_env-command",
        "\"%s\", program %s", v ? v : "(unset)", argv0);
  v = env_value("maxprocs", value);
  check(v != NULL && atoi(v) == g_size, "info_env-maxprocs", "\"%s\", size %d", v ? v : "(unset)",
        g_size);
  v = env_value("host", value);
  check(v != NULL && v[0] != '\0', "info_env-host", "unset");
  v = env_value("arch", value);
  check(v != NULL && v[0] != '\0', "info_env-arch", "unset");
  char cwd[4096] = "";
  v = env_value("wdir", value);
  check(v != NULL && getcwd(cwd, sizeof cwd) != NULL && strcmp(v, cwd) == 0, "info_env-wdir",
        "\"%s\", cwd %s", v ? v : "(unset)", cwd);
  v = env_value("thread_level", value);
  check(v != NULL && strcmp(v, "MPI_THREAD_SINGLE") == 0, "info_env-thread_level", "\"%s\"",
        v ? v : "(unset)");
  MPI_Info dup = MPI_INFO_NULL;
  check(
      MPI_Info_dup(MPI_INFO_ENV, &dup) == MPI_SUCCESS && MPI_Info_get_nkeys(dup, &m) == 0 && m == n,
      "info_env-dup", "nkeys %d, expected %d", m, n);
  MPI_Info_free(&dup);
  if (torusmpi_only("info_free-env", "Open MPI 4.1 crashes")) {
    MPI_Info env = MPI_INFO_ENV;
    expect(MPI_Info_free(&env), MPI_ERR_INFO, "info_free-env", "MPI_Info_free");
  }
}

/* --- MPI_Finalize: MPI_COMM_SELF's attributes go first, while MPI still works. */

static long g_fin_order[4];
static int g_fin_calls, g_fin_mpi_works = 1;

static int fin_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)keyval, (void)extra;
  if (g_fin_calls < 4) g_fin_order[g_fin_calls] = (long)value;
  ++g_fin_calls;
  int rank = -1;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || rank != g_rank ||
      (comm != MPI_COMM_SELF && comm != MPI_COMM_WORLD))
    g_fin_mpi_works = 0;
  return MPI_SUCCESS;
}

static void setup_finalize(void) {
  int k;
  check_rc(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, fin_delete, &k, NULL), "finalize-keyval");
  check_rc(MPI_Comm_set_attr(MPI_COMM_WORLD, k, (void*)2L), "finalize-set-world");
  check_rc(MPI_Comm_set_attr(MPI_COMM_SELF, k, (void*)1L), "finalize-set-self");
  /* Freed now: the keyval lives until MPI_Finalize deletes its attributes. */
  check_rc(MPI_Comm_free_keyval(&k), "finalize-free-keyval");
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  MPI_Get_library_version(version, &len);
  g_torusmpi = strncmp(version, "torusmpi", 8) == 0;

  test_predefined();
  test_comm_attrs();
  test_failing_callbacks();
  test_mpi1();
  test_predefined_fns();
  test_type_attrs();
  test_win_attrs();
  test_keyval_errors();
  test_error_codes();
  test_errhandlers();
  test_info();
  test_info_env(argv[0]);
  setup_finalize();

  g_fin_calls = 0;
  check(MPI_Finalize() == MPI_SUCCESS, "finalize", "failed");
  check(g_fin_calls == 2 && g_fin_order[0] == 1 && g_fin_order[1] == 2, "finalize-deletes",
        "%d calls, first %ld (1 expected: MPI_COMM_SELF's)", g_fin_calls, g_fin_order[0]);
  check(g_fin_mpi_works, "finalize-callbacks-use-mpi", "MPI_Comm_rank failed in a callback");
  return check_done(g_size);
}
