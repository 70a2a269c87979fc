#!/usr/bin/env bash
# MPI-IO, the independent half (tests/progs/io.c): explicit offsets, the individual pointer, the
# nonblocking forms, views of every layout kind with data sieving forced on and off, external32
# and a registered data representation, modes, sizes, hints and error classes; every file read
# back through MPI and by plain POSIX reads. First on Open MPI itself (the reference: where it
# answers otherwise and MPI allows it, "skip" lines), then on torusmpi at 1 to 6 ranks (no skip
# line allowed) by LD_PRELOAD and LD_LIBRARY_PATH, the clang build, across two emulated instances,
# and with device buffers under the device guard. The files live in a directory this script
# removes.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/io
files=$(mktemp -d "$work/files.XXXXXX")
trap 'rm -rf "$files"' EXIT

# fresh: an empty directory for the next job's files.
fresh() {
  rm -rf "$files"
  mkdir -p "$files"
}

passed() {
  ranks_done "$1" || return 1
  if grep -q '^skip' "$job_out"; then
    echo "# the program took its path for reference libraries:"
    grep '^skip' "$job_out" | head -n 3 | sed 's/^/#   /'
    return 1
  fi
  # Every file the program made is gone (its own unlink, DELETE_ON_CLOSE, MPI_File_delete).
  [ -z "$(ls -A "$files")" ] || { echo "# files left: $(ls "$files" | head -n 5)"; return 1; }
}

fresh
run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$bin.gcc" "$files"
check "io.gcc on Open MPI itself (the reference), np=3" ranks_done 3 || diag_job
grep -c '^skip' "$job_out" | sed 's/^/# reference skip lines: /'

for np in 1 2 3 4 6; do
  fresh
  run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$bin.gcc" "$files"
  check "io.gcc, LD_PRELOAD, np=$np" passed "$np" || diag_job
done
if [ -x "$bin.clang" ]; then
  fresh
  run_job 120 "${mpirun[@]}" -np 3 "${via_path[@]}" "$bin.clang" "$files"
  check "io.clang, LD_LIBRARY_PATH, np=3" passed 3 || diag_job
else
  skip "io.clang, LD_LIBRARY_PATH, np=3" "configure found no clang"
fi

# Memory errors and leaks under valgrind's memcheck (as rma.sh runs it).
if command -v valgrind >/dev/null; then
  memcheck=(valgrind --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --suppressions="$TM_SRCDIR/integration/pmix.supp"
    --log-file="$work/memcheck.%p.log")
  fresh
  run_job 300 "${mpirun[@]}" -np 2 "${via_preload[@]}" "${memcheck[@]}" "$bin.gcc" "$files"
  check "io.gcc np=2 under memcheck: no error, no leak" passed 2 ||
    { diag_job; for f in "$work"/memcheck.*.log; do diag_file "$f" 40; done; }
  check "memcheck really ran both io ranks" \
    test "$(grep -ls Memcheck "$work"/memcheck.*.log | wc -l)" -eq 2
else
  skip "io.gcc under memcheck" "valgrind is not installed"
fi

# Two emulated instances: the file's collectives (open, set_view, close) go over the network.
fresh
run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" -x TORUSMPI_INSTANCE=torus:1x2:cores=1 \
  -x TORUSMPI_INSTANCES=2 -x TORUSMPI_NET=ofi -x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo \
  "$bin.gcc" "$files"
if grep -q 'built without it' "$job_err"; then
  skip "io.gcc, two instances" "this build has no ofi transport"
else
  check "io.gcc, two instances (ofi), np=4" passed 4 || diag_job
fi

# Device buffers, with the guard on: no host code may touch device bytes.
for np in 2 3; do
  fresh
  run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
    "$bin.gcc" "$files" device
  check "io.gcc device, guard on, np=$np" passed "$np" || diag_job
done

# From Fortran (mpif.h, Open MPI's libmpi_mpifh): open, a vector view, write_at, sync, read_at,
# get_size, close; the same line and the same file bytes on both libraries.
cat >"$work/fio.f90" <<'EOF_F90'
program fio
  implicit none
  include 'mpif.h'
  integer :: ierr, fh, rank, np, vec, i, bad, count
  integer :: buf(8), back(8)
  integer :: st(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: disp, off, sz
  character(len=256) :: path
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call get_command_argument(1, path)
  call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  call MPI_Type_vector(4, 2, 2 * np, MPI_INTEGER, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  disp = 8 * rank
  call MPI_File_set_view(fh, disp, MPI_INTEGER, vec, 'native', MPI_INFO_NULL, ierr)
  do i = 1, 8
    buf(i) = 100 * rank + i
  end do
  off = 0
  call MPI_File_write_at(fh, off, buf, 8, MPI_INTEGER, st, ierr)
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)
  back = 0
  call MPI_File_read_at(fh, off, back, 8, MPI_INTEGER, st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, count, ierr)
  bad = 0
  do i = 1, 8
    if (back(i) /= buf(i)) bad = bad + 1
  end do
  call MPI_File_get_size(fh, sz, ierr)
  call MPI_File_close(fh, ierr)
  call MPI_Type_free(vec, ierr)
  if (rank == 0) write (*, '(a,4i6)') 'fortran', count, bad, int(sz), ierr
  call MPI_Finalize(ierr)
end program
EOF_F90
if "$TM_OMPI_MPIFORT" -o "$work/fio" "$work/fio.f90" -J "$work" >"$work/fio.log" 2>&1; then
  want='fortran     8     0    96     0'
  fresh
  run_job 60 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$work/fio" "$files/f"
  check "Fortran MPI-IO on Open MPI (the reference), np=3" grep -qx "$want" "$job_out" || diag_job
  cp "$files/f" "$work/f.reference" 2>/dev/null
  fresh
  run_job 60 "${mpirun[@]}" -np 3 "${via_preload[@]}" "$work/fio" "$files/f"
  check "Fortran MPI-IO on torusmpi, LD_PRELOAD, np=3" grep -qx "$want" "$job_out" || diag_job
  check "... the file is Open MPI's, byte for byte" cmp "$files/f" "$work/f.reference"
  fresh
else
  skip "Fortran MPI-IO" "mpifort failed: $(head -n 1 "$work/fio.log")"
fi

tap_done
