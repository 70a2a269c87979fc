#!/usr/bin/env bash
# MPI_Abort(MPI_COMM_WORLD, 7) from one rank (tests/progs/abort.c) ends the whole job with status
# 7, says so, and leaves no process behind, whether the other ranks wait in MPI_Finalize or sleep
# outside MPI.
. "$(dirname "$0")/lib.sh"

# The processes still running one of our abort binaries (zombies are already dead).
survivors() {
  ps -eo pid=,stat=,args= | awk -v dir="$TM_PROGS/abort." \
    'index($3, dir) == 1 && $2 !~ /^Z/ { print $1 }'
}

# none_left: give the launcher a moment to reap, then nothing may remain.
none_left() {
  local i
  for ((i = 0; i < 50; i++)); do
    [ -z "$(survivors)" ] && return 0
    sleep 0.1
  done
  return 1
}

# aborts <np> <build> <mode> [mpirun arguments...]
aborts() {
  local np=$1 build=$2 mode=$3
  shift 3
  local bin=$TM_PROGS/abort.$build desc="abort.$build $mode, np=$np"
  if [ ! -x "$bin" ]; then
    skip "$desc" "$bin was not built"
    return
  fi
  run_job 30 "${mpirun[@]}" -np "$np" "$@" "$bin" "$mode"
  check "$desc: mpirun exits with status 7" test "$job_rc" -eq 7 || diag_job
  check "$desc: stderr names MPI_Abort" grep -q MPI_Abort "$job_err" || diag_job
  if ! check "$desc: no process left" none_left; then
    diag "left: $(survivors | tr '\n' ' ')"
    # Only our own test binaries, by pid.
    survivors | xargs -r kill -9
  fi
}

aborts 1 gcc finalize "${via_preload[@]}"
aborts 2 clang sleep "${via_path[@]}"
aborts 3 gcc finalize "${via_path[@]}"
aborts 4 gcc sleep "${via_preload[@]}"

check_shm
tap_done
