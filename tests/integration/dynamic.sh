#!/usr/bin/env bash
# Dynamic processes (tests/progs/dynamic.c): MPI_Comm_spawn of 1 and 3 children from 1 and 2
# parents with data both ways over the intercommunicator (point-to-point, MPI_Bcast, MPI_Allreduce,
# MPI_Intercomm_merge, groups across jobs) and MPI_Comm_disconnect; MPI_Comm_spawn_multiple with
# the wdir, env and host info keys; a spawn of a program that does not exist (MPI_ERR_SPAWN, at
# once) and of one that ends without connecting (MPI_ERR_SPAWN once it has ended); ports with
# MPI_Publish_name / MPI_Lookup_name between two halves of a job; MPI_Comm_accept / _connect
# between two mpirun jobs; MPI_Comm_join over a TCP socket on 127.0.0.1; MPI_Comm_accept waiting
# on one thread while another communicates; and mpi4py.futures' MPIPoolExecutor. Open MPI runs
# the programs first, as the reference (between two mpiruns it needs its ompi-server, and a
# missing program ends its whole job, so those cases run on torusmpi only), then torusmpi by
# LD_PRELOAD and by LD_LIBRARY_PATH. Spawned processes print their checks as ranks 100 and up,
# and check that they run their parents' library. Nothing leaves the host: ports are reached on
# the loopback interface, and the network transport that carries the traffic between jobs is
# libfabric's tcp on lo.
. "$(dirname "$0")/lib.sh"

p=$TM_PROGS/dynamic.gcc
ompi=(env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}")
net=(-x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo)

# children_done <n>: ranks 100 .. 100+n-1 (spawned processes) each printed their clean done line.
children_done() {
  local r
  for ((r = 100; r < 100 + $1; r++)); do
    grep -Eq "^done $r: [0-9]+ checks, 0 failed\$" "$job_out" || return 1
  done
}
# all_done <parents> <children>
all_done() { ranks_done "$1" && children_done "$2"; }


# --- The reference: Open MPI itself.
run_job 120 "${ompi[@]}" -np 2 "$p" spawn 3
check "Open MPI: 2 parents spawn 3 children (the reference)" all_done 2 3 || diag_job
run_job 120 "${ompi[@]}" -np 1 "$p" multiple
check "Open MPI: spawn_multiple with wdir, env, host" all_done 1 3 || diag_job
run_job 120 "${ompi[@]}" -np 4 "$p" ports
check "Open MPI: ports, publish/lookup, accept/connect in one job" ranks_done 4 || diag_job
run_job 120 "${ompi[@]}" -np 2 "$p" join
check "Open MPI: MPI_Comm_join" ranks_done 2 || diag_job
run_job 120 "${ompi[@]}" -np 2 "$p" threaded
check "Open MPI: MPI_Comm_accept on one thread, messages on another" ranks_done 2 || diag_job

# --- torusmpi.
for np in 1 2; do
  for n in 1 3; do
    run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "${net[@]}" "$p" spawn "$n"
    check "$np parent(s) spawn $n child(ren): p2p, bcast, allreduce, merge, disconnect" \
      all_done "$np" "$n" || diag_job
  done
done
# A job of 2 emulated instances already has the network transport open; its layout is not the
# child's (TORUSMPI_INSTANCES=2 could not hold one process).
run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" "${net[@]}" \
  -x TORUSMPI_INSTANCE=torus:2x1:cores=1 -x TORUSMPI_INSTANCES=2 "$p" spawn 1
check "4 parents on 2 emulated instances spawn 1 child" all_done 4 1 || diag_job
run_job 120 "${mpirun[@]}" -np 2 "${via_path[@]}" "${net[@]}" "$p" spawn 2
check "the same by LD_LIBRARY_PATH: the children run torusmpi too" all_done 2 2 || diag_job

run_job 120 "${mpirun[@]}" -np 2 "${via_preload[@]}" "${net[@]}" "$p" multiple
check "spawn_multiple of two commands, wdir=/tmp and env for one, host=$(hostname) for the other" \
  all_done 2 3 || diag_job

