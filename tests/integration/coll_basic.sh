#!/usr/bin/env bash
# Barrier, Bcast, Reduce and Allreduce (tests/progs/coll_basic.c): every root, counts 0, 1, p-1, p,
# p+1 and a large prime, in place and not, every predefined op on the types it allows. First on
# real Open MPI (the reference: the test checks itself), then on torusmpi through LD_PRELOAD and
# LD_LIBRARY_PATH.
#
# The matrix: rank counts 1 to 5 and 8 (8: oversubscribed on 2 cores; 3 and 5: not powers of two,
# where tree and recursive-halving algorithms fold), LD_LIBRARY_PATH and the clang build once, and
# the point-to-point protocol variants once each (the collectives may ride on point-to-point: the
# large count then goes by rendezvous, pipelined or not). A job takes 1 to 6 s; about 25 s in all.
# A known-deviation exit ("skip" lines, meant for Open MPI and MPICH) under torusmpi fails.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/coll_basic

run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$bin.gcc"
check "coll_basic.gcc on Open MPI itself (the reference), np=3" ranks_done 3 || diag_job

passed() { ranks_done "$1" && ! grep -q '^skip' "$job_out"; }

# on_torusmpi <build> <np> <how> [mpirun arguments...]
on_torusmpi() {
  local build=$1 np=$2 how=$3
  shift 3
  if [ ! -x "$bin.$build" ]; then
    skip "coll_basic.$build, $how, np=$np" "$bin.$build was not built"
    return
  fi
  run_job 120 "${mpirun[@]}" -np "$np" "$@" "$bin.$build"
  check "coll_basic.$build, $how, np=$np" passed "$np" || diag_job
}

for np in 1 2 3 4 5 8; do
  on_torusmpi gcc $np "LD_PRELOAD" "${via_preload[@]}"
done
on_torusmpi gcc 3 "LD_LIBRARY_PATH" "${via_path[@]}"
on_torusmpi clang 4 "LD_PRELOAD" "${via_preload[@]}"
on_torusmpi gcc 5 "LD_PRELOAD, TORUSMPI_EAGER_LIMIT=0" "${via_preload[@]}" \
  -x TORUSMPI_EAGER_LIMIT=0
on_torusmpi gcc 3 "LD_PRELOAD, TORUSMPI_SHM_SINGLE_COPY=0" "${via_preload[@]}" \
  -x TORUSMPI_SHM_SINGLE_COPY=0
on_torusmpi gcc 3 "LD_PRELOAD, TORUSMPI_SHM_NAMED=1" "${via_preload[@]}" -x TORUSMPI_SHM_NAMED=1

# How long it all took, against the budget above (jobs.txt lines end in ", <ms> ms").
seconds=$(awk -F', ' '{ sub(/ ms$/, "", $NF); t += $NF } END { printf "%.0f", t / 1000 }' \
  "$work/jobs.txt")
diag "$job_n jobs, $seconds s in all"
check_shm
tap_done
