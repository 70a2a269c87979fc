#!/usr/bin/env bash
# Every collective on derived datatypes (tests/progs/coll_dtypes.c): five layouts (a resized vector,
# a struct with a leading gap, a dense contiguous type, an indexed type whose type map is not in
# memory order, a type with a negative lower bound) through every collective, its in-place and
# mixed (derived on one side, MPI_INT on the other) forms, counts 0, 1, 7 and 3001, each compared
# with the same collective on MPI_INT over the packed data, gaps and guards checked; the
# nonblocking forms with the datatype freed before MPI_Wait; a non-commutative user operation,
# MPI_DOUBLE_INT, and the error classes of an invalid operation and an uncommitted type.
# First on Open MPI (the reference: its refusal of MPI_SUM on derived types and its one-rank
# Alltoallw are skipped there), then on torusmpi at 1 to 5 ranks, with large messages by
# rendezvous, with the asynchronous progress thread, and the clang build. A job takes 1 to 3 s.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/coll_dtypes
run_job 60 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$bin.gcc"
check "coll_dtypes.gcc on Open MPI itself (the reference), np=3" ranks_done 3 || diag_job

# On torusmpi nothing is skipped: a "skip" line means the program took it for a reference library.
passed() {
  ranks_done "$1" || return 1
  if grep -q '^skip' "$job_out"; then
    echo "# the program took its path for reference libraries:"
    grep '^skip' "$job_out" | head -n 3 | sed 's/^/#   /'
    return 1
  fi
}
for np in 1 2 3 4 5; do
  run_job 60 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$bin.gcc"
  check "coll_dtypes.gcc, LD_PRELOAD, np=$np" passed "$np" || diag_job
done
# 3001 elements of 12 bytes and more go by rendezvous, blocks of 7 and fewer still eagerly.
run_job 60 "${mpirun[@]}" -np 4 -x TORUSMPI_EAGER_LIMIT=4096 "${via_preload[@]}" "$bin.gcc"
check "coll_dtypes.gcc, LD_PRELOAD, np=4, TORUSMPI_EAGER_LIMIT=4096" passed 4 || diag_job
run_job 60 "${mpirun[@]}" -np 3 -x TORUSMPI_ASYNC_PROGRESS=1 "${via_preload[@]}" "$bin.gcc"
check "coll_dtypes.gcc, LD_PRELOAD, np=3, TORUSMPI_ASYNC_PROGRESS=1" passed 3 || diag_job
if [ -x "$bin.clang" ]; then
  run_job 60 "${mpirun[@]}" -np 3 "${via_path[@]}" "$bin.clang"
  check "coll_dtypes.clang, LD_LIBRARY_PATH, np=3" passed 3 || diag_job
else
  skip "coll_dtypes.clang, LD_LIBRARY_PATH, np=3" "configure found no clang"
fi
check_shm
tap_done
