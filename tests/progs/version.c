/* version: what MPI_Get_library_version says, for tests/integration/texts.sh to read.
 *
 *   version
 *
 * Asks before MPI_Init (MPI allows it), during and after MPI_Finalize; the three texts must be one.
 * Rank 0 prints it as a "library_version: <text>" line. Reporting as in check.h. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

/* The library's text in out; false (with a failed check) when the call fails or the length is
 * not the text's. */
static int library_version(char out[MPI_MAX_LIBRARY_VERSION_STRING], const char* when) {
  int len = -1;
  int rc = MPI_Get_library_version(out, &len);
  check(rc == MPI_SUCCESS && len == (int)strlen(out) && len < MPI_MAX_LIBRARY_VERSION_STRING, when,
        "rc %d, len %d, \"%s\"", rc, len, rc == MPI_SUCCESS ? out : "");
  return rc == MPI_SUCCESS;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  char before[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  char during[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  char after[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  library_version(before, "version-before-init");

  check_rc(MPI_Init(&argc, &argv), "init");
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_rank = rank;
  library_version(during, "version-during");
  check(strcmp(before, during) == 0, "version-same-before-and-during", "\"%s\" then \"%s\"", before,
        during);
  if (rank == 0) printf("library_version: %s\n", during);
  check_rc(MPI_Finalize(), "finalize");

  library_version(after, "version-after-finalize");
  check(strcmp(during, after) == 0, "version-same-after-finalize", "\"%s\" then \"%s\"", during,
        after);
  return check_done(size);
}
