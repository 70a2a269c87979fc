#!/usr/bin/env bash
# The hierarchical collectives (instance_ring, instance_rdh, instance_direct of allreduce, allgather,
# reduce_scatter and reduce_scatter_block) in real jobs spanning emulated instances, whose ranks
# talk across instances through libfabric's tcp provider on loopback only. Two parts:
#
# 1. Correctness: coll_algos (tests/progs/coll_algos.c) forces every hier algorithm (the list
#    comes from `torusmpi_info --algorithms --parsable`), all of them in one job (a job across
#    instances costs seconds to start), each collective checked on its own, under
#    TORUSMPI_DEVICE_GUARD=1: on TORUSMPI_INSTANCES=3 of torus:2x2:cores=1 (12 ranks: an instance
#    count that is no power of two) with host buffers and with device buffers on every rank
#    (COLL_ALGOS_DEVICE=all), and on 2 instances (8 ranks) with device buffers on even ranks
#    (mixed: a rank's peer in another instance has its local index, so the network carries
#    device to device and host to host, and each instance mixes both).
#
# 2. The network interfaces: for each hier algorithm of allreduce, allgather and
#    reduce_scatter_block, one call with TORUSMPI_STATS=1 must have brought through every chip's
#    interface exactly the bytes torusmpi_sim --nics predicts for the same algorithm, size and
#    placement (the library counts every payload byte a rank receives from another instance,
#    rank 0 prints them per chip at MPI_Finalize): on 2 and 3 instances (allreduce's on 2
#    instances with rendezvous pieces, its eager ones on 3).
. "$(dirname "$0")/lib.sh"

algos=$TM_PROGS/coll_algos.gcc
links=$TM_PROGS/links.gcc
sim=$TM_BINDIR/torusmpi_sim
model=torus:2x2:cores=1
# Loopback only: the tcp provider on lo, nothing leaves the host.
net=(-x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo -x TORUSMPI_NET=ofi)

info=$work/algorithms.txt
"$TM_BINDIR/torusmpi_info" --algorithms --parsable >"$info" 2>&1
algorithms=()
while IFS= read -r a; do algorithms+=("$a"); done < <(
  awk -F: '$1 == "algorithm" && $4 == "restrictions" && $3 ~ /^instance_/ &&
           !seen[$2 "/" $3]++ { print $2 "/" $3 }' "$info")
check "the registry lists 12 hier algorithms" test ${#algorithms[@]} -eq 12 || diag_file "$info"
diag "${#algorithms[@]} algorithms: $(printf '%s\n' "${algorithms[@]}" | paste -sd' ')"

# A job of 2 instances first: without the network transport nothing else here can pass.
run_job 60 "${mpirun[@]}" "${via_preload[@]}" "${net[@]}" -x TORUSMPI_INSTANCE=$model \
  -x TORUSMPI_INSTANCES=2 -np 8 "$links" allreduce 16 1
if [ "$job_rc" -ne 0 ] && grep -qi 'not built\|placeholder' "$job_err"; then
  skip "hier jobs across instances" "the network transport is not built: $(head -n 1 "$job_err")"
  tap_done
fi

# sweep <instances> <np> <device mode>: coll_algos with every hier algorithm forced in turn.
sweep() {
  run_job 120 "${mpirun[@]}" "${via_preload[@]}" "${net[@]}" -x TORUSMPI_INSTANCE=$model \
    -x TORUSMPI_INSTANCES="$1" -x TORUSMPI_DEVICE_GUARD=1 -x COLL_ALGOS_DEVICE="$3" -np "$2" \
    "$algos" "${algorithms[@]}"
}
# swept <collective>: the collective's hier algorithms each ran their sweep to its end in the last
# job, with no failed check (coll_algos' "FAIL <rank> <collective>/<token>/..." lines) and no
# reference-library path.
swept() {
  local ok=1 a
  grep -q '^skip' "$job_out" && { echo "# skip lines: the library was not torusmpi"; ok=0; }
  for a in "${algorithms[@]}"; do
    [ "${a%/*}" = "$1" ] || continue
    grep -q "^# $a: [0-9]* cases" "$job_out" || { echo "# $a: no sweep"; ok=0; }
    grep -q "^FAIL [0-9]* $a/" "$job_out" && { echo "# $a: failed checks"; ok=0; }
  done
  [ "$ok" -eq 1 ]
}

for job in "3 12 none" "3 12 all" "2 8 mixed"; do
  set -- $job
  sweep "$1" "$2" "$3"
  for coll in allreduce allgather reduce_scatter reduce_scatter_block; do
    check "$coll hier algorithms on $1 x $model, $2 ranks, device buffers: $3" swept "$coll" ||
      diag_job
  done
  check "... every rank of that job passed every check and ended" ranks_done "$2" || diag_job
done
check_shm "no shared memory left after the sweeps"

# --- Network interfaces --------------------------------------------------------------------
# nic_run <instances> <np> <collective> <token> <ints>: one call with the algorithm forced and
# TORUSMPI_STATS=1, and the simulator's prediction of the same call in $work/predicted.txt.
nic_run() {
  local n=$1 np=$2 coll=$3 tok=$4 ints=$5 var mode size
  var=TORUSMPI_$(echo "$coll" | tr a-z A-Z)_ALGORITHM
  # The simulator's size is what OSU calls the size: the vector; reduce_scatter_block: all blocks.
  size=$((ints * 4))
  mode=(coll "$coll" "$ints")
  [ "$coll" = reduce_scatter_block ] && size=$((size * np))
  [ "$coll" = allreduce ] && mode=(allreduce "$ints" 1)
  "$sim" --instance $model --instances "$n" --ranks "$np" --collective "$coll" --algorithm "$tok" \
    --bytes "$size" --nics >"$work/sim.txt" 2>&1
  grep '^torusmpi-stats nic ' "$work/sim.txt" >"$work/predicted.txt"
  run_job 120 "${mpirun[@]}" "${via_preload[@]}" "${net[@]}" -x TORUSMPI_INSTANCE=$model \
    -x TORUSMPI_INSTANCES="$n" -x TORUSMPI_STATS=1 -x "$var=$tok" -x TORUSMPI_COLL_FALLBACK=error \
    -np "$np" "$links" "${mode[@]}"
}

# 1009 ints: eager messages; 20011 ints (80 KB) of allreduce on 2 instances: its pieces across
# instances are 40 KB, pipelined and rendezvous ones (its eager pieces: on 3 instances).
for job in "2 8 1009" "3 12 1009" "2 8 20011"; do
  set -- $job
  for a in "${algorithms[@]}"; do
    coll=${a%/*} tok=${a#*/}
    [ "$coll" = reduce_scatter ] && continue  # its simulated counts are uneven; the block form
    if [ "$3" -gt 1009 ]; then [ "$coll" = allreduce ] || continue
    elif [ "$2" -eq 8 ]; then [ "$coll" != allreduce ] || continue; fi
    nic_run "$1" "$2" "$coll" "$tok" "$3"
    check "$1 x $model: $coll/$tok, $3 ints: measured nic bytes = simulated" \
      same_stats "$2" "$coll" "$tok" nic || diag_job
  done
done
check_shm "no shared memory left after the nic runs"

tap_done
