#!/usr/bin/env bash
# Memory errors and leaks of torusmpi itself under valgrind's memcheck: hello (tests/progs) as a
# singleton and as two ranks under mpirun, and p2p_errors (every point-to-point error path:
# truncation, cancellation, buffered sends, bad arguments) on two ranks. PMIx's own allocations at start-up are suppressed
# (pmix.supp): they are PMIx's to free, and it keeps them for the life of the process.
. "$(dirname "$0")/lib.sh"

command -v valgrind >/dev/null || { skip "valgrind" "valgrind is not installed"; tap_done; }
bin=$TM_PROGS/hello.gcc
memcheck=(valgrind --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect
  --errors-for-leak-kinds=definite,indirect --suppressions="$TM_SRCDIR/integration/pmix.supp"
  --log-file="$work/memcheck.%p.log")

run_job 120 env "${no_launcher[@]}" LD_PRELOAD="$tm_libmpi" "${memcheck[@]}" "$bin" 1 \
  "$tm_real_prefix"
check "hello singleton under memcheck: no error, no leak" ranks_done 1 ||
  { diag_job; for f in "$work"/memcheck.*.log; do diag_file "$f" 40; done; }
check "memcheck really ran the singleton" grep -qs Memcheck "$work"/memcheck.*.log

rm -f "$work"/memcheck.*.log
run_job 180 "${mpirun[@]}" -np 2 "${via_preload[@]}" "${memcheck[@]}" "$bin" 2 "$tm_real_prefix"
check "hello np=2 under memcheck: no error, no leak" ranks_done 2 ||
  { diag_job; for f in "$work"/memcheck.*.log; do diag_file "$f" 40; done; }
check "memcheck really ran both ranks" test "$(grep -ls Memcheck "$work"/memcheck.*.log | wc -l)" -eq 2

rm -f "$work"/memcheck.*.log
run_job 300 "${mpirun[@]}" -np 2 "${via_preload[@]}" "${memcheck[@]}" "$TM_PROGS/p2p_errors.gcc"
check "p2p_errors np=2 under memcheck: no error, no leak" ranks_done 2 ||
  { diag_job; for f in "$work"/memcheck.*.log; do diag_file "$f" 40; done; }
check "memcheck really ran both p2p_errors ranks" \
  test "$(grep -ls Memcheck "$work"/memcheck.*.log | wc -l)" -eq 2

check_shm
tap_done
