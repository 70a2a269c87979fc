#!/usr/bin/env bash
# One-sided communication across emulated instances (tests/progs/rma.c net): windows whose group
# spans two instances, over the libfabric transport (tcp on the loopback interface) and over UCX
# (UCX_NET_DEVICES=lo), at 2 ranks (one per instance: every target is remote) and 4 (two per
# instance: each rank has a shared-memory peer and network peers in the same window). Every
# flavor that can span nodes (MPI_Win_allocate_shared is refused with MPI_ERR_RMA_SHARED), fence,
# locks, lock_all, flushes, post/start/complete/wait, every op, vector datatypes on either side,
# the error classes; a target that computes without calling MPI while the others lock, put,
# accumulate and unlock; accumulates and fetch-and-ops by every rank to one counter, from its node
# and from the other, none lost; a window over a reversed subset of the world; an idle window's
# progress thread asleep; threads (MPI_THREAD_MULTIPLE); named segments; real nodes in namespaces
# (scripts/cluster). The network carried the bytes (per-NIC counts); no memory error or leak
# under valgrind's memcheck; a remote lock never given back is diagnosed by TORUSMPI_TIMEOUT;
# windows on device memory (rma_device.c).
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/rma
ofi=(-x TORUSMPI_NET=ofi -x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo)
ucx=(-x TORUSMPI_NET=ucx -x UCX_NET_DEVICES=lo)

passed() {
  ranks_done "$1" || return 1
  if grep -q '^skip' "$job_out"; then
    grep '^skip' "$job_out" | head -n 3 | sed 's/^/#   /'
    return 1
  fi
}

# on <net> <np> <program> [args...]: a job over two instances of np/2 ranks each.
on() {
  local name=$1 np=$2 model=torus:1x1:cores=1
  shift 2
  [ "$np" -eq 4 ] && model=torus:1x2:cores=1
  local -n net_args=$name
  run_job 90 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "${net_args[@]}" \
    -x TORUSMPI_INSTANCE="$model" -x TORUSMPI_INSTANCES=2 "$@"
}

for net in ofi ucx; do
  on "$net" 2 -x TORUSMPI_STATS=1 "$bin.gcc" net
  if grep -q 'built without it' "$job_err"; then
    skip "rma.gcc net over $net" "this build has no $net transport"
    continue
  fi
  check "rma.gcc net over $net, 2 instances of 1 rank" passed 2 || diag_job
  check "... the network carried the bytes (both NICs received)" eval \
    "grep -q '^torusmpi-stats nic 0\\.0 bytes=[1-9]' \"\$job_err\" &&
     grep -q '^torusmpi-stats nic 1\\.0 bytes=[1-9]' \"\$job_err\"" || diag_job
  on "$net" 4 "$bin.gcc" net
  check "rma.gcc net over $net, 2 instances of 2 ranks" passed 4 || diag_job
  grep -m1 '^# idle' "$job_out"
done

# Windows on device memory across instances (tests/progs/rma_device.c), under the device guard:
# the targets' services move and combine the bytes in their HBM; device puts to one block go from
# the device (no staging).
dev=$TM_PROGS/rma_device
on ofi 4 -x TORUSMPI_DEVICE_GUARD=1 "$dev.gcc"
check "rma_device.gcc over ofi, 2 instances of 2 ranks, guard on" ranks_done 4 || diag_job
on ucx 2 -x TORUSMPI_DEVICE_GUARD=1 "$dev.gcc" mixed
check "rma_device.gcc mixed over ucx, 2 instances of 1 rank, guard on" ranks_done 2 || diag_job

# MPI_THREAD_MULTIPLE: three threads of each rank update one counter across nodes.
on ucx 4 "$bin.gcc" threads
check "rma.gcc threads over ucx, 2 instances of 2 ranks: none lost" passed 4 || diag_job

# Named segments, one per node's processes of each window (check_shm below: none left).
on ucx 4 -x TORUSMPI_SHM_NAMED=1 "$bin.gcc" net
check "rma.gcc net over ucx, 2 instances of 2 ranks, named segments" passed 4 || diag_job

# Memory errors and leaks of the requests and their service (as rma.sh runs memcheck).
if command -v valgrind >/dev/null; then
  memcheck=(valgrind --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --suppressions="$TM_SRCDIR/integration/pmix.supp"
    --log-file="$work/memcheck.%p.log")
  on ofi 2 "${memcheck[@]}" "$bin.gcc" net light
  check "rma.gcc net light over ofi, 2 instances of 1 rank, under memcheck: no error, no leak" \
    passed 2 || { diag_job; for f in "$work"/memcheck.*.log; do diag_file "$f" 40; done; }
  check "memcheck really ran both ranks" \
    test "$(grep -ls Memcheck "$work"/memcheck.*.log | wc -l)" -eq 2
else
  skip "rma.gcc net under memcheck" "valgrind is not installed"
fi

run_job 90 "${mpirun[@]}" -np 4 "${via_path[@]}" "${ofi[@]}" -x TORUSMPI_INSTANCE=torus:1x2:cores=1 \
  -x TORUSMPI_INSTANCES=2 "$bin.clang" net
check "rma.clang net over ofi, LD_LIBRARY_PATH, 2 instances of 2 ranks" passed 4 || diag_job

# Real nodes on this machine (scripts/cluster: a UTS, IPC and mount namespace each, as
# multinode.sh runs them), 2 nodes of 2 ranks over UCX; no node leaves a process or a /dev/shm
# entry behind (the cluster says so on "cluster: " lines).
if unshare --uts --ipc --mount --fork true 2>/dev/null; then
  cdir=$(mktemp -d /tmp/torusmpi-rma-net.XXXXXX)
  run_job 90 env MPIRUN="$TM_OMPI_MPIRUN" bash "$TM_SRCDIR/../scripts/cluster" run --dir "$cdir" \
    --nodes 2 --ppn 2 --net ucx -- "${via_preload[@]}" "$bin.gcc" net
  rm -rf "$cdir"
  check "rma.gcc net on 2 real nodes (namespaces) of 2 ranks over ucx" eval \
    'passed 4 && ! grep "^cluster: " "$job_err" | sed "s/^/# /" | grep .' || diag_job
else
  skip "rma.gcc net on real nodes" "unshare is not permitted here"
fi

# Rank 1 (the other instance) waits for rank 0's exclusive lock forever: TORUSMPI_TIMEOUT ends
# the job (exit status 110) naming the wait.
on ofi 2 -x TORUSMPI_TIMEOUT=3 "$bin.gcc" hang
check "rma.gcc hang across instances: TORUSMPI_TIMEOUT names the rank waiting in MPI_Win_lock" \
  eval '[ "$job_rc" -eq 110 ] && grep -q "rank 1 is in MPI_Win_lock on window to rank 0" "$job_err"' ||
  diag_job

sleep 1
check "no rma process left" no_process "($bin|$dev)\.(gcc|clang)"
check_shm
tap_done
