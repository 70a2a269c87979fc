#!/usr/bin/env bash
# Real nodes on this one machine: scripts/cluster starts each node of a job in its own UTS, IPC
# and mount namespace (its own hostname and /dev/shm, this machine's loopback network), Open MPI's
# mpirun launches a daemon into each through the cluster's launch agent, and torusmpi (preloaded)
# sees a job of 2 or 3 nodes: the ranks of a node talk through shared memory, the nodes only
# through the network transport (libfabric tcp or UCX, on lo only). Checked:
#  - the layout: processor names, MPI_COMM_TYPE_SHARED, PMIx's node count (multinode layout);
#    MPI_ANY_SOURCE receives mixing shared-memory and network senders, eager and rendezvous;
#  - point-to-point across nodes (net_p2p, p2p_order, p2p_basic), device buffers (device,
#    net_p2p's device messages) under the guard;
#  - every collective with torusmpi's own choices (coll_algos: counts 0, 1, p-1, p, p+1 and a
#    large prime, every root, in place or not, host and device buffers) on 2 x 2, 3 x 1 and 3 x 2
#    ranks, over ofi and ucx;
#  - that the selection picks the hierarchical (instance_*) algorithms across real nodes, and
#    that they run right when forced;
#  - a node killed in the middle of allreduces (every process of its namespace), and mpirun
#    killed: the job ends within seconds, diagnosed, and nothing is left: no process, and no entry
#    in any node's /dev/shm (scripts/cluster checks each node's before its namespace goes).
# The helpers below run through check and eval, which shellcheck does not follow.
# shellcheck disable=SC2317
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

cluster=$TM_SRCDIR/../scripts/cluster
p=$TM_PROGS
# A short path: Open MPI's and PMIx's sockets live under each node's directory in it.
cdir=$(mktemp -d /tmp/torusmpi-multinode.XXXXXX)
trap 'rm -rf "$cdir"' EXIT

if ! unshare --uts --ipc --mount --fork true 2>"$work/unshare.txt"; then
  skip "jobs on nodes in namespaces" "unshare is not permitted here: $(head -n 1 "$work/unshare.txt")"
  tap_done
fi

# on <nodes> <ppn> <net> <seconds> <mpirun args and program...>: one job on a new cluster.
on() {
  local nodes=$1 ppn=$2 net=$3 limit=$4
  shift 4
  run_job "$limit" env MPIRUN="$TM_OMPI_MPIRUN" bash "$cluster" run --dir "$cdir" \
    --nodes "$nodes" --ppn "$ppn" --net "$net" -- "${via_preload[@]}" "$@"
}

# passed <np>: every rank passed, and no node left a process or a /dev/shm entry behind (the
# cluster names them on "cluster: ..." lines, and exits 3).
passed() {
  ranks_done "$1" || return 1
  ! grep '^cluster: ' "$job_err" | sed 's/^/# /' | grep . || return 1
}

# swept <np>: coll_algos with torusmpi's own choices ran every collective's sweep.
swept() {
  passed "$1" || return 1
  ! grep -q '^skip' "$job_out" || { echo "# skip lines: the library was not torusmpi"; return 1; }
  local c
  for c in barrier bcast reduce allreduce allgather reduce_scatter reduce_scatter_block \
    alltoall gather scatter; do
    grep -q "^# $c/auto: [0-9]* cases" "$job_out" || { echo "# $c: no sweep"; return 1; }
  done
}

# --- Layout and point-to-point ----------------------------------------------------------------
on 2 2 ofi 60 -x TORUSMPI_DEBUG=boot "$p/multinode.gcc" layout 2
if [ "$job_rc" -ne 0 ] && grep -qi 'not built\|placeholder' "$job_err"; then
  skip "jobs on nodes in namespaces" "the network transport is not built: $(head -n 1 "$job_err")"
  tap_done
fi
check "layout, 2 nodes x 2 ranks (ofi): names, shared communicators, MPI_ANY_SOURCE" passed 4 ||
  diag_job
check "... torusmpi saw 2 nodes, ranks 0-1 on node1 and 2-3 on node2 (PMIx)" eval \
  "grep -Eq 'rank [01] of 4, local [01] of 2, 2 node\\(s\\), host node1' \"\$job_err\" &&
   grep -Eq 'rank [23] of 4, local [01] of 2, 2 node\\(s\\), host node2' \"\$job_err\"" ||
  diag_job

on 3 2 ucx 60 "$p/multinode.gcc" layout 2
check "layout, 3 nodes x 2 ranks (ucx)" passed 6 || diag_job

for net in ofi ucx; do
  on 2 2 "$net" 90 -x TORUSMPI_DEVICE_GUARD=1 -x TORUSMPI_STATS=1 "$p/net_p2p.gcc" 2
  check "net_p2p, 2 nodes x 2 ranks ($net, device guard on)" passed 4 || diag_job
  check "... the network carried bytes (torusmpi-stats nic)" \
    grep -Eq '^torusmpi-stats nic 0\.0 bytes=[1-9]' "$job_err" || diag_job
