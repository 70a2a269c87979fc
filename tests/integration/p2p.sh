#!/usr/bin/env bash
# Point-to-point (tests/progs/p2p_*.c): every call, matching order, errors, very large messages and
# an oversubscribed ring. Each program first runs on real Open MPI (the reference: the test checks
# itself), then on torusmpi through LD_PRELOAD and LD_LIBRARY_PATH, at several rank counts and with
# the parameters that pick its protocol paths:
#   TORUSMPI_EAGER_LIMIT=0       every message by rendezvous (=4096: at a boundary the sizes
#                                straddle)
#   TORUSMPI_SHM_SINGLE_COPY=0   rendezvous pipelined through shared-memory chunks, not one
#                                process_vm_readv copy
#   TORUSMPI_SHM_NAMED=1         a named POSIX shm segment instead of a memfd
#
# The matrix, chosen to stay well under two minutes on 2 cores (50 jobs, about 45 s: a torusmpi job
# starts in ~0.1 s, an Open MPI one in ~0.4 s; the programs take 0.5 to 4 s each), not the full
# product of everything:
#  - rank counts 1 2 3 4 5 8 for p2p_basic through LD_PRELOAD (8: oversubscribed), fewer for the
#    others: 1 (self only), 2 (one peer), 3 (odd, all ranks distinct neighbours), 5 and 8;
#  - LD_LIBRARY_PATH and the clang build once per program: how the library is reached does not
#    change the point-to-point paths, only whether it is reached;
#  - each protocol variant where it changes the path taken: p2p_basic, p2p_order and p2p_errors
#    (truncation and cancel on the rendezvous path), p2p_big and p2p_ring (single copy vs chunks,
#    named segments); at 2 or 3 ranks, plus 8 for the ring, which is about oversubscription.
# A program that takes a known-deviation exit ("skip" lines, meant for Open MPI and MPICH) under
# torusmpi fails: it would mean torusmpi was taken for one of them.
. "$(dirname "$0")/lib.sh"

# reference <program> <np>: the gcc build on Open MPI itself, nothing of torusmpi's in reach.
reference() {
  local prog=$1 np=$2
  run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np "$np" "$TM_PROGS/$prog.gcc"
  check "$prog.gcc on Open MPI itself (the reference), np=$np" ranks_done "$np" || diag_job
}

# passed <np>: every rank passed, and none skipped a check as a reference library's deviation.
passed() { ranks_done "$1" && ! grep -q '^skip' "$job_out"; }

# on_torusmpi <program> <build> <np> <how> [mpirun arguments...]: one job on torusmpi; <how> names
# the arguments in the test's description.
on_torusmpi() {
  local prog=$1 build=$2 np=$3 how=$4
  shift 4
  local bin=$TM_PROGS/$prog.$build
  if [ ! -x "$bin" ]; then
    skip "$prog.$build, $how, np=$np" "$bin was not built"
    return
  fi
  run_job 120 "${mpirun[@]}" -np "$np" "$@" "$bin"
  check "$prog.$build, $how, np=$np" passed "$np" || diag_job
}

eager0=(-x TORUSMPI_EAGER_LIMIT=0)
eager4k=(-x TORUSMPI_EAGER_LIMIT=4096)
chunks=(-x TORUSMPI_SHM_SINGLE_COPY=0)
named=(-x TORUSMPI_SHM_NAMED=1)

# --- p2p_basic: every call, every send mode, sizes across the eager/rendezvous boundary.
reference p2p_basic 3
for np in 1 2 3 4 5 8; do
  on_torusmpi p2p_basic gcc $np "LD_PRELOAD" "${via_preload[@]}"
done
on_torusmpi p2p_basic gcc 3 "LD_LIBRARY_PATH" "${via_path[@]}"
on_torusmpi p2p_basic clang 3 "LD_PRELOAD" "${via_preload[@]}"
for np in 2 3; do
  on_torusmpi p2p_basic gcc $np "LD_PRELOAD, TORUSMPI_EAGER_LIMIT=0" "${via_preload[@]}" \
    "${eager0[@]}"
  on_torusmpi p2p_basic gcc $np "LD_PRELOAD, TORUSMPI_SHM_SINGLE_COPY=0" "${via_preload[@]}" \
    "${chunks[@]}"
done
on_torusmpi p2p_basic gcc 2 "LD_PRELOAD, TORUSMPI_EAGER_LIMIT=4096" "${via_preload[@]}" \
  "${eager4k[@]}"
on_torusmpi p2p_basic gcc 3 "LD_PRELOAD, TORUSMPI_EAGER_LIMIT=0, TORUSMPI_SHM_SINGLE_COPY=0" \
  "${via_preload[@]}" "${eager0[@]}" "${chunks[@]}"
on_torusmpi p2p_basic gcc 3 "LD_PRELOAD, TORUSMPI_SHM_NAMED=1" "${via_preload[@]}" "${named[@]}"

# --- p2p_order: non-overtaking, wildcards, 10,000 outstanding requests, tags out of order.
reference p2p_order 3
for np in 1 2 3 5 8; do
  on_torusmpi p2p_order gcc $np "LD_PRELOAD" "${via_preload[@]}"
