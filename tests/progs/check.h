/* check.h: the reporting every test program shares. One "ok <rank> <check>" or
 * "FAIL <rank> <check>: why" line per check, then check_done() prints the "done <rank> ..." line
 * the scripts look for and gives the exit status. The rank is -1 until the program sets g_rank. */
#ifndef TORUSMPI_TESTS_CHECK_H
#define TORUSMPI_TESTS_CHECK_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>

static int g_rank = -1;
static int g_checks, g_failed;

/* Records one check; the detail is printed only on failure. */
static inline void check(int passed, const char* what, const char* fmt, ...) {
  ++g_checks;
  if (passed) {
    printf("ok %d %s\n", g_rank, what);
    return;
  }
  ++g_failed;
  printf("FAIL %d %s: ", g_rank, what);
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
}

static inline void check_rc(int rc, const char* what) {
  check(rc == MPI_SUCCESS, what, "returned %d", rc);
}

/* "done <rank>[ of <size>]: N checks, N failed"; size < 0 leaves it out. Returns the exit status.
 */
static inline int check_done(int size) {
  if (size >= 0) {
    printf("done %d of %d: %d checks, %d failed\n", g_rank, size, g_checks, g_failed);
  } else {
    printf("done %d: %d checks, %d failed\n", g_rank, g_checks, g_failed);
  }
  return g_failed == 0 ? 0 : 1;
}

#endif
