#!/usr/bin/env bash
# fuzz: libFuzzer targets for every parser of data that crosses a process boundary or comes from
# the user (tests/fuzz/README.md lists them). Each target is built with clang
# (-fsanitize=fuzzer,address,undefined) from the sources it covers, replays its stored inputs
# (corpus/<target>/: valid seeds; regressions/<target>/: inputs that once found a bug), then runs
# for a bounded time. One TAP test per target; a crash, a sanitizer report, a leak or a timeout
# fails it and leaves the input under the build directory (printed).
#
#   TM_FUZZ_SECONDS  seconds of fuzzing per target (default 10; 0: replay the stored inputs only)
#   TM_FUZZ_JOBS     targets built and run at once (default: the number of cores, at most 2)
#   TM_FUZZ_DIR      where binaries, working corpora and crashes go (default: ./fuzz-out)
# Needs no build of torusmpi and no network or PMIx; without clang's libFuzzer it skips.
# Under make check the targets are built before, by fuzz/fuzz_build.sh: it sources this script
# with fuzz_build_only=yes, which builds them at idle priority beside the integration tests (as
# tests/sanitizers_build.sh does the sanitizers' trees) and stops there, one TAP line a target;
# this script then finds them built, and only replays and fuzzes.
set -u
export LC_ALL=C
build_only=${fuzz_build_only:-no}
if [ "$build_only" = yes ]; then
  # This shell and everything it starts run only on cycles nobody else wants.
  chrt --idle -p 0 $$ >/dev/null 2>&1 || renice -n 19 -p $$ >/dev/null 2>&1
  ionice -c 3 -p $$ >/dev/null 2>&1
fi

tests_dir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top=$(cd "$tests_dir/.." && pwd) || exit 1
fuzz_src=$top/tests/fuzz
if [ ! -f "$top/pml/transport.h" ] || [ ! -d "$fuzz_src" ]; then
  echo "Bail out! $top is not torusmpi's source tree (set srcdir to its tests/ directory)"
  exit 1
fi
seconds=${TM_FUZZ_SECONDS:-10}
cores=$(nproc 2>/dev/null || echo 1)
jobs=${TM_FUZZ_JOBS:-$((cores < 2 ? cores : 2))}
work=${TM_FUZZ_DIR:-$PWD/fuzz-out}
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)

# The targets and the sources each is built from (besides tests/fuzz/<target>_fuzz.cc).
targets=(json params machine rules shm_ring wire net_card)
declare -A sources=(
  [json]="src/core/json.cc"
  [params]="src/core/params.cc"
  [machine]="src/topo/machine.cc src/core/params.cc"
  [rules]="coll/select/select.cc src/core/json.cc src/core/params.cc tests/fuzz/registry_stub.cc"
  [shm_ring]=""
  [wire]=""
  [net_card]="pml/net.cc src/core/params.cc src/core/log.cc src/topo/machine.cc tests/fuzz/net_stubs.cc"
)

cxx=""
for c in "${TM_CLANGXX:-}" clang++ clang++-14; do
  [ -n "$c" ] && command -v "$c" >/dev/null && { cxx=$c; break; }
done
if [ -z "$cxx" ]; then
  echo "1..0 # SKIP clang++ is not installed (scripts/install-deps installs it)"
  exit 0
fi
flags=(-std=c++17 -g -O1 -fno-omit-frame-pointer -pthread
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -I"$top" -I"$top/src" -I"$work")
# Configure's config.h is not needed: the network transports are out of these targets.
[ -f "$work/config.h" ] || echo "/* fuzz targets: no network transport compiled in */" \
  >"$work/config.h"
probe=$work/probe
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
  "$cxx" "${flags[@]}" -x c++ - -o "$probe" 2>"$probe.log"; then
  echo "1..0 # SKIP $cxx cannot build libFuzzer targets: $(head -n 1 "$probe.log")"
  exit 0
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Builds the target unless its binary is newer than every source it could include; then replays
# the stored inputs and fuzzes. Writes "ok <what>" or "fail <what>" to $work/<target>.result.
run_target() {
  local t=$1 bin=$work/$1_fuzz log=$work/$1.log
  local srcs=("$fuzz_src/${t}_fuzz.cc")
  local s
  for s in ${sources[$t]}; do srcs+=("$top/$s"); done
  : >"$log"
  if [ ! -x "$bin" ] || [ -n "$(find "$top/src" "$top/pml" "$top/coll" "$fuzz_src" \
    -newer "$bin" \( -name '*.cc' -o -name '*.h' -o -name '*.def' \) -print -quit)" ]; then
    if ! "$cxx" "${flags[@]}" "${srcs[@]}" -o "$bin" >>"$log" 2>&1; then
      echo "fail build failed" >"$work/$t.result"
      return
    fi
  fi
  if [ "$build_only" = yes ]; then
    echo "ok built: $bin" >"$work/$t.result"
    return
  fi
  local stored=() d
  for d in "$fuzz_src/corpus/$t" "$fuzz_src/regressions/$t"; do
    [ -d "$d" ] && stored+=("$d")
  done
  local files=()
  [ "${#stored[@]}" -gt 0 ] && mapfile -t files < <(find "${stored[@]}" -type f | sort)
  # Replay: each stored input once (file arguments run each and stop).
  if [ "${#files[@]}" -gt 0 ] && ! "$bin" "${files[@]}" >>"$log" 2>&1; then
    echo "fail a stored input fails (see below)" >"$work/$t.result"
    return
  fi
  local n_stored=${#files[@]}
  local runs=0
  if [ "$seconds" -gt 0 ]; then
    mkdir -p "$work/corpus/$t" "$work/crashes"
    local dict=()
    [ -f "$fuzz_src/$t.dict" ] && dict=(-dict="$fuzz_src/$t.dict")
    if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
      -print_final_stats=1 -artifact_prefix="$work/crashes/$t-" "${dict[@]}" \
      "$work/corpus/$t" "${stored[@]}" >>"$log" 2>&1; then
      echo "fail fuzzing found an input that fails: $(ls -t "$work/crashes/$t-"* 2>/dev/null |
        head -n 1)" >"$work/$t.result"
      return
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  fi
  echo "ok $n_stored stored inputs replayed, ${runs:-0} runs in ${seconds} s" >"$work/$t.result"
}

start=$SECONDS
running=0
for t in "${targets[@]}"; do
  rm -f "$work/$t.result"
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

echo "1..${#targets[@]}"
n=0 failed=0
for t in "${targets[@]}"; do
  n=$((n + 1))
  result=$(cat "$work/$t.result" 2>/dev/null || echo "fail no result")
  if [ "${result%% *}" = ok ]; then
    echo "ok $n - $t: ${result#ok }"
  else
    failed=$((failed + 1))
    echo "not ok $n - $t: ${result#fail }"
    grep -v '^#\|^INFO\|^\s*$' "$work/$t.log" | grep -m 1 -A 24 'ERROR\|error\|SUMMARY\|abort' |
      sed 's/^/# /'
  fi
done
echo "# fuzz lane: $((SECONDS - start)) s (binaries and crashes in $work)"
[ "$failed" -eq 0 ]
