#!/usr/bin/env bash
# C++ and Fortran programs built with Open MPI's own mpicxx and mpifort (tests/progs/cxx_*.cc, the
# MPI-2 C++ bindings and the C API from C++; fortran_*.f90, mpif.h, use mpi and use mpi_f08): Open
# MPI's binding libraries (libmpi_cxx, libmpi_mpifh, libmpi_usempi_ignore_tkr, libmpi_usempif08),
# unchanged, run on torusmpi's libmpi.so.40 by each of the three routes: built again by torusmpi's
# mpicxx/mpifort, or Open MPI's build given torusmpi through LD_LIBRARY_PATH or LD_PRELOAD. Each
# program runs on Open MPI first: the checks are its behaviour. Then fortran_handles: every
# predefined handle has Open MPI's Fortran number on torusmpi, which Fortran programs compile in.
. "$(dirname "$0")/lib.sh"

# The libmpi.so.40 the loader would map for $1 with the environment settings that follow.
libmpi_of() {
  local bin=$1
  shift
  env "$@" ldd "$bin" | awk '$1 == "libmpi.so.40" && $2 == "=>" { print $3; next }
    $1 ~ /\/libmpi\.so\.40$/ { print $1 }' | head -n 1
}

# same_file <expected> <actual>: the two paths name one file.
same_file() {
  [ -n "$2" ] && [ "$(readlink -f "$1")" = "$(readlink -f "$2")" ] ||
    { echo "# expected $1, the loader takes ${2:-nothing}"; return 1; }
}

# ranks <np> <description> <binary> [mpirun arguments...]: one job, every rank passes.
ranks() {
  local np=$1 desc=$2 bin=$3
  shift 3
  run_job 120 "${mpirun[@]}" -np "$np" "$@" "$bin"
  check "$desc, np=$np" ranks_done "$np" || diag_job
}

for name in cxx_bindings cxx_capi fortran_mpifh fortran_usempi fortran_f08; do
  bin=$TM_PROGS/$name.gcc
  case $name in
    cxx_*)
      src=$TM_SRCDIR/progs/$name.cc wrapper=mpicxx
      flags=(-Wall -Wextra -Werror -Wno-cast-function-type)  # as tests/Makefile.am builds them
      ;;
    *)
      # The modules a program defines go to the work directory.
      src=$TM_SRCDIR/progs/$name.f90 wrapper=mpifort flags=(-Wall "-J$work")
      ;;
  esac
  if [ ! -x "$bin" ]; then
    skip "$name on Open MPI and torusmpi" "not built: configure found no Open MPI $wrapper for it"
    continue
  fi

  # The reference: Open MPI itself.
  ranks 3 "$name on Open MPI (the reference)" "$bin"

  # 1. torusmpi's wrapper.
  ours=$work/$name.torusmpi
  run_job 120 "$TM_BINDIR/$wrapper" "${flags[@]}" -o "$ours" "$src"
  if check "torusmpi's $wrapper builds $name" test "$job_rc" -eq 0; then
    check "$name built by torusmpi's $wrapper loads torusmpi's libmpi.so.40" \
      same_file "$tm_libmpi" "$(libmpi_of "$ours")"
    for np in 1 2 3 4; do ranks "$np" "$name, torusmpi's $wrapper" "$ours"; done
  else
    diag_job
  fi

  # 2. Open MPI's build, torusmpi through LD_LIBRARY_PATH.
  check "$name with LD_LIBRARY_PATH loads torusmpi's libmpi.so.40" \
    same_file "$tm_libmpi" "$(libmpi_of "$bin" "LD_LIBRARY_PATH=$TM_LIBDIR")"
  for np in 2 3; do ranks "$np" "$name, Open MPI's build, LD_LIBRARY_PATH" "$bin" "${via_path[@]}"; done

  # 3. Open MPI's build, torusmpi through LD_PRELOAD.
  check "$name with LD_PRELOAD loads torusmpi's libmpi.so.40" \
    same_file "$tm_libmpi" "$(libmpi_of "$bin" "LD_PRELOAD=$tm_libmpi")"
  for np in 1 2 3 4; do ranks "$np" "$name, Open MPI's build, LD_PRELOAD" "$bin" "${via_preload[@]}"; done
done

# --- Fortran handle numbers: rank 0's list, line for line as on Open MPI: the predefined handles,
# then the "user" lines of handles the program makes, freed numbers reused (MPI leaves those numbers
# to the library; torusmpi hands them out as Open MPI does, lowest free first).
handles=$TM_PROGS/fortran_handles.gcc
run_job 60 "${mpirun[@]}" -np 1 "$handles"
cp "$job_out" "$work/handles.ompi"
check "fortran_handles on Open MPI (the reference)" test "$job_rc" -eq 0 || diag_job
diag "Open MPI numbers $(grep -cv '^user ' "$work/handles.ompi") predefined handles"
for np in 1 3; do
  run_job 60 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$handles"
  check "fortran_handles on torusmpi, np=$np: every handle goes to Fortran and back" \
    test "$job_rc" -eq 0 -a "$(grep -c '^MISMATCH' "$job_out")" -eq 0 || diag_job
  diff "$work/handles.ompi" <(grep -v '^MISMATCH' "$job_out") >"$work/handles.diff"
  check "fortran_handles on torusmpi, np=$np: Open MPI's number for every handle" \
    test ! -s "$work/handles.diff" -a -s "$work/handles.ompi" ||
    { diag "Open MPI (<) and torusmpi (>) differ:"; head -n 20 "$work/handles.diff" | sed 's/^/# /'; }
done

check_shm
tap_done
