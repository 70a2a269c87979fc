#!/usr/bin/env bash
# hello (tests/progs/hello.c) on torusmpi, every way a program gets it:
#  - built by torusmpi's mpicc, found through its rpath;
#  - built by Open MPI's mpicc (gcc) or by clang against Open MPI, given torusmpi through
#    LD_LIBRARY_PATH or LD_PRELOAD;
# under Open MPI's mpirun on 1 to 4 ranks, as a singleton, and with launcher variables but no
# launcher (which must fail, not run as a singleton).
. "$(dirname "$0")/lib.sh"

# --- The builds: how each binary reaches Open MPI's predefined objects. gcc's PIE copies them
# into the executable (R_X86_64_COPY), clang's goes through the GOT; both must work, and these
# checks prove that both are what is being run.
gcc_hello=$TM_PROGS/hello.gcc
clang_hello=$TM_PROGS/hello.clang
check "hello.gcc is a PIE" elf_has "$gcc_hello" -h 'Type: +DYN'
check "hello.gcc copy-relocates ompi_mpi_comm_world" \
  elf_has "$gcc_hello" -r 'R_X86_64_COPY .* ompi_mpi_comm_world'
check "hello.gcc needs libmpi.so.40" elf_has "$gcc_hello" -d 'NEEDED.*\[libmpi\.so\.40\]'
check "hello.gcc has no rpath (built without torusmpi)" not elf_has "$gcc_hello" -d 'R(UN)?PATH'
builds=(gcc)
if [ -x "$clang_hello" ]; then
  builds+=(clang)
  check "hello.clang has no copy relocation" not elf_has "$clang_hello" -r R_X86_64_COPY
  check "hello.clang reaches ompi_mpi_comm_world through the GOT" \
    elf_has "$clang_hello" -r 'R_X86_64_GLOB_DAT .* ompi_mpi_comm_world'
  check "hello.clang needs libmpi.so.40" elf_has "$clang_hello" -d 'NEEDED.*\[libmpi\.so\.40\]'
else
  skip "hello.clang builds" "configure found no clang"
fi

# torusmpi's own wrapper, when installed: gcc by default, clang when asked through TORUSMPI_CC.
wrapper=$TM_BINDIR/mpicc
wrapped=()
if [ -x "$wrapper" ]; then
  for build in gcc clang; do
    bin=$TM_PROGS/hello.torusmpi-$build
    rm -f "$bin"
    if [ $build = gcc ]; then
      run_job 60 "$wrapper" -Wall -Wextra -Werror -o "$bin" "$TM_SRCDIR/progs/hello.c"
    elif [ -n "$TM_CLANG" ]; then
      run_job 60 env TORUSMPI_CC="$TM_CLANG" "$wrapper" -Wall -Wextra -Werror -o "$bin" \
        "$TM_SRCDIR/progs/hello.c"
    else
      skip "torusmpi's mpicc builds hello with clang" "configure found no clang"
      continue
    fi
    check "torusmpi's mpicc builds hello ($build)" test "$job_rc" -eq 0 || { diag_job; continue; }
    wrapped+=("$build")
    check "its hello ($build) has an rpath to $TM_LIBDIR" rpath_has "$bin" "$TM_LIBDIR"
  done
  [ ${#wrapped[@]} -lt 2 ] ||
    check "TORUSMPI_CC=clang makes torusmpi's mpicc use clang (no copy relocation)" \
      not elf_has "$TM_PROGS/hello.torusmpi-clang" -r R_X86_64_COPY
else
  skip "torusmpi's mpicc builds hello" "$wrapper is not installed"
fi

# hello <description> <np> <binary> [mpirun arguments...]: one job, every rank must pass.
# The ranks also cross-check MPI_Init_thread at a level that depends on the rank count.
levels=(unused "" multiple funneled serialized)
hello() {
  local desc=$1 np=$2 bin=$3
  shift 3
  run_job 60 "${mpirun[@]}" -np "$np" "$@" "$bin" "$np" "$tm_real_prefix" ${levels[$np]}
  check "$desc, np=$np" ranks_done "$np" || diag_job
}

for np in 1 2 3 4; do
  for build in ${wrapped[@]+"${wrapped[@]}"}; do
    hello "torusmpi's mpicc ($build), rpath" "$np" "$TM_PROGS/hello.torusmpi-$build"
  done
  for build in "${builds[@]}"; do
    hello "Open MPI's build ($build), LD_LIBRARY_PATH" "$np" "$TM_PROGS/hello.$build" \
      "${via_path[@]}"
    hello "Open MPI's build ($build), LD_PRELOAD" "$np" "$TM_PROGS/hello.$build" \
      "${via_preload[@]}"
  done
done

# --- Singletons: no launcher at all is a one-rank job.
# singleton <description> <binary> [environment...]
singleton() {
  local desc=$1 bin=$2
  shift 2
  run_job 30 env "${no_launcher[@]}" "$@" "$bin" 1 "$tm_real_prefix" ${level:-}
  check "singleton, $desc: rank 0 of 1" ranks_done 1 || diag_job
}
for build in "${builds[@]}"; do
  singleton "$build, LD_LIBRARY_PATH" "$TM_PROGS/hello.$build" LD_LIBRARY_PATH="$TM_LIBDIR"
  singleton "$build, LD_PRELOAD" "$TM_PROGS/hello.$build" LD_PRELOAD="$tm_libmpi"
done
level=funneled singleton "gcc, LD_PRELOAD, MPI_Init_thread" "$gcc_hello" LD_PRELOAD="$tm_libmpi"
for build in ${wrapped[@]+"${wrapped[@]}"}; do
  singleton "torusmpi's mpicc ($build)" "$TM_PROGS/hello.torusmpi-$build"
done

# --- Launcher variables but no PMIx server: an error said clearly, never N silent singletons.
# launcher_refused <what is set> <variable=value...>
launcher_refused() {
  local what=$1
  shift
  run_job 30 env "${no_launcher[@]}" "$@" LD_PRELOAD="$tm_libmpi" "$gcc_hello" 1 "$tm_real_prefix"
  check "$what set, no PMIx server: fails within 10 s" \
    test "$job_rc" -ne 0 -a "$job_rc" -ne 124 -a "$job_ms" -lt 10000 || diag_job
  check "$what set, no PMIx server: stderr says why" grep -qi 'pmix' "$job_err" || diag_job
  check "$what set, no PMIx server: no rank ran as a singleton" not grep -q '^done' "$job_out"
}
launcher_refused "PMIX_NAMESPACE/PMIX_RANK" PMIX_NAMESPACE=bogus PMIX_RANK=0
launcher_refused "OMPI_COMM_WORLD_*" OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0

check_shm
tap_done
