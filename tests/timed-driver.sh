#!/bin/sh
# timed-driver.sh <driver> <driver arguments...>: runs an automake test driver and appends
# "<seconds> <test name>" to durations.txt in the build's tests directory, so that run-tests can
# name the slowest tests (the suite must stay well under 30 minutes on 2 cores), and
# "<start> <end> <directory> <test name> <busy> <all>" to timeline.txt beside it (epoch seconds;
# the machine's busy and all CPU ticks of /proc/stat meanwhile), from which run-tests tells how
# long each phase of make check took and how much of the cores it kept busy.
out=${TM_DURATIONS:-durations.txt}
timeline=$(dirname "$out")/timeline.txt
name=
prev=
for arg in "$@"; do
  [ "$prev" = --test-name ] && name=$arg
  prev=$arg
done
# ticks: "<busy> <all>" CPU ticks since boot, all cores (busy: all but idle and iowait).
ticks() {
  awk '$1 == "cpu" { all = 0; for (i = 2; i <= NF; i++) all += $i
                     print all - $5 - $6, all; exit }' /proc/stat 2>/dev/null || echo "0 0"
}
t0=$(ticks)
start=$(date +%s)
"$@"
rc=$?
end=$(date +%s)
t1=$(ticks)
echo "$((end - start)) $name" >>"$out"
echo "$start $end ${PWD##*/} $name $((${t1% *} - ${t0% *})) $((${t1#* } - ${t0#* }))" >>"$timeline"
exit $rc
