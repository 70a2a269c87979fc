#!/usr/bin/env bash
# torusmpi's compiler wrappers for C++ and Fortran, as installed: mpicxx, and mpifort with its other
# names mpif90 and mpif77. What --showme says, against Open MPI's own wrappers; what they build
# (tests/progs/wrap_hello.cc on Open MPI's C++ bindings, wrap_hello.f90 on mpi_f08 and mpif.h):
# programs that need torusmpi's libmpi.so.40 themselves and find it first through their run path,
# so that Open MPI's binding libraries, linked as they are, run on it and Open MPI's libmpi.so.40
# is never loaded; then the programs under mpirun.
. "$(dirname "$0")/lib.sh"

for name in mpicxx mpifort mpif90 mpif77; do
  [ -x "$TM_BINDIR/$name" ] || {
    echo "Bail out! $TM_BINDIR/$name is not installed: run make install before make check"
    exit 1
  }
done

# showme <wrapper> [option]: what torusmpi's wrapper answers to --showme[:option].
showme() { "$TM_BINDIR/$1" "--showme${2:+:$2}"; }

# same_text <expected> <actual>
same_text() {
  [ "$1" = "$2" ] || { echo "# expected: $1"; echo "# got:      $2"; return 1; }
}

# has_dirs <directories> <directories...>: each of the later directories is among the first
# (compared once ".." and symbolic links in their names are resolved as cd resolves them).
has_dirs() {
  local have=$1 dir ours
  shift
  ours=$(for dir in $have; do (cd "$dir" 2>/dev/null && pwd); done)
  for dir in "$@"; do
    dir=$(cd "$dir" 2>/dev/null && pwd) || { echo "# no directory $dir"; return 1; }
    grep -qxF "$dir" <<<"$ours" || { echo "# $dir is not among: $have"; return 1; }
  done
}

# holds <directories> <file>: one of the directories holds the file.
holds() {
  local dir
  for dir in $1; do [ -e "$dir/$2" ] && return 0; done
  echo "# none of $1 holds $2"
  return 1
}

# link_order_ok <link flags>: -L for torusmpi's libdir before -L for Open MPI's (which holds a
# libmpi.so of its own); -lmpi linked even when nothing calls it; no libopen-rte.
link_order_ok() {
  local flags=" $1 " ours=" -L$TM_LIBDIR " theirs=" -L$TM_OMPI_LIBDIR "
  local before=${flags%%"$theirs"*}
  [ "$before" != "$flags" ] || { echo "# no $theirs in: $1"; return 1; }
  case "$before " in *"$ours"*) ;; *) echo "# $ours is not before $theirs in: $1"; return 1 ;; esac
  case $flags in
    *" -Wl,--push-state,--no-as-needed -lmpi -Wl,--pop-state "*) ;;
    *) echo "# -lmpi is not linked with --no-as-needed in: $1"; return 1 ;;
  esac
  case $flags in *open-rte*) echo "# libopen-rte is linked: $1"; return 1 ;; esac
}

# same_showme <alias>: --showme, and each --showme:option but version, as mpifort answers them.
same_showme() {
  local option
  for option in '' compile link command incdirs libdirs libs help; do
    same_text "$(showme mpifort "$option" | sed "s/mpifort/$1/g")" "$(showme "$1" "$option")" ||
      { echo "# (--showme${option:+:$option})"; return 1; }
  done
}

# failed_with <status> <extended regexp>: the last job exited so and said why on stderr.
failed_with() { [ "$job_rc" -eq "$1" ] && grep -Eq "$2" "$job_err"; }

# --- mpicxx: as Open MPI's mpicxx, with torusmpi's library.
if [ -n "$TM_OMPI_MPICXX" ]; then
  check "mpicxx --showme:libs is Open MPI's (mpi_cxx mpi)" \
    same_text "$("$TM_OMPI_MPICXX" --showme:libs)" "$(showme mpicxx libs)"
  check "mpicxx --showme:libs is mpi_cxx mpi" same_text "mpi_cxx mpi" "$(showme mpicxx libs)"
  # shellcheck disable=SC2046 # one directory a word
  check "mpicxx --showme:incdirs has Open MPI's mpicxx's and torusmpi's mpicc's" \
    has_dirs "$(showme mpicxx incdirs)" $("$TM_OMPI_MPICXX" --showme:incdirs) \
    $(showme mpicc incdirs)
  check "mpicxx compiles with Open MPI's C++ bindings (no OMPI_SKIP_MPICXX)" \
    not grep -q OMPI_SKIP_MPICXX <<<"$(showme mpicxx compile)"
  check "mpicxx --showme:libdirs: torusmpi's first, then Open MPI's" \
    same_text "$TM_LIBDIR $TM_OMPI_LIBDIR" "$(showme mpicxx libdirs)"
  check "mpicxx --showme:link: -lmpi is torusmpi's, needed, and no libopen-rte" \
    link_order_ok "$(showme mpicxx link)"
  check "mpicxx --showme:version" grep -q '^mpicxx: torusmpi .*(Language: C++)$' \
    <<<"$(showme mpicxx version)"
  cxx=yes
