#!/usr/bin/env bash
# torusmpi_sim --plot draws one simulated call as a PNG with gnuplot: a 2D torus (trn1.32xl
# allreduce), a 3D one (trn2u) and two instances with their network interfaces' bytes each give a
# PNG; a range of sizes and every algorithm plot the selector's pick at the last size. The errors
# are clear and leave nothing behind: --plot without an emulated --instance is bad usage, a
# missing gnuplot is named with its Debian package, a file gnuplot cannot write is reported with
# gnuplot's own message; no temporary file outlives a run.
. "$(dirname "$0")/lib.sh"

sim=$TM_BINDIR/torusmpi_sim
tmp=$work/tmp
mkdir -p "$tmp"

# is_png <file>: the file starts with PNG's signature and holds more than a blank picture.
is_png() {
  [ -f "$1" ] || { echo "# no $1"; return 1; }
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    { echo "# $1 is not a PNG"; return 1; }
  [ "$(stat -c %s "$1")" -gt 20000 ] || { echo "# $1 is only $(stat -c %s "$1") bytes"; return 1; }
}
# plotted <file>: the last job passed, wrote a PNG to the file and left no temporary file.
plotted() {
  [ "$job_rc" -eq 0 ] || { echo "# exit status $job_rc"; return 1; }
  [ ! -s "$job_err" ] || { echo "# it printed on stderr"; return 1; }
  is_png "$1" && no_temp
}
no_temp() {
  [ -z "$(ls -A "$tmp")" ] || { echo "# left in TMPDIR: $(ls -A "$tmp" | paste -sd' ')"; return 1; }
}
# refused <regexp>: the last job exited 2 and said so on stderr, having written no picture.
refused() {
  [ "$job_rc" -eq 2 ] || { echo "# exit status $job_rc, expected 2"; return 1; }
  grep -Eq -- "$1" "$job_err" || { echo "# stderr does not match: $1"; return 1; }
  [ ! -e "$work/refused.png" ] || { echo "# it wrote $work/refused.png"; return 1; }
  no_temp
}

if command -v gnuplot >/dev/null; then
  run_job 60 env TMPDIR="$tmp" "$sim" --instance trn1.32xl --collective allreduce --bytes 1M \
    --algorithm ring --plot "$work/trn1.png"
  check "trn1.32xl allreduce ring, 1 MiB: a PNG" plotted "$work/trn1.png" || diag_job
  run_job 120 env TMPDIR="$tmp" "$sim" --instance trn2u --collective allreduce --bytes 16M:64M \
    --plot "$work/trn2u.png"
  check "trn2u allreduce, 16 to 64 MiB: the selector's pick at 64 MiB, a PNG" \
    plotted "$work/trn2u.png" || diag_job
  run_job 60 env TMPDIR="$tmp" "$sim" --instance trn1.32xl --instances 2 --collective allreduce \
    --bytes 1M --nics --plot "$work/nics.png"
  check "2 x trn1.32xl allreduce with network bytes: a PNG" plotted "$work/nics.png" || diag_job
  run_job 60 env TMPDIR="$tmp" "$sim" --instance torus:2x2:cores=1 --ranks 3 \
    --collective alltoall --bytes 4K --plot "$work/small.png"
  check "torus:2x2, 3 ranks (a chip without one), alltoall: a PNG" plotted "$work/small.png" ||
    diag_job
  run_job 60 env TMPDIR="$tmp" "$sim" --instance trn1.32xl --collective allreduce --bytes 1M \
    --plot "$work/no-such-directory/refused.png"
  check "a file gnuplot cannot write: exit 2 with gnuplot's message" \
    refused "^torusmpi_sim: --plot .*: gnuplot failed" || diag_job
else
  skip "torusmpi_sim --plot pictures" "gnuplot is not installed"
fi

run_job 30 env TMPDIR="$tmp" "$sim" --collective allreduce --ranks 8 --plot "$work/refused.png"
check "--plot without --instance: bad usage" refused "--plot needs an emulated --instance" ||
  diag_job
run_job 30 env TMPDIR="$tmp" "$sim" --instance host --instances 2 --ranks 8 \
  --collective allreduce --plot "$work/refused.png"
check "--plot on host instances: bad usage" refused "--plot needs an emulated --instance" ||
  diag_job
# An empty PATH: no gnuplot to run (the simulator is named by its path).
run_job 30 env PATH="$tmp/none" TMPDIR="$tmp" "$sim" --instance trn1.32xl \
  --collective allreduce --bytes 1K --plot "$work/refused.png"
check "no gnuplot: named, with its Debian package" \
  refused "needs gnuplot \(Debian package gnuplot-nox\)" || diag_job

tap_done
