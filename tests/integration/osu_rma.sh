#!/usr/bin/env bash
# The installed one-sided OSU-compatible benchmarks (osu/, README "One-sided"), quickly: each one
# with validation (-c: the target checks its window after the iterations, the origin what each
# fetch brought back; exit 1 on a wrong element), every synchronization (-s) and every window
# flavor (-w) at least once, on 2 ranks of one emulated instance, then a few across two
# instances. Then the options they refuse. Times are not checked: that is osu/compare's job.
. "$(dirname "$0")/lib.sh"

osu=$TM_PREFIX/libexec/torusmpi/osu
[ -x "$osu/osu_put_latency" ] || { echo "Bail out! no benchmarks in $osu: run make install first"; exit 1; }
quick=(-i 20 -x 2)

# rma_ok <last size>: the job passed, printed the header with its window and synchronization
# lines, a row for <last size> and no row that failed validation.
rma_ok() {
  [ "$job_rc" -eq 0 ] || return 1
  grep -q "^# Window creation: MPI_Win_" "$job_out" || { echo "# no window line"; return 1; }
  grep -q "^# Synchronization: " "$job_out" || { echo "# no synchronization line"; return 1; }
  grep -Eq "^$1[[:space:]].*Pass" "$job_out" || { echo "# no passing row for size $1"; return 1; }
  ! grep -Eq '(^|[[:space:]])Fail([[:space:]]|$)' "$job_out" || { echo "# a row failed"; return 1; }
}

# rma <benchmark> <last size> [its arguments...]
rma() {
  local name=$1 last=$2
  shift 2
  run_job 60 "${mpirun[@]}" -np 2 -x TORUSMPI_DEVICE_GUARD=1 -x TORUSMPI_STATS=1 "$osu/$name" -c \
    "${quick[@]}" "$@"
  check "$name -c $*" rma_ok "$last" || diag_job
}

for s in pscw fence lock flush flush_local lock_all; do
  rma osu_put_latency 4096 -m 1:4096 -s $s
done
rma osu_get_latency 65536 -m 1:65536 -w create -s lock
rma osu_get_latency 4096 -m 1:4096 -w dynamic -s fence
rma osu_get_latency 4096 -m 1:4096 -w allocate -s pscw
rma osu_put_latency 4096 -m 1:4096 -w dynamic -s flush
rma osu_acc_latency 4096 -m 4:4096 -T mpi_int -s flush
rma osu_acc_latency 4096 -m 4:4096 -T mpi_int -w dynamic -s lock_all
rma osu_get_acc_latency 4096 -m 4:4096 -T mpi_float -w create -s flush_local
rma osu_get_acc_latency 4096 -m 4:4096 -T mpi_int -s fence
rma osu_fop_latency 8 -s flush
rma osu_fop_latency 8 -w create -s pscw
rma osu_cas_latency 8 -w dynamic -s flush
rma osu_cas_latency 8 -w create -s fence
rma osu_put_bw 65536 -m 1:65536 -W 8 -s flush
rma osu_put_bw 4096 -m 1:4096 -W 8 -w create -s fence
rma osu_get_bw 65536 -m 1:65536 -W 8 -w create -s lock
rma osu_get_bw 4096 -m 1:4096 -W 8 -w dynamic -s pscw
rma osu_put_bibw 65536 -m 1:65536 -W 8 -s pscw
rma osu_put_bibw 4096 -m 1:4096 -W 8 -w dynamic -s fence
# Across two emulated instances of one rank (every target on the other: requests over ucx), the
# last two with origin buffers in device memory.
across=(-x TORUSMPI_NET=ucx -x UCX_NET_DEVICES=lo -x TORUSMPI_INSTANCE=torus:1x1:cores=1
  -x TORUSMPI_INSTANCES=2 -x TORUSMPI_DEVICE_GUARD=1 -x TORUSMPI_STATS=1)