else
  skip "mpicxx with Open MPI's C++ bindings" "configure found no Open MPI mpicxx with them"
  cxx=no
fi

# --- mpifort: as Open MPI's mpifort (its modules, mpif.h, its Fortran libraries), with
# torusmpi's library; mpif90 and mpif77 are mpifort.
if [ -n "$TM_OMPI_MPIFORT" ]; then
  check "mpifort --showme:libs is Open MPI's" \
    same_text "$("$TM_OMPI_MPIFORT" --showme:libs)" "$(showme mpifort libs)"
  check "mpifort --showme:libs is mpi_usempif08 mpi_usempi_ignore_tkr mpi_mpifh mpi" \
    same_text "mpi_usempif08 mpi_usempi_ignore_tkr mpi_mpifh mpi" "$(showme mpifort libs)"
  fort_incdirs=$(showme mpifort incdirs)
  for file in mpi_f08.mod mpi.mod mpif.h; do
    check "mpifort --showme:incdirs has a directory with $file" holds "$fort_incdirs" $file
  done
  check "mpifort --showme:incdirs has Open MPI's include directory (mpif.h)" \
    has_dirs "$fort_incdirs" "$TM_OMPI_INCDIR"
  check "mpifort --showme:libdirs: torusmpi's first, then Open MPI's" \
    same_text "$TM_LIBDIR $TM_OMPI_LIBDIR" "$(showme mpifort libdirs)"
  check "mpifort --showme:link: -lmpi is torusmpi's, needed, and no libopen-rte" \
    link_order_ok "$(showme mpifort link)"
  check "mpifort --showme:version" grep -q '^mpifort: torusmpi .*(Language: Fortran)$' \
    <<<"$(showme mpifort version)"
  for alias in mpif90 mpif77; do
    check "$alias answers every --showme as mpifort does" same_showme $alias
    check "$alias --showme:version names $alias" \
      grep -q "^$alias: torusmpi .*(Language: Fortran)\$" <<<"$(showme $alias version)"
  done
  fort=yes
else
  skip "mpifort" "configure found no working Open MPI mpifort"
  fort=no
fi

# The wrapper's own errors: TORUSMPI_FC replaces the compiler and is named when it is missing; a
# build configured without Open MPI's Fortran modules says so (a copy of mpifort, edited so).
check "TORUSMPI_FC replaces mpifort's compiler" \
  same_text "my-fc -O1" "$(TORUSMPI_FC='my-fc -O1' "$TM_BINDIR/mpifort" --showme:command)"
run_job 30 env TORUSMPI_FC=torusmpi-no-such-fc "$TM_BINDIR/mpifort" -c \
  "$TM_SRCDIR/progs/wrap_hello.f90"
check "a missing compiler: status 127, and TORUSMPI_FC named" \
  failed_with 127 "'torusmpi-no-such-fc' not found.*TORUSMPI_FC" || diag_job
sed "s|^ompi_fc_moddir=.*|ompi_fc_moddir=''|" "$TM_BINDIR/mpifort" >"$work/mpifort"
run_job 30 sh "$work/mpifort" --showme
check "mpifort configured without Open MPI's Fortran modules: status 1, and why" \
  failed_with 1 '^mpifort: torusmpi was configured without Fortran: .*mpi\.mod' || diag_job

# --- The programs. build <binary> <wrapper> <source> [flags...]: builds $work/<binary>; the files
# the linker read go to $work/<binary>.trace.
build() {
  local bin=$work/$1 wrapper=$2 src=$3
  shift 3
  rm -f "$bin"
  run_job 120 "$TM_BINDIR/$wrapper" "$@" -o "$bin" "$src" -Wl,--trace
  check "$wrapper builds ${src##*/}" test "$job_rc" -eq 0 || diag_job
  cp "$job_out" "$bin.trace"
  [ -x "$bin" ]
}

