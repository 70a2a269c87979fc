#!/usr/bin/env bash
# Stream-ordered calls (tests/progs/streams.c): order within a stream, two streams at once, every
# enqueued collective and point-to-point call, errors at the call and at synchronize, and work left
# queued at MPI_Finalize. Device buffers with the guard on, so no device byte may pass through the
# library's host memory: staging bytes 0. On the host model, a torus with one and two ranks per
# chip, and two instances over the network; then MPI_Abort while streams wait, which must end the
# job and leave nothing behind.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/streams
# streams_ok <np>: every rank passed, ran the work queued at MPI_Finalize, and staged nothing.
streams_ok() {
  ranks_done "$1" || return 1
  [ "$(grep -c '^after finalize [0-9]*: queued work ran$' "$job_out")" -eq "$1" ] || return 1
  grep -q '^torusmpi-stats staging bytes=0$' "$job_err" ||
    { grep '^torusmpi-stats staging' "$job_err" | sed 's/^/# /'; return 1; }
}
for instance in host torus:2x2:cores=1 torus:2x2:cores=2; do
  for np in 3 4; do
    run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
      -x TORUSMPI_STATS=1 -x TORUSMPI_INSTANCE="$instance" "$bin.gcc"
    check "streams.gcc, $instance, np=$np: right, in order, staging bytes=0" streams_ok "$np" ||
      diag_job
  done
done
run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
  -x TORUSMPI_STATS=1 -x TORUSMPI_INSTANCE=torus:1x2:cores=1 -x TORUSMPI_INSTANCES=2 \
  -x TORUSMPI_NET=ofi -x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo "$bin.clang"
check "streams.clang, 2 instances over ofi, np=4: right, in order, staging bytes=0" \
  streams_ok 4 || diag_job
# MPI_Abort while every rank's stream waits for a message: the job ends with the abort's code.
run_job 60 "${mpirun[@]}" -np 3 "${via_preload[@]}" -x TORUSMPI_INSTANCE=torus:2x2:cores=1 \
  "$bin.gcc" abort
check "streams.gcc abort: MPI_Abort ends a job whose streams wait" \
  eval '[ "$job_rc" -ne 0 ] && [ "$job_rc" -ne 124 ] && grep -q "^aborting" "$job_out"' || diag_job
check_shm
tap_done
