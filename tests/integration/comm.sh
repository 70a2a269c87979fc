#!/usr/bin/env bash
# Groups, communicators and intercommunicators (tests/progs/comm_groups.c and intercomm.c). First
# on Open MPI itself (the reference), then on torusmpi through LD_PRELOAD at 1 to 5 ranks; then
# with each algorithm of the collectives the programs call forced in turn, so every one of them
# runs on split communicators of odd sizes and on intercommunicators' local groups (the list is
# read from `torusmpi_info --algorithms --parsable` at run time; job k forces the k-th algorithm
# of every collective at once, cycling through the shorter lists, with TORUSMPI_COLL_FALLBACK=error
# and TORUSMPI_DEBUG=select showing each forced algorithm chosen on a communicator of 3 ranks);
# with the asynchronous progress thread; and the clang builds through LD_LIBRARY_PATH.
# intercomm at 1 rank has nothing to check and says so in one "skip" line; every other torusmpi
# job must print none (a skip line means the program took its path for reference libraries).
. "$(dirname "$0")/lib.sh"

cg=$TM_PROGS/comm_groups
ic=$TM_PROGS/intercomm

run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$cg.gcc"
check "comm_groups.gcc on Open MPI itself (the reference), np=3" ranks_done 3 || diag_job
run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 4 "$ic.gcc"
check "intercomm.gcc on Open MPI itself (the reference), np=4" ranks_done 4 || diag_job

passed() { ranks_done "$1" && ! grep -q '^skip' "$job_out"; }

for np in 1 2 3 4 5; do
  run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$cg.gcc"
  check "comm_groups.gcc, LD_PRELOAD, np=$np" passed "$np" || diag_job
done
run_job 60 "${mpirun[@]}" -np 1 "${via_preload[@]}" "$ic.gcc"
check "intercomm.gcc, LD_PRELOAD, np=1 (skips: one rank makes no intercommunicator)" \
  eval 'ranks_done 1 && grep -q "^skip 0 intercomm" "$job_out"' || diag_job
for np in 2 3 4 5; do
  run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$ic.gcc"
  check "intercomm.gcc, LD_PRELOAD, np=$np" passed "$np" || diag_job
done

# --- Every algorithm of the collectives the programs call, forced.
info=$work/algorithms.txt
"$TM_BINDIR/torusmpi_info" --algorithms --parsable >"$info" 2>&1
colls=(barrier bcast reduce allreduce allgather alltoall gather scatter scan)
tokens() { awk -F: -v c="$1" '$1 == "algorithm" && $4 == "restrictions" && $2 == c { print $3 }' "$info"; }
most=0
for c in "${colls[@]}"; do
  n=$(tokens "$c" | wc -l)
  [ "$n" -gt "$most" ] && most=$n
done
check "torusmpi_info lists the algorithms of ${colls[*]}" test "$most" -gt 0 || diag_file "$info"

# chosen_on_3 <collective> <token>: the job's selection log shows token chosen for collective on
# a communicator of 3 ranks (a split of 5: neither the world nor a power of two).
chosen_on_3() {
  grep -Eq "select: $1 [0-9]+ B, 3 ranks(,[^>]*)? -> $2:" "$job_err" ||
    { echo "# $1/$2 was never chosen on a communicator of 3 ranks"; return 1; }
}
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
  # A short loop of creations: the algorithms are what this job is about.
  run_job 120 "${mpirun[@]}" -np 5 "${via_preload[@]}" -x TORUSMPI_COLL_FALLBACK=error \
    -x TORUSMPI_DEBUG=select "${forced[@]}" "$cg.gcc" 200
  all_chosen() {
    passed 5 || return 1
    local e
    for e in "${expected[@]}"; do chosen_on_3 "${e%/*}" "${e#*/}" || return 1; done
  }
  check "comm_groups.gcc, np=5, forced: ${expected[*]}" all_chosen || diag_job
  run_job 120 "${mpirun[@]}" -np 5 "${via_preload[@]}" -x TORUSMPI_COLL_FALLBACK=error \
    "${forced[@]}" "$ic.gcc"
  check "intercomm.gcc, np=5 (local groups of 3 and 2), forced: ${expected[*]}" passed 5 ||
    diag_job
done

# --- The progress thread completes nonblocking creations (MPI_Comm_idup) in the background.
run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" -x TORUSMPI_ASYNC_PROGRESS=1 "$cg.gcc"
check "comm_groups.gcc, np=4, TORUSMPI_ASYNC_PROGRESS=1" passed 4 || diag_job
run_job 120 "${mpirun[@]}" -np 3 "${via_preload[@]}" -x TORUSMPI_ASYNC_PROGRESS=1 "$ic.gcc"
check "intercomm.gcc, np=3, TORUSMPI_ASYNC_PROGRESS=1" passed 3 || diag_job

for prog in comm_groups intercomm; do
  if [ -x "$TM_PROGS/$prog.clang" ]; then
    run_job 120 "${mpirun[@]}" -np 3 "${via_path[@]}" "$TM_PROGS/$prog.clang"
    check "$prog.clang, LD_LIBRARY_PATH, np=3" passed 3 || diag_job
  else
    skip "$prog.clang, LD_LIBRARY_PATH, np=3" "configure found no clang"
  fi
done
check_shm
tap_done
