#!/usr/bin/env bash
# One line per server: up / starting / down. Exit status 0 only if all the named servers are up.
# Usage: scripts/infra/status.sh [kafka|neo4j|postgres|redis ...]   (default: all four)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
load_servers
parse_servers "$@"

rc=0
for s in "${SERVERS[@]}"; do
    addr=$("${s}_env" | cut -d= -f2-)
    if "${s}_healthy"; then
        printf '%-9s up        %s\n' "$s" "$addr"
    elif "${s}_running"; then
        printf '%-9s starting  %s\n' "$s" "$addr"
        rc=1
    else
        printf '%-9s down\n' "$s"
        rc=1
    fi
done
exit $rc
