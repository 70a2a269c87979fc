#!/usr/bin/env bash
# One-sided communication within a node (tests/progs/rma.c): every window flavor (MPI_Win_create,
# MPI_Win_allocate, MPI_Win_allocate_shared, MPI_Win_create_dynamic), fence, lock/unlock,
# lock_all, flushes and post/start/complete/wait epochs, put, get, every predefined op of the
# accumulates on integers against a computed reference, fetch-and-op, compare-and-swap, the
# request forms, vector datatypes, exclusive-lock increments of one counter by every rank (none
# lost), MPI_Win_shared_query with direct loads and stores, and the error classes under
# MPI_ERRORS_RETURN; windows on device memory (rma_device.c). First on Open MPI itself (the reference: where it checks less, its answers are
# "skip" lines), then on torusmpi at 1 to 4 and 6 ranks (no skip line allowed), by LD_PRELOAD and
# LD_LIBRARY_PATH, under valgrind's memcheck, with named segments (TORUSMPI_SHM_NAMED=1), and the
# clang build, and with three threads per rank (MPI_THREAD_MULTIPLE); a Fortran program's window
# gives Open MPI's answers. A lock never given back is diagnosed by TORUSMPI_TIMEOUT; a rank
# killed while windows are live leaves nothing in /dev/shm. Windows across emulated instances:
# rma_net.sh.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/rma

run_job 180 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$bin.gcc"
check "rma.gcc on Open MPI itself (the reference), np=3" ranks_done 3 || diag_job

passed() {
  ranks_done "$1" || return 1
  if grep -q '^skip' "$job_out"; then
    echo "# the program took its path for reference libraries:"
    grep '^skip' "$job_out" | head -n 3 | sed 's/^/#   /'
    return 1
  fi
}
for np in 1 2 3 4 6; do
  run_job 180 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$bin.gcc"
  check "rma.gcc, LD_PRELOAD, np=$np" passed "$np" || diag_job
done
run_job 180 "${mpirun[@]}" -np 3 "${via_path[@]}" "$bin.clang"
check "rma.clang, LD_LIBRARY_PATH, np=3" passed 3 || diag_job
run_job 120 "${mpirun[@]}" -np 3 "${via_preload[@]}" "$bin.gcc" threads
check "rma.gcc threads (MPI_THREAD_MULTIPLE), np=3: concurrent updates from 3 threads per rank" \
  passed 3 || diag_job
# Windows on device memory (tests/progs/rma_device.c), two ranks to a chip of a 2x2 torus, under the
# device guard (a host access to a device byte faults): every part on the device at 1 to 6 ranks,
# with device origins moving nothing through host memory (staging bytes=0); even ranks' parts on
# the device and odd ranks' on the host; the clang build.
dev=$TM_PROGS/rma_device
device_env=(-x TORUSMPI_DEVICE_GUARD=1 -x TORUSMPI_INSTANCE=torus:2x2:cores=2)
staged_nothing() {
  grep -q '^torusmpi-stats staging bytes=0$' "$job_err" ||
    { grep '^torusmpi-stats staging' "$job_err" | sed 's/^/# /'; return 1; }
}
for np in 1 2 3 4 6; do
  run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "${device_env[@]}" -x TORUSMPI_STATS=1 \
    "$dev.gcc"
  check "rma_device.gcc, every part on the device, np=$np" ranks_done "$np" || diag_job
  check "... no device byte staged through host memory" staged_nothing || diag_job
done
run_job 120 "${mpirun[@]}" -np 3 "${via_path[@]}" "${device_env[@]}" "$dev.clang" mixed
check "rma_device.clang mixed (device and host parts), LD_LIBRARY_PATH, np=3" ranks_done 3 ||
  diag_job

