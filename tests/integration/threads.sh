#!/usr/bin/env bash
# MPI_THREAD_MULTIPLE (tests/progs/threads.c): 2 to 8 threads per rank at once in point-to-point
# with MPI_ANY_SOURCE / MPI_ANY_TAG, collectives on per-thread communicators while communicators
# and datatypes are made and freed, MPI_Improbe/MPI_Mrecv and MPI_Probe races, requests completed
# by threads that did not start them, a thread blocked in MPI_Recv while the others run
# collectives, and (with "device") device buffers. First on Open MPI itself (the reference: the
# program checks itself), then on torusmpi through LD_PRELOAD and LD_LIBRARY_PATH at rank counts
# that are not powers of two, and over each path a message can take: shared memory eager and
# rendezvous (single copy and chunked), the progress thread, the network transports between
# emulated instances, device memory on a torus. TORUSMPI_TIMEOUT turns a deadlock into a
# diagnosed failure. The ThreadSanitizer run of the same program is in tests/sanitizers.sh.
. "$(dirname "$0")/lib.sh"

# threads <np> <threads> <description> [mpirun arguments...] [-- program arguments]
threads() {
  local np=$1 nthreads=$2 how=$3 args=()
  shift 3
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    args+=("$1")
    shift
  done
  [ "${1:-}" = -- ] && shift
  run_job 120 "${mpirun[@]}" -np "$np" -x TORUSMPI_TIMEOUT=30 ${args[@]+"${args[@]}"} \
    "$TM_PROGS/threads.gcc" "$nthreads" "$@"
  check "threads.gcc, $nthreads threads per rank, $how, np=$np" ranks_done "$np" || diag_job
}

run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 4 "$TM_PROGS/threads.gcc" 4
check "threads.gcc on Open MPI itself (the reference), 4 threads, np=4" ranks_done 4 || diag_job

for spec in "1 4" "2 8" "3 4" "4 3" "5 2"; do
  read -r np nthreads <<<"$spec"
  threads "$np" "$nthreads" "LD_PRELOAD" "${via_preload[@]}"
done
threads 3 4 "LD_LIBRARY_PATH" "${via_path[@]}"
if [ -x "$TM_PROGS/threads.clang" ]; then
  run_job 120 "${mpirun[@]}" -np 3 "${via_preload[@]}" "$TM_PROGS/threads.clang" 3
  check "threads.clang, 3 threads per rank, np=3" ranks_done 3 || diag_job
fi
threads 3 4 "every message by rendezvous" "${via_preload[@]}" -x TORUSMPI_EAGER_LIMIT=0
threads 3 4 "rendezvous through shared-memory chunks" "${via_preload[@]}" \
  -x TORUSMPI_EAGER_LIMIT=0 -x TORUSMPI_SHM_SINGLE_COPY=0
threads 4 3 "with the progress thread" "${via_preload[@]}" -x TORUSMPI_ASYNC_PROGRESS=1
threads 4 3 "device buffers on a 2x2 torus" "${via_preload[@]}" \
  -x TORUSMPI_INSTANCE=torus:2x2:cores=1 -x TORUSMPI_DEVICE_GUARD=1 -- device
ofi=(-x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo -x TORUSMPI_NET=ofi)
two=(-x TORUSMPI_INSTANCE=torus:2x1:cores=1 -x TORUSMPI_INSTANCES=2)
threads 4 3 "two instances over libfabric, rendezvous" "${via_preload[@]}" "${ofi[@]}" "${two[@]}" \
  -x TORUSMPI_EAGER_LIMIT=0
run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" -x TORUSMPI_TIMEOUT=30 -x TORUSMPI_NET=ucx \
  -x UCX_NET_DEVICES=lo "${two[@]}" "$TM_PROGS/threads.gcc" 3
if grep -q 'built without it' "$job_err"; then
  skip "threads over UCX" "this torusmpi was built without UCX"
else
  check "threads.gcc, 3 threads per rank, two instances over UCX, np=4" ranks_done 4 || diag_job
fi

# Below MPI_THREAD_MULTIPLE the lock is never taken: a program asking for less gets what it asked.
run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_DEBUG=mpi "$TM_PROGS/hello.gcc" 2 "$TM_PREFIX"
check "MPI_Init: thread level 0 (MPI_THREAD_SINGLE) said by TORUSMPI_DEBUG=mpi" \
  grep -q 'thread level 0' "$job_err" || diag_job

check_shm
tap_done
