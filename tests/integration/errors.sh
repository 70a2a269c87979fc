#!/usr/bin/env bash
# Errors (tests/progs/errors.c): under MPI_ERRORS_RETURN every bad call gets its error class and
# the program goes on; under MPI_ERRORS_ARE_FATAL a bad call ends the job, saying which call and
# which argument.
. "$(dirname "$0")/lib.sh"

builds=(gcc)
[ -x "$TM_PROGS/errors.clang" ] && builds+=(clang) || skip "errors.clang" "configure found no clang"

for build in "${builds[@]}"; do
  bin=$TM_PROGS/errors.$build
  run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" "$bin"
  check "errors.$build, LD_PRELOAD, np=2: every error has its class" ranks_done 2 || diag_job
  run_job 30 env "${no_launcher[@]}" LD_LIBRARY_PATH="$TM_LIBDIR" "$bin"
  check "errors.$build, singleton: every error has its class" ranks_done 1 || diag_job

  run_job 30 "${mpirun[@]}" -np 2 "${via_path[@]}" "$bin" fatal
  check "errors.$build fatal, np=2: the job fails" \
    test "$job_rc" -ne 0 -a "$job_rc" -ne 124 || diag_job
  check "errors.$build fatal: stderr names MPIX_Barrier_init and its request" \
    grep -q 'MPIX_Barrier_init.*request argument is NULL' "$job_err" || diag_job
  check "errors.$build fatal: MPIX_Barrier_init did not return" not grep -q '^FAIL' "$job_out" ||
    diag_job
done

check_shm
tap_done
