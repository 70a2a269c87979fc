#!/usr/bin/env bash
# sanitizers-build: the two sanitized build trees of sanitizers.sh, built ahead of it at idle CPU
# priority beside the integration chain (see sanitizers.sh, which runs their tests afterwards).
SANITIZERS_BUILD_ONLY=1
# shellcheck source=sanitizers.sh
. "$(dirname "$0")/sanitizers.sh"
