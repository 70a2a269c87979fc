#!/usr/bin/env bash
# Persistent collectives (tests/progs/pcoll.c): Open MPI's MPIX_<coll>_init, every collective and
# neighbourhood collective started three times with new data, Startall, a datatype freed after
# its init, inactive requests, errors. First on real Open MPI (the reference: the program checks
# itself), then on torusmpi: rank counts 1 to 5 and 8 (oversubscribed), the clang build, through
# LD_LIBRARY_PATH, and with the progress thread.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/pcoll

run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$bin.gcc"
check "pcoll.gcc on Open MPI itself (the reference), np=3" ranks_done 3 || diag_job

# torusmpi is held to the checks Open MPI skips.
passed() { ranks_done "$1" && ! grep -q '^skip' "$job_out"; }

# on_torusmpi <build> <np> <how> [mpirun arguments...]
on_torusmpi() {
  local build=$1 np=$2 how=$3
  shift 3
  if [ ! -x "$bin.$build" ]; then
    skip "pcoll.$build, $how, np=$np" "$bin.$build was not built"
    return
  fi
  run_job 120 "${mpirun[@]}" -np "$np" "$@" "$bin.$build"
  check "pcoll.$build, $how, np=$np" passed "$np" || diag_job
}

for np in 1 2 3 4 5 8; do
  on_torusmpi gcc $np "LD_PRELOAD" "${via_preload[@]}"
done
on_torusmpi clang 3 "LD_PRELOAD" "${via_preload[@]}"
on_torusmpi gcc 4 "LD_LIBRARY_PATH" "${via_path[@]}"
on_torusmpi gcc 3 "LD_PRELOAD, TORUSMPI_ASYNC_PROGRESS=1" "${via_preload[@]}" \
  -x TORUSMPI_ASYNC_PROGRESS=1

check_shm
tap_done
