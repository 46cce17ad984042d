#!/usr/bin/env bash
# Stop the test servers started by up.sh (SIGTERM, then SIGKILL after a grace period). Idempotent.
# Usage: scripts/infra/down.sh [kafka|neo4j|postgres|redis ...]   (default: all four)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
load_servers
parse_servers "$@"
take_lock

for s in "${SERVERS[@]}"; do "${s}_stop"; done
