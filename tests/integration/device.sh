#!/usr/bin/env bash
# Device buffers (tests/progs/device.c) with TORUSMPI_DEVICE_GUARD=1, so that any host
# dereference of a device pointer inside the library faults: pointer kinds, MPI_Alloc_mem with
# torusmpi_memory_kind, bad buffers under MPI_ERRORS_RETURN, point-to-point between every pair of
# kinds (eager and rendezvous, self, truncation, Sendrecv_replace, a vector type), and every
# collective with device buffers on every rank and mixed with host ones. At 3 and 4 ranks on the
# host model and on two small tori (one and two ranks per chip). Then the guard itself: a program
# that reads a device pointer in host code dies of SIGSEGV with the guard and lives without it,
# with the network transports opened too. And the engine's overlap: a nonblocking device
# allreduce completes while the program sleeps, between chips and between instances.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/device
for instance in host torus:2x2:cores=1 torus:2x2:cores=2; do
  for np in 3 4; do
    run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
      -x TORUSMPI_INSTANCE="$instance" "$bin.gcc"
    check "device.gcc, guard on, $instance, np=$np" ranks_done "$np" || diag_job
  done
done
# Small messages the rendezvous way, so that device memory meets the pipelined protocol at every
# size (and host memory the single copy beside it).
run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
  -x TORUSMPI_EAGER_LIMIT=0 -x TORUSMPI_INSTANCE=torus:2x2:cores=2 "$bin.gcc"
check "device.gcc, guard on, eager limit 0, np=4" ranks_done 4 || diag_job
# Small device messages through the sender's HBM eager ring instead of the receiver's device
# queue: the path of those between 1 KiB and 16 KiB, at every size.
run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
  -x TORUSMPI_DEVICE_INLINE_LIMIT=0 -x TORUSMPI_INSTANCE=torus:2x2:cores=1 "$bin.gcc" only
check "device.gcc only, guard on, no device queue, np=4" ranks_done 4 || diag_job
# Device buffers only: no device byte may pass through the library's host memory (HBM to HBM on
# a node, the NIC straight from and into HBM between instances), on every path: eager and
# rendezvous sizes, self, Sendrecv_replace and every collective.
staging_zero() {
  ranks_done "$1" || return 1
  grep -q '^torusmpi-stats staging bytes=0$' "$job_err" ||
    { grep '^torusmpi-stats staging' "$job_err" | sed 's/^/# /'; return 1; }
}
for instance in host torus:2x2:cores=1 torus:2x2:cores=2; do
  run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
    -x TORUSMPI_STATS=1 -x TORUSMPI_INSTANCE="$instance" "$bin.gcc" only
  check "device.gcc only, $instance, np=4: staging bytes=0" staging_zero 4 || diag_job
done
for net in "TORUSMPI_NET=ofi -x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo" \
  "TORUSMPI_NET=ucx -x UCX_NET_DEVICES=lo"; do
  run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
    -x TORUSMPI_STATS=1 -x TORUSMPI_INSTANCE=torus:1x2:cores=1 -x TORUSMPI_INSTANCES=2 \
    -x $net "$bin.gcc" only
  check "device.gcc only, 2 instances, ${net%% *}, np=4: staging bytes=0" staging_zero 4 ||
    diag_job
done
# The counter sees staging where there is some: paced links cannot hold a DMA read back, so
# device messages between chips pipeline through host memory there.
run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
  -x TORUSMPI_STATS=1 -x TORUSMPI_LINK_PACING=1 -x TORUSMPI_INSTANCE=torus:2x2:cores=1 \
  "$bin.gcc" only
check "device.gcc only, paced links, np=4: right results, staging counted" \
  eval 'ranks_done 4 && grep -Eq "^torusmpi-stats staging bytes=[1-9]" "$job_err"' || diag_job

# The chip's engine runs a nonblocking device collective while the program sleeps: a 1 MiB
# MPI_Iallreduce between two chips is complete at the first MPI_Test after a sleep of twice the
# blocking call's time, in at least 4 of 5 tries.
run_job 120 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_INSTANCE=torus:2x2:cores=1 \
  "$bin.gcc" overlap
