#!/usr/bin/env bash
# The MPI tools interface (tests/progs/tools.c): torusmpi's parameters as read-only control
# variables, usable before MPI_Init and after MPI_Finalize; no performance variables.
. "$(dirname "$0")/lib.sh"

for build in gcc clang; do
  bin=$TM_PROGS/tools.$build
  [ -x "$bin" ] || { skip "tools.$build" "$bin was not built"; continue; }
  run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_SPIN_COUNT=77 \
    -x TORUSMPI_DEBUG=boot "$bin"
  check "tools.$build, LD_PRELOAD, np=2: control variables read the environment" \
    ranks_done 2 || diag_job
  run_job 30 env "${no_launcher[@]}" LD_LIBRARY_PATH="$TM_LIBDIR" TORUSMPI_SPIN_COUNT=77 \
    TORUSMPI_DEBUG=boot "$bin"
  check "tools.$build, singleton: control variables read the environment" ranks_done 1 ||
    diag_job
done

check_shm
tap_done
