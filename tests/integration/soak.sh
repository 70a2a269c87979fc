#!/usr/bin/env bash
# Soak (tests/progs/soak.c): randomly shaped collectives and point-to-point, every result checked,
# for TM_SOAK_SECONDS (default 20) at 4 ranks on an emulated instance with device buffers and,
# at the same time (a job lasts that long whatever it shares the cores with), between two
# emulated instances (the network transport). Once warmed up (half the time:
# the shapes of the calls come from a menu, so the engine's cache of call shapes is full by
# then, and a first pass ran every collective at the largest size, so buffers kept at their
# high-water mark have reached it), each rank's open descriptors (sockets apart: at most one more per peer, for the network provider's late connections) must not change by the end, nor
# its mappings (TM_SOAK_MAPS more at most, default 4: glibc serves large blocks by mmap, which
# come and go) and malloc heap in use (TM_SOAK_HEAP_KB of allocator noise, default 512), and
# /dev/shm must hold nothing new. Resident memory only has a coarse
# bound, TM_SOAK_RSS_KB (default 16384): it goes on growing for minutes as the pages of the
# node's shared segment, the device arenas and the network library's buffers are first touched,
# then levels off (139 MB a rank on the network run here, whether it lasted 120 s or 300 s),
# which a short run cannot tell from a leak. Longer runs: TM_SOAK_SECONDS=300.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/soak.gcc
seconds=${TM_SOAK_SECONDS:-20}
rss_slack=${TM_SOAK_RSS_KB:-16384}
heap_slack=${TM_SOAK_HEAP_KB:-512}
maps_slack=${TM_SOAK_MAPS:-4}

# flat <np>: every rank's start and end figures of the last job, within the limits above.
flat() {
  local r start end bad=0 s_rss s_fds s_maps s_heap s_sock e_rss e_fds e_maps e_heap e_sock
  local figures='s/.*rss_kb=\([0-9]*\) fds=\([0-9]*\) maps=\([0-9]*\) heap_kb=\([0-9]*\) sockets=\([0-9]*\)/\1 \2 \3 \4 \5/'
  for ((r = 0; r < $1; r++)); do
    start=$(grep "^stats $r start " "$job_out")
    end=$(grep "^stats $r end " "$job_out")
    [ -n "$start" ] && [ -n "$end" ] || { echo "# rank $r printed no figures"; return 1; }
    echo "# rank $r: ${start#stats $r start } -> ${end#stats $r end }"
    read -r s_rss s_fds s_maps s_heap s_sock < <(sed "$figures" <<<"$start")
    read -r e_rss e_fds e_maps e_heap e_sock < <(sed "$figures" <<<"$end")
    [ "$e_fds" -eq "$s_fds" ] || { echo "# rank $r: descriptors $s_fds -> $e_fds"; bad=1; }
    # libfabric's tcp provider may connect to a peer late (on first use, per direction): at most
    # one socket more per other rank.
    [ $((e_sock - s_sock)) -lt "$1" ] || { echo "# rank $r: sockets $s_sock -> $e_sock"; bad=1; }
    [ $((e_maps - s_maps)) -le "$maps_slack" ] ||
      { echo "# rank $r: mappings $s_maps -> $e_maps"; bad=1; }
    [ $((e_heap - s_heap)) -le "$heap_slack" ] ||
      { echo "# rank $r: heap in use grew by $((e_heap - s_heap)) KiB"; bad=1; }
    [ $((e_rss - s_rss)) -le "$rss_slack" ] ||
      { echo "# rank $r: resident memory grew by $((e_rss - s_rss)) KiB"; bad=1; }
  done
  return $bad
}

if [ ! -x "$bin" ]; then
  skip "soak" "$bin was not built"
  tap_done
fi

# Both jobs at once, each writing its own output (run_job runs one job at a time).
# soak_job <n> <mpirun arguments...>: job <n> in the background, its status in job<n>.rc.
soak_job() {
  local n=$1
  shift
  echo "soak job $n: $*" >>"$work/jobs.txt"
  (timeout -k 5 $((seconds + 90)) "${mpirun[@]}" -np 4 "${via_path[@]}" "$@" \
    >"$work/job$n.out" 2>"$work/job$n.err"
    echo $? >"$work/job$n.rc") &
}
soak_job 1 -x TORUSMPI_INSTANCE=torus:2x2:cores=1 "$bin" "$seconds" device
soak_job 2 -x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo -x TORUSMPI_INSTANCE=torus:2x1:cores=1 \
  -x TORUSMPI_INSTANCES=2 "$bin" "$seconds"
wait
# use <n>: the figures of job <n> are the last job's (what ranks_done, flat and diag_job read).
use() {
  job_out=$work/job$1.out job_err=$work/job$1.err job_rc=$(cat "$work/job$1.rc") job_ms=0
  job_cmd=$(sed -n "s/^soak job $1: //p" "$work/jobs.txt")
}

use 1
diag "shm + device soak, $seconds s: $(grep -m1 '^iterations 0 ' "$job_out" | cut -d' ' -f3) operations per rank"
check "soak on one instance, device buffers: every result right" ranks_done 4 || diag_job
check "... descriptors, mappings and heap flat, resident memory bounded" flat 4

use 2
diag "network soak, $seconds s: $(grep -m1 '^iterations 0 ' "$job_out" | cut -d' ' -f3) operations per rank"
check "soak across two instances (network): every result right" ranks_done 4 || diag_job
check "... descriptors, mappings and heap flat, resident memory bounded" flat 4

check_shm
tap_done
