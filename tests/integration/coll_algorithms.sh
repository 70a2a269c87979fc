#!/usr/bin/env bash
# Every registered collective algorithm through the correctness sweep of its collective
# (tests/progs/coll_algos.c): counts 0, 1, p-1, p, p+1 and a large prime, every root, in place and
# not, blocking and nonblocking, uneven counts and scattered displacements for the vector
# collectives, guard bytes around every buffer, a barrier with one rank late. First on real Open
# MPI (the reference, with its own choices: the test checks itself), then on torusmpi through
# LD_PRELOAD with each algorithm forced in turn through MPI_T.
#
# The matrix: rank counts 1 to 8 (8: oversubscribed on 2 cores; 3, 5, 6, 7: not powers of two,
# where trees, recursive doubling and halving fold and blocks split unevenly), every algorithm
# that `torusmpi_info --algorithms --parsable` lists in one job per rank count (the list is read
# at run time, never written here). The clang build, LD_LIBRARY_PATH and a build by torusmpi's own
# mpicc once each, on torusmpi's own choices ("<collective>/auto" for every collective listed);
# every algorithm once more at np=3 with large messages by rendezvous, and at np=4 with the
# asynchronous progress thread. Every reducing algorithm on torusmpi's 16-bit floats, on host
# buffers (np=4) and with device buffers on even ranks (np=3).
# A job fails when a check fails, when a forced algorithm could not be forced (the program checks
# the MPI_T write and sets TORUSMPI_COLL_FALLBACK=error, so a forced algorithm that declines a call
# fails it), when the program took its path for reference libraries ("skip" lines), or when an
# algorithm's sweep did not run to its end (its "# <collective>/<token>: N cases" line).
# A job takes 2 s (np=1) to 35 s (np=8); the script about 2 minutes on 2 cores busy with others'
# work (load 7 to 10), which slows the oversubscribed jobs most.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/coll_algos

run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 4 "$bin.gcc"
check "coll_algos.gcc on Open MPI itself (the reference), np=4" ranks_done 4 || diag_job