check "device.gcc overlap, two chips, np=2: complete while the program sleeps" ranks_done 2 ||
  diag_job
grep '^overlap:' "$job_out" | sed 's/^/# /'
# The same between two instances, over each network: the rendezvous reads run while the engine
# polls, its sleeps end when the network has something for it, and the peer's engine serves them.
for net in "TORUSMPI_NET=ofi -x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo" \
  "TORUSMPI_NET=ucx -x UCX_NET_DEVICES=lo"; do
  run_job 120 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_INSTANCE=torus:1x1:cores=1 \
    -x TORUSMPI_INSTANCES=2 -x $net "$bin.gcc" overlap
  check "device.gcc overlap, two instances, ${net%% *}, np=2: complete while the program sleeps" \
    ranks_done 2 || diag_job
  grep '^overlap:' "$job_out" | sed 's/^/# /'
  # While that collective waits for a peer and nothing arrives, the engine sleeps on the network's
  # descriptor rather than polling every few microseconds.
  run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_INSTANCE=torus:1x1:cores=1 \
    -x TORUSMPI_INSTANCES=2 -x $net "$bin.gcc" idle
  check "device.gcc idle, two instances, ${net%% *}: the engine sleeps while its collective waits" \
    ranks_done 2 || diag_job
  grep '^idle:' "$job_out" | sed 's/^/# /'
done

# A count past a device allocation in MPI_Allreduce and MPI_Allgather: MPI_ERR_BUFFER on every
# rank, caught before any data moves, and the job goes on.
run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
  -x TORUSMPI_INSTANCE=torus:2x2:cores=1 "$bin.gcc" overrun
check "device.gcc overrun: collectives refuse a count past a device allocation, np=2" \
  ranks_done 2 || diag_job
check "... and go on to the next call" grep -q '^overrun: refused, then an allreduce of 2' \
  "$job_out" || diag_job
if [ -x "$bin.clang" ]; then
  run_job 120 "${mpirun[@]}" -np 3 "${via_path[@]}" -x TORUSMPI_DEVICE_GUARD=1 "$bin.clang"
  check "device.clang, LD_LIBRARY_PATH, guard on, np=3" ranks_done 3 || diag_job
else
  skip "device.clang, LD_LIBRARY_PATH, guard on, np=3" "configure found no clang"
fi

# The guard: a singleton that reads a device pointer. 139 = 128 + SIGSEGV, from the shell.
run_job 30 env "${no_launcher[@]}" LD_PRELOAD="$tm_libmpi" TORUSMPI_DEVICE_GUARD=1 \
  "$bin.gcc" deref
check "a host read of a device pointer dies of SIGSEGV under the guard" \
  test "$job_rc" -eq 139 || diag_job
check "... after reaching the read" grep -q '^reading device pointer' "$job_out" || diag_job
run_job 30 env "${no_launcher[@]}" LD_PRELOAD="$tm_libmpi" TORUSMPI_DEVICE_GUARD=0 \
  "$bin.gcc" deref
check "without the guard the same read works" \
  eval '[ "$job_rc" -eq 0 ] && grep -q "^survived" "$job_out"' || diag_job
# The same read on two emulated instances, so the network library is opened too: libfabric (its
# psm provider's libinfinipath) and UCX install crash handlers as they load, which must not
# replace the program's (the process dies of SIGSEGV, not of their backtrace and exit 1).
for net in "TORUSMPI_NET=ofi -x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo" \
  "TORUSMPI_NET=ucx -x UCX_NET_DEVICES=lo"; do
  # shellcheck disable=SC2086 # $net is -x options
  run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
    -x TORUSMPI_INSTANCES=2 -x $net "$bin.gcc" deref
  check "${net%% *}, 2 instances: the read dies of SIGSEGV, not of the network library's handler" \
    grep -q 'exited on signal 11' "$job_err" || diag_job
done
check_shm
tap_done
