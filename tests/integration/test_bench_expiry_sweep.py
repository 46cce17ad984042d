"""scripts/bench/expiry_sweep.py with tiny numbers on both backends: the sweep's reads agree with the plain
queries (the script exits non-zero otherwise), the JSON has the promised shape, the Postgres schema is dropped.
The script runs in a database of the test's own: the check that no bench_expiry_ schema is left looks at every
schema of the database, and another run of the script (another worker, a benchmark) could be halfway through."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from acm_benchmarks.fleet_stack import create_database, drop_database

pytestmark = [pytest.mark.infra]

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench" / "expiry_sweep.py"


@pytest.fixture
def database(postgres_dsn: str) -> Iterator[str]:
    url = create_database(postgres_dsn)
    yield url
    drop_database(url)


def test_bench_expiry_sweep_quick(tmp_path: Path, database: str) -> None:
    out = tmp_path / "expiry_sweep.json"
    args = ["--quick", "--out", str(out), "--tmp-dir", str(tmp_path), "--postgres-dsn", database]
    proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "sqlite" in proc.stdout and "postgres" in proc.stdout and "seeded" in proc.stderr
    result = json.loads(out.read_text())
    assert result["benchmark"] == "expiry_sweep" and result["data"]["memories"] == 2000
    assert set(result["backends"]) == {"sqlite", "postgres"}
    for backend, reads in result["backends"].items():
        assert set(reads) == {"clients", "agents", "due"}, backend
        assert reads["clients"]["rows"] == 4 and reads["agents"]["rows"] == 3, backend
        assert reads["due"]["rows"] > 0, backend  # 1% of 2000 memories are past their TTL
        for read in reads.values():
            assert read["ours_ms"] > 0 and read["baseline_ms"] > 0 and read["speedup"] is not None
    with psycopg.connect(database) as conn:
        left = conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'bench_expiry_%'").fetchone()
    assert left == (0,)
