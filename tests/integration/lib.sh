# lib.sh: what the integration tests share. Sourced by each script, after test-env.sh (made by
# tests/Makefile.am), which names the installed torusmpi (TM_PREFIX, TM_LIBDIR, TM_BINDIR), Open
# MPI's tools (TM_OMPI_*), the test programs (TM_PROGS) and a scratch directory (TM_TMP).
#
# Output is TAP: one "ok"/"not ok" line per check, diagnostics as "#" lines, and the plan last, so
# that a script that dies halfway shows up as an error rather than as fewer passing checks.

set -u
# sort, comm and join must agree on one order.
export LC_ALL=C
: "${TM_PREFIX:?source test-env.sh first (made in the build tree by make check)}"

tap_count=0

# check <description> <command...>: one test line, passing when the command succeeds. What the
# command prints (diagnostics) follows the line it explains.
check() {
  local desc=$1 out status
  shift
  tap_count=$((tap_count + 1))
  out=$("$@")
  status=$?
  if [ $status -eq 0 ]; then
    echo "ok $tap_count - $desc"
  else
    echo "not ok $tap_count - $desc"
  fi
  [ -z "$out" ] || echo "$out"
  return $status
}

skip() {
  tap_count=$((tap_count + 1))
  echo "ok $tap_count - $1 # SKIP $2"
}

diag() { printf '# %s\n' "$@"; }

# The last lines of a file as diagnostics.
diag_file() {
  [ -s "$1" ] || return 0
  echo "# --- ${1##*/} (last ${2:-30} lines)"
  tail -n "${2:-30}" "$1" | sed 's/^/#   /'
}

# What went wrong with the last job: its command, status, time, failed checks and output.
diag_job() {
  diag "job: $job_cmd" "exit status $job_rc after $job_ms ms"
  grep '^FAIL' "$job_out" | head -n 20 | sed 's/^/#   /'
  diag_file "$job_out" 15
  diag_file "$job_err"
}

tap_done() {
  echo "1..$tap_count"
  exit 0
}

[ -e "$TM_LIBDIR/libmpi.so.40" ] || {
  echo "Bail out! no torusmpi in $TM_LIBDIR: run make install before make check"
  exit 1
}
# /proc/self/maps shows resolved paths.
tm_real_prefix=$(cd "$TM_PREFIX" && pwd -P)
tm_libmpi=$TM_LIBDIR/libmpi.so.40

work=$TM_TMP/$(basename "$0" .sh)
rm -rf "$work"
mkdir -p "$work"
job_n=0

# A test must not pick up a substitution from the caller's environment.
unset LD_PRELOAD

# run_job <seconds> <command...>: runs one job with a time limit, output in $job_out/$job_err,
# status in $job_rc (124: timed out), wall time in $job_ms.
run_job() {
  local limit=$1
  shift
  job_n=$((job_n + 1))
  job_out=$work/job$job_n.out
  job_err=$work/job$job_n.err
  job_cmd="$*"
  local t0
  t0=$(date +%s%N)
  timeout -k 5 "$limit" "$@" >"$job_out" 2>"$job_err"
  job_rc=$?
  job_ms=$((($(date +%s%N) - t0) / 1000000))
  echo "$job_cmd: exit $job_rc, $job_ms ms" >>"$work/jobs.txt"
}

# Open MPI's mpirun, usable as root and with more ranks than cores: "${mpirun[@]}" -np N ...
mpirun=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  "$TM_OMPI_MPIRUN" --oversubscribe --bind-to none)

# The three ways a binary built with Open MPI's mpicc gets torusmpi, as mpirun arguments.
# (The third way, torusmpi's own mpicc, needs none: its rpath points at the prefix.)
via_path=(-x "LD_LIBRARY_PATH=$TM_LIBDIR")
via_preload=(-x "LD_PRELOAD=$tm_libmpi")

# The environment without any launcher variable, for jobs started without mpirun.
no_launcher=()
while IFS='=' read -r name _; do
  case $name in PMIX_* | OMPI_* | PMI_*) no_launcher+=(-u "$name") ;; esac
done < <(env)

# ranks_done <np>: the last job exited 0 and each rank 0..np-1 printed its "done <rank> ...,
# 0 failed" line, with no failed check.
ranks_done() {
  [ "$job_rc" -eq 0 ] || return 1
  ! grep -q '^FAIL' "$job_out" || return 1
  local r
  for ((r = 0; r < $1; r++)); do
    grep -Eq "^done $r( of $1)?: [0-9]+ checks, 0 failed\$" "$job_out" || return 1
  done
}

# same_stats <np> <collective> <token> <kind>: the job passed, ran the algorithm once (its
# TORUSMPI_STATS coll line), and its "torusmpi-stats <kind> ..." lines (link, nic) equal
# $work/predicted.txt, the simulator's in the same form ($work/sim.txt: its whole output).
same_stats() {
  ranks_done "$1" || return 1
  grep -q "^torusmpi-stats coll $2 alg=$3 calls=1 " "$job_err" || {
    echo "# no coll line for $2 alg=$3 calls=1:"
    grep '^torusmpi-stats coll' "$job_err" | sed 's/^/#   /'
    return 1
  }
  [ -s "$work/predicted.txt" ] ||
    { echo "# the simulator printed no $4 lines"; diag_file "$work/sim.txt"; return 1; }
  grep "^torusmpi-stats $4 " "$job_err" >"$work/real.txt"
  diff "$work/predicted.txt" "$work/real.txt" >"$work/diff.txt" || {
    echo "# simulated (<) and measured (>) bytes differ:"
    sed 's/^/# /' "$work/diff.txt" | head -n 12
    return 1
  }
}

# No shared-memory segment may outlive a job: compare /dev/shm with what it held when we started.
# (Another user's job running at the same time would show up here too.)
shm_before=$(ls -A /dev/shm 2>/dev/null | sort)
# Open MPI's own segments (vader_segment.*) are left when a reference job on Open MPI timed out and
# was killed: not torusmpi's, they are removed and named, and do not fail the check.
check_shm() {
  local after left ompi
  after=$(ls -A /dev/shm 2>/dev/null | sort)
  left=$(comm -13 <(echo "$shm_before") <(echo "$after"))
  ompi=$(echo "$left" | grep '^vader_segment\.' || true)
  if [ -n "$ompi" ]; then
    diag "Open MPI's reference jobs left (removed):" $ompi
    (cd /dev/shm && rm -f $ompi)
    left=$(echo "$left" | grep -v '^vader_segment\.' || true)
  fi
  check "no new entries in /dev/shm after the jobs" test -z "$left" || diag "left:" $left
}

# elf_has <file> <readelf option> <extended regexp>: readelf's answer matches.
elf_has() { readelf -W "$2" "$1" 2>/dev/null | grep -Eq "$3"; }

# rpath_has <file> <directory>: the file's RPATH or RUNPATH names the directory.
rpath_has() {
  readelf -W -d "$1" 2>/dev/null | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]$/\2/p' |
    tr ':' '\n' | grep -qxF "$2"
}

# not <command...>: succeeds when the command fails (check takes a command, not a pipeline).
not() { ! "$@"; }

# no_process <pattern>: no process's command line matches the extended regular expression (a
# job's programs must not outlive it); the ones that do are listed.
no_process() {
  local left
  left=$(pgrep -f "$1" || true)
  [ -z "$left" ] || { echo "# left running: $left"; return 1; }
}