done
on 3 2 ofi 90 "$p/net_p2p.gcc" 2
check "net_p2p, 3 nodes x 2 ranks (ofi)" passed 6 || diag_job
on 3 1 ofi 90 -x TORUSMPI_EAGER_LIMIT=0 "$p/p2p_order.gcc" 300
check "p2p_order, 3 nodes x 1 rank, every message by rendezvous (ofi)" passed 3 || diag_job
on 3 1 ucx 90 "$p/p2p_basic.gcc"
check "p2p_basic, 3 nodes x 1 rank (ucx)" passed 3 || diag_job
on 2 2 ofi 120 -x TORUSMPI_DEVICE_GUARD=1 "$p/device.gcc"
check "device, 2 nodes x 2 ranks, guard on (ofi)" passed 4 || diag_job

# --- Collectives --------------------------------------------------------------------------------
# Every collective's sweep with torusmpi's choices; 3 and 6 ranks: no power of two.
on 2 2 ofi 120 "$p/coll_algos.gcc"
check "coll_algos, every collective, 2 nodes x 2 ranks (ofi)" swept 4 || diag_job
on 3 1 ucx 120 "$p/coll_algos.gcc"
check "coll_algos, every collective, 3 nodes x 1 rank (ucx)" swept 3 || diag_job
on 3 2 ofi 150 -x TORUSMPI_DEVICE_GUARD=1 -x COLL_ALGOS_DEVICE=all "$p/coll_algos.gcc"
check "coll_algos, every collective, device buffers, 3 nodes x 2 ranks (ofi)" swept 6 || diag_job
on 2 2 ucx 120 -x TORUSMPI_DEVICE_GUARD=1 -x COLL_ALGOS_DEVICE=mixed "$p/coll_algos.gcc"
check "coll_algos, device buffers on even ranks, 2 nodes x 2 ranks (ucx)" swept 4 || diag_job

# The selection across real nodes: one call each, large enough that sending less across the
# network pays; the algorithm run is the one TORUSMPI_STATS names. First as a user would run it,
# then told where the nodes are (TORUSMPI_INSTANCES=3: ranks fill the nodes in order, as here):
# then each node's network interface must have received its share (torusmpi-stats nic N.0).
# hier_chosen <collective>: the job passed and ran one call of an instance_* algorithm.
hier_chosen() {
  passed 6 && grep -Eq "^torusmpi-stats coll $1 alg=instance_[a-z]+ calls=1 " "$job_err" && return
  grep -E '^torusmpi-stats coll|select:' "$job_err" | head -n 3 | cut -c 1-200 | sed 's/^/# /'
  return 1
}
for coll in "allreduce 262144 1" "coll allgather 65536" "coll reduce_scatter_block 16384"; do
  read -ra words <<<"$coll"
  name=$([ "${words[0]}" = allreduce ] && echo allreduce || echo "${words[1]}")
  on 3 2 ofi 60 -x TORUSMPI_STATS=1 -x TORUSMPI_DEBUG=select "$p/links.gcc" "${words[@]}"
  check "$name on 3 nodes x 2 ranks: torusmpi chooses a hierarchical algorithm" \
    hier_chosen "$name" || diag_job
  on 3 2 ofi 60 -x TORUSMPI_STATS=1 -x TORUSMPI_DEBUG=select -x TORUSMPI_INSTANCES=3 \
    "$p/links.gcc" "${words[@]}"
  check "... and with TORUSMPI_INSTANCES=3" hier_chosen "$name" || diag_job
  check "... every node's network interface received bytes" test "$(grep -Ec \
    '^torusmpi-stats nic [012]\.0 bytes=[1-9]' "$job_err")" -eq 3 || diag_job
done

