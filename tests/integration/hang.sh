#!/usr/bin/env bash
# Never a silent hang, never a leftover (tests/progs/hang.c: jobs that never end by themselves).
# - TORUSMPI_TIMEOUT: one rank stopped (SIGSTOP) in a loop of MPI_Allreduce ends the job with exit
#   status 110 and one report naming what each rank does and whom it waits for; the same in
#   MPI_Finalize's closing barrier. Without the variable the job waits (a slow rank is no error).
# - torusmpi_info --hang PID describes a running job from outside and leaves it running.
# - mpirun ended by SIGTERM or SIGKILL while ranks wait in MPI, poll MPI_Testall, compute, loop
#   in collectives or are stopped: no process is left a few seconds later. A rank whose parent is
#   not the launcher (started through sh) exits through PMIx's lost-connection event, saying why.
# - Under a debugger (a tracer attached) nothing times out.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/hang.gcc
info=$TM_BINDIR/torusmpi_info

# The processes still running the test program (zombies are already dead).
survivors() {
  ps -eo pid=,stat=,args= | awk -v dir="$TM_PROGS/hang." \
    'index($3, dir) == 1 && $2 !~ /^Z/ { print $1 }'
}

# none_left [seconds]: nothing of the program remains within the time (default 5 s).
none_left() {
  local i
  for ((i = 0; i < ${1:-5} * 10; i++)); do
    [ -z "$(survivors)" ] && return 0
    sleep 0.1
  done
  echo "# left running:"
  ps -o pid=,stat=,args= -p "$(survivors | paste -sd,)" | sed 's/^/#   /'
  return 1
}

# A job left running by a failed check must not upset the next ones.
reap() {
  local pids
  pids=$(survivors)
  [ -z "$pids" ] || kill -9 $pids 2>/dev/null
  [ -z "${bg_pid:-}" ] || kill -9 "$bg_pid" 2>/dev/null
  wait 2>/dev/null
  bg_pid=
}

# start_bg <np> <mode> [mpirun arguments...]: starts a job in the background and waits until every
# rank said "ready" (at most 30 s); $bg_pid is mpirun's pid.
start_bg() {
  local np=$1 mode=$2 i
  shift 2
  job_n=$((job_n + 1))
  job_out=$work/job$job_n.out
  job_err=$work/job$job_n.err
  job_cmd="mpirun -np $np $* hang $mode"
  : >"$job_out"
  "${mpirun[@]}" -np "$np" "${via_path[@]}" "$@" "$bin" "$mode" >"$job_out" 2>"$job_err" &
  bg_pid=$!
  for ((i = 0; i < 300; i++)); do
    [ "$(grep -c '^ready' "$job_out")" -ge "$np" ] && return 0
    sleep 0.1
  done
  return 1
}

# stop_bg <signal>: sends it to mpirun and collects its status in $job_rc.
stop_bg() {
  kill -s "$1" "$bg_pid"
  # (bash's own "Killed" line would only be noise in the TAP output)
  { wait "$bg_pid"; } 2>/dev/null
  job_rc=$?
  bg_pid=
}

if [ ! -x "$bin" ]; then
  skip "hang tests" "$bin was not built"
  tap_done
fi

# --- TORUSMPI_TIMEOUT
run_job 60 "${mpirun[@]}" -np 4 "${via_path[@]}" -x TORUSMPI_TIMEOUT=3 "$bin" stop
diag "stopped rank, TORUSMPI_TIMEOUT=3: exit $job_rc after $job_ms ms"
check "stopped rank: the job ends with exit status 110" test "$job_rc" -eq 110 || diag_job
check "... within the timeout and a few seconds" test "$job_ms" -lt 12000
check "... one report" test "$(grep -c 'the job looks hung' "$job_err")" -eq 1 || diag_job
check "... saying where the others wait" grep -Eq \
  'rank [0-2] is in MPI_Allreduce #58 on MPI_COMM_WORLD, step [0-9]+ of [0-9]+, waiting for rank [0-9]' \
  "$job_err" || diag_job
check "... naming the stopped rank and its last call" grep -q \
  'rank 3 is stopped (state T) outside MPI, last in MPI_Allreduce #57 on MPI_COMM_WORLD' \
  "$job_err" || diag_job
# (the loop's allreduces are one record: consecutive collectives fold)
check "... with each rank's last operations" grep -Eq \
  '^torusmpi\[r[0-3]\] error: +[0-9]+ +done .* MPI_Allreduce #57 on MPI_COMM_WORLD, 8 B, repeated [0-9]+ more times \(#[0-9]+-57\)' \
  "$job_err" || diag_job
