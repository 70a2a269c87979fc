#!/usr/bin/env bash
# sanitizers: torusmpi under AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer.
# A build tree of its own, sanitize/ in the main build tree, configured --enable-sanitizers
# (configure.ac) at -O0: the library, the tools and the unit tests, not the man pages, the OSU
# benchmarks or the test programs. Then the unit tests (not the simulator's sweeps), the tools, and
# a subset of the MPI jobs
# of tests/integration, run with the programs of tests/progs as built for the main tree (by
# Open MPI's mpicc, not instrumented): hello (singleton and np=3), point-to-point eager and by
# rendezvous (single copy and through shared-memory chunks), its error paths, every registered
# collective algorithm forced at np=3 and np=5 (not powers of two), by rendezvous too, errors under
# MPI_ERRORS_RETURN, device buffers with the guard on, one-sided communication (host and device
# windows, and windows across instances), and the libfabric transport between two
# emulated instances. A check fails on any sanitizer report (written to files by log_path, so a
# report is seen even when the process exits 0), besides the job's own checks.
#
# The tree is built by clang++ when it is installed (configure.ac gives it the shared runtime, an
# rpath to it and ODR indicators, see there), else by g++; SANITIZERS_CXX=g++ asks for g++. A
# program not built with ASan gets the runtime of the tree's compiler first (clang's
# libclang_rt.asan-x86_64.so, gcc's libasan): LD_PRELOAD=<runtime>:<libmpi.so.40>, passed to every
# rank with mpirun -x. UBSan stops at the first error (-fno-sanitize-recover). A unit test case
# that the compiler cannot check skips itself and is a TAP "# SKIP" here, with its reason (clang 14
# has no _Float16 on x86, the reference for binary16). Leaks are reported; sanitizers.supp holds
# suppressions for third-party libraries only (PMIx so far), each with its reason. Then
# ThreadSanitizer on MPI_THREAD_MULTIPLE and the progress thread, its tree by configure's default
# compiler, g++ (at the end; SANITIZERS_TSAN=no skips it).
#
# The budget, on 2 cores at load 2 to 4 (add half when shared with more): 4.5 minutes, 7 CPU
# minutes. The ASan tree's build 2.1 of them (configure, then compiling; g++ took 3.1, and 4.9 CPU
# minutes against clang++'s 3.6 side by side; -g1 saves 5% more of them than -g), the TSan tree's
# 1.5; the unit tests 15 s, the tools and MPI jobs 30 s. A second run rebuilds only what changed.
# SANITIZERS=no in the environment skips it all.
# Under make check the builds are done before, by tests/sanitizers_build.sh: it sources this
# script with sanitizers_build_only=yes, which configures and builds both trees at idle priority
# (SCHED_IDLE, else nice 19) beside the integration tests, on the cycles their jobs leave (they
# wait on each other, on launchers and on sleeps), and stops there; this script then finds them
# built. Run it by hand from the build tree: (. tests/test-env.sh && ../tests/sanitizers.sh)
# shellcheck source=integration/lib.sh
. "$(dirname "$0")/integration/lib.sh"

if [ "${SANITIZERS:-yes}" = no ]; then
  echo "1..0 # SKIP SANITIZERS=no"
  exit 0
fi
build_only=${sanitizers_build_only:-no}
if [ "$build_only" = yes ]; then
  # This shell and every process it starts (the scheduling class is inherited) run only when
  # nothing else wants the core; the tests beside them keep it whenever they are runnable.
  chrt --idle -p 0 $$ >/dev/null 2>&1 || renice -n 19 -p $$ >/dev/null 2>&1
  ionice -c 3 -p $$ >/dev/null 2>&1
fi
# The builds here are not part of the make that runs this script: none of its flags or variables.
unset MAKEFLAGS MFLAGS MAKELEVEL
top_srcdir=$(cd "$TM_SRCDIR/.." && pwd)
san=$TM_TOP_BUILDDIR/sanitize
jobs=$(nproc 2>/dev/null || echo 2)
t_start=$SECONDS

