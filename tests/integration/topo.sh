#!/usr/bin/env bash
# Process topologies and the neighbourhood collectives (tests/progs/topo.c): Cartesian, graph and
# distributed graph, their queries and errors, and every neighbourhood collective blocking and
# nonblocking with each block checked against its edge. First on Open MPI (the reference; its known
# deviations print "skip" there), then on torusmpi at 1 to 6 ranks (2: a periodic ring where both
# neighbours are one rank; 5: a grid with a dimension of 1).
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/topo
run_job 60 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 4 "$bin.gcc"
check "topo.gcc on Open MPI itself (the reference), np=4" ranks_done 4 || diag_job

# Every case runs on torusmpi: a "skip" line would mean it was taken for a reference library.
passed() { ranks_done "$1" && ! grep -q '^skip' "$job_out"; }
for np in 1 2 3 4 5 6; do
  run_job 60 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$bin.gcc"
  check "topo.gcc, LD_PRELOAD, np=$np" passed "$np" || diag_job
done
# Each neighbourhood algorithm of the registry forced in turn (job k forces the k-th of every
# neighbourhood collective, cycling through shorter lists), a forced algorithm that cannot run a
# call failing it (TORUSMPI_COLL_FALLBACK=error), at 5 ranks (a grid with a dimension of 1).
info=$work/algorithms.txt
"$TM_BINDIR/torusmpi_info" --algorithms --parsable >"$info" 2>&1
colls=(neighbor_allgather neighbor_allgatherv neighbor_alltoall neighbor_alltoallv
  neighbor_alltoallw)
tokens() { awk -F: -v c="$1" '$1 == "algorithm" && $4 == "restrictions" && $2 == c { print $3 }' "$info"; }
most=0
for c in "${colls[@]}"; do
  n=$(tokens "$c" | wc -l)
  [ "$n" -gt "$most" ] && most=$n
done
check "torusmpi_info lists the algorithms of ${colls[*]}" test "$most" -gt 0 || diag_file "$info"
for ((k = 0; k < most; k++)); do
  forced=() expected=()
  for c in "${colls[@]}"; do
    list=()
    while IFS= read -r t; do list+=("$t"); done < <(tokens "$c")
    [ ${#list[@]} -gt 0 ] || continue
    t=${list[$((k % ${#list[@]}))]}
    forced+=(-x "TORUSMPI_$(echo "$c" | tr a-z A-Z)_ALGORITHM=$t")
    expected+=("$c/$t")
  done
  run_job 60 "${mpirun[@]}" -np 5 "${via_preload[@]}" -x TORUSMPI_COLL_FALLBACK=error \
    "${forced[@]}" "$bin.gcc"
  check "topo.gcc, np=5, forced: ${expected[*]}" passed 5 || diag_job
done
if [ -x "$bin.clang" ]; then
  run_job 60 "${mpirun[@]}" -np 3 "${via_path[@]}" "$bin.clang"
  check "topo.clang, LD_LIBRARY_PATH, np=3" passed 3 || diag_job
else
  skip "topo.clang, LD_LIBRARY_PATH, np=3" "configure found no clang"
fi
check_shm
tap_done
