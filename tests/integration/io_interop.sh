#!/usr/bin/env bash
# Files cross between torusmpi's MPI-IO and Open MPI's: a file written collectively by one (3-D
# subarray blocks by write_at_all, a block-cyclic darray by write_all, records by write_ordered;
# tests/progs/io_coll.c "write") is byte for byte the other's, and each reads the other's back
# ("verify": collectively, and rank 0 with POSIX). Parallel HDF5 (Debian's libhdf5-openmpi-dev,
# tests/progs/h5_coll.c built by h5pcc): two chunked datasets written and read collectively give
# the same h5dump on both libraries. And the benchmark osu_io validates its reads (-c) on torusmpi.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/io_coll
dir=$work/files
mkdir -p "$dir"
ompi=(env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}")

for np in 2 4; do
  run_job 60 "${ompi[@]}" -np "$np" "$bin.gcc" "$dir" write "$dir/ompi.$np"
  check "Open MPI writes the file, np=$np" ranks_done "$np" || diag_job
  run_job 60 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$bin.gcc" "$dir" write "$dir/tm.$np"
  check "torusmpi writes the file, np=$np" ranks_done "$np" || diag_job
  check "... byte for byte the same, np=$np" cmp "$dir/ompi.$np" "$dir/tm.$np"
  run_job 60 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$bin.gcc" "$dir" verify "$dir/ompi.$np"
  check "torusmpi reads Open MPI's file back, np=$np" ranks_done "$np" || diag_job
  run_job 60 "${ompi[@]}" -np "$np" "$bin.gcc" "$dir" verify "$dir/tm.$np"
  check "Open MPI reads torusmpi's file back, np=$np" ranks_done "$np" || diag_job
done

# --- Parallel HDF5 -----------------------------------------------------------------------------
h5=$TM_PROGS/h5_coll.h5pcc
if [ ! -x "$h5" ] || ! command -v h5dump >/dev/null; then
  skip "parallel HDF5 on torusmpi" "no h5pcc or h5dump (scripts/install-deps installs them)"
else
  run_job 60 "${ompi[@]}" -np 4 "$h5" "$dir/ompi.h5"
  check "h5_coll on Open MPI (the reference), np=4" ranks_done 4 || diag_job
  run_job 60 "${mpirun[@]}" -np 4 "${via_preload[@]}" "$h5" "$dir/tm.h5"
  check "h5_coll on torusmpi, LD_PRELOAD, np=4: collective chunked writes and reads" \
    ranks_done 4 || diag_job
  # h5dump's first line names the file.
  h5dump -p "$dir/ompi.h5" 2>&1 | sed 1d >"$work/ompi.h5dump"
  h5dump -p "$dir/tm.h5" 2>&1 | sed 1d >"$work/tm.h5dump"
  same_dump() {
    grep -q 'DATASET "rows"' "$work/ompi.h5dump" || { echo "# no dataset in Open MPI's dump"; return 1; }
    diff "$work/ompi.h5dump" "$work/tm.h5dump" >"$work/h5.diff" && return
    sed 's/^/# /' "$work/h5.diff" | head -n 12
    return 1
  }
  check "... h5dump -p of both files is the same" same_dump
  run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" "$h5" "$dir/tm2.h5"
  check "h5_coll on torusmpi, np=2" ranks_done 2 || diag_job
fi

# --- The benchmark -----------------------------------------------------------------------------
osu_io=$TM_PREFIX/libexec/torusmpi/osu/osu_io
run_job 60 "${mpirun[@]}" -np 4 "$osu_io" -c -m 1048576:8388608 -i 1 -x 0 -D "$dir"
bench_ok() {
  [ "$job_rc" -eq 0 ] && [ "$(grep -c 'Pass$' "$job_out")" -eq 2 ] && ! grep -q Fail "$job_out"
}
check "osu_io on torusmpi, np=4 (aggregated): two sizes, reads validated" bench_ok || diag_job

rm -rf "${dir:?}"
check_shm
tap_done
