#!/usr/bin/env bash
# Point-to-point with derived datatypes (tests/progs/p2p_dtypes.c): every layout (vector, hvector,
# indexed, indexed_block, hindexed, struct with gaps, resized, subarray, MPI_DOUBLE_INT, and a
# contiguous one used in place) at counts 0, 1, 7 and 1 MiB through every send mode, receive,
# completion call, probe and persistent request; truncation, partial elements, MPI_Type_free while
# in flight, Sendrecv_replace, Bsend into an exactly sized buffer, MPI_BOTTOM, cancel, and
# uncommitted types. Guards around and inside every receive buffer must stay untouched.
# First on Open MPI (the reference: the test checks itself), then on torusmpi through LD_PRELOAD
# (how a program reaches the library is p2p.sh's and hello.sh's concern, not a datatype's; the
# clang build reaches Open MPI's predefined datatypes through the GOT, so it runs too) at 1, 2
# and 3 ranks and with the parameters that change the paths a staged message takes:
#   TORUSMPI_EAGER_LIMIT=4096     the 1 MiB messages and many of the 7-element ones by rendezvous
#   TORUSMPI_EAGER_LIMIT=0        every message by rendezvous
#   TORUSMPI_ASYNC_PROGRESS=1     completion seen while a progress thread polls
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/p2p_dtypes
run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 2 "$bin.gcc"
check "p2p_dtypes.gcc on Open MPI itself (the reference), np=2" ranks_done 2 || diag_job

# passed <np>: every rank passed, and none skipped a check as a reference library's deviation
# (that would mean torusmpi was taken for Open MPI).
passed() { ranks_done "$1" && ! grep -q '^skip' "$job_out"; }

# on_torusmpi <build> <np> <how> [mpirun arguments...]
on_torusmpi() {
  local build=$1 np=$2 how=$3
  shift 3
  if [ ! -x "$bin.$build" ]; then
    skip "p2p_dtypes.$build, $how, np=$np" "$bin.$build was not built"
    return
  fi
  run_job 120 "${mpirun[@]}" -np "$np" "$@" "$bin.$build"
  check "p2p_dtypes.$build, $how, np=$np" passed "$np" || diag_job
}

for np in 1 2 3; do
  on_torusmpi gcc $np "LD_PRELOAD" "${via_preload[@]}"
done
on_torusmpi gcc 2 "LD_PRELOAD, TORUSMPI_EAGER_LIMIT=4096" "${via_preload[@]}" \
  -x TORUSMPI_EAGER_LIMIT=4096
on_torusmpi gcc 3 "LD_PRELOAD, TORUSMPI_EAGER_LIMIT=0" "${via_preload[@]}" -x TORUSMPI_EAGER_LIMIT=0
on_torusmpi gcc 2 "LD_PRELOAD, TORUSMPI_ASYNC_PROGRESS=1" "${via_preload[@]}" \
  -x TORUSMPI_ASYNC_PROGRESS=1
if [ -n "$TM_CLANG" ]; then
  on_torusmpi clang 2 "LD_PRELOAD" "${via_preload[@]}"
else
  skip "p2p_dtypes.clang, LD_PRELOAD, np=2" "configure found no clang"
fi
check_shm
tap_done
