#!/usr/bin/env bash
# The predefined datatypes as a program sees them (tests/progs/types.c: size, name, extent, true
# extent of each, and a few constants) must be the same under torusmpi as under real Open MPI.
# torusmpi's table is src/mpi/datatypes.def.
. "$(dirname "$0")/lib.sh"

builds=(gcc)
[ -x "$TM_PROGS/types.clang" ] && builds+=(clang) || skip "types.clang" "configure found no clang"

grep -o '^# *define MPI_[A-Z0-9_]* *OMPI_PREDEFINED_GLOBAL *( *MPI_Datatype' "$TM_OMPI_INCDIR/mpi.h" |
  sed 's/^# *define //; s/ .*//' | sort -u >"$work/header-types"
diag "mpi.h names $(grep -c . "$work/header-types") datatypes"

for build in "${builds[@]}"; do
  bin=$TM_PROGS/types.$build
  # The reference: Open MPI itself, with nothing of torusmpi's in reach.
  run_job 60 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 1 "$bin"
  ref=$work/reference.$build
  cp "$job_out" "$ref"
  check "types.$build runs on Open MPI" test "$job_rc" -eq 0 || diag_job
  # Every datatype macro of mpi.h, those its configuration leaves out included.
  sed -n 's/^\(MPI_[A-Z0-9_]*\): size .*/\1/p' "$ref" | sort >"$work/listed.$build"
  comm -23 "$work/header-types" "$work/listed.$build" >"$work/unlisted.$build"
  check "types.$build covers every datatype of mpi.h" test ! -s "$work/unlisted.$build" ||
    diag "not covered:" $(cat "$work/unlisted.$build")

  # same_as_reference <description> <command...>
  same_as_reference() {
    local desc=$1
    shift
    run_job 60 "$@"
    check "$desc: exit 0" test "$job_rc" -eq 0 || diag_job
    if ! check "$desc: same output as Open MPI" cmp -s "$ref" "$job_out"; then
      diff "$ref" "$job_out" | head -40 | sed 's/^/#   /'
    fi
  }
  same_as_reference "types.$build, LD_PRELOAD" "${mpirun[@]}" -np 1 "${via_preload[@]}" "$bin"
  same_as_reference "types.$build, LD_LIBRARY_PATH" "${mpirun[@]}" -np 1 "${via_path[@]}" "$bin"
  same_as_reference "types.$build, singleton" env "${no_launcher[@]}" LD_PRELOAD="$tm_libmpi" "$bin"
done

check_shm
tap_done
