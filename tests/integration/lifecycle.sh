#!/usr/bin/env bash
# Around MPI_Init and MPI_Finalize (tests/progs/lifecycle.c): a second MPI_Init is an error the
# program survives; a call before MPI_Init or after MPI_Finalize ends the job, saying which call
# and why, instead of crashing or answering garbage.
. "$(dirname "$0")/lib.sh"

for build in gcc clang; do
  bin=$TM_PROGS/lifecycle.$build
  [ -x "$bin" ] || { skip "lifecycle.$build" "$bin was not built"; continue; }
  run_job 60 "${mpirun[@]}" -np 3 "${via_preload[@]}" "$bin"
  check "lifecycle.$build, np=3: init twice is an error, thread level honest" ranks_done 3 ||
    diag_job

  for mode in before-init after-final; do
    case $mode in
      before-init) why="before MPI_Init" ;;
      after-final) why="after MPI_Finalize" ;;
    esac
    run_job 30 "${mpirun[@]}" -np 2 "${via_preload[@]}" "$bin" "$mode"
    check "lifecycle.$build $mode, np=2: the job fails" \
      test "$job_rc" -ne 0 -a "$job_rc" -ne 124 || diag_job
    check "lifecycle.$build $mode: stderr says MPI_Comm_rank was called $why" \
      grep -q "MPI_Comm_rank: called $why" "$job_err" || diag_job
    check "lifecycle.$build $mode: the call did not return" not grep -q '^FAIL' "$job_out" ||
      diag_job
  done
done

check_shm
tap_done