# Memory errors and leaks of torusmpi's windows under valgrind's memcheck (as valgrind.sh runs it).
if command -v valgrind >/dev/null; then
  memcheck=(valgrind --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --suppressions="$TM_SRCDIR/integration/pmix.supp"
    --log-file="$work/memcheck.%p.log")
  run_job 300 "${mpirun[@]}" -np 2 "${via_preload[@]}" "${memcheck[@]}" "$bin.gcc"
  check "rma.gcc np=2 under memcheck: no error, no leak" passed 2 ||
    { diag_job; for f in "$work"/memcheck.*.log; do diag_file "$f" 40; done; }
  check "memcheck really ran both rma ranks" \
    test "$(grep -ls Memcheck "$work"/memcheck.*.log | wc -l)" -eq 2
  rm -f "$work"/memcheck.*.log
  run_job 300 "${mpirun[@]}" -np 2 "${via_preload[@]}" "${device_env[@]}" "${memcheck[@]}" \
    "$dev.gcc" mixed
  check "rma_device.gcc mixed np=2 under memcheck: no error, no leak" ranks_done 2 ||
    { diag_job; for f in "$work"/memcheck.*.log; do diag_file "$f" 40; done; }
else
  skip "rma.gcc under memcheck" "valgrind is not installed"
fi
# Named segments: in /dev/shm only until every rank has mapped them (check_shm below).
run_job 180 "${mpirun[@]}" -np 3 "${via_preload[@]}" -x TORUSMPI_SHM_NAMED=1 "$bin.gcc"
check "rma.gcc, named segments (TORUSMPI_SHM_NAMED=1), np=3" passed 3 || diag_job

# --- From Fortran (Open MPI's libmpi_mpifh, compiled here with its mpifort): a window's
# attributes as INTEGER(KIND=MPI_ADDRESS_KIND) values, and an accumulate in fence epochs; the
# same line on both libraries.
cat >"$work/wf.f90" <<'EOF_F90'
program wf
  use mpi
  implicit none
  integer :: ierr, win, rank, np, disp, flavor, model
  integer(kind=MPI_ADDRESS_KIND) :: sz, val, base
  logical :: flag
  integer :: buf(4), one
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  buf = 0
  sz = 16
  call MPI_Win_create(buf, sz, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, val, flag, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, base, flag, ierr)
  disp = int(base)
  call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, base, flag, ierr)
  flavor = int(base)
  call MPI_Win_get_attr(win, MPI_WIN_MODEL, base, flag, ierr)
  model = int(base)
  call MPI_Win_fence(0, win, ierr)
  one = rank + 1
  base = 0
  call MPI_Accumulate(one, 1, MPI_INTEGER, 0, base, 1, MPI_INTEGER, MPI_SUM, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  if (rank == 0) print '(a,6i6)', 'fortran', int(val), disp, flavor, model, buf(1), ierr
  call MPI_Win_free(win, ierr)
  call MPI_Finalize(ierr)
end program
EOF_F90
if "$TM_OMPI_MPIFORT" -o "$work/wf" "$work/wf.f90" -J "$work" >"$work/wf.log" 2>&1; then
  # Size 16, disp_unit 4, MPI_WIN_FLAVOR_CREATE, MPI_WIN_UNIFIED, 1+2+3 accumulated, no error.
  want='fortran    16     4     1     0     6     0'
  run_job 60 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$work/wf"
  check "Fortran window on Open MPI (the reference), np=3" grep -qx "$want" "$job_out" || diag_job
  run_job 60 "${mpirun[@]}" -np 3 "${via_preload[@]}" "$work/wf"
  check "Fortran window on torusmpi, LD_PRELOAD, np=3: attributes and accumulate" \
    grep -qx "$want" "$job_out" || diag_job
else
  skip "Fortran windows" "mpifort failed: $(head -n 1 "$work/wf.log")"
fi

# A lock that is never given back: TORUSMPI_TIMEOUT reports the waiting rank in MPI_Win_lock
# (exit status 110, the hung job's) instead of a silent hang.
run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_TIMEOUT=3 "$bin.gcc" hang
check "rma.gcc hang, np=2: TORUSMPI_TIMEOUT names the rank waiting in MPI_Win_lock" \
  eval '[ "$job_rc" -eq 110 ] && grep -q "rank 1 is in MPI_Win_lock on window to rank 0" "$job_err"' ||
  diag_job

# A rank that dies with windows live (named segments) leaves no segment behind, and the job ends.
run_job 120 "${mpirun[@]}" -np 3 "${via_preload[@]}" -x TORUSMPI_SHM_NAMED=1 "$bin.gcc" crash
check "rma.gcc crash, np=3: the job ends (exit status not 0)" test "$job_rc" -ne 0 -a \
  "$job_rc" -ne 124 || diag_job
sleep 1
check "no rma process left" no_process "$bin.gcc"

check_shm
tap_done