# first_runpath_is <binary> <directory>: the first directory of its RUNPATH (or RPATH).
first_runpath_is() {
  local first
  first=$(readelf -W -d "$1" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\([^:]*\).*\]$/\2/p')
  [ "$first" = "$2" ] || { echo "# first run path directory: '$first'"; return 1; }
}

# only_path <file> <regexp> <path>: the file names paths matching the regexp, all of them <path>.
only_path() {
  local found
  found=$(grep -oE "$2" "$1" | sed 's/^[^/]*//' | sort -u)
  [ "$found" = "$3" ] && return 0
  echo "# expected only $3, found: $(tr '\n' ' ' <<<"${found:-nothing}")"
  return 1
}

# loaded_libmpi: from the last job's LD_DEBUG=files,libs output, the file of each libmpi.so.40 the
# loader mapped: the last file it tried before it made that library's link map. Known even when
# the program then stops on a missing symbol.
loaded_libmpi() {
  awk '/trying file=/ { sub(/.*trying file=/, ""); tried = $0 }
    /file=libmpi\.so\.40 .*generating link map/ { print tried }' "$job_err"
}

# program_checks <binary> <what>: how the program was linked, and what the loader makes of it.
program_checks() {
  local bin=$1 what=$2
  check "$what needs libmpi.so.40 itself" elf_has "$bin" -d 'NEEDED.*\[libmpi\.so\.40\]'
  check "$what has torusmpi's libdir first in its run path" first_runpath_is "$bin" "$TM_LIBDIR"
  check "$what: -lmpi was torusmpi's libmpi.so at link time" \
    only_path "$bin.trace" '(^|[ (])/[^ ()]*/libmpi\.so$' "$TM_LIBDIR/libmpi.so"
  check "$what does not need libopen-rte" not elf_has "$bin" -d 'NEEDED.*libopen-rte'
  run_job 30 env "${no_launcher[@]}" LD_DEBUG=files,libs "$bin" 1
  loaded_libmpi >"$work/loaded.txt"
  check "$what: the loader maps torusmpi's libmpi.so.40 and no other (LD_DEBUG)" \
    only_path "$work/loaded.txt" '^/.*' "$TM_LIBDIR/libmpi.so.40"
}

# runs <binary> <what>: every rank passes, under Open MPI's mpirun, found through the run path.
runs() {
  local np
  for np in 2 3; do
    run_job 60 "${mpirun[@]}" -np "$np" "$1" "$np"
    check "$2 runs, np=$np" ranks_done "$np" || diag_job
  done
}

if [ $cxx = yes ]; then
  # As tests/Makefile.am builds the C++ programs: Open MPI's own C++ headers cast between function
  # types, which -Wextra reports.
  if build wrap_hello_cxx mpicxx "$TM_SRCDIR/progs/wrap_hello.cc" -Wall -Wextra -Werror \
    -Wno-cast-function-type; then
    check "the C++ program needs libmpi_cxx.so.40" \
      elf_has "$work/wrap_hello_cxx" -d 'NEEDED.*\[libmpi_cxx\.so\.40\]'
    program_checks "$work/wrap_hello_cxx" "the C++ program"
    runs "$work/wrap_hello_cxx" "the C++ program (MPI::)"
  fi
fi

if [ $fort = yes ]; then
  if build wrap_hello_fort mpifort "$TM_SRCDIR/progs/wrap_hello.f90" -Wall; then
    # The mpi_f08 part calls libmpi_usempif08, the mpif.h part libmpi_mpifh.
    for lib in libmpi_usempif08 libmpi_mpifh; do
      check "the Fortran program needs $lib.so.40" \
        elf_has "$work/wrap_hello_fort" -d "NEEDED.*\\[$lib\\.so\\.40\\]"
    done
    program_checks "$work/wrap_hello_fort" "the Fortran program"
    runs "$work/wrap_hello_fort" "the Fortran program (mpi_f08, mpif.h)"
    for alias in mpif90 mpif77; do
      build "wrap_hello_$alias" $alias "$TM_SRCDIR/progs/wrap_hello.f90" -Wall &&
        check "$alias builds the same program as mpifort" \
          cmp "$work/wrap_hello_fort" "$work/wrap_hello_$alias"
    done
  fi
fi

check_shm
tap_done
