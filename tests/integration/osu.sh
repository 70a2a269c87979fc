#!/usr/bin/env bash
# The installed OSU-compatible benchmarks (osu/), as a user runs them: every one with validation
# (-c: each rank checks the data it received, and the benchmark exits 1 on a wrong byte) at sizes
# from 1 byte up, on host buffers and with -d neuron on device buffers (the guard on, so no device
# byte may pass through the library's host memory), on rank counts that are not powers of two, on
# the host model and on an emulated torus; osu_iallreduce with -S (its compute phase leaves the
# core) too. What is checked is what a reader of their tables relies on: the job passed, every
# size has a row, and no row says Fail. Times are not checked: that is osu/compare's job.
. "$(dirname "$0")/lib.sh"

osu=$TM_PREFIX/libexec/torusmpi/osu
[ -x "$osu/osu_latency" ] || { echo "Bail out! no benchmarks in $osu: run make install first"; exit 1; }
quick=(-i 4 -x 1)

# osu_ok <benchmark> <last size>: the job passed, printed its header, a row for <last size> (the
# largest asked for) and no row that failed validation.
osu_ok() {
  [ "$job_rc" -eq 0 ] || return 1
  grep -q "^# torusmpi OSU-compatible" "$job_out" || { echo "# no header"; return 1; }
  [ -z "$2" ] || grep -Eq "^$2[[:space:]]" "$job_out" || { echo "# no row for size $2"; return 1; }
  ! grep -Eq '(^|[[:space:]])Fail([[:space:]]|$)' "$job_out" || { echo "# a row failed"; return 1; }
}

# bench <np> <instance> <benchmark> <last size> [its arguments...]
bench() {
  local np=$1 instance=$2 name=$3 last=$4
  shift 4
  run_job 120 "${mpirun[@]}" -np "$np" -x TORUSMPI_DEVICE_GUARD=1 -x TORUSMPI_STATS=1 \
    -x TORUSMPI_INSTANCE="$instance" "$osu/$name" "$@"
  check "$name $* (np=$np, $instance)" osu_ok "$name" "$last" || diag_job
}

# Device runs must have staged nothing.
staged_nothing() {
  grep -q '^torusmpi-stats staging bytes=0$' "$job_err" ||
    { grep '^torusmpi-stats staging' "$job_err" | sed 's/^/# /'; return 1; }
}

for instance in host torus:2x2:cores=1; do
  for device in "" neuron; do
    d=()
    [ -z "$device" ] || d=(-d neuron)
    # Point to point: D D puts both sides on the device.
    dd=()
    [ -z "$device" ] || dd=(-d neuron D D)
    for b in osu_latency osu_bw osu_bibw; do
      bench 2 "$instance" $b 65536 -c "${quick[@]}" -m 1:65536 "${dd[@]}"
    done
    bench 2 "$instance" osu_latency_mt 4096 -c "${quick[@]}" -m 1:4096 -t 2 "${dd[@]}"
    bench 4 "$instance" osu_multi_lat 4096 -c "${quick[@]}" -m 1:4096 "${dd[@]}"
    bench 3 "$instance" osu_ring_lat 4096 -c "${quick[@]}" -m 1:4096 "${dd[@]}"
    # Collectives on 3 ranks (not a power of two), every size from 1 byte to past the eager limit.
    for b in osu_allreduce osu_allgather osu_allgatherv osu_alltoall osu_alltoallv osu_bcast \
      osu_reduce osu_reduce_scatter osu_reduce_scatter_block osu_gather osu_scatter; do
      bench 3 "$instance" $b 131072 -c "${quick[@]}" -m 1:131072 "${d[@]}"
    done
    bench 3 "$instance" osu_barrier "" "${quick[@]}" "${d[@]}"
    bench 3 "$instance" osu_iallreduce 131072 -c "${quick[@]}" -m 1:131072 "${d[@]}"
    [ -z "$device" ] || check "... staging bytes=0" staged_nothing || diag_job
  done
done
# Large host messages between two ranks with a core each: split copies (the receiver reads one half
# while the sender writes the other), every byte checked, at sizes around the 1 MiB cut.
for b in osu_latency osu_bw osu_allgather; do
  bench 2 host $b 4194304 -c "${quick[@]}" -m 524288:4194304
done
# Typed data, where sums of chars would saturate.
for type in mpi_int mpi_float; do
  bench 3 torus:2x2:cores=1 osu_allreduce 65536 -c "${quick[@]}" -m 4:65536 -T $type -d neuron
done
# -S, the compute phase yielding its core to the device engine: right at every size.
bench 2 torus:2x1:cores=1 osu_iallreduce 1048576 -c -S "${quick[@]}" -m 1:1048576 -d neuron
check "... its overlap column is a percentage on every row" \
  awk '/^[0-9]/ { n++; if ($5 < 0 || $5 > 100) bad++ } END { exit !(n == 21 && !bad) }' \
  "$job_out" || diag_job
check_shm
tap_done
