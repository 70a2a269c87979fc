#!/usr/bin/env bash
# NeuronLink emulation (tests/progs/links.c): with TORUSMPI_STATS=1, the bytes each emulated link
# carried, printed by rank 0 at MPI_Finalize, must be exactly those of the messages' dimension-order
# routes, worked out here from the torus geometry (not from the library's own routing): the route's
# links carry every payload byte, every other link 0, same-chip messages nothing. Eager messages,
# pipelined rendezvous and single-copy rendezvous (small rings) each count; so does a ring
# allreduce, each rank sending 2(p-1) blocks of n/p to the next. Then the collective lines, no
# lines without TORUSMPI_STATS, and pacing (TORUSMPI_LINK_PACING=1): lower bounds only, as the
# machine may be slow but never faster than the emulated links.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/links.gcc
run() { run_job 120 "${mpirun[@]}" "${via_preload[@]}" "$@"; }

# route A B from to: the directed links "f-t" of the route between chips of an AxB torus (chip
# x + A*y): x first, then y, each the shorter way round, a tie going +1.
route() {
  local -a dims=("$1" "$2")
  local c=$3 t=$4 d n delta dir next
  local -a cur=($((c % $1)) $((c / $1))) to=($((t % $1)) $((t / $1)))
  for d in 0 1; do
    n=${dims[$d]}
    delta=$(((to[d] - cur[d] + n) % n))
    [ "$delta" -eq 0 ] && continue
    if ((2 * delta <= n)); then dir=1; else dir=-1; delta=$((n - delta)); fi
    while ((delta-- > 0)); do
      cur[$d]=$(((cur[d] + dir + n) % n))
      next=$((cur[0] + $1 * cur[1]))
      echo "$c-$next"
      c=$next
    done
  done
}

# nlinks A B: directed links of an AxB torus (a dimension of 2 has one each way, of 1 none).
nlinks() {
  local per=0 n
  for n in "$1" "$2"; do per=$((per + (n > 2 ? 2 : n == 2 ? 1 : 0))); done
  echo $((per * $1 * $2))
}

declare -A want
# add A B chip_from chip_to bytes: charges bytes to the route's links in `want`.
add() {
  local l
  for l in $(route "$1" "$2" "$3" "$4"); do want[$l]=$((${want[$l]:-0} + $5)); done
}

