#!/usr/bin/env bash
# fuzz-build: fuzz.sh's targets built ahead of it, at idle CPU priority, beside the integration
# chain (tests/Makefile.am); fuzz.sh then finds them newer than their sources and only runs them.
TM_FUZZ_BUILD_ONLY=1
export TM_FUZZ_BUILD_ONLY
exec bash "$(dirname "$0")/fuzz.sh" "$@"
