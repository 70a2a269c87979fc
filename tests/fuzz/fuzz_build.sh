#!/usr/bin/env bash
# fuzz_build: the builds of tests/fuzz/fuzz.sh (one libFuzzer binary a target) and nothing else,
# at idle priority: make check runs it beside the integration chain (tests/Makefile.am), on the
# cycles the tests leave idle, so that fuzz.sh finds its targets built and only replays their
# stored inputs and fuzzes. By hand, fuzz.sh alone builds what is missing.
# shellcheck disable=SC2034 # read by fuzz.sh
fuzz_build_only=yes
# shellcheck source=fuzz.sh
. "$(dirname "$0")/fuzz.sh"