rma_across() {
  local name=$1 last=$2
  shift 2
  run_job 60 "${mpirun[@]}" -np 2 "${across[@]}" "$osu/$name" -c "${quick[@]}" "$@"
  if grep -q 'built without it' "$job_err"; then
    skip "$name -c $* across instances" "this build has no ucx transport"
    return
  fi
  check "$name -c $* across 2 instances" rma_ok "$last" || diag_job
}
rma_across osu_put_latency 65536 -m 1:65536 -s flush
rma_across osu_get_bw 65536 -m 1:65536 -W 8 -w create -s lock
rma_across osu_put_bibw 4096 -m 1:4096 -W 8 -w dynamic -s pscw
rma_across osu_acc_latency 4096 -m 4:4096 -T mpi_int -s lock_all
rma_across osu_get_acc_latency 4096 -m 4:4096 -T mpi_float -w create -s fence
rma_across osu_fop_latency 8 -s flush_local
rma_across osu_cas_latency 8 -w dynamic -s flush
rma_across osu_put_latency 65536 -m 1:65536 -w create -s flush -d neuron D H
rma_across osu_get_latency 65536 -m 1:65536 -w allocate -s lock -d neuron D H
# Origin buffers in device memory, the window on the host (-d neuron D H).
rma osu_put_latency 4096 -m 1:4096 -w create -s flush -d neuron D H
rma osu_get_latency 4096 -m 1:4096 -w create -s flush -d neuron D H
# Windows in device memory too (D D): every flavor, reached through the device layer only, with
# nothing staged through host memory; then across instances.
staged_nothing() {
  grep -q '^torusmpi-stats staging bytes=0$' "$job_err" ||
    { grep '^torusmpi-stats staging' "$job_err" | sed 's/^/# /'; return 1; }
}
rma_device() {
  rma "$@" -d neuron D D
  check "... staging bytes=0" staged_nothing || diag_job
}
rma_device osu_put_latency 65536 -m 1:65536 -w allocate -s flush
rma_device osu_get_latency 65536 -m 1:65536 -w create -s lock
rma_device osu_put_bw 65536 -m 1:65536 -W 8 -w dynamic -s pscw
rma_device osu_acc_latency 4096 -m 4:4096 -T mpi_int -w allocate -s fence
rma_device osu_get_acc_latency 4096 -m 4:4096 -T mpi_float -w create -s lock_all
rma_device osu_fop_latency 8 -w dynamic -s flush_local
rma_device osu_cas_latency 8 -w allocate -s flush
rma_across osu_put_latency 65536 -m 1:65536 -w allocate -s flush -d neuron D D
check "... staging bytes=0 (the puts sent from the device)" staged_nothing || diag_job
rma_across osu_acc_latency 4096 -m 4:4096 -T mpi_int -w create -s lock -d neuron D D
check "... staging bytes=0 (the accumulates' data sent from the device)" staged_nothing ||
  diag_job

# Puts and gets between ranks of two chips count their bytes on the emulated links, as messages
# do: 10 puts (gets) of 1 MiB cross link 0-1 (1-0), one way; host and device windows.
link_bytes() { sed -n "s/^torusmpi-stats link $1 bytes=//p" "$job_err"; }
crossed() {
  local there back
  there=$(link_bytes "$1")
  back=$(link_bytes "$2")
  [ "${there:-0}" -ge 10485760 ] && [ "${back:-0}" -lt 1048576 ] ||
    { echo "# link $1: ${there:-none} bytes, link $2: ${back:-none}"; return 1; }
}
for d in "" "-d neuron D D"; do
  # shellcheck disable=SC2086 # $d is two words or none
  run_job 60 "${mpirun[@]}" -np 2 -x TORUSMPI_STATS=1 -x TORUSMPI_INSTANCE=torus:2x2:cores=1 \
    "$osu/osu_put_latency" -m 1048576:1048576 -i 10 -x 0 $d
  check "osu_put_latency${d:+ $d} between two chips: the puts crossed link 0-1" crossed 0-1 1-0 ||
    diag_job
  # shellcheck disable=SC2086
  run_job 60 "${mpirun[@]}" -np 2 -x TORUSMPI_STATS=1 -x TORUSMPI_INSTANCE=torus:2x2:cores=1 \
    "$osu/osu_get_latency" -m 1048576:1048576 -i 10 -x 0 $d
  check "osu_get_latency${d:+ $d} between two chips: the gets crossed link 1-0" crossed 1-0 0-1 ||
    diag_job
done

# With pacing on 0.1 GB/s links (20 us a hop), a put or a get of 1 MiB between neighbour chips
# takes at least 1 MiB / 0.1 GB/s + 20 us = 10.5 ms: a pacing that does nothing fails on any
# machine that is not extremely slow.
paced() {
  awk '$1 == 1048576 { found = 1; if ($2 < 10500) bad = 1; print "# " $0 }
       END { exit !(found && !bad) }' "$job_out"
}
for b in osu_put_latency osu_get_latency; do
  run_job 60 "${mpirun[@]}" -np 2 -x TORUSMPI_LINK_PACING=1 \
    -x TORUSMPI_INSTANCE=torus:2x2:cores=1:link=0.1,20 "$osu/$b" -m 1048576:1048576 -i 3 -x 0
  check "$b, 1 MiB between chips on paced 0.1 GB/s links: 10.5 ms or more" paced || diag_job
done

# refused <message> <ranks> <benchmark> [arguments...]: exit status 1 and the message on stderr.
refused() {
  local message=$1 np=$2 name=$3
  shift 3
  run_job 60 "${mpirun[@]}" -np "$np" "$osu/$name" "$@"
  check "$name $* on $np ranks: refused" grep -q -- "$message" "$job_err" || diag_job
  check "... exit status 1" test "$job_rc" -ne 0 || diag_job
}
refused "bad value 'lock' for option '-s'" 2 osu_put_bibw -s lock
refused "bad value 'shared' for option '-w'" 2 osu_put_latency -w shared
refused "unknown option '-m'" 2 osu_fop_latency -m 8
refused "-c needs -T mpi_int or -T mpi_float" 2 osu_acc_latency -c
refused "needs exactly 2 ranks (got 3)" 3 osu_get_latency
check_shm
tap_done
