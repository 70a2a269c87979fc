#!/usr/bin/env bash
# In-network aggregation: torusmpi_switch on the loopback, and jobs of 2 to 4 emulated instances
# (over libfabric's tcp) whose allreduce, reduce_scatter(_block), allgather and barrier go through
# it (the ina algorithms, forced).
# Exact integer results on host and device buffers (staging 0 on the device), float sums within
# the documented bound, torusmpi's 16-bit floats; a switch that drops packets (retransmits), a straggler held past the
# switch's timeout (the call finishes over the network), the switch killed in the middle of a run
# of calls (the job goes on without it), the switch dying half way through sending a result (the
# members without it get it from those with it), no switch at all (one warning), and slots exhausted by
# concurrent collectives on many communicators. No switch process may outlive the script.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/ina.gcc
sw=$TM_BINDIR/torusmpi_switch
net=(-x TORUSMPI_NET=ofi -x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo)
forced=(-x TORUSMPI_ALLREDUCE_ALGORITHM=ina -x TORUSMPI_BARRIER_ALGORITHM=ina
  -x TORUSMPI_REDUCE_SCATTER_ALGORITHM=ina -x TORUSMPI_REDUCE_SCATTER_BLOCK_ALGORITHM=ina
  -x TORUSMPI_ALLGATHER_ALGORITHM=ina)
sw_pid=
started=
trap '[ -z "$sw_pid" ] || kill -9 "$sw_pid" 2>/dev/null' EXIT