check "... and no process left" none_left
reap

run_job 60 "${mpirun[@]}" -np 3 "${via_path[@]}" -x TORUSMPI_TIMEOUT=3 "$bin" finalize
check "a rank that never finalizes: exit status 110" test "$job_rc" -eq 110 || diag_job
check "... naming MPI_Finalize's closing barrier" grep -q \
  "in MPI_Finalize's closing barrier" "$job_err" || diag_job
check "... no process left" none_left
reap

# --- Without a timeout the job waits; torusmpi_info --hang describes it and leaves it running.
if start_bg 4 stop; then
  sleep 5
  check "without TORUSMPI_TIMEOUT a stopped rank's job waits" test -z "$(grep 'looks hung' "$job_err")"
  pid=$(survivors | head -n 1)
  "$info" --hang "$pid" >"$work/hang.txt" 2>&1
  check "torusmpi_info --hang: succeeds" test $? -eq 0 || diag_file "$work/hang.txt"
  check "... sees the job's 4 ranks" grep -q '4 of its 4 ranks on this node' "$work/hang.txt" ||
    diag_file "$work/hang.txt"
  check "... waiting in MPI_Allreduce #58" grep -Eq \
    'rank [0-2] is in MPI_Allreduce #58 on MPI_COMM_WORLD, step [0-9]+ of [0-9]+, waiting for rank' \
    "$work/hang.txt" || diag_file "$work/hang.txt"
  check "... and the stopped rank" grep -q 'rank 3 is stopped (state T)' "$work/hang.txt" ||
    diag_file "$work/hang.txt"
  check "... and the job still runs" test "$(survivors | wc -l)" -eq 4
  stop_bg KILL
  check "mpirun killed (SIGKILL) with a rank stopped: no process left" none_left
else
  check "stopped-rank job started" false
  diag_job
fi
reap
"$info" --hang 1 >"$work/hang1.txt" 2>&1
check "torusmpi_info --hang on a process without a recorder fails, saying so" \
  grep -q 'has no torusmpi flight recorder' "$work/hang1.txt" || diag_file "$work/hang1.txt"

# --- mpirun ended from outside, in every state of the job.
for mode in recv testall compute busy stop; do
  for sig in TERM KILL; do
    if start_bg 3 "$mode"; then
      sleep 0.5
      stop_bg "$sig"
      check "mpirun SIG$sig while ranks are in '$mode': no process left" none_left
    else
      check "'$mode' job started" false
      diag_job
    fi
    reap
  done
done

# --- A rank whose parent is not the launcher: PMIx's lost-connection event ends it, saying so.
job_n=$((job_n + 1))
"${mpirun[@]}" -np 2 "${via_path[@]}" sh -c "exec 2>$work/lost.\$\$.err; $bin compute" \
  >"$work/lost.out" 2>&1 &
bg_pid=$!
for ((i = 0; i < 300; i++)); do
  [ "$(grep -c '^ready' "$work/lost.out")" -ge 2 ] && break
  sleep 0.1
done
stop_bg KILL
check "launcher killed, ranks under sh: no process left" none_left
check "... each rank said its launcher is gone" test "$(cat "$work"/lost.*.err 2>/dev/null |
  grep -c "the launcher's PMIx server is gone")" -eq 2 ||
  for f in "$work"/lost.*.err; do diag_file "$f"; done
reap

# --- A debugger holds the job: no timeout.
if command -v gdb >/dev/null; then
  if start_bg 2 busy -x TORUSMPI_TIMEOUT=2; then
    pid=$(survivors | tail -n 1)
    # gdb stops the rank and keeps it stopped until it detaches.
    gdb -q -batch -p "$pid" -ex 'shell sleep 6' >"$work/gdb.out" 2>&1
    sleep 1
    check "a rank held by a debugger past TORUSMPI_TIMEOUT: no timeout" \
      not grep -q 'looks hung' "$job_err" || diag_job
    check "... the waiting rank says why" grep -q 'a debugger is attached' "$job_err" || diag_job
    sleep 3
    check "... nor after it detached" not grep -q 'looks hung' "$job_err" || diag_job
    check "... and the job goes on" test "$(survivors | wc -l)" -eq 2
    stop_bg TERM
    check "... and ends with mpirun" none_left
  else
    check "debugger job started" false
    diag_job
  fi
  reap
else
  skip "timeout under a debugger" "gdb is not installed"
fi

check_shm
tap_done