# The simulator's sweeps (every algorithm at hundreds of simulated ranks) take minutes even
# uninstrumented, ten times that under ASan: they run in the main tree only. The code they cover
# runs here in coll_algos' MPI jobs.
slow_units=(coll_sweep_test sim_topo_test coll_torus_test coll_hier_test coll_cost_test)
# unit_tests: the unit test programs but the slow ones, one a line (run in tests/unit of a
# configured tree: its Makefile's check_PROGRAMS).
# (The marker keeps out what make prints when it first remakes a Makefile older than its source.)
unit_tests() {
  # shellcheck disable=SC2016 # $(check_PROGRAMS) is make's
  echo 'print-unit-tests: ; @echo "unit tests: $(check_PROGRAMS)"' |
    make -s -f Makefile -f - print-unit-tests | sed -n 's/^unit tests: //p' | tr ' ' '\n' |
    grep -vxF -f <(printf '%s\n' "" "${slow_units[@]}")
}

# --- The build, at -O0: UBSan's checks make gcc's optimiser slow (-O1 compiles 2.3 times as long
# and the jobs here gain little). Warnings are not errors here: the main build holds -Werror, and
# gcc warns differently with instrumentation (-Wmaybe-uninitialized, -Wstringop-overflow).
build_log=$work/build.log
tsan=$TM_TOP_BUILDDIR/sanitize-thread
# configure_tree <tree> <sanitizers> <CXXFLAGS> <compiler>...: configures <tree> with the first
# compiler that is installed and that configure accepts (its sanitizer runtimes found), "default"
# being configure's own choice; the output of every attempt in <tree>.configure.log beside
# build.log. A second run keeps the tree if it was configured from the same list of compilers
# (tree/sanitizers.cxx), else configures it anew: a tree of an older run or of another
# SANITIZERS_CXX does not keep its compiler.
configure_tree() {
  local tree=$1 sanitizers=$2 flags=$3 cxx log ompi=()
  shift 3
  if [ -f "$tree/Makefile" ]; then
    [ "$(cat "$tree/sanitizers.cxx" 2>/dev/null)" = "$*" ] && return 0
    rm -rf "$tree"
  fi
  mkdir -p "$tree" && cd "$tree" || return 1
  # --with-ompi=DIR when the main tree's Open MPI is DIR/include and DIR/lib.
  [ "${TM_OMPI_INCDIR%/include}/lib" = "$TM_OMPI_LIBDIR" ] &&
    ompi=(--with-ompi="${TM_OMPI_INCDIR%/include}")
  log=$work/${tree##*/}.configure.log
  : >"$log"
  for cxx in "$@"; do
    local cxx_arg=()
    if [ "$cxx" != default ]; then
      command -v "$cxx" >/dev/null || continue
      cxx_arg=(CXX="$cxx")
    fi
    echo "--- configure with CXX=$cxx" >>"$log"
    if "$top_srcdir/configure" --enable-sanitizers="$sanitizers" --disable-werror \
      ${ompi[@]+"${ompi[@]}"} ${cxx_arg[@]+"${cxx_arg[@]}"} CXXFLAGS="$flags" >>"$log" 2>&1; then
      echo "$*" >sanitizers.cxx
      return 0
    fi
  done
  return 1
}
# build <tree> unit: the library, the tools and the unit tests but the slow ones. build <tree> lib:
# libmpi.so.40 alone, from the convenience libraries it links (src/mpi's libmpi_la_LIBADD, none of
# which needs another to build): not the tools or the simulator, which the TSan lane never runs.
build() {
  cd "$1" || return 1
  # A tree configured before the last autoreconf first remakes its Makefiles: alone, because
  # config.status's dependency step fails under a parallel make ("read jobs pipe").
  make Makefile >>"$build_log" 2>&1 || return 1
  if [ "$2" = lib ]; then
    local la
    # shellcheck disable=SC2016 # $(libmpi_la_LIBADD) is make's
    for la in $(echo 'print-libadd: ; @echo "libadd: $(libmpi_la_LIBADD)"' |
      make -s -C src/mpi -f Makefile -f - print-libadd | sed -n 's/^libadd: //p' | tr ' ' '\n' |
      grep '\.la$' | tac); do
      make -j"$jobs" -C "src/mpi/$(dirname "$la")" "$(basename "$la")" >>"$build_log" 2>&1 ||
        return 1
    done
    make -j"$jobs" -C src/mpi libmpi.la >>"$build_log" 2>&1
    return
  fi
  # Every directory of the library and the tools: the top Makefile's SUBDIRS but man, tests, osu.
  local dirs
  dirs=$(sed -n 's/^SUBDIRS = //p' Makefile | tr ' ' '\n' | grep -vxE 'man|tests|osu|' |
    paste -sd' ')
  make -j"$jobs" SUBDIRS="$dirs" >>"$build_log" 2>&1 || return 1
  cd tests/unit && mapfile -t units < <(unit_tests) &&
    make -j"$jobs" "${units[@]}" >>"$build_log" 2>&1
}
# Both trees are configured at once: configure runs one process at a time, and both finish before
# anything else starts (nothing is left running if the first build fails).
tsan_lane=${SANITIZERS_TSAN:-yes}
# The ASan tree by clang++ when it is there (SANITIZERS_CXX names another): it compiles the tree
# at -O0 in half the CPU time g++ takes (both given -g1, line tables only). The TSan tree by
# configure's choice (g++): clang 14's shared TSan runtime, which a preloaded library needs,
# crashes at start-up on Debian 12, even in an empty program.
(configure_tree "$san" address,undefined "-O0 -g1" "${SANITIZERS_CXX:-clang++}" default) &
asan_configure=$!
tsan_configure=
if [ "$tsan_lane" != no ]; then
  (configure_tree "$tsan" thread "-O1 -g1" default) &
  tsan_configure=$!
fi
wait "$asan_configure"
build_rc=$?
tsan_configure_rc=0
[ -z "$tsan_configure" ] || { wait "$tsan_configure" || tsan_configure_rc=$?; }
[ "$build_rc" -eq 0 ] || cat "$work/sanitize.configure.log" >>"$build_log"
[ "$tsan_configure_rc" -eq 0 ] || cat "$work/sanitize-thread.configure.log" >>"$build_log"
[ "$build_rc" -ne 0 ] || { (build "$san" unit); build_rc=$?; }
san_cxx=$(sed -n 's/^CXX = //p' "$san/Makefile" 2>/dev/null)
check "sanitized build (sanitize/ by ${san_cxx:-?}: library, tools, unit tests) in $((SECONDS - t_start)) s" \
  test "$build_rc" -eq 0 || { diag_file "$build_log" 40; tap_done; }
t_build=$((SECONDS - t_start))

# tsan_build: the TSan lane's build, configured above; its status in tsan_build_rc.
tsan_build() {
  local t0=$SECONDS
  tsan_build_rc=$tsan_configure_rc
  [ "$tsan_build_rc" -ne 0 ] || { (build "$tsan" lib); tsan_build_rc=$?; }
  check "TSan build (sanitize-thread/: libmpi.so.40) in $((SECONDS - t0)) s" \
    test "$tsan_build_rc" -eq 0 || diag_file "$build_log" 40
}
if [ "$build_only" = yes ]; then
  [ "$tsan_lane" = no ] || tsan_build
  diag "builds: $((SECONDS - t_start)) s at idle priority"
  tap_done
fi

runtime=$(sed -n 's/^TORUSMPI_SANITIZER_RUNTIME = //p' "$san/Makefile")
lib=$san/src/mpi/.libs/libmpi.so.40
check "the ASan runtime ($runtime) and the sanitized libmpi.so.40 exist" \
  test -f "$runtime" -a -f "$lib" || tap_done
lib_real=$(cd "$(dirname "$lib")" && pwd -P)

# Reports go to files, one per process: <prefix>.<pid>.
reports=$work/reports
mkdir -p "$reports"
san_vars=(
  "ASAN_OPTIONS=log_path=$reports/asan:detect_leaks=1:check_initialization_order=1"
  "LSAN_OPTIONS=suppressions=$TM_SRCDIR/sanitizers.supp:print_suppressions=0"
  "UBSAN_OPTIONS=log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
)
san_x=()
for v in "${san_vars[@]}"; do san_x+=(-x "$v"); done
preload=(-x "LD_PRELOAD=$runtime:$lib")

# no_report [directory]: no sanitizer wrote a report there ($reports by default) since the last
# call (the reports are shown, then moved aside, so each is shown once).
# shellcheck disable=SC2120 # the unit tests pass a directory, inside eval
no_report() {
  local f found=0
  for f in "${1:-$reports}"/*; do
    [ -f "$f" ] || continue
    found=1
    echo "# --- ${f##*/}"
    grep -v '^ *$' "$f" | head -n 30 | sed 's/^/#   /'
    mv "$f" "$work/seen.${f##*/}"
  done
  return $found
}