run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" "${net[@]}" "$p" fail
check "a program that does not exist: MPI_ERR_SPAWN, errcodes filled, the job goes on" \
  ranks_done 2 || diag_job
check "... within 20 s" test "$job_ms" -lt 20000 || diag_job
check "... the message names the command" grep -q \
  "MPI_Comm_spawn: command 0, /nonexistent/dynamic-no-such-program, is not a program" \
  "$job_out" || diag_job

run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" "${net[@]}" "$p" early
check "spawned processes that end without connecting (/bin/true): MPI_ERR_SPAWN" \
  ranks_done 2 || diag_job
check "... within 20 s, not at TORUSMPI_BOOT_TIMEOUT" test "$job_ms" -lt 20000 || diag_job
check "... the message says the spawned job ended" grep -q \
  "MPI_Comm_spawn: the spawned processes did not connect: the spawned job .* ended before" \
  "$job_out" || diag_job

run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" "${net[@]}" "$p" ports
check "ports: open, publish, lookup, accept/connect between two halves of a job" \
  ranks_done 4 || diag_job

# Two mpirun jobs: the server writes its port's name to a file, the client reads it.
port_file=$work/port.txt
rm -f "$port_file"
timeout -k 5 120 "${mpirun[@]}" -np 2 "${via_preload[@]}" "${net[@]}" "$p" server "$port_file" \
  >"$work/server.out" 2>"$work/server.err" &
server=$!
run_job 120 "${mpirun[@]}" -np 3 "${via_preload[@]}" "${net[@]}" "$p" client "$port_file"
wait "$server"
server_rc=$?
check "accept/connect between two mpirun jobs: the client (3 ranks)" ranks_done 3 || diag_job
check "... and the server (2 ranks)" eval "[ $server_rc -eq 0 ] &&
  grep -q '^done 0 of 2: [0-9]* checks, 0 failed' '$work/server.out' &&
  grep -q '^done 1 of 2: [0-9]* checks, 0 failed' '$work/server.out'" ||
  { diag_file "$work/server.out"; diag_file "$work/server.err"; }

run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" "${net[@]}" "$p" join
check "MPI_Comm_join over a TCP socket on 127.0.0.1" ranks_done 2 || diag_job

run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" "${net[@]}" "$p" threaded
check "MPI_THREAD_MULTIPLE: a thread waits in MPI_Comm_accept while another communicates" \
  ranks_done 2 || diag_job

# mpi4py.futures: MPIPoolExecutor spawns its workers with MPI_Comm_spawn (MPI_THREAD_MULTIPLE).
python=/usr/bin/python3
if "$python" -c 'import mpi4py.futures' 2>/dev/null; then
  cat >"$work/futures.py" <<'EOF'
from mpi4py import MPI
from mpi4py.futures import MPIPoolExecutor

def square(x):
    return x * x

if __name__ == "__main__":
    lib = MPI.Get_library_version().split()[0]
    with MPIPoolExecutor(max_workers=2) as ex:
        got = list(ex.map(square, range(20)))
    ok = got == [x * x for x in range(20)]
    print(("ok 0 futures map on " if ok else "FAIL 0 futures map on ") + lib)
    print("done 0 of 1: 1 checks, %d failed" % (0 if ok else 1))
EOF
  run_job 120 "${mpirun[@]}" -np 1 "$python" "$work/futures.py"
  check "mpi4py.futures MPIPoolExecutor.map on Open MPI (the reference)" ranks_done 1 || diag_job
  run_job 120 "${mpirun[@]}" -np 1 "${via_preload[@]}" "${net[@]}" "$python" "$work/futures.py"
  check "mpi4py.futures MPIPoolExecutor.map on torusmpi" eval \
    "ranks_done 1 && grep -q 'futures map on torusmpi' '$job_out'" || diag_job
else
  skip "mpi4py.futures on torusmpi" "python3-mpi4py is not installed"
fi

# No process of the program may outlive its job (spawned ones included).
check "no process of the jobs is left" no_process "$p"
check_shm
tap_done
