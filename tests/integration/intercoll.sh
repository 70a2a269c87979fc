#!/usr/bin/env bash
# Intercommunicator collectives (tests/progs/intercoll.c): every collective MPI defines on an
# intercommunicator, blocking and nonblocking, every root of both groups, counts 0, 1, 7 and 1031,
# v and w forms, a derived datatype, and bad arguments, on groups of unequal sizes. First on Open
# MPI itself (the reference: the same binary with Open MPI's libmpi), then on torusmpi through
# LD_PRELOAD (groups 1+1, 1+2, 1+3, 2+3, 3+2, 3+4), with the asynchronous progress thread, on an
# emulated torus (TORUSMPI_INSTANCE=torus:2x2:cores=2), and the clang build through
# LD_LIBRARY_PATH. At 1 rank the program says "skip" and checks nothing.
. "$(dirname "$0")/lib.sh"

ic=$TM_PROGS/intercoll

passed() { ranks_done "$1" && ! grep -q '^skip' "$job_out"; }
# On torusmpi the program also checks what Open MPI refuses (reductions on derived datatypes):
# those lines show the job ran on torusmpi rather than on the reference library.
on_torusmpi() { passed "$1" && grep -q '^ok [0-9]* allreduce of int pairs$' "$job_out"; }

# "<np> [first group size]" for each job; the program's default split is half, rounded down (1
# of 4).
for shape in "4" "5" "7"; do
  set -- $shape
  run_job 300 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np "$1" "$ic.gcc" ${2:-}
  check "intercoll.gcc on Open MPI itself (the reference), np=$1" passed "$1" || diag_job
done

run_job 60 "${mpirun[@]}" -np 1 "${via_preload[@]}" "$ic.gcc"
check "intercoll.gcc, LD_PRELOAD, np=1 (skips: one rank makes no intercommunicator)" \
  eval 'ranks_done 1 && grep -q "^skip 0 intercoll" "$job_out"' || diag_job
for shape in "2" "3" "4" "5" "5 3" "7"; do
  set -- $shape
  run_job 300 "${mpirun[@]}" -np "$1" "${via_preload[@]}" "$ic.gcc" ${2:-}
  check "intercoll.gcc, LD_PRELOAD, np=$1${2:+ (first group $2)}" on_torusmpi "$1" || diag_job
done

run_job 300 "${mpirun[@]}" -np 5 "${via_preload[@]}" -x TORUSMPI_ASYNC_PROGRESS=1 "$ic.gcc"
check "intercoll.gcc, np=5, TORUSMPI_ASYNC_PROGRESS=1" on_torusmpi 5 || diag_job
run_job 300 "${mpirun[@]}" -np 5 "${via_preload[@]}" -x TORUSMPI_INSTANCE=torus:2x2:cores=2 \
  "$ic.gcc"
check "intercoll.gcc, np=5, TORUSMPI_INSTANCE=torus:2x2:cores=2" on_torusmpi 5 || diag_job

if [ -x "$ic.clang" ]; then
  run_job 300 "${mpirun[@]}" -np 5 "${via_path[@]}" "$ic.clang"
  check "intercoll.clang, LD_LIBRARY_PATH, np=5" on_torusmpi 5 || diag_job
else
  skip "intercoll.clang, LD_LIBRARY_PATH, np=5" "configure found no clang"
fi
check_shm
tap_done
