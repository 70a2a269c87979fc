#!/usr/bin/env bash
# Soak (tests/progs/soak.c): randomly shaped collectives and point-to-point, every result checked,
# for TM_SOAK_SECONDS (default 30) at 4 ranks on an emulated instance with device buffers, and
# for half that between two emulated instances (the network transport). Once warmed up, each
# rank's open descriptors and mappings must not change by the end, its resident memory not grow
# by more than TM_SOAK_RSS_KB (default 8192: the collective engine caches up to 4096 call shapes
# per communicator, and random counts keep adding shapes), and /dev/shm must hold nothing new.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/soak.gcc
seconds=${TM_SOAK_SECONDS:-30}
rss_slack=${TM_SOAK_RSS_KB:-8192}

# flat <np>: every rank's start and end figures of the last job, within the limits above.
flat() {
  local r start end bad=0
  for ((r = 0; r < $1; r++)); do
    start=$(grep "^stats $r start " "$job_out")
    end=$(grep "^stats $r end " "$job_out")
    [ -n "$start" ] && [ -n "$end" ] || { echo "# rank $r printed no figures"; return 1; }
    echo "# rank $r: ${start#stats $r start } -> ${end#stats $r end }"
    local s_rss s_fds s_maps e_rss e_fds e_maps
    read -r s_rss s_fds s_maps < <(sed 's/.*rss_kb=\([0-9]*\) fds=\([0-9]*\) maps=\([0-9]*\)/\1 \2 \3/' <<<"$start")
    read -r e_rss e_fds e_maps < <(sed 's/.*rss_kb=\([0-9]*\) fds=\([0-9]*\) maps=\([0-9]*\)/\1 \2 \3/' <<<"$end")
    [ "$e_fds" -eq "$s_fds" ] || { echo "# rank $r: descriptors $s_fds -> $e_fds"; bad=1; }
    [ "$e_maps" -eq "$s_maps" ] || { echo "# rank $r: mappings $s_maps -> $e_maps"; bad=1; }
    [ $((e_rss - s_rss)) -le "$rss_slack" ] ||
      { echo "# rank $r: resident memory grew by $((e_rss - s_rss)) KiB"; bad=1; }
  done
  return $bad
}

if [ ! -x "$bin" ]; then
  skip "soak" "$bin was not built"
  tap_done
fi

run_job $((seconds + 90)) "${mpirun[@]}" -np 4 "${via_path[@]}" \
  -x TORUSMPI_INSTANCE=torus:2x2:cores=1 "$bin" "$seconds" device
diag "shm + device soak, $seconds s: $(grep -m1 '^iterations 0 ' "$job_out" | cut -d' ' -f3) operations per rank"
check "soak on one instance, device buffers: every result right" ranks_done 4 || diag_job
check "... descriptors, mappings and resident memory flat" flat 4

half=$((seconds / 2))
run_job $((half + 90)) "${mpirun[@]}" -np 4 "${via_path[@]}" -x FI_PROVIDER=tcp \
  -x FI_TCP_IFACE=lo -x TORUSMPI_INSTANCE=torus:2x1:cores=1 -x TORUSMPI_INSTANCES=2 \
  "$bin" "$half"
diag "network soak, $half s: $(grep -m1 '^iterations 0 ' "$job_out" | cut -d' ' -f3) operations per rank"
check "soak across two instances (network): every result right" ranks_done 4 || diag_job
check "... descriptors, mappings and resident memory flat" flat 4

check_shm
tap_done
