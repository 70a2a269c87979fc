#!/usr/bin/env bash
# The libfabric transport (pml/ofi) between emulated instances on this host: 2 and 3 instances of
# small tori (TORUSMPI_INSTANCES), the tcp provider on the loopback interface only. net_p2p
# (tests/progs/net_p2p.c: MPI order from a shared-memory and a network sender, eager, rendezvous,
# synchronous, empty, truncated, large and device messages), the point-to-point and collective
# programs across instances, a receiver's MPI_Test that stays local while its sender computes
# (the RMA read left running), the per-NIC byte count, a provider that does not exist, and a rank
# that dies in the middle of a collective (the others end, diagnosed, within seconds).
. "$(dirname "$0")/lib.sh"

# Loopback only: nothing of these jobs leaves the host.
net=(-x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo -x TORUSMPI_NET=ofi)
p=$TM_PROGS

for inst in 2 3; do
  for model in torus:2x1:cores=1 torus:2x2:cores=1; do
    per=$([ "$model" = torus:2x1:cores=1 ] && echo 2 || echo 4)
    # 3 x 4 ranks is too many for 2 cores in this script's time.
    [ "$inst" -eq 3 ] && [ "$per" -eq 4 ] && continue
    np=$((inst * per))
    run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "${net[@]}" \
      -x TORUSMPI_INSTANCE="$model" -x TORUSMPI_INSTANCES="$inst" -x TORUSMPI_DEVICE_GUARD=1 \
      "$p/net_p2p.gcc" "$per"
    check "net_p2p, $inst x $model, np=$np (device guard on)" ranks_done "$np" || diag_job
  done
done

# The existing programs across instances: 2 ranks per instance, so every rank has a shared-memory
# peer and network peers.
for inst in 2 3; do
  np=$((2 * inst))
  for prog in "p2p_basic" "p2p_order 2000" "p2p_ring 100" "p2p_big 16" "coll_basic"; do
    set -- $prog
    run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "${net[@]}" \
      -x TORUSMPI_INSTANCE=torus:2x1:cores=1 -x TORUSMPI_INSTANCES="$inst" "$p/$1.gcc" "${@:2}"
    check "$1 across $inst instances, np=$np" ranks_done "$np" || diag_job
  done
done

# The RMA read goes on while the receiver polls: its MPI_Test stays local while the sender, whose
# progress serves the read under tcp, computes.
run_job 60 "${mpirun[@]}" -np 4 "${via_preload[@]}" "${net[@]}" \
  -x TORUSMPI_INSTANCE=torus:2x1:cores=1 -x TORUSMPI_INSTANCES=2 "$p/net_p2p.gcc" 2 local
check "net_p2p local, np=4, 2 instances: MPI_Test never waits for a computing sender" \
  ranks_done 4 || diag_job
grep '^# local:' "$job_out"

# Bytes per NIC: 1000000 + 100 B from rank 0 (instance 0) to rank 3 (instance 1, chip 1).
run_job 60 "${mpirun[@]}" -np 4 "${via_preload[@]}" "${net[@]}" -x TORUSMPI_STATS=1 \
  -x TORUSMPI_INSTANCE=torus:2x1:cores=1 -x TORUSMPI_INSTANCES=2 "$p/net_p2p.gcc" 2 stats
check "stats job" ranks_done 4 || diag_job
check "torusmpi-stats nic 1.1 bytes=1000100 (the receiving chip), the others 0" eval \
  "grep -qx 'torusmpi-stats nic 1.1 bytes=1000100' \"\$job_err\" &&
   test \"\$(grep -c '^torusmpi-stats nic [01]\\.[01] bytes=0\$' \"\$job_err\")\" -eq 3" ||
  diag_job

run_job 60 "${mpirun[@]}" -np 4 "${via_preload[@]}" "${net[@]}" -x TORUSMPI_OFI_PROVIDER=nosuch \
  -x TORUSMPI_INSTANCE=torus:2x1:cores=1 -x TORUSMPI_INSTANCES=2 "$p/net_p2p.gcc" 2
check "TORUSMPI_OFI_PROVIDER=nosuch fails MPI_Init" test "$job_rc" -ne 0 -a "$job_rc" -ne 124 ||
  diag_job
check "... saying no provider 'nosuch' offers reliable datagram endpoints" grep -q \
  "ofi: no libfabric provider 'nosuch' offers reliable datagram endpoints (fi_getinfo: " \
  "$job_err" || diag_job

# A rank killed in a loop of MPI_Allreduce: the job ends within 15 s, a rank naming it.
run_job 60 "${mpirun[@]}" -np 6 "${via_preload[@]}" "${net[@]}" \
  -x TORUSMPI_INSTANCE=torus:2x1:cores=1 -x TORUSMPI_INSTANCES=3 "$p/net_p2p.gcc" 2 kill
diag "dead rank: job ended after $job_ms ms (exit $job_rc)"
check "a rank SIGKILLed in MPI_Allreduce ends the job within 15 s" \
  test "$job_rc" -ne 0 -a "$job_rc" -ne 124 -a "$job_ms" -lt 15000 || diag_job
check "... with torusmpi naming the dead rank 5" grep -Eq \
  'torusmpi\[r[0-4]\] error: (ofi|shm): rank 5 .*ended without calling MPI_Finalize' "$job_err" ||
  diag_job

check_shm
tap_done
