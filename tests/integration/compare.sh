#!/usr/bin/env bash
# osu/compare as a reader uses it: --repeat's table (per library the best, median and spread of
# the runs, torusmpi's ratios) holds numbers that agree with each other, --plot writes a PNG that
# gnuplot drew without a warning, and without gnuplot the table still comes and the reason is
# said; osu/breakdown prints both libraries' figures, the floor and instructions per call by layer
# that add up. MPICH is Debian's mpich and libmpich-dev; without them its columns read "failed"
# and that alone is accepted. The times themselves are not checked: they are the machine's.
. "$(dirname "$0")/lib.sh"

compare=$TM_SRCDIR/../osu/compare
[ -x "$compare" ] || { echo "Bail out! no $compare"; exit 1; }
export OMPI_MPICC=$TM_OMPI_MPICC OMPI_MPIRUN=$TM_OMPI_MPIRUN
have_mpich=yes
command -v "${MPICH_MPICC:-mpicc.mpich}" >/dev/null || have_mpich=no
diag "MPICH installed: $have_mpich"

# ran_clean: compare exited 0, or 1 with MPICH, not installed, the only library that failed.
ran_clean() {
  [ "$job_rc" = 0 ] && return 0
  [ "$have_mpich" = no ] && [ "$job_rc" = 1 ] || return 1
  ! grep '^# [A-Za-z ]* failed: ' "$job_out" | grep -qv '^# MPICH failed: build failed'
}

# stats_table <first size> <last size>: a row per power of two from first to last, each with a
# best, a median and a spread for every library that ran (a median no better than the best: a
# time, not below it) and both ratios when torusmpi and another library ran.
stats_table() {
  local heading='^# Size( +best +median +spread){3} +best +median$'
  grep -Eq "$heading" "$job_out" || { echo "# no heading of best, median and spread"; return 1; }
  awk -v first="$1" -v last="$2" -v mpich="$have_mpich" '
    function num(x) { return x ~ /^[0-9]+\.[0-9][0-9]$/ }
    /^[0-9]/ {
      if ($1 != first * 2 ^ n++) { print "# row " $1 " out of order"; bad = 1 }
      if (NF != 12) { print "# row " $1 ": " NF " fields, not 12"; bad = 1; next }
      for (c = 2; c <= 8; c += 3) {
        if (c == 5 && mpich == "no") continue
        if (!num($c) || !num($(c + 1)) || $(c + 1) < $c || $(c + 2) !~ /^>?[0-9]+%$/) {
          print "# row " $1 ": best " $c ", median " $(c + 1) ", spread " $(c + 2); bad = 1
        }
      }
      if (!num($11) || !num($12)) { print "# row " $1 ": ratios " $11 ", " $12; bad = 1 }
      size = $1
    }
    END {
      if (size != last) { print "# last row " size ", not " last; bad = 1 }
      exit bad
    }' "$job_out"
}

# png_drawn <file>: a PNG file (its 8-byte signature), announced, and gnuplot said nothing.
png_drawn() {
  [ -s "$1" ] || { echo "# no $1"; return 1; }
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    { echo "# $1 is not a PNG"; return 1; }
  grep -q "^compare: plot in $1\$" "$job_err" || { echo "# not announced"; return 1; }
  ! grep '^compare: gnuplot' "$job_err" | sed 's/^/# /' | grep .
}

run_job 600 "$compare" --prefix "$TM_PREFIX" --repeat 2 --plot "$work/allreduce.png" \
  osu_allreduce -m 8:1024 -i 20 -x 2
check "compare --repeat 2 --plot osu_allreduce: ran" ran_clean || diag_job
check "... best, median (not below the best) and spread per library, ratios on both" \
  stats_table 8 1024 || diag_job
if command -v "${GNUPLOT:-gnuplot}" >/dev/null; then
  check "... --plot wrote a PNG, gnuplot without a warning" png_drawn "$work/allreduce.png" ||
    diag_job
else
  skip "... --plot wrote a PNG" "no gnuplot (Debian's gnuplot-nox)"
fi

# Without gnuplot: the table, then the reason, and exit status 1.
run_job 300 env GNUPLOT="$work/no-gnuplot" "$compare" --prefix "$TM_PREFIX" --runs 1 \
  --plot "$work/none.png" osu_latency -m 1:4 -i 5 -x 1
no_gnuplot() {
  [ "$job_rc" = 1 ] || { echo "# exit status $job_rc, not 1"; return 1; }
  grep -Eq '^4 +[0-9]' "$job_out" || { echo "# no table"; return 1; }
  grep -q "^compare: --plot: no gnuplot $work/no-gnuplot (GNUPLOT): no plot drawn\$" "$job_err" ||
    { echo "# no reason given"; return 1; }
  [ ! -e "$work/none.png" ] || { echo "# a file was written"; return 1; }
}
check "compare --plot without gnuplot: the table, the reason, exit status 1" no_gnuplot ||
  diag_job

# osu/breakdown: both libraries' figures, the floor, and instructions per call by layer whose
# rows add up to the total (valgrind is one of the test dependencies).
breakdown=$TM_SRCDIR/../osu/breakdown
run_job 300 "$breakdown" --prefix "$TM_PREFIX" --iters 200 --calls 300 osu_allreduce 8
breakdown_table() {
  [ "$job_rc" = 0 ] || { echo "# exit status $job_rc"; return 1; }
  local l
  for l in 'torusmpi (us per call, best of 3)' 'Open MPI (us per call, best of 3)' \
    'floor: 8 B each way, us'; do
    grep -Eq "^# $(printf '%s' "$l" | sed 's/[()]/\\&/g') +[0-9]+\.[0-9]+\$" "$job_out" ||
      { echo "# no figure for '$l'"; return 1; }
  done
  awk '/^# instructions per call on rank 0/ { on = 1; next }
    on && $1 == "total" { total = $2; next }
    on && NF >= 2 { sum += $NF; rows++; if ($0 ~ /^  coll:/) coll = $NF; if ($0 ~ /^  src\/mpi:/) mpi = $NF }
    END {
      if (rows < 4 || coll <= 0 || mpi <= 0 || total <= 0) { print "# too few layers"; exit 1 }
      # Each row is rounded: the rows may miss the total by one per row.
      d = sum - total; if (d < 0) d = -d;
      if (d > rows) { printf "# rows add up to %d, not %d\n", sum, total; exit 1 }
    }' "$job_out"
}
check "breakdown osu_allreduce 8: figures, floor, instructions by layer adding up" \
  breakdown_table || diag_job

check_shm
tap_done
