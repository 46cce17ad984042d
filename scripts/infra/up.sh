#!/usr/bin/env bash
# Install (if missing), start on 127.0.0.1 and wait for the servers the test suite needs.
# Usage: scripts/infra/up.sh [kafka|neo4j|postgres|redis ...]   (default: all four)
# Idempotent: a server that is already up and healthy is left alone. Writes $ACM_INFRA_DIR/env.
# Env: ACM_INFRA_DIR (default /var/tmp/acm-infra), ACM_INFRA_TIMEOUT (seconds per server, default 180),
#      ACM_INFRA_<SERVER>_PORT to move a server off its standard port (see lib/common.sh).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
load_servers
parse_servers "$@"
take_lock

for s in "${SERVERS[@]}"; do "${s}_install"; done

# Launch everything first and wait afterwards, so the two JVMs start in parallel.
declare -A started_at
for s in "${SERVERS[@]}"; do
    if "${s}_healthy"; then
        log "$s: already up"
        continue
    fi
    started_at[$s]=$EPOCHREALTIME
    if "${s}_running"; then
        log "$s: process is running but not ready yet, waiting for it"
    else
        "${s}_start"
    fi
done
for s in "${READY_ORDER[@]}"; do
    [ -n "${started_at[$s]:-}" ] || continue
    "${s}_wait"
    log "$s: ready ($(elapsed "${started_at[$s]}"))"
done

for s in "${ENV_ORDER[@]}"; do "${s}_env"; done >"$INFRA_DIR/env"
log "environment for the tests (also in $INFRA_DIR/env):"
cat "$INFRA_DIR/env"
