#!/usr/bin/env bash
# The collectives on emulated tori, in real jobs. Two parts:
#
# 1. Correctness: coll_algos (tests/progs/coll_algos.c) forces every algorithm of the collectives
#    that have torus algorithms (allreduce, allgather, reduce_scatter, reduce_scatter_block,
#    alltoall, bcast: the list comes from `torusmpi_info --algorithms --parsable`, so a new
#    algorithm is tested without touching this script) under TORUSMPI_DEVICE_GUARD=1 (a host
#    access to device memory faults): on torus:2x2:cores=1 (4 ranks, one per chip) with host
#    buffers, device buffers on every rank (COLL_ALGOS_DEVICE=all) and mixed (even ranks device,
#    odd host); mixed on torus:2x2:cores=2 (8 ranks, two per chip: device and host memory on one
#    chip) and torus:2x4:cores=1 (8 ranks); device buffers on every rank of 6 ranks of
#    torus:2x2:cores=2 (two device ranks on one chip, in a communicator that does not fill its
#    torus). Not every buffer kind at every shape: a mixed job holds both kinds, and the 8-rank
#    jobs are most of the script's time.
#
# 2. The links: for each algorithm of allreduce, allgather, reduce_scatter_block, alltoall and
#    bcast, one call of a known size with TORUSMPI_STATS=1 must put on every emulated link exactly
#    the bytes torusmpi_sim --links predicts for the same algorithm, size and placement (the
#    simulator routes each message of the same schedules by dimension order; the library charges
#    each payload byte to the links of its route as it moves). Two placements: torus:2x4:cores=1
#    (routes of more than one hop, eager messages) and torus:2x2:cores=2 (two ranks a chip, whose
#    messages to each other use no link; rendezvous messages), a job per algorithm in each.
. "$(dirname "$0")/lib.sh"

algos=$TM_PROGS/coll_algos.gcc
links=$TM_PROGS/links.gcc
sim=$TM_BINDIR/torusmpi_sim

info=$work/algorithms.txt
"$TM_BINDIR/torusmpi_info" --algorithms --parsable >"$info" 2>&1
torus_colls='^(allreduce|allgather|reduce_scatter|reduce_scatter_block|alltoall|bcast)$'
algorithms=()
while IFS= read -r a; do algorithms+=("$a"); done < <(
  awk -F: -v re="$torus_colls" '$1 == "algorithm" && $4 == "restrictions" && $2 ~ re &&
                                !seen[$2 "/" $3]++ { print $2 "/" $3 }' "$info")
check "the registry lists the torus collectives' algorithms" test ${#algorithms[@]} -gt 20 ||
  diag_file "$info"
diag "${#algorithms[@]} algorithms: $(printf '%s\n' "${algorithms[@]}" | paste -sd' ')"

# The installed simulator reproduces AWS's published Neuron collective figures (coll/sim/published.cc).
"$sim" --published >"$work/published.txt" 2>&1
check "torusmpi_sim --published: every checked point within 1.5x of AWS's figure" test $? -eq 0 ||
  diag_file "$work/published.txt"

# sweep <model> <np> <device mode>: coll_algos with every algorithm forced in turn.
sweep() {
  run_job 300 "${mpirun[@]}" "${via_preload[@]}" -x TORUSMPI_INSTANCE="$1" \
    -x TORUSMPI_DEVICE_GUARD=1 -x COLL_ALGOS_DEVICE="$3" -np "$2" "$algos" "${algorithms[@]}"
}
# swept <np>: every rank passed, every algorithm's sweep ran to its end, no reference-library path.
swept() {
  local ok=1 a
  ranks_done "$1" || ok=0
  grep -q '^skip' "$job_out" && { echo "# skip lines: the library was not torusmpi"; ok=0; }
  for a in "${algorithms[@]}"; do
    grep -q "^# $a: [0-9]* cases" "$job_out" || { echo "# $a: no sweep"; ok=0; }
  done
  [ "$ok" -eq 1 ]
}

for job in "torus:2x2:cores=1 4 none" "torus:2x2:cores=1 4 all" "torus:2x2:cores=1 4 mixed" \
           "torus:2x2:cores=2 8 mixed" "torus:2x4:cores=1 8 mixed" "torus:2x2:cores=2 6 all"; do
  set -- $job
  sweep "$1" "$2" "$3"
  check "every algorithm on $1, $2 ranks, device buffers: $3" swept "$2" || diag_job
done
check_shm "no shared memory left after the sweeps"

# --- Links ---------------------------------------------------------------------------------
# sim_bytes <collective> <ints> <np>: the size torusmpi_sim takes (what OSU calls the size).
sim_bytes() {
  case $1 in
    allgather | alltoall) echo $(($2 * 4)) ;;
    reduce_scatter_block) echo $(($2 * 4 * $3)) ;;
    *) echo $(($2 * 4)) ;;
  esac
}

# linked <model> <np> <collective> <token> <ints>: one call with the algorithm forced and
# TORUSMPI_STATS=1, and the simulator's prediction of the same call in $work/predicted.txt.
linked() {
  local model=$1 np=$2 coll=$3 tok=$4 ints=$5 var mode
  var=TORUSMPI_$(echo "$coll" | tr a-z A-Z)_ALGORITHM
  if [ "$coll" = allreduce ]; then mode=(allreduce "$ints" 1); else mode=(coll "$coll" "$ints"); fi
  "$sim" --instance "$model" --ranks "$np" --collective "$coll" --algorithm "$tok" \
    --bytes "$(sim_bytes "$coll" "$ints" "$np")" --links >"$work/sim.txt" 2>&1
  sed -n 's/^    \(link .*\)$/torusmpi-stats \1/p' "$work/sim.txt" >"$work/predicted.txt"
  run_job 120 "${mpirun[@]}" "${via_preload[@]}" -x TORUSMPI_INSTANCE="$model" -x TORUSMPI_STATS=1 \
    -x "$var=$tok" -x TORUSMPI_COLL_FALLBACK=error -np "$np" "$links" "${mode[@]}"
}

link_colls='^(allreduce|allgather|reduce_scatter_block|alltoall|bcast)$'
for job in "torus:2x4:cores=1 8 1009" "torus:2x2:cores=2 8 20011"; do
  set -- $job
  for a in "${algorithms[@]}"; do
    coll=${a%/*} tok=${a#*/}
    [[ $coll =~ $link_colls ]] || continue
    # 1009 ints: eager messages; 20011 ints (80 KB): the rendezvous.
    linked "$1" "$2" "$coll" "$tok" "$3"
    check "$1, $2 ranks: $coll/$tok, $3 ints: measured link bytes = simulated" \
      same_stats "$2" "$coll" "$tok" link || diag_job
  done
done
check_shm "no shared memory left after the link runs"

tap_done