# --- The registry: "<collective>/<token>" per algorithm, in the order torusmpi_info gives. The
# neighbourhood collectives need a process topology, which MPI_COMM_WORLD lacks: topo.sh forces
# theirs.
info=$work/algorithms.txt
"$TM_BINDIR/torusmpi_info" --algorithms --parsable >"$info" 2>&1
info_rc=$?
algorithms=()
while IFS= read -r a; do algorithms+=("$a"); done < <(
  awk -F: '$1 == "algorithm" && $4 == "restrictions" && $2 !~ /^neighbor_/ &&
           !seen[$2 "/" $3]++ { print $2 "/" $3 }' "$info")
collectives=()
while IFS= read -r c; do collectives+=("$c/auto"); done < <(
  printf '%s\n' ${algorithms[@]+"${algorithms[@]}"} | awk -F/ '!seen[$1]++ { print $1 }')
check "torusmpi_info --algorithms --parsable lists algorithms" \
  test "$info_rc" -eq 0 -a ${#algorithms[@]} -gt 0 || diag_file "$info"
diag "${#algorithms[@]} algorithms of ${#collectives[@]} collectives:" \
  "$(printf '%s\n' ${algorithms[@]+"${algorithms[@]}"} | paste -sd' ')"

# passed <np> <argument...>: every rank passed every check, the forced ones included; no skip
# line; each argument's sweep ran to its end.
passed() {
  local np=$1 a
  shift
  ranks_done "$np" || return 1
  if grep -q '^skip' "$job_out"; then
    echo "# the program took its path for reference libraries:"
    grep '^skip' "$job_out" | head -n 3 | sed 's/^/#   /'
    return 1
  fi
  for a in "$@"; do
    grep -q "^# $a: [0-9]* cases" "$job_out" || { echo "# $a: no sweep"; return 1; }
  done
}

# Which arguments failed a check, and what the job was running when it stopped: the first
# argument without its sweep line.
diag_where() {
  local a failing
  failing=$(awk '$1 == "FAIL" { split($3, w, "/"); print w[1] "/" w[2] }' "$job_out" | sort -u |
    paste -sd' ')
  [ -z "$failing" ] || diag "failed checks in: $failing"
  for a in "$@"; do
    grep -q "^# $a: [0-9]* cases" "$job_out" || { diag "stopped in (or before) $a"; return; }
  done
}

# on_torusmpi <build> <np> <how> <binary> <mpirun arguments...> -- <program arguments...>
on_torusmpi() {
  local build=$1 np=$2 how=$3 prog=$4 args=()
  shift 4
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    args+=("$1")
    shift
  done
  shift
  local desc="coll_algos.$build, $how, np=$np, $# sweeps"
  if [ ! -x "$prog" ]; then
    skip "$desc" "$prog was not built"
    return
  fi
  run_job 240 "${mpirun[@]}" -np "$np" ${args[@]+"${args[@]}"} "$prog" "$@"
  check "$desc" passed "$np" "$@" || { diag_job; diag_where "$@"; }
}

if [ ${#algorithms[@]} -gt 0 ]; then
  for np in 1 2 3 4 5 6 7 8; do
    on_torusmpi gcc $np "LD_PRELOAD, every algorithm forced" "$bin.gcc" "${via_preload[@]}" \
      -- "${algorithms[@]}"
  done
  on_torusmpi clang 4 "LD_PRELOAD, torusmpi's choices" "$bin.clang" "${via_preload[@]}" \
    -- "${collectives[@]}"
  on_torusmpi gcc 3 "LD_LIBRARY_PATH, torusmpi's choices" "$bin.gcc" "${via_path[@]}" \
    -- "${collectives[@]}"
  # Every large message by rendezvous (the default eager limit takes the sweep's largest).
  on_torusmpi gcc 3 "LD_PRELOAD, TORUSMPI_EAGER_LIMIT=4096, every algorithm forced" "$bin.gcc" \
    "${via_preload[@]}" -x TORUSMPI_EAGER_LIMIT=4096 -- "${algorithms[@]}"
  # A progress thread advances the nonblocking collectives while the program waits or tests.
  on_torusmpi gcc 4 "LD_PRELOAD, TORUSMPI_ASYNC_PROGRESS=1, every algorithm forced" "$bin.gcc" \
    "${via_preload[@]}" -x TORUSMPI_ASYNC_PROGRESS=1 -- "${algorithms[@]}"

  # torusmpi's own wrapper: linked to torusmpi with an rpath, no variable needed.
  wrapped=$TM_PROGS/coll_algos.torusmpi-gcc
  rm -f "$wrapped"
  if [ -x "$TM_BINDIR/mpicc" ]; then
    run_job 120 "$TM_BINDIR/mpicc" -Wall -Wextra -Werror -o "$wrapped" \
      "$TM_SRCDIR/progs/coll_algos.c"
    check "torusmpi's mpicc builds coll_algos" test "$job_rc" -eq 0 || diag_job
    on_torusmpi torusmpi-gcc 2 "torusmpi's mpicc (rpath), torusmpi's choices" "$wrapped" \
      -- "${collectives[@]}"
  else
    skip "torusmpi's mpicc builds coll_algos" "$TM_BINDIR/mpicc is not installed"
  fi

  # torusmpi.h's 16-bit floats (MPIX_BFLOAT16, MPIX_C_FLOAT16) with MPI_SUM, MPI_PROD, MPI_MAX and
  # MPI_MIN, through every algorithm of every reducing collective: the build by torusmpi's mpicc
  # (the handles from torusmpi.h) on host buffers, and Open MPI's build (the handles looked up at
  # run time) with device buffers on even ranks. About 2 and 3 s.
  reducing=()
  for a in "${algorithms[@]}"; do
    case ${a%%/*} in
      allreduce | reduce | reduce_scatter | reduce_scatter_block | scan | exscan) reducing+=("$a") ;;
    esac
  done
  on_torusmpi torusmpi-gcc 4 "COLL_ALGOS_TYPES=float16, every reducing algorithm forced" \
    "$wrapped" -x COLL_ALGOS_TYPES=float16 -- "${reducing[@]}"
  on_torusmpi gcc 3 "LD_PRELOAD, COLL_ALGOS_TYPES=float16, device buffers on even ranks, every reducing algorithm forced" \
    "$bin.gcc" "${via_preload[@]}" -x COLL_ALGOS_TYPES=float16 -x COLL_ALGOS_DEVICE=mixed \
    -x TORUSMPI_DEVICE_GUARD=1 -- "${reducing[@]}"
fi

# How long the jobs took, against the budget above (jobs.txt lines end in ", <ms> ms").
seconds=$(awk -F', ' '{ sub(/ ms$/, "", $NF); t += $NF } END { printf "%.0f", t / 1000 }' \
  "$work/jobs.txt")
diag "$job_n jobs, $seconds s in all"
check_shm
tap_done
