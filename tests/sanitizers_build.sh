#!/usr/bin/env bash
# sanitizers_build: the builds of tests/sanitizers.sh (its sanitize/ and sanitize-thread/ trees)
# and nothing else, at idle priority: make check starts it with the first test and runs it beside
# the whole chain (tests/Makefile.am), where it takes only the cycles the tests leave idle, so
# that sanitizers.sh, last, finds both trees built and only runs its jobs. The checks are the
# builds' own; by hand, sanitizers.sh alone builds what is missing at normal priority.
# shellcheck disable=SC2034 # read by sanitizers.sh
sanitizers_build_only=yes
# shellcheck source=sanitizers.sh
. "$(dirname "$0")/sanitizers.sh"