# The hierarchical algorithms forced, each through coll_algos' sweep, across real nodes taken as
# instances (TORUSMPI_INSTANCES=2), so that they really split the ranks by node.
info=$work/algorithms.txt
"$TM_BINDIR/torusmpi_info" --algorithms --parsable >"$info" 2>&1
hier=()
while IFS= read -r a; do hier+=("$a"); done < <(
  awk -F: '$1 == "algorithm" && $4 == "restrictions" && $3 ~ /^instance_/ &&
           !seen[$2 "/" $3]++ { print $2 "/" $3 }' "$info")
on 2 2 ofi 150 -x TORUSMPI_INSTANCES=2 "$p/coll_algos.gcc" "${hier[@]}"
check "the ${#hier[@]} hierarchical algorithms forced, 2 nodes x 2 ranks (ofi)" eval \
  "passed 4 && ! grep -q '^skip' \"\$job_out\" &&
   test \"\$(grep -c '^# [a-z_]*/instance_[a-z]*: [0-9]* cases' \"\$job_out\")\" \
     -eq ${#hier[@]}" || diag_job

# --- Failures -----------------------------------------------------------------------------------
# start_loop <nodes> <ppn> <net>: multinode loop in the background, back once rank 0 loops.
start_loop() {
  job_n=$((job_n + 1))
  job_out=$work/job$job_n.out
  job_err=$work/job$job_n.err
  job_cmd="cluster run --nodes $1 --ppn $2 --net $3 -- multinode loop"
  rm -f "$cdir/mpirun.pid"
  timeout -k 5 90 env MPIRUN="$TM_OMPI_MPIRUN" bash "$cluster" run --dir "$cdir" --nodes "$1" \
    --ppn "$2" --net "$3" -- "${via_preload[@]}" "$p/multinode.gcc" loop >"$job_out" \
    2>"$job_err" &
  loop_pid=$!
  local i
  for ((i = 0; i < 300; i++)); do
    grep -qs '^# looping' "$job_out" && return 0
    kill -0 "$loop_pid" 2>/dev/null || break
    sleep 0.1
  done
  return 1
}
# end_loop: waits for the job, its status in job_rc, the time since the kill in job_ms.
end_loop() {
  wait "$loop_pid"
  job_rc=$?
  job_ms=$((($(date +%s%N) - t_kill) / 1000000))
  echo "$job_cmd: exit $job_rc, $job_ms ms after the kill" >>"$work/jobs.txt"
}
# node_procs: processes still in any node's namespace, or running the test programs.
node_procs() {
  local f ns left="" line path pid state
  for f in "$cdir"/node*/uts; do
    [ -e "$f" ] || continue
    ns=$(cat "$f")
    left+=$(stat -L -c '%i %n' /proc/[0-9]*/ns/uts 2>/dev/null | awk -v ns="$ns" '$1 == ns')
  done
  # Zombies have ended: their parent (or init) has not collected them yet.
  left=$(while read -r _ path; do
    [ -n "$path" ] || continue
    pid=${path#/proc/}
    pid=${pid%%/*}
    read -r state 2>/dev/null <"/proc/$pid/stat" || continue
    state=${state##*) }
    [ "${state%% *}" = Z ] || echo "$pid $(cat "/proc/$pid/comm" 2>/dev/null)"
  done <<<"$left")
  left+=$(pgrep -a -f "$p/multinode.gcc" | grep -v "cluster run")
  [ -z "$left" ] || {
    echo "# left:"
    while IFS= read -r line; do echo "#   $line"; done <<<"$left"
    return 1
  }
}

# A rank stopped in a loop of MPI_Allreduce on node2, TORUSMPI_TIMEOUT=3: each node where ranks
# wait gives its own report, and the job ends with status 110.
on 2 2 ofi 60 -x TORUSMPI_TIMEOUT=3 "$p/hang.gcc" stop
check "a stopped rank on node2: TORUSMPI_TIMEOUT ends the job with status 110" \
  test "$job_rc" -eq 110 || diag_job
check "... one report from each node" eval \
  "grep -q 'looks hung. The ranks of node node1' \"\$job_err\" &&
   grep -q 'looks hung. The ranks of node node2' \"\$job_err\"" || diag_job
check "... node2's names the stopped rank" grep -q 'rank 3 is stopped (state T)' "$job_err" ||
  diag_job

for net in ofi ucx; do
  if start_loop 3 2 "$net"; then
    t_kill=$(date +%s%N)
    bash "$cluster" kill --dir "$cdir" node2 >>"$work/kills.txt" 2>&1
    end_loop
    diag "node2 killed ($net): the job ended $job_ms ms later (exit $job_rc)"
    check "node2 (ranks 2, 3) killed in MPI_Allreduce, $net: the job ends within 15 s" \
      test "$job_rc" -ne 0 -a "$job_rc" -ne 124 -a "$job_ms" -lt 15000 || diag_job
    # ucx's endpoints fail and the ranks name the lost peer. Over libfabric tcp a rank that only
    # receives sees nothing of it; Open MPI's mpirun notices its lost daemon first and names
    # the node.
    check "... a message names a lost rank (2 or 3) or node2" \
      grep -Eq 'rank [23]\b|on node node2' "$job_err" || diag_job
    grep -Eq 'rank [23]\b' "$job_err" && diag "... torusmpi named the lost rank"
    check "... no node left a /dev/shm entry, no process" eval \
      "! grep '^cluster: ' \"\$job_err\" | sed 's/^/# /' | grep . && node_procs" || diag_job
  else
    skip "node2 killed in MPI_Allreduce, $net" "the loop never started"
    diag_job
    wait "$loop_pid"
  fi
done

if start_loop 2 2 ofi; then
  t_kill=$(date +%s%N)
  kill -KILL "$(cat "$cdir/mpirun.pid")"
  end_loop
  diag "mpirun killed: the cluster ended $job_ms ms later (exit $job_rc)"
  check "mpirun SIGKILLed mid-job: the job ends within 15 s" \
    test "$job_rc" -ne 0 -a "$job_rc" -ne 124 -a "$job_ms" -lt 15000 || diag_job
  check "... every daemon and rank ended by itself" not grep -q '^cluster: .*killed' "$job_err" ||
    diag_job
  check "... no node left a /dev/shm entry, no process" eval \
    "! grep '^cluster: .*/dev/shm' \"\$job_err\" | sed 's/^/# /' | grep . && node_procs" ||
    diag_job
else
  skip "mpirun SIGKILLed mid-job" "the loop never started"
  wait "$loop_pid"
fi

check_shm
tap_done