# links_match <links expected>: the last job's link lines name each link once, `links` lines in
# all, with the bytes in `want` (0 where it has none).
links_match() {
  local lines bad=0 l b
  lines=$(grep -c '^torusmpi-stats link ' "$job_err")
  [ "$lines" -eq "$1" ] || { echo "# $lines link lines, expected $1"; bad=1; }
  [ "$(grep '^torusmpi-stats link ' "$job_err" | awk '{print $3}' | sort | uniq -d)" = "" ] ||
    { echo "# a link is listed twice"; bad=1; }
  for l in "${!want[@]}"; do
    grep -q "^torusmpi-stats link $l bytes=" "$job_err" || { echo "# no line for link $l"; bad=1; }
  done
  while read -r _ _ l b; do
    b=${b#bytes=}
    [ "$b" = "${want[$l]:-0}" ] || { echo "# link $l: $b B, expected ${want[$l]:-0}"; bad=1; }
  done < <(grep '^torusmpi-stats link ' "$job_err")
  return $bad
}

# p2p_case MODEL A B CORES NP SRC DST BYTES COUNT [mpirun args...]
p2p_case() {
  local model=$1 a=$2 b=$3 cores=$4 np=$5 src=$6 dst=$7 bytes=$8 count=$9
  shift 9
  want=()
  add "$a" "$b" $((src / cores)) $((dst / cores)) $((bytes * count))
  run -np "$np" -x TORUSMPI_INSTANCE="$model" -x TORUSMPI_STATS=1 "$@" \
    "$bin" p2p "$src" "$dst" "$bytes" "$count"
  check "$model: $count x $bytes B from rank $src to $dst ${*:+($*) }run" ranks_done "$np" ||
    diag_job
  check "$model: $count x $bytes B from rank $src to $dst: bytes on exactly its route's links" \
    links_match "$(nlinks "$a" "$b")" ||
    diag_file "$job_err"
}

t22=torus:2x2:cores=1
t24=torus:2x4:cores=1
t22c2=torus:2x2:cores=2
# Eager (under TORUSMPI_EAGER_LIMIT), 2 hops.
p2p_case $t22 2 2 1 4 0 3 1000 3
# Pipelined rendezvous the other way round, and a single-copy read (rings too small for chunks:
# the reader charges the bytes it reads, from the sender's chip to its own).
p2p_case $t22 2 2 1 4 3 0 300000 2
p2p_case $t22 2 2 1 4 3 0 300000 2 -x TORUSMPI_SHM_RING_SIZE=16384
# One hop, a zero-byte message (nothing), and the y dimension of size 4 (a tie goes +1: 3 links).
p2p_case $t22 2 2 1 4 2 3 65536 1
p2p_case $t22 2 2 1 4 1 2 0 4
p2p_case $t24 2 4 1 8 0 5 70000 2
p2p_case $t24 2 4 1 8 6 1 4096 5
# Two cores per chip: same chip is no link; ranks 1 and 6 are chips 0 and 3.
p2p_case $t22c2 2 2 2 8 0 1 100000 2
p2p_case $t22c2 2 2 2 8 1 6 100000 2

# Ring allreduce of n ints: rank r sends 2(p-1) blocks of 4n/p bytes to rank r+1 per call.
ints=4096 calls=3
for spec in "$t22 2 2 1 4" "$t24 2 4 1 8" "$t22c2 2 2 2 8"; do
  read -r model a b cores np <<<"$spec"
  want=()
  for ((r = 0; r < np; r++)); do
    add "$a" "$b" $((r / cores)) $((((r + 1) % np) / cores)) $((calls * 2 * (np - 1) * 4 * ints / np))
  done
  run -np "$np" -x TORUSMPI_INSTANCE="$model" -x TORUSMPI_STATS=1 \
    -x TORUSMPI_ALLREDUCE_ALGORITHM=ring "$bin" allreduce $ints $calls
  check "$model: ring allreduce of $ints ints x $calls, np=$np, runs" ranks_done "$np" || diag_job
  check "$model: ring allreduce: link bytes as worked out by hand" links_match "$(nlinks "$a" "$b")" ||
    diag_file "$job_err"
  check "$model: ring allreduce: the coll line names ring, $calls calls of $((4 * ints)) B" \
    grep -qx "torusmpi-stats coll allreduce alg=ring calls=$calls bytes=$((calls * 4 * ints))" \
    "$job_err" || diag_file "$job_err"
done

# Without TORUSMPI_STATS: no statistics anywhere.
run -np 4 -x TORUSMPI_INSTANCE=$t22 "$bin" allreduce 1000 2
check "$t22 without TORUSMPI_STATS runs" ranks_done 4 || diag_job
check "$t22 without TORUSMPI_STATS prints no torusmpi-stats line" \
  not grep -q torusmpi-stats "$job_out" "$job_err" || diag_file "$job_err"
# The host model has no links: collective lines only (from rank 0, on stderr).
run -np 3 -x TORUSMPI_STATS=1 -x TORUSMPI_ALLREDUCE_ALGORITHM=recursive_doubling \
  "$bin" allreduce 1000 2
check "host model with TORUSMPI_STATS=1 runs" ranks_done 3 || diag_job
check "host model: no link lines, one coll line for the allreduce" \
  eval '! grep -q "^torusmpi-stats link" "$job_err" &&
    grep -qx "torusmpi-stats coll allreduce alg=recursive_doubling calls=2 bytes=8000" "$job_err" &&
    ! grep -q torusmpi-stats "$job_out"' || diag_file "$job_err"

# Pacing: span (first send to last answer) at least the emulated hardware's time. 8 MiB at 1 GB/s
# per direction, 20 us per hop: 2 hops from chip 0 to 3; ranks 0 and 1 both to 3 share link 1-3.
# With 0.1 GB/s links the bound is far above what shared memory takes, so a pacing that does
# nothing fails on any machine that is not extremely slow.
big=8388608
pace_case() {  # pace_case GBPS MIN_SECONDS_AWK_EXPR PAIRS...
  local gbps=$1 min=$2
  shift 2
  run -np 4 -x TORUSMPI_INSTANCE=torus:2x2:cores=1:link=$gbps,20 -x TORUSMPI_LINK_PACING=1 \
    "$bin" pace $big "$@"
  check "pacing at $gbps GB/s: 8 MiB from ${*} runs" ranks_done 4 || diag_job
  span=$(sed -n 's/^span //p' "$job_out")
  check "pacing at $gbps GB/s: 8 MiB from ${*}: ${span:-?} s >= $min s" \
    awk -v s="${span:-0}" -v m="$min" 'BEGIN { exit !(s >= m) }' || diag_job
}
for gbps in 1 0.1; do
  one=$(awk -v g=$gbps -v b=$big 'BEGIN { printf "%.6f", b / (g * 1e9) + 2 * 20e-6 }')
  two=$(awk -v g=$gbps -v b=$big 'BEGIN { printf "%.6f", 2 * b / (g * 1e9) }')
  pace_case $gbps "$one" 0 3
  pace_case $gbps "$two" 0 3 1 3
done
check_shm
tap_done
