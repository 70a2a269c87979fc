#!/usr/bin/env bash
# The UCX network transport (TORUSMPI_NET=ucx) between emulated instances on this host: ranks of
# one instance talk through shared memory, ranks of different instances only through UCX, kept to
# tcp over the loopback device (UCX_NET_DEVICES=lo: nothing leaves this host). Point-to-point
# (order, rings, big messages by the rendezvous single copy), device buffers under the guard (the
# pipelined rendezvous), the collectives, at 2 and 3 instances; that network bytes are counted
# per NIC (so the network really carried them); a transport name that is none; and a rank that
# kills itself in the middle of allreduces: every other rank ends with a diagnosis within seconds,
# and nothing is left in /dev/shm.
. "$(dirname "$0")/lib.sh"

net=(-x TORUSMPI_NET=ucx -x UCX_NET_DEVICES=lo)
progs=$TM_PROGS

# on <model> <instances> <np> <seconds> <program> [args...]: one job across instances.
on() {
  local model=$1 instances=$2 np=$3 limit=$4
  shift 4
  run_job "$limit" "${mpirun[@]}" -np "$np" "${via_preload[@]}" "${net[@]}" \
    -x TORUSMPI_INSTANCE="$model" -x TORUSMPI_INSTANCES="$instances" "$@"
}

# nic_bytes <instance>: the bytes rank 0 printed for that instance's NICs (TORUSMPI_STATS=1).
nic_bytes() {
  sed -n "s/^torusmpi-stats nic $1\.[0-9]* bytes=\([0-9]*\)\$/\1/p" "$job_err" |
    awk '{ s += $1 } END { print s + 0 }'
}

on torus:1x1:cores=1 2 2 60 -x TORUSMPI_STATS=1 -x TORUSMPI_DEBUG=pml "$progs/p2p_big.gcc"
if grep -q 'built without it' "$job_err"; then
  skip "ucx transport" "this torusmpi was built without UCX"
  tap_done
fi
check "p2p_big, 2 instances of one rank (all traffic through UCX)" ranks_done 2 || diag_job
check "... both NICs received the big messages (torusmpi-stats nic, > 256 MiB each)" \
  test "$(nic_bytes 0)" -gt 268435456 -a "$(nic_bytes 1)" -gt 268435456 || diag_job
check "... rendezvous messages carried a UCX remote key (single copy)" \
  grep -q 'ucx: remote keys of [0-9]* B' "$job_err" || diag_job
check "... kept to tcp,self under emulation" grep -q 'transports tcp,self' "$job_err" || diag_job
check "... and never fell back to pipelining" not grep -q 'without a single copy' "$job_err" ||
  diag_job

for prog in p2p_basic p2p_order p2p_ring coll_basic; do
  on torus:1x2:cores=1 2 4 90 -x TORUSMPI_STATS=1 "$progs/$prog.gcc"
  check "$prog, np=4, 2 instances of torus:1x2" ranks_done 4 || diag_job
  check "... instance 1's NICs received bytes" test "$(nic_bytes 1)" -gt 0 || diag_job
done

on torus:2x2:cores=1 2 5 90 -x TORUSMPI_STATS=1 "$progs/p2p_ring.gcc" 100
check "p2p_ring, np=5, 2 instances of torus:2x2 (one rank in the second)" ranks_done 5 || diag_job
check "... instance 1's NIC received bytes" test "$(nic_bytes 1)" -gt 0 || diag_job

for prog in p2p_order p2p_ring coll_basic; do
  on torus:1x2:cores=1 3 5 90 -x TORUSMPI_STATS=1 "$progs/$prog.gcc"
  check "$prog, np=5, 3 instances of torus:1x2" ranks_done 5 || diag_job
  check "... instance 2's NIC received bytes" test "$(nic_bytes 2)" -gt 0 || diag_job
done

