#!/usr/bin/env bash
# Two commits' LoCoMo benchmarks side by side, at the same time, so that both see the same machine load:
# recall and coverage do not depend on load, latencies only compare within one run of this script.
#
#   scripts/bench/side_by_side.sh <rev-a> <rev-b> [out-dir] [data]
#
# Each revision is checked out as a detached worktree in out-dir and runs `acm bench locomo`, `coverage` and
# `prefetch` from its own sources (PYTHONPATH before the editable install) with this checkout's .venv.
# Results: out-dir/<rev>/{locomo,coverage,prefetch}.json and .log. Takes 15-40 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
PY=$REPO/.venv/bin/python
[ $# -ge 2 ] || { echo "usage: $0 <rev-a> <rev-b> [out-dir] [locomo.json]" >&2; exit 2; }
OUT=${3:-/tmp/acm-side-by-side}
DATA=${4:-$REPO/../shared/data/locomo-dev.json}
[ -f "$DATA" ] || { echo "no LoCoMo file at $DATA (give it as the 4th argument)" >&2; exit 2; }
DATA=$(realpath "$DATA")
mkdir -p "$OUT"

run_rev() {
  local rev=$1 tree=$OUT/tree-$1 res=$OUT/$1
  git -C "$REPO" worktree add -f --detach "$tree" "$rev" >/dev/null
  mkdir -p "$res"
  (
    cd "$tree"
    export PYTHONPATH=$tree/libs:$tree/services:$tree/benchmarks
    for bench in locomo coverage prefetch; do
      echo "[$rev] $bench"
      "$PY" -m acm_cli bench "$bench" --data "$DATA" --json "$res/$bench.json" > "$res/$bench.log" 2>&1 \
        || echo "[$rev] $bench failed: see $res/$bench.log"
    done
  )
  git -C "$REPO" worktree remove --force "$tree"
}

run_rev "$1" &
run_rev "$2" &
wait
"$PY" - "$OUT" "$1" "$2" <<'EOF'
import json, sys
from pathlib import Path

out, revs = Path(sys.argv[1]), sys.argv[2:]


def read(rev: str, name: str) -> dict:
    path = out / rev / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


print(f"{'':34}" + "".join(f"{r:>14}" for r in revs))
rows = {
    "recall@1000 all": lambda r: read(r, "locomo")["systems"]["acm"]["all"]["recall_1000"],
    "recall@1000 multi-hop": lambda r: read(r, "locomo")["systems"]["acm"]["1"]["recall_1000"],
    "recall@1000 temporal": lambda r: read(r, "locomo")["systems"]["acm"]["2"]["recall_1000"],
    "Fetch p50 ms": lambda r: read(r, "locomo")["systems"]["acm"]["all"]["fetch_p50_ms"],
    "Fetch p95 ms": lambda r: read(r, "locomo")["systems"]["acm"]["all"]["fetch_p95_ms"],
    "ingest ms a turn": lambda r: read(r, "locomo")["run"]["ingest_ms_per_turn"],
    "coverage %": lambda r: read(r, "coverage")["systems"]["acm"]["coverage_pct"],
}
for name, get in rows.items():
    cells = []
    for rev in revs:
        try:
            cells.append(f"{get(rev):>14}")
        except (KeyError, TypeError):
            cells.append(f"{'-':>14}")
    print(f"{name:34}" + "".join(cells))
EOF
