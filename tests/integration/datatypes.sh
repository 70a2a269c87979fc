#!/usr/bin/env bash
# Derived datatypes, packing and external32 (tests/progs/datatypes.c): every constructor's bounds,
# packed bytes, envelope and contents, reference counts, names, element counts, MPI_Pack/Unpack,
# external32 bytes, bad arguments with their classes, and packed data sent between two ranks.
# First on Open MPI (the reference), then on torusmpi at 1 and 2 ranks.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/datatypes
run_job 60 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 2 "$bin.gcc"
check "datatypes.gcc on Open MPI itself (the reference), np=2" ranks_done 2 || diag_job

# Every case runs on torusmpi: a "skip" line would mean it was taken for a reference library
# (only the two-rank exchange is skipped at np=1).
passed() {
  ranks_done "$1" && ! grep '^skip' "$job_out" | grep -qv 'exchange: needs 2 ranks'
}
for np in 1 2; do
  run_job 60 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$bin.gcc"
  check "datatypes.gcc, LD_PRELOAD, np=$np" passed "$np" || diag_job
done
if [ -x "$bin.clang" ]; then
  run_job 60 "${mpirun[@]}" -np 2 "${via_path[@]}" "$bin.clang"
  check "datatypes.clang, LD_LIBRARY_PATH, np=2" passed 2 || diag_job
else
  skip "datatypes.clang, LD_LIBRARY_PATH, np=2" "configure found no clang"
fi
check_shm
tap_done
