"""scripts/bench/ingest_kafka.py with tiny numbers against the real servers: both configurations (one and two
ingest replicas) start their own processes, every turn completes, the JSON has the promised shape, the two
replicas share the turns, and nothing is left behind (databases dropped, topics deleted, scratch folders
removed)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import neo4j
import psycopg
import pytest
import redis
from aiokafka.admin import AIOKafkaAdminClient

pytestmark = [pytest.mark.infra, pytest.mark.e2e]

BENCH_DIR = Path(__file__).resolve().parents[2] / "scripts" / "bench"
TURNS, SAMPLES = 40, 10


def _load_bench() -> ModuleType:
    if str(BENCH_DIR) not in sys.path:
        sys.path.insert(0, str(BENCH_DIR))  # the script imports its sibling _stack
    spec = importlib.util.spec_from_file_location("bench_ingest_kafka", BENCH_DIR / "ingest_kafka.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


async def _topics(bootstrap: str) -> set[str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return set(await admin.list_topics())
    finally:
        await admin.close()


def test_ingest_kafka_bench_small_run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_bootstrap: str,
    postgres_dsn: str,
    neo4j_uri: str,
    redis_url: str,
) -> None:
    for var, value in (
        ("ACM_TEST_KAFKA_BOOTSTRAP", kafka_bootstrap),
        ("ACM_TEST_POSTGRES_DSN", postgres_dsn),
        ("ACM_TEST_NEO4J_URI", neo4j_uri),
        ("ACM_TEST_REDIS_URL", redis_url),
    ):
        monkeypatch.setenv(var, value)
    bench = _load_bench()
    out = tmp_path / "ingest_kafka.json"
    argv = [
        *("--turns", str(TURNS), "--replicas", "1,2", "--fresh-samples", str(SAMPLES), "--fresh-every", "1"),
        *("--fresh-rate", "4", "--max-seconds", "150", "--out", str(out)),
    ]
    # Its own thread: asyncio.run() there leaves this thread's event loop (pytest-asyncio's) alone.
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(bench.main, argv).result(timeout=200) == 0

    report = json.loads(out.read_text())
    assert set(report) == {"configs", "run"}
    assert set(report["configs"]) == {"replicas_1", "replicas_2"}
    for name, config in report["configs"].items():
        replicas = int(name.split("_")[1])
        assert config["replicas"] == replicas
        burst = config["throughput"]
        assert burst["turns"] == burst["accepted"] == burst["completed"] == TURNS, (name, burst)
        assert burst["failed"] == burst["timed_out"] == 0 and not burst["submit_errors"], (name, burst)
        assert burst["throughput_turns_per_s"] > 0 and burst["drain_s"] > 0
        assert len(burst["done_at_s"]) == TURNS
        assert burst["pipeline_drain_s"] is not None and burst["pipeline_drain_s"] >= burst["drain_s"] - 1
        assert set(burst["per_replica_turns"]) == {f"ingest-{i + 1}" for i in range(replicas)}
        assert sum(burst["per_replica_turns"].values()) >= TURNS  # at least once each (a redelivery may add)
        to_done = burst["accept_to_done_ms"]
        assert 0 < to_done["p50"] <= to_done["p95"] <= to_done["max"], (name, to_done)
        assert burst["cpu_s"]["machine_busy"] > 0 and burst["cpu_s"][f"ingest-{replicas}"] > 0

        fresh = config["freshness"]
        assert fresh["turns"] == fresh["accepted"] == fresh["completed"] == SAMPLES, (name, fresh)
        assert fresh["samples"] == SAMPLES and fresh["found"] + fresh["misses"] == SAMPLES
        assert fresh["found"] == SAMPLES, (name, fresh)  # a quiet 4 turns/s: nothing takes 30 s
        latency = fresh["freshness_ms"]
        assert 0 < latency["p50"] <= latency["p95"] <= latency["max"], (name, latency)
        assert len(fresh["freshness_s"]) == fresh["found"]
        assert fresh["rate_per_s"] == 4
    # Two replicas in one consumer group, two partitions: both handled turns.
    assert all(n > 0 for n in report["configs"]["replicas_2"]["throughput"]["per_replica_turns"].values())

    run = report["run"]
    assert run["turns"] == TURNS and run["freshness_turns"] == SAMPLES
    assert run["workload_check"]["no_fact"] == run["workload_check"]["dropped"] == 0
    assert run["throughput_ratio"] > 0 and run["machine"]["cores"] >= 1 and run["duration_s"] > 0
    if importlib.util.find_spec("matplotlib") is not None:
        assert out.with_suffix(".png").stat().st_size > 0

    # Nothing left behind: each configuration's database, scratch folder, graph, cache keys and topics are gone.
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        databases = {row[0] for row in conn.execute("SELECT datname FROM pg_database").fetchall()}
    for config in report["configs"].values():
        assert config["database"] not in databases
        tag = config["database"].removeprefix("acm_bench_")
        assert not (Path(tempfile.gettempdir()) / f"acm-bench-r{config['replicas']}-{tag}").exists()
    clients = [c["client_id"] for c in report["configs"].values()]
    with neo4j.GraphDatabase.driver(neo4j_uri) as driver:
        nodes = driver.execute_query("MATCH (n) WHERE n.client_id IN $c RETURN count(n) AS n", c=clients)
        assert nodes.records[0]["n"] == 0
    with redis.Redis.from_url(redis_url) as cache:
        assert not [k for c in clients for k in cache.scan_iter(match=f"acm:{c}:*")]
    with ThreadPoolExecutor(1) as pool:
        for _ in range(20):  # topic deletion completes asynchronously on the broker
            left = [
                t
                for t in pool.submit(asyncio.run, _topics(kafka_bootstrap)).result(timeout=30)
                if any(t.startswith(c["namespace"]) for c in report["configs"].values())
            ]
            if not left:
                break
            time.sleep(0.5)
    assert not left, left