# The progress thread polls UCX too (one thread at a time: a SERIALIZED worker).
on torus:1x2:cores=1 2 4 90 -x TORUSMPI_ASYNC_PROGRESS=1 "$progs/p2p_ring.gcc" 100
check "p2p_ring, np=4, 2 instances, TORUSMPI_ASYNC_PROGRESS=1" ranks_done 4 || diag_job

# Every message by rendezvous: order and rings across the network with the single copy only.
on torus:1x1:cores=1 3 3 90 -x TORUSMPI_EAGER_LIMIT=0 "$progs/p2p_order.gcc" 300
check "p2p_order, eager limit 0, np=3, 3 instances of one rank" ranks_done 3 || diag_job

# The single copy goes on while the receiver polls: its MPI_Test stays local while the sender,
# whose progress serves the get under tcp, computes.
on torus:2x1:cores=1 2 4 60 "$progs/net_p2p.gcc" 2 local
check "net_p2p local, np=4, 2 instances: MPI_Test never waits for a computing sender" \
  ranks_done 4 || diag_job
grep '^# local:' "$job_out"

# Device buffers never reach UCX: eager ones through a host bounce, rendezvous ones pipelined.
# On host instances (one chip each): device.c expects rank r on chip r / cores, which holds for
# the first instance of a torus only.
on host 2 4 120 -x TORUSMPI_DEVICE_GUARD=1 "$progs/device.gcc"
check "device, guard on, np=4, 2 host instances" ranks_done 4 || diag_job
on host 3 3 120 -x TORUSMPI_DEVICE_GUARD=1 -x TORUSMPI_EAGER_LIMIT=0 "$progs/device.gcc"
check "device, guard on, eager limit 0, np=3, 3 host instances" ranks_done 3 || diag_job

run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_NET=nosuch \
  -x TORUSMPI_INSTANCE=torus:1x1:cores=1 -x TORUSMPI_INSTANCES=2 "$progs/hello.gcc" 2 "$TM_PREFIX"
check "TORUSMPI_NET=nosuch fails MPI_Init" test "$job_rc" -ne 0 -a "$job_rc" -ne 124 || diag_job
check "... saying it is not a network transport" \
  grep -q 'TORUSMPI_NET=nosuch: not a network transport (ofi or ucx)' "$job_err" || diag_job

# A rank that SIGKILLs itself between two allreduces, while the others are inside the second.
killer=$work/killer
cat >"$killer.c" <<'EOF'
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char** argv) {
  int rank, size, buf[1024];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int it = 0; it < 1000000; ++it) {
    for (int i = 0; i < 1024; ++i) buf[i] = rank;
    if (it == 200 && rank == size - 1) {
      printf("killing rank %d\n", rank);
      fflush(stdout);
      kill(getpid(), SIGKILL);
    }
    MPI_Allreduce(MPI_IN_PLACE, buf, 1024, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
EOF
if "$TM_OMPI_MPICC" -o "$killer" "$killer.c" 2>"$work/killer.cc.txt"; then
  for cfg in "torus:1x2:cores=1 2 4" "torus:1x1:cores=1 3 3"; do
    set -- $cfg
    on "$1" "$2" "$3" 30 "$killer"
    check "a rank killed mid-allreduce, $2 instances of $1, np=$3: the job fails within 15 s" \
      test "$job_rc" -ne 0 -a "$job_rc" -ne 124 -a "$job_ms" -lt 15000 || diag_job
    dead=$(($3 - 1))
    check "... after the rank killed itself" grep -q "^killing rank $dead" "$job_out" || diag_job
    # UCX's endpoint error, or a liveness check (ucx's or shared memory's) that found the pid gone.
    named="lost its endpoint to rank $dead |rank $dead \(pid [0-9]+\).*ended without calling"
    check "... diagnosed: a rank names the dead one ($dead)" grep -Eq "$named" "$job_err" ||
      diag_job
  done
else
  skip "a rank killed mid-allreduce" "cannot compile it: $(head -n 1 "$work/killer.cc.txt")"
fi

check_shm
tap_done