# start_switch [its arguments]: a switch on a free port, in the background: sw_pid, sw_port and
# sw_out (its output).
sw_n=0
start_switch() {
  sw_n=$((sw_n + 1))
  sw_out=$work/switch$sw_n.out
  "$sw" --listen 127.0.0.1:0 "$@" >"$sw_out" 2>&1 &
  sw_pid=$!
  started="$started $sw_pid"
  sw_port=
  for _ in $(seq 50); do
    sw_port=$(sed -n 's/^torusmpi_switch: listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$sw_out")
    [ -n "$sw_port" ] && return 0
    sleep 0.1
  done
  diag_file "$sw_out"
  return 1
}
# stop_switch: SIGTERM, and its statistics line in $sw_out.
stop_switch() {
  kill -TERM "$sw_pid" 2>/dev/null
  wait "$sw_pid" 2>/dev/null
  sw_pid=
}

# job <np> <instance> <instances> <program arguments...>: through the switch at $sw_port.
job() {
  local np=$1 instance=$2 instances=$3
  shift 3
  run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "${net[@]}" "${forced[@]}" \
    -x TORUSMPI_INSTANCE="$instance" -x TORUSMPI_INSTANCES="$instances" -x TORUSMPI_STATS=1 \
    -x TORUSMPI_SWITCH=127.0.0.1:"$sw_port" -x TORUSMPI_TIMEOUT=90 "${extra[@]}" "$bin" "$@"
}
extra=()

# stat <name>: the job's "torusmpi-stats switch" value of name.
stat() { sed -n "s/^torusmpi-stats switch .*\\b$1=\\([0-9]*\\).*/\\1/p" "$job_err"; }

# --- The program itself.
run_job 10 "$sw" --help
check "torusmpi_switch --help" grep -q -- '--listen' "$job_out" || diag_job
run_job 10 "$sw" --listen 10.1.2.3:7000
check "torusmpi_switch refuses an address off the loopback (exit 2)" test "$job_rc" -eq 2 ||
  diag_job

start_switch
check "the switch starts on a free port" test -n "$sw_port" || exit 1

# --- Right results through it, every op and type, 2 to 4 instances.
for shape in "4 torus:2x1:cores=1 2" "3 torus:1x1:cores=1 3" "4 torus:1x1:cores=1 4"; do
  read -r np instance instances <<<"$shape"
  job "$np" "$instance" "$instances" host
  check "ina host, $instances instances of $instance: exact, floats within the bound" \
    ranks_done "$np" || diag_job
  check "... through the switch (blocks > 0, no fallback)" \
    eval '[ "$(stat blocks)" -gt 0 ] && [ "$(stat fallbacks)" -eq 0 ]' ||
    { grep '^torusmpi-stats' "$job_err" | sed 's/^/# /'; }
  grep '^float sum' "$job_out" | sed 's/^/# /'
done
# torusmpi's 16-bit floats (MPIX_BFLOAT16, MPIX_C_FLOAT16), which the switch adds in float and
# rounds back at each step: coll_algos' sweep of them (sum, product, max, min; exact integer data)
# through the ina algorithms, 2 instances. Every reduction of the job is on them: blocks through
# the switch and no timeout say that it took them (products go over the network: no such op).
run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" "${net[@]}" \
  -x TORUSMPI_INSTANCE=torus:2x1:cores=1 -x TORUSMPI_INSTANCES=2 -x TORUSMPI_STATS=1 \
  -x TORUSMPI_SWITCH=127.0.0.1:"$sw_port" -x TORUSMPI_TIMEOUT=90 -x COLL_ALGOS_TYPES=float16 \
  "$TM_PROGS/coll_algos.gcc" allreduce/ina reduce_scatter/ina reduce_scatter_block/ina
check "ina, 16-bit floats (coll_algos' float16 sweep), 2 instances: exact" ranks_done 4 ||
  diag_job
check "... through the switch (blocks > 0, no timeout)" \
  eval '[ "$(stat blocks)" -gt 0 ] && [ "$(stat timeouts)" -eq 0 ]' ||
  { grep '^torusmpi-stats' "$job_err" | sed 's/^/# /'; }
extra=(-x TORUSMPI_DEVICE_GUARD=1)
job 4 torus:2x1:cores=1 2 device
check "ina device buffers, 2 instances: exact, staging bytes=0" \
  eval 'ranks_done 4 && grep -q "^torusmpi-stats staging bytes=0$" "$job_err"' || diag_job
extra=()
stop_switch
check "the switch prints its statistics when it ends" \
  grep -Eq '^torusmpi_switch: blocks=[1-9][0-9]* bytes_in=' "$sw_out" || diag_file "$sw_out"

# --- Lost packets: sent again.
start_switch --drop 0.05 --seed 7
job 4 torus:2x1:cores=1 2 loop 20
check "ina with 5% of the switch's packets dropped: right" ranks_done 4 || diag_job
check "... blocks were sent again (retransmits > 0)" eval '[ "$(stat retransmits)" -gt 0 ]' ||
  { grep '^torusmpi-stats' "$job_err" | sed 's/^/# /'; }
stop_switch

# --- A straggler past the switch's timeout: that call is done over the network.
start_switch --timeout 0.3
extra=(-x TORUSMPI_DEBUG=select)
job 4 torus:2x1:cores=1 2 straggler 1500
check "ina, the last rank 1.5 s late (switch timeout 0.3 s): right" ranks_done 4 || diag_job
check "... the aged-out call finished over the network, and said so" \
  eval '[ "$(stat fallbacks)" -gt 0 ] && [ "$(stat timeouts)" -gt 0 ] &&
        grep -q "done over the network instead" "$job_err"' ||
  { grep -E '^torusmpi-stats|network instead' "$job_err" | head -5 | sed 's/^/# /'; }
extra=()
stop_switch

# --- The switch killed in the middle of a run of calls: the job goes on without it.
# Killed once it has aggregated 1000 blocks (its statistics on SIGUSR1), whatever the machine's
# speed: about 30 of the 300 calls.
start_switch --timeout 0.2
(
  while kill -USR1 "$sw_pid" 2>/dev/null; do
    sleep 0.2
    blocks=$(sed -n 's/^torusmpi_switch: blocks=\([0-9]*\) .*/\1/p' "$sw_out" | tail -n 1)
    [ "${blocks:-0}" -lt 1000 ] || { kill -9 "$sw_pid"; break; }
  done
) &
killer=$!
job 4 torus:2x1:cores=1 2 loop 300
wait "$killer"
wait "$sw_pid" 2>/dev/null
sw_pid=
check "ina, the switch killed mid-run: every call right" ranks_done 4 || diag_job
check "... with a warning that it stopped answering" \
  grep -q "stopped answering" "$job_err" || diag_job

# --- The switch dies while it sends a block's result: the first member got it, the others did
# not. They ask the other members (rescue.h) and take the result from the first, so every member
# ends the call with the same bytes; the calls after it go without the switch. Without the
# rescue the members without the result wait for contributions the first never sends (a hang).
# At 2 instances (groups of 2) and at 3 (a member with the result and two without); calls of
# 3001 ints, a block each, so that the block cut short is a whole aggregation.
for shape in "4 torus:2x1:cores=1 2" "3 torus:1x1:cores=1 3"; do
  read -r np instance instances <<<"$shape"
  start_switch --timeout 0.2 --die-after 20
  job "$np" "$instance" "$instances" loop 30 3001
  wait "$sw_pid" 2>/dev/null
  sw_pid=
  check "ina, $instances instances, the switch dying half way through a result: every call right" \
    ranks_done "$np" || diag_job
  check "... the members without the result got it from the member with it (rescued > 0)" \
    eval '[ "$(stat rescued)" -gt 0 ] && grep -q "first source only" "$sw_out"' ||
    { grep '^torusmpi-stats switch' "$job_err" | sed 's/^/# /'; diag_file "$sw_out"; }
done
# A reduce-scatter's members get their own parts only: one left without its part makes it from
# the contributions, which those with theirs kept.
start_switch --timeout 0.2 --die-after 20
job 3 torus:1x1:cores=1 3 rsloop 30 1000
wait "$sw_pid" 2>/dev/null
sw_pid=
check "ina reduce_scatter_block, the switch dying half way through a block: every call right" \
  eval 'ranks_done 3 && grep -q "first source only" "$sw_out"' || diag_job

# --- No switch at all: one warning, the host algorithms.
sw_port=9  # the discard port: nothing answers there
job 4 torus:2x1:cores=1 2 host
check "TORUSMPI_SWITCH naming no switch: right results" ranks_done 4 || diag_job
check "... and one warning for the job" \
  eval '[ "$(grep -c "no switch answered" "$job_err")" -eq 1 ]' || diag_job

# --- Few slots, many communicators at once (started in different orders): no deadlock.
start_switch --slots 4
job 4 torus:2x1:cores=1 2 comms 8
check "ina, 8 communicators' Iallreduce at once through 4 slots: right, no deadlock" \
  ranks_done 4 || diag_job
stop_switch
check "... the switch turned blocks away for want of slots (busy > 0)" \
  grep -Eq '^torusmpi_switch: .* busy=[1-9]' "$sw_out" || diag_file "$sw_out"

check "no switch of this script left running" eval '! kill -0 $started 2>/dev/null' ||
  diag "left:" "$started"
check_shm
tap_done
