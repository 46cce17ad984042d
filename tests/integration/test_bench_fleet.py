"""`acm bench fleet --mode embedded` end to end for a few seconds (ACM in a process of its own, four agents),
and the embedded log's backlog as the benchmark reads it from the bus file, beside a live EmbeddedBus."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from acm import topics
from acm.adapters.embedded_bus import EmbeddedBus
from acm.ports.bus import Record
from acm_benchmarks.fleet_stack import EmbeddedLag
from acm_benchmarks.fleet_stats import SHAPE_KEYS


def test_bench_fleet_embedded_runs_and_writes_the_issues_shape(tmp_path: Path) -> None:
    out = tmp_path / "results" / "fleet-embedded.json"
    acm = str(Path(sys.executable).parent / "acm")
    args = ["--mode", "embedded", "--agents", "4", "--duration", "10", "--rate", "4", "--drain", "60"]
    # Its `acm serve` without the HTTP API: by default it takes 127.0.0.1:8080 when free, and another worker's
    # `acm serve` starting at the same time saw it free too (one of them exits).
    proc = subprocess.run(
        [acm, "bench", "fleet", *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=400,
        env={**os.environ, "ACM_HTTP_ADDR": ""},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "accepted" in proc.stdout and "load over" in proc.stdout  # progress while it ran

    result = json.loads(out.read_text())
    assert tuple(result)[: len(SHAPE_KEYS)] == SHAPE_KEYS
    assert (result["mode"], result["agents"], result["duration_s"], result["replicas"]) == ("embedded", 4, 10.0, 1)
    assert result["errors"] == 0, result["errors_by_code"]
    assert 0 < result["processed"] <= result["accepted"] <= 40
    assert result["ingest_turns_per_s"] > 0
    assert result["fetch_ms"]["p99"] >= result["fetch_ms"]["p50"] > 0
    assert result["freshness_probes"]["found"] > 0 and result["freshness_ms"]["p50"] > 0
    assert result["max_lag"] is not None and result["max_lag"] >= 0
    assert {"embedded", "load generator"} <= set(result["services"])
    assert result["services"]["embedded"]["rss_mb_max"] > 50
    assert len(result["timeline"]) >= 10 and sum(r["accepted"] for r in result["timeline"]) == result["accepted"]
    assert (out.parent / "fleet-embedded.png").stat().st_size > 0


async def test_embedded_lag_counts_what_a_group_has_not_committed(tmp_path: Path) -> None:
    path = tmp_path / "bus.db"
    bus = EmbeddedBus(path, poll_interval_s=0.05)
    first_done, release = asyncio.Event(), asyncio.Event()

    async def handler(record: Record) -> None:
        if first_done.is_set():
            await release.wait()  # the second record stays in progress: not committed
        first_done.set()

    async def stuck(record: Record) -> None:
        await release.wait()  # its first record in progress: the group has committed nothing yet

    bus.subscribe(topics.TURNS, "ingest", handler)
    bus.subscribe(topics.TURNS, "architect", stuck)
    await bus.start()
    reader = EmbeddedLag(path)
    try:
        for i in range(3):
            await bus.publish(topics.TURNS, "k", f"v{i}".encode())
        await asyncio.wait_for(first_done.wait(), 10)
        for _ in range(100):  # the first commit lands right after its handler returns
            if (await reader.lag())["ingest"] == 2:
                break
            await asyncio.sleep(0.02)
        # architect has committed nothing: all three are its backlog; the memories topic has none.
        assert await reader.lag() == {"ingest": 2, "architect": 3, "retrieve": 0, "anticipate": 0}
        release.set()
        for _ in range(200):
            if await reader.lag() == {"ingest": 0, "architect": 0, "retrieve": 0, "anticipate": 0}:
                break
            await asyncio.sleep(0.02)
        assert await reader.lag() == {"ingest": 0, "architect": 0, "retrieve": 0, "anticipate": 0}
    finally:
        release.set()
        await reader.close()
        await bus.stop()
