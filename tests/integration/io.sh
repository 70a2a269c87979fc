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

# Two emulated instances: the file's collectives (open, set_view, close) go over the network.
fresh
run_job 120 "${mpirun[@]}" -np 4 "${via_preload[@]}" -x TORUSMPI_INSTANCES=2 \
  -x TORUSMPI_NET=ofi -x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo "$bin.gcc" "$files"
check "io.gcc, two instances (ofi), np=4" passed 4 || diag_job

# Device buffers, with the guard on: no host code may touch device bytes.
for np in 2 3; do
  fresh
  run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" -x TORUSMPI_DEVICE_GUARD=1 \
    "$bin.gcc" "$files" device
  check "io.gcc device, guard on, np=$np" passed "$np" || diag_job
done

tap_done
