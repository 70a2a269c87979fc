#!/usr/bin/env bash
# Collective errors (tests/progs/coll_errors.c): under MPI_ERRORS_RETURN every bad collective call
# gets its error class and the program goes on, still in step (a correct allreduce after each).
# First on Open MPI (the reference), then on torusmpi at 1, 2, 3 and 5 ranks.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/coll_errors
run_job 60 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$bin.gcc"
check "coll_errors.gcc on Open MPI itself (the reference), np=3" ranks_done 3 || diag_job

# Every case runs on torusmpi: a "skip" line would mean it was taken for a reference library.
passed() { ranks_done "$1" && ! grep -q '^skip' "$job_out"; }
for np in 1 2 3 5; do
  run_job 60 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$bin.gcc"
  check "coll_errors.gcc, LD_PRELOAD, np=$np" passed "$np" || diag_job
done
if [ -x "$bin.clang" ]; then
  run_job 60 "${mpirun[@]}" -np 2 "${via_path[@]}" "$bin.clang"
  check "coll_errors.clang, LD_LIBRARY_PATH, np=2" passed 2 || diag_job
else
  skip "coll_errors.clang, LD_LIBRARY_PATH, np=2" "configure found no clang"
fi
check_shm
tap_done