# --- Unit tests: each binary, every case passing, no report; two at a time, each writing its
# reports to a directory of its own.
unit_dir=$san/tests/unit
mapfile -t units < <(cd "$unit_dir" && unit_tests)
check "unit tests built (${#units[@]}; not the simulator's sweeps: ${slow_units[*]})" \
  test ${#units[@]} -gt 0
run_unit() {
  mkdir -p "$work/unit/$1"
  (cd "$unit_dir" && env GTEST_COLOR=no "${san_vars[@]}" \
    ASAN_OPTIONS="log_path=$work/unit/$1/asan:detect_leaks=1:check_initialization_order=1" \
    UBSAN_OPTIONS="log_path=$work/unit/$1/ubsan:print_stacktrace=1:halt_on_error=1" \
    "./$1" >"$work/unit/$1.log" 2>&1)
  echo $? >"$work/unit/$1.rc"
}
t0=$SECONDS
for u in ${units[@]+"${units[@]}"}; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  run_unit "$u" &
done
wait
for u in ${units[@]+"${units[@]}"}; do
  cases=$(grep -c '^\[       OK \]' "$work/unit/$u.log")
  # shellcheck disable=SC2016 # expanded by eval
  check "unit/$u: $cases cases pass, no sanitizer report" \
    eval 'no_report "$work/unit/$u" && [ "$(cat "$work/unit/$u.rc")" = 0 ]' ||
    diag_file "$work/unit/$u.log" 20
  # A case that skipped itself (GTEST_SKIP: what this compiler cannot check, as binary16 without
  # _Float16) is a skip of its own, with the reason it gave (the line after "...: Skipped").
  while IFS=$'\t' read -r name reason; do
    skip "unit/$u: $name" "${reason:-no reason given}"
  done < <(awk '/: Skipped$/ { getline; reason = $0 }
                /^\[  SKIPPED \] [^ ]+ \(/ { print $4 "\t" reason; reason = "" }' \
    "$work/unit/$u.log")
done
diag "unit tests: $((SECONDS - t0)) s"

# --- The tools. clean_exit: no report, exit status 0.
clean_exit() { no_report && [ "$job_rc" -eq 0 ]; }
t0=$SECONDS
info=$san/src/info/torusmpi_info
run_job 60 env "${san_vars[@]}" "$info"
check "torusmpi_info" clean_exit || diag_job
run_job 60 env "${san_vars[@]}" "$info" --algorithms --parsable
check "torusmpi_info --algorithms --parsable" clean_exit ||
  diag_job
algorithms=()
while IFS= read -r a; do algorithms+=("$a"); done < <(
  awk -F: '$1 == "algorithm" && $4 == "restrictions" && $2 !~ /^neighbor_/ &&
           !seen[$2 "/" $3]++ { print $2 "/" $3 }' "$job_out")
run_job 60 env "${san_vars[@]}" "$san/src/sim/torusmpi_sim" --collective allreduce --ranks 13 \
  --bytes 8:64K
check "torusmpi_sim --collective allreduce --ranks 13, every algorithm" \
  clean_exit || diag_job

# --- MPI jobs. job <np> <description> <mpirun arguments...> -- <program> [arguments...]
passed() { no_report && ranks_done "$1" && ! grep -q '^skip' "$job_out"; }
job() {
  local np=$1 desc=$2 args=()
  shift 2
  while [ "$1" != -- ]; do
    args+=("$1")
    shift
  done
  shift
  run_job 240 "${mpirun[@]}" -np "$np" "${preload[@]}" "${san_x[@]}" ${args[@]+"${args[@]}"} "$@"
  check "$desc, np=$np" passed "$np" || diag_job
}
p=$TM_PROGS

run_job 60 env "${no_launcher[@]}" "${san_vars[@]}" LD_PRELOAD="$runtime:$lib" "$p/hello.gcc" 1 \
  "$lib_real"
check "hello singleton" passed 1 || diag_job
job 3 "hello" -- "$p/hello.gcc" 3 "$lib_real"

job 3 "p2p_basic" -- "$p/p2p_basic.gcc"
job 2 "p2p_basic, every message by rendezvous (single copy)" -x TORUSMPI_EAGER_LIMIT=0 \
  -- "$p/p2p_basic.gcc"
job 3 "p2p_basic, rendezvous through shared-memory chunks" -x TORUSMPI_EAGER_LIMIT=0 \
  -x TORUSMPI_SHM_SINGLE_COPY=0 -- "$p/p2p_basic.gcc"
job 3 "p2p_order" -- "$p/p2p_order.gcc"
job 2 "p2p_errors (truncation, cancel, buffered sends, bad arguments)" -- "$p/p2p_errors.gcc"

if [ ${#algorithms[@]} -gt 0 ]; then
  job 3 "coll_algos, every algorithm forced (${#algorithms[@]})" -- "$p/coll_algos.gcc" \
    "${algorithms[@]}"
  job 5 "coll_algos, every algorithm forced, TORUSMPI_EAGER_LIMIT=4096" \
    -x TORUSMPI_EAGER_LIMIT=4096 -- "$p/coll_algos.gcc" "${algorithms[@]}"
else
  skip "coll_algos" "torusmpi_info listed no algorithm"
fi
job 3 "coll_errors" -- "$p/coll_errors.gcc"
job 2 "errors under MPI_ERRORS_RETURN" -- "$p/errors.gcc"
job 3 "device buffers, guard on, torus:2x2:cores=1" -x TORUSMPI_DEVICE_GUARD=1 \
  -x TORUSMPI_INSTANCE=torus:2x2:cores=1 -- "$p/device.gcc"
job 3 "streams (the engine's thread runs their entries), guard on" -x TORUSMPI_DEVICE_GUARD=1 \
  -x TORUSMPI_INSTANCE=torus:2x2:cores=1 -- "$p/streams.gcc"
job 3 "rma: every window flavor, epoch and operation" -- "$p/rma.gcc"
job 3 "rma_device: windows on device memory, guard on" -x TORUSMPI_DEVICE_GUARD=1 \
  -x TORUSMPI_INSTANCE=torus:2x2:cores=1 -- "$p/rma_device.gcc" mixed

net=(-x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo -x TORUSMPI_NET=ofi -x TORUSMPI_INSTANCES=2
  -x TORUSMPI_INSTANCE=torus:2x1:cores=1)
job 4 "ofi: net_p2p across 2 instances" "${net[@]}" -- "$p/net_p2p.gcc" 2
job 4 "ofi: coll_basic across 2 instances" "${net[@]}" -- "$p/coll_basic.gcc"
job 4 "ofi: rma across 2 instances (requests served by the targets)" "${net[@]}" -- \
  "$p/rma.gcc" net light
diag "MPI jobs and tools: $((SECONDS - t0)) s"

# --- ThreadSanitizer (SANITIZERS_TSAN=no skips it): a second build, of libmpi.so.40 alone (-O1,
# no UBSan; configured beside the first), then MPI_THREAD_MULTIPLE under it: tests/progs/threads.c
# built with -fsanitize=thread by Open MPI's mpicc (gcc: clang 14's shared TSan runtime crashes
# at start-up on Debian 12, even in an empty program), over shared memory and over libfabric
# between two emulated instances, and the progress thread of TORUSMPI_ASYNC_PROGRESS=1 beside
# the application's calls. SANITIZERS_TSAN=all adds every collective algorithm forced at np=4
# with the progress thread (minutes more).
if [ "$tsan_lane" != no ]; then
  tsan_build
  build_rc=$tsan_build_rc
  threads_tsan=$work/threads.tsan
  "$TM_OMPI_MPICC" -fsanitize=thread -g -O1 -Wall -Wextra -Werror -o "$threads_tsan" \
    "$TM_SRCDIR/progs/threads.c" >>"$build_log" 2>&1
  check "threads.c built with -fsanitize=thread" test -x "$threads_tsan" ||
    diag_file "$build_log" 20
  if [ "$build_rc" -eq 0 ]; then
    # The program carries the runtime; the others get it preloaded.
    tsan_lib=(-x "LD_PRELOAD=$tsan/src/mpi/.libs/libmpi.so.40")
    runtime=$(sed -n 's/^TORUSMPI_SANITIZER_RUNTIME = //p' "$tsan/Makefile")
    preload=(-x "LD_PRELOAD=$runtime:$tsan/src/mpi/.libs/libmpi.so.40")
    san_x=(-x "TSAN_OPTIONS=log_path=$reports/tsan:halt_on_error=0" -x TORUSMPI_TIMEOUT=120)
    if [ -x "$threads_tsan" ]; then
      run_job 240 "${mpirun[@]}" -np 3 "${tsan_lib[@]}" "${san_x[@]}" "$threads_tsan" 4
      check "TSan: threads, 4 threads per rank, shared memory, np=3" passed 3 || diag_job
      run_job 240 "${mpirun[@]}" -np 4 "${tsan_lib[@]}" "${san_x[@]}" -x FI_PROVIDER=tcp \
        -x FI_TCP_IFACE=lo -x TORUSMPI_NET=ofi -x TORUSMPI_INSTANCE=torus:2x1:cores=1 \
        -x TORUSMPI_INSTANCES=2 -x TORUSMPI_EAGER_LIMIT=0 "$threads_tsan" 3
      check "TSan: threads, 3 threads per rank, two instances over libfabric, np=4" passed 4 ||
        diag_job
      run_job 240 "${mpirun[@]}" -np 3 "${tsan_lib[@]}" "${san_x[@]}" \
        -x TORUSMPI_ASYNC_PROGRESS=1 "$threads_tsan" 3
      check "TSan: threads with the progress thread, np=3" passed 3 || diag_job
    fi
    san_x+=(-x TORUSMPI_ASYNC_PROGRESS=1)
    job 3 "TSan: p2p_order, asynchronous progress" -- "$p/p2p_order.gcc"
    job 3 "TSan: streams, entries run by the engine beside the application" -- "$p/streams.gcc"
    if [ "$tsan_lane" = all ]; then
      job 4 "TSan: coll_algos, asynchronous progress, every algorithm forced" \
        -- "$p/coll_algos.gcc" ${algorithms[@]+"${algorithms[@]}"}
      job 3 "TSan: p2p_basic, asynchronous progress" -- "$p/p2p_basic.gcc"
    fi
  fi
fi

diag "build $t_build s, all $((SECONDS - t_start)) s"
check_shm
tap_done
