"""`acm bench scale` end to end at tiny sizes, both modes (distributed on the real servers): the JSON has the
promised keys with a number per size (Fetch, each store alone, ingest, the HNSW re-measure), the plot is
written, and the distributed run leaves its database dropped and its client's Neo4j nodes erased."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import neo4j
import psycopg
import pytest

pytestmark = [pytest.mark.infra, pytest.mark.e2e]

SIZES = ("150", "400")


def _databases() -> set[str]:
    with psycopg.connect(os.environ["ACM_TEST_POSTGRES_DSN"]) as conn:
        return {r[0] for r in conn.execute("SELECT datname FROM pg_database")}


def _scale_nodes(client_ids: list[str]) -> int:
    with neo4j.GraphDatabase.driver(os.environ["ACM_TEST_NEO4J_URI"]) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (n) WHERE n.client_id IN $ids RETURN count(n) AS n", {"ids": client_ids}
        )
    return int(records[0]["n"])


def test_scale_writes_the_curve_for_both_modes(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    acm = str(Path(sys.executable).parent / "acm")
    proc = subprocess.run(
        [
            acm,
            "bench",
            "scale",
            "--sizes",
            ",".join(SIZES),
            "--queries",
            "6",
            "--ingest-turns",
            "2",
            "--optimize-vectors",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "loaded" in proc.stdout  # progress lines while loading
    result = json.loads(out.read_text())
    assert set(result) == {"distributed", "embedded"}
    for mode, r in result.items():
        assert r["mode"] == mode
        assert "qdrant-edge" in r["stores"]
        for key in ("fetch_p50_ms", "fetch_p95_ms", "ingest_ms_per_turn"):
            assert set(r[key]) == set(SIZES), (mode, key)
            assert all(isinstance(v, float) and v > 0 for v in r[key].values()), (mode, key, r[key])
        assert all(r["fetch_p50_ms"][s] <= r["fetch_p95_ms"][s] for s in SIZES)
        assert isinstance(r["target"]["met"], bool)
        for size in SIZES:  # each store alone, the same queries
            assert set(r["channels_ms"][size]) == {"keyword", "vector", "graph"}
            assert all(c["p95"] > 0 for c in r["channels_ms"][size].values())
        assert r["vectors_optimized"]["size"] == int(SIZES[-1]) and r["vectors_optimized"]["p95"] > 0
    assert out.with_suffix(".png").stat().st_size > 0
    assert result["distributed"]["database"] not in _databases()  # the run's database was dropped
    assert _scale_nodes([r["client_id"] for r in result.values()]) == 0
