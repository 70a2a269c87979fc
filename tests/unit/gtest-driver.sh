#! /bin/sh
# An automake test driver for GoogleTest binaries: each test case of a binary becomes one result
# in its .trs file (PASS, FAIL or SKIP), so `make check` and the suite's "N passed, N failed" line
# count test cases, not binaries. A binary that fails without naming a failed test (a crash, a
# death outside any test) is an ERROR.
#
#   gtest-driver.sh --test-name NAME --log-file LOG --trs-file TRS [--...] -- PROGRAM [ARGS]
set -u
log= trs= name=
while [ $# -gt 0 ]; do
  case $1 in
    --test-name) name=$2; shift ;;
    --log-file) log=$2; shift ;;
    --trs-file) trs=$2; shift ;;
    --) shift; break ;;
    --*) shift ;;  # --color-tests, --enable-hard-errors, --expect-failure: nothing to do here
  esac
  shift
done
[ -n "$log" ] && [ -n "$trs" ] && [ $# -gt 0 ] || { echo "usage: $0 ... -- PROGRAM" >&2; exit 2; }

"$@" >"$log" 2>&1
status=$?

# GoogleTest ends each test with "[       OK ] Suite.Name (N ms)", "[  FAILED  ] Suite.Name (N ms)"
# or "[  SKIPPED ] Suite.Name (N ms)"; the final summary repeats failures without the time.
awk -v status="$status" -v name="$name" '
  /^\[       OK \] [^ ]+ \(/ { print ":test-result: PASS " name " " $4; pass++ }
  /^\[  FAILED  \] [^ ]+ \(/ { print ":test-result: FAIL " name " " $4; fail++ }
  /^\[  SKIPPED \] [^ ]+ \(/ { print ":test-result: SKIP " name " " $4 }
  END {
    if (status != 0 && fail == 0) { print ":test-result: ERROR " name " (exit status " status ")"; fail++ }
    if (pass + fail == 0) { print ":test-result: ERROR " name " (ran no test)"; fail++ }
    print ":global-test-result: " (fail ? "FAIL" : "PASS")
    print ":recheck: " (fail ? "yes" : "no")
    print ":copy-in-global-log: " (fail ? "yes" : "no")
  }' "$log" >"$trs"

# What make shows on the terminal, one line per binary.
result=$(sed -n 's/^:global-test-result: //p' "$trs")
cases=$(grep -c '^:test-result:' "$trs")
echo "$result: $name ($cases test cases)"
exit 0
