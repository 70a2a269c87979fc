#!/usr/bin/env bash
# Attributes, info objects, error classes and error handlers (tests/progs/attr_info.c): keyvals and
# their copy and delete callbacks on MPI_Comm_dup, MPI_Comm_free, MPI_Type_dup, MPI_Type_free and
# MPI_Finalize; MPI_Info and MPI_INFO_ENV; added error classes, codes and strings; communicator,
# window and file error handlers; every bad argument with its class under MPI_ERRORS_RETURN.
# First on Open MPI (the reference), then on torusmpi at 1, 2 and 3 ranks and as a singleton.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/attr_info
run_job 60 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$bin.gcc"
check "attr_info.gcc on Open MPI itself (the reference), np=3" ranks_done 3 || diag_job

# Every case runs on torusmpi: a "skip" line would mean it was taken for a reference library.
passed() { ranks_done "$1" && ! grep -q '^skip' "$job_out"; }
for np in 1 2 3; do
  run_job 60 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$bin.gcc"
  check "attr_info.gcc, LD_PRELOAD, np=$np" passed "$np" || diag_job
done
run_job 30 env "${no_launcher[@]}" LD_LIBRARY_PATH="$TM_LIBDIR" "$bin.gcc"
check "attr_info.gcc, singleton" passed 1 || diag_job
if [ -x "$bin.clang" ]; then
  run_job 60 "${mpirun[@]}" -np 2 "${via_path[@]}" "$bin.clang"
  check "attr_info.clang, LD_LIBRARY_PATH, np=2" passed 2 || diag_job
else
  skip "attr_info.clang, LD_LIBRARY_PATH, np=2" "configure found no clang"
fi
check_shm
tap_done
