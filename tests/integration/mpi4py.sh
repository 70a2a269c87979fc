#!/usr/bin/env bash
# An application: Debian's mpi4py (python3-mpi4py, built against Open MPI) running
# tests/progs/mpi4py_check.py — split communicators, a reduction with an op written in Python,
# pickled objects, derived datatypes — first on Open MPI (the reference), then on torusmpi by
# LD_PRELOAD substitution at 1 to 4 ranks; then tests/progs/mpi4py_futures.py, mpi4py.futures'
# MPIPoolExecutor (MPI_THREAD_MULTIPLE, workers made by MPI_Comm_spawn) on both. The checks name
# the library they expect, so a run that silently fell back to Open MPI's libmpi fails.
. "$(dirname "$0")/lib.sh"

python=/usr/bin/python3  # Debian's: mpi4py is installed for it, not for other pythons on PATH
script=$TM_SRCDIR/progs/mpi4py_check.py
if ! "$python" -c 'import mpi4py' 2>/dev/null; then
  skip "mpi4py on Open MPI and torusmpi" "python3-mpi4py is not installed (scripts/install-deps installs it)"
  tap_done
fi

run_job 120 "${mpirun[@]}" -np 3 "$python" "$script" "Open MPI"
check "mpi4py_check on Open MPI itself (the reference), np=3" ranks_done 3 || diag_job
for np in 1 2 3 4; do
  run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$python" "$script" torusmpi
  check "mpi4py_check on torusmpi, LD_PRELOAD, np=$np" ranks_done "$np" || diag_job
done
futures=$TM_SRCDIR/progs/mpi4py_futures.py
run_job 120 "${mpirun[@]}" -np 1 "$python" "$futures" "Open MPI"
check "mpi4py.futures MPIPoolExecutor on Open MPI itself (the reference)" ranks_done 1 || diag_job
run_job 120 "${mpirun[@]}" -np 1 "${via_preload[@]}" "$python" "$futures" torusmpi
check "mpi4py.futures MPIPoolExecutor on torusmpi, LD_PRELOAD (3 spawned workers)" ranks_done 1 ||
  diag_job
check_shm
tap_done
