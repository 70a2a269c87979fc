#!/bin/sh
# timed-driver.sh <driver> <driver arguments...>: runs an automake test driver and appends
# "<seconds> <test name>" to durations.txt in the build's tests directory, so that run-tests can
# name the slowest tests (the suite must stay well under 30 minutes on 2 cores).
out=${TM_DURATIONS:-durations.txt}
name=
prev=
for arg in "$@"; do
  [ "$prev" = --test-name ] && name=$arg
  prev=$arg
done
start=$(date +%s)
"$@"
rc=$?
echo "$(($(date +%s) - start)) $name" >>"$out"
exit $rc