done
on_torusmpi p2p_order gcc 2 "LD_LIBRARY_PATH" "${via_path[@]}"
on_torusmpi p2p_order clang 3 "LD_PRELOAD" "${via_preload[@]}"
on_torusmpi p2p_order gcc 3 "LD_PRELOAD, TORUSMPI_EAGER_LIMIT=0" "${via_preload[@]}" "${eager0[@]}"
on_torusmpi p2p_order gcc 3 "LD_PRELOAD, TORUSMPI_SHM_SINGLE_COPY=0" "${via_preload[@]}" \
  "${chunks[@]}"
on_torusmpi p2p_order gcc 3 "LD_PRELOAD, TORUSMPI_SHM_NAMED=1" "${via_preload[@]}" "${named[@]}"

# --- p2p_errors: truncation, cancel, Bsend buffers, bad arguments.
reference p2p_errors 3
for np in 1 2 3 8; do
  on_torusmpi p2p_errors gcc $np "LD_PRELOAD" "${via_preload[@]}"
done
on_torusmpi p2p_errors gcc 2 "LD_LIBRARY_PATH" "${via_path[@]}"
on_torusmpi p2p_errors clang 2 "LD_PRELOAD" "${via_preload[@]}"
on_torusmpi p2p_errors gcc 2 "LD_PRELOAD, TORUSMPI_EAGER_LIMIT=0" "${via_preload[@]}" "${eager0[@]}"
on_torusmpi p2p_errors gcc 2 "LD_PRELOAD, TORUSMPI_SHM_SINGLE_COPY=0" "${via_preload[@]}" \
  "${chunks[@]}"

# --- p2p_big: 256 MiB both ways and to itself (about 1.5 GiB of memory per job).
reference p2p_big 2
for np in 1 2 3; do
  on_torusmpi p2p_big gcc $np "LD_PRELOAD" "${via_preload[@]}"
done
on_torusmpi p2p_big gcc 2 "LD_LIBRARY_PATH" "${via_path[@]}"
on_torusmpi p2p_big clang 2 "LD_PRELOAD" "${via_preload[@]}"
on_torusmpi p2p_big gcc 2 "LD_PRELOAD, TORUSMPI_SHM_SINGLE_COPY=0" "${via_preload[@]}" \
  "${chunks[@]}"
on_torusmpi p2p_big gcc 2 "LD_PRELOAD, TORUSMPI_SHM_NAMED=1" "${via_preload[@]}" "${named[@]}"

# --- p2p_ring: 8 ranks on 2 cores. The time per round is a diagnostic ("# ..." in the job output,
# kept under $TM_TMP), not a check.
reference p2p_ring 8
grep '^#' "$job_out" | sed 's/^# */# Open MPI, np=8: /'
on_torusmpi p2p_ring gcc 8 "LD_PRELOAD" "${via_preload[@]}"
grep '^#' "$job_out" | sed 's/^# */# torusmpi, np=8: /'
on_torusmpi p2p_ring gcc 3 "LD_LIBRARY_PATH" "${via_path[@]}"
on_torusmpi p2p_ring clang 5 "LD_PRELOAD" "${via_preload[@]}"
on_torusmpi p2p_ring gcc 8 "LD_PRELOAD, TORUSMPI_EAGER_LIMIT=0" "${via_preload[@]}" "${eager0[@]}"
on_torusmpi p2p_ring gcc 8 "LD_PRELOAD, TORUSMPI_SHM_SINGLE_COPY=0" "${via_preload[@]}" \
  "${chunks[@]}"

# --- Ranks bound to fewer CPUs than they are wait by yielding: under taskset -c 0 the node's
# count alone says 2 ranks on 2 cores, and each wait spun its timeslice away (osu_latency 8 B
# 32 us). TORUSMPI_DEBUG=progress says which way each rank waits; the ring passes either way.
# oversubscribed_ranks: how many ranks of the last job said they wait as oversubscribed.
oversubscribed_ranks() { cat "$job_out" "$job_err" | grep -c 'progress: .*oversubscribed'; }
on_one_cpu() { passed 2 && [ "$(oversubscribed_ranks)" -eq 2 ]; }
on_two_cpus() { passed 2 && [ "$(oversubscribed_ranks)" -eq 0 ]; }
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  run_job 120 taskset -c 0 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_DEBUG=progress \
    "$TM_PROGS/p2p_ring.gcc"
  check "p2p_ring, 2 ranks on one CPU (taskset -c 0): both wait as oversubscribed" on_one_cpu ||
    diag_job
  run_job 120 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_DEBUG=progress \
    "$TM_PROGS/p2p_ring.gcc"
  check "... and with a CPU each, neither does" on_two_cpus || diag_job
else
  skip "p2p_ring on one CPU" "needs 2 CPUs and taskset"
  skip "... and with a CPU each" "needs 2 CPUs and taskset"
fi

# How long it all took, against the budget above (jobs.txt lines end in ", <ms> ms").
seconds=$(awk -F', ' '{ sub(/ ms$/, "", $NF); t += $NF } END { printf "%.0f", t / 1000 }' \
  "$work/jobs.txt")
diag "$job_n jobs, $seconds s in all"
check_shm
tap_done
