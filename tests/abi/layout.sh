#!/usr/bin/env bash
# torusmpi's copies of Open MPI's internal objects against Open MPI's own headers. Open MPI's
# binding libraries (libmpi_cxx, libmpi_mpifh) read and write some fields of communicators, groups,
# ops, error handlers, ... inline, and pass some of Open MPI's internal constants; src/mpi/
# ompi_abi.h puts each at Open MPI's offset with Open MPI's value. layout.def names them all;
# layout_ours (built by make check from ompi_abi.h) and layout_ompi (built here from the internal
# headers libopenmpi-dev installs) print them, and the two must agree line for line.
. "$(dirname "$0")/../integration/lib.sh"

ompi_internal=$TM_OMPI_INCDIR/openmpi
check "Open MPI's internal headers are installed (libopenmpi-dev)" \
  test -f "$ompi_internal/ompi/communicator/communicator.h" || tap_done

# The one header they include that Debian does not ship: MPI_Fint is int there, so its conversions
# are the identity.
mkdir -p "$work/stub/ompi/mpi/fortran/base"
printf '#define OMPI_INT_2_FINT(a) (a)\n#define OMPI_FINT_2_INT(a) (a)\n' \
  >"$work/stub/ompi/mpi/fortran/base/fint_2_int.h"
run_job 60 gcc -I"$ompi_internal" -I"$TM_OMPI_INCDIR" -I"$work/stub" -I"$TM_SRCDIR/abi" \
  -o "$work/layout_ompi" "$TM_SRCDIR/abi/layout_ompi.c"
check "layout_ompi builds against Open MPI's headers" test "$job_rc" -eq 0 || { diag_job; tap_done; }

"$work/layout_ompi" >"$work/theirs.txt"
"$TM_PROGS/../abi/layout_ours" >"$work/ours.txt"
diag "$(grep -c . "$work/theirs.txt") offsets and constants"
check "layout.def is read whole by both sides" \
  test "$(grep -c . "$work/ours.txt")" -eq "$(grep -c . "$work/theirs.txt")" -a \
  "$(grep -c '^TORUSMPI_' "$TM_SRCDIR/abi/layout.def")" -eq "$(grep -c . "$work/ours.txt")"
diff "$work/theirs.txt" "$work/ours.txt" >"$work/diff.txt"
check "every field sits at Open MPI's offset and every constant has Open MPI's value" \
  test ! -s "$work/diff.txt" || { diag "Open MPI (<) and torusmpi (>) differ:"; sed 's/^/# /' "$work/diff.txt"; }
tap_done
