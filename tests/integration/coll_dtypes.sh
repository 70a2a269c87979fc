#!/usr/bin/env bash
# Every collective on derived datatypes (tests/progs/coll_dtypes.c): five layouts (a resized vector,
# a struct with a leading gap, a dense contiguous type, an indexed type whose type map is not in
# memory order, a type with a negative lower bound) through every collective, its in-place and
# mixed (derived on one side, MPI_INT on the other) forms, counts 0, 1, 7 and 3001, each compared
# with the same collective on MPI_INT over the packed data, gaps and guards checked; the
# nonblocking forms with the datatype freed before MPI_Wait; a non-commutative user operation,
# MPI_DOUBLE_INT, and the error classes of an invalid operation and an uncommitted type; then
# torusmpi's 16-bit floats (MPIX_BFLOAT16, MPIX_C_FLOAT16): queries, refused ops, packing,
# MPI_Reduce_local's rounding on host and device memory, and derived datatypes of them through
# reductions and point-to-point (left out on Open MPI, which has no such types).
# First on Open MPI (the reference: its refusal of MPI_SUM on derived types and its one-rank
# Alltoallw are skipped there), then on torusmpi at 1 to 5 ranks, with large messages by
# rendezvous, with the asynchronous progress thread, with each algorithm of the registry forced,
# and the clang build. A job takes 1 to 3 s.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/coll_dtypes
run_job 60 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$bin.gcc"
check "coll_dtypes.gcc on Open MPI itself (the reference), np=3" ranks_done 3 || diag_job

# On torusmpi nothing is skipped: a "skip" line means the program took it for a reference library.
passed() {
  ranks_done "$1" || return 1
  if grep -q '^skip' "$job_out"; then
    echo "# the program took its path for reference libraries:"
    grep '^skip' "$job_out" | head -n 3 | sed 's/^/#   /'
    return 1
  fi
}
for np in 1 2 3 4 5; do
  run_job 60 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$bin.gcc"
  check "coll_dtypes.gcc, LD_PRELOAD, np=$np" passed "$np" || diag_job
done
# 3001 elements of 12 bytes and more go by rendezvous, blocks of 7 and fewer still eagerly.
run_job 60 "${mpirun[@]}" -np 4 -x TORUSMPI_EAGER_LIMIT=4096 "${via_preload[@]}" "$bin.gcc"
check "coll_dtypes.gcc, LD_PRELOAD, np=4, TORUSMPI_EAGER_LIMIT=4096" passed 4 || diag_job
run_job 60 "${mpirun[@]}" -np 3 -x TORUSMPI_ASYNC_PROGRESS=1 "${via_preload[@]}" "$bin.gcc"
check "coll_dtypes.gcc, LD_PRELOAD, np=3, TORUSMPI_ASYNC_PROGRESS=1" passed 3 || diag_job
# Every algorithm of the registry: job k forces the k-th of every collective at once (cycling
# through shorter lists), at 5 ranks. Automatic fallback stays on: the algorithms that need a
# commutative op hand the program's non-commutative one to another, as they must.
info=$work/algorithms.txt
"$TM_BINDIR/torusmpi_info" --algorithms --parsable >"$info" 2>&1
colls=()
while IFS= read -r c; do colls+=("$c"); done < <(
  awk -F: '$1 == "algorithm" && $4 == "restrictions" && !seen[$2]++ { print $2 }' "$info")
tokens() { awk -F: -v c="$1" '$1 == "algorithm" && $4 == "restrictions" && $2 == c { print $3 }' "$info"; }
most=0
for c in ${colls[@]+"${colls[@]}"}; do
  n=$(tokens "$c" | wc -l)
  [ "$n" -gt "$most" ] && most=$n
done
check "torusmpi_info lists the collectives' algorithms" test "$most" -gt 0 || diag_file "$info"
for ((k = 0; k < most; k++)); do
  forced=() names=()
  for c in "${colls[@]}"; do
    list=()
    while IFS= read -r t; do list+=("$t"); done < <(tokens "$c")
    t=${list[$((k % ${#list[@]}))]}
    forced+=(-x "TORUSMPI_$(echo "$c" | tr a-z A-Z)_ALGORITHM=$t")
    names+=("$c/$t")
  done
  run_job 60 "${mpirun[@]}" -np 5 "${via_preload[@]}" "${forced[@]}" "$bin.gcc"
  check "coll_dtypes.gcc, np=5, forced: ${names[*]}" passed 5 || diag_job
done
if [ -x "$bin.clang" ]; then
  run_job 60 "${mpirun[@]}" -np 3 "${via_path[@]}" "$bin.clang"
  check "coll_dtypes.clang, LD_LIBRARY_PATH, np=3" passed 3 || diag_job
else
  skip "coll_dtypes.clang, LD_LIBRARY_PATH, np=3" "configure found no clang"
fi
check_shm
tap_done
