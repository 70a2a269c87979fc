/* check_cxx.h: what the C++ test programs (cxx_bindings.cc, cxx_capi.cc) add to check.h: mpi.h
 * included so that Open MPI's own C++ headers do not fail the build, and strf for the details
 * of checks. */
#ifndef TORUSMPI_TESTS_CHECK_CXX_H
#define TORUSMPI_TESTS_CHECK_CXX_H

#include <cstdarg>
#include <cstdio>
#include <string>

// Open MPI's op_inln.h casts its C++ op trampoline to MPI_User_function; -Wextra's
// -Wcast-function-type reports that in every C++ file that includes mpi.h.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-function-type"
#include <mpi.h>
#pragma GCC diagnostic pop

#include "check.h"

static std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static std::string strf(const char* fmt, ...) {
  char text[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return text;
}

#endif
