#!/usr/bin/env bash
# The whole test suite on a fresh machine (called by `make test`, after `make install`):
# start the real servers the tests need, check lint and types, run pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
INFRA_DIR="${ACM_INFRA_DIR:-/var/tmp/acm-infra}"

docker_answers() { command -v docker >/dev/null && timeout 5 docker info >/dev/null 2>&1; }

if docker_answers; then
  echo "[test] a Docker engine answers: the fixtures will use testcontainers"
else
  echo "[test] no Docker engine: starting Kafka, Neo4j, Postgres and Redis as local processes"
  bash scripts/infra/up.sh
  set -a
  # shellcheck disable=SC1091
  source "$INFRA_DIR/env"
  set +a
fi

echo "[test] ruff"
$BIN/ruff check libs services benchmarks tests scripts clients/python integrations examples
echo "[test] mypy"
$BIN/mypy
$BIN/mypy tests
echo "[test] TypeScript SDK (clients/typescript): npm ci, build, node --test against its own acm serve"
if command -v node >/dev/null && command -v npm >/dev/null; then
  (
    cd clients/typescript
    # npm ci only when the lock file changed since the last install (it deletes and refetches node_modules).
    if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
      npm ci --no-audit --no-fund --loglevel=error
    fi
    npm run --silent build
    ACM_BIN="$PWD/../../$BIN/acm" node --test dist/test/
  )
else
  echo "[test] SKIPPED the TypeScript SDK's tests: node and npm are not on PATH (install Node.js >= 18 to run them)"
fi
echo "[test] chromium: tests/integration/test_console.py drives Debian's chromium headless (no browser download)"
if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "[test] chromium is not installed and this is not root: apt-get install chromium, or the console test fails"
  fi
fi
# On every core (pytest-xdist; ACM_TEST_WORKERS=0 runs serially): most tests wait on a server or a subprocess.
# tests/conftest.py keeps a file with a module-scoped server on one worker. The 25 slowest are printed.
echo "[test] pytest"
$BIN/pytest -p no:cacheprovider -ra -n "${ACM_TEST_WORKERS:-auto}" --durations=25 "$@"
