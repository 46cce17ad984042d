"""Prometheus /metrics from running processes (ACM_METRICS_PORT), read as Prometheus reads it.

- A distributed consumer (acm-compact on the real Kafka and Postgres, a namespace and database of its own) sent
  a record it cannot decode: its consumer lag, the handler latency with outcome dead_letter and the dead-letter
  count are on /metrics; it stops cleanly on SIGTERM.
- Embedded ACM (`acm serve`): a turn ingested and fetched puts the job transitions (ingest, pending and done),
  the handler latency (ok) and the Fetch latency (by outcome) on /metrics.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import psycopg
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from acm import topics
from acm.adapters.kafka_bus import KafkaBus
from tests.support.ports import unused_ports

Samples = list[tuple[str, dict[str, str], float]]


def _scrape(port: int) -> Samples:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    families = text_string_to_metric_families(text)
    return [(s.name, dict(s.labels), s.value) for family in families for s in family.samples]


def _has(samples: Samples, name: str, **labels: str) -> bool:
    return any(n == name and labels.items() <= found.items() and value > 0 for n, found, value in samples)


class Running:
    """A service process writing to ``log``."""

    def __init__(self, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.proc, self.log = proc, log

    def until(self, check: Callable[[], bool], what: str, within_s: float = 60) -> None:
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the process exited: {self.log.read_text()[-3000:]}"
            try:
                if check():
                    return
            except OSError:
                pass  # not listening yet
            time.sleep(0.5)
        pytest.fail(f"{what} not seen in {within_s}s; log: {self.log.read_text()[-3000:]}")


@contextlib.contextmanager
def _running(command: list[str], env: dict[str, str], log: Path) -> Iterator[Running]:
    """The process, stopped with SIGTERM at the end: it must exit cleanly (0)."""
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=out)
    try:
        yield Running(proc, log)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    assert code == 0, log.read_text()[-3000:]


def _serving(port: int) -> bool:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=1)
        except grpc.RpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def _clean_env(**extra: str) -> dict[str, str]:
    """This process' environment without ACM_ / OTEL_ settings, plus ``extra``."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("ACM_", "OTEL_"))} | extra


async def _publish(bootstrap: str, namespace: str, topic: str, value: bytes) -> None:
    publisher = KafkaBus(bootstrap, client_id="metrics-test", namespace=namespace)
    try:
        await publisher.publish(topic, "s1", value)
    finally:
        await publisher.stop()


@pytest.fixture
def database(postgres_dsn: str) -> Iterator[str]:
    name = f"acm_metrics_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"{postgres_dsn.rpartition('/')[0]}/{name}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.infra
def test_a_kafka_consumer_serves_lag_handler_latency_and_dead_letters(
    database: str, kafka_bootstrap: str, tmp_path: Path
) -> None:
    namespace = f"metrics-{uuid.uuid4().hex[:8]}."
    health_port, metrics_port = unused_ports(2)
    env = _clean_env(
        ACM_DATABASE_URL=database,
        ACM_BUS_URL=f"kafka://{kafka_bootstrap}?namespace={namespace}",
        ACM_CACHE_URL="memory://",
        ACM_LISTEN_ADDR=f"127.0.0.1:{health_port}",  # its Compact API, health beside it
        ACM_SERVICE_TOKEN_SECRET=f"metrics-{uuid.uuid4().hex}",
        ACM_METRICS_PORT=str(metrics_port),
        # compact reads a session's turns from retrieve when it compacts; this test never compacts
        ACM_RETRIEVE_ADDR="127.0.0.1:9",
    )
    with _running([sys.executable, "-m", "acm_compact"], env, tmp_path / "compact.log") as compact:
        compact.until(lambda: _serving(health_port), "health SERVING", within_s=120)
        asyncio.run(_publish(kafka_bootstrap, namespace, topics.COMPACTION_REQUESTS, b"not an envelope"))
        topic = namespace + topics.COMPACTION_REQUESTS
        labels = {"topic": topic, "group": "compact"}
        compact.until(
            lambda: (
                _has(samples := _scrape(metrics_port), "acm_bus_dead_letters_total", **labels)
                and _has(samples, "acm_bus_handler_duration_milliseconds_count", **labels, outcome="dead_letter")
            ),
            "handler latency and dead letters",
        )
        # The lag gauge: one series per partition the group owns (0 once the record is committed).
        compact.until(
            lambda: any(
                n == "acm_consumer_lag" and labels.items() <= found.items() for n, found, _ in _scrape(metrics_port)
            ),
            "consumer lag",
        )


def test_embedded_acm_serves_job_states_handler_and_fetch_latency(tmp_path: Path) -> None:
    grpc_port, metrics_port = unused_ports(2)
    data, addr = tmp_path / "acm", f"127.0.0.1:{grpc_port}"
    # No HTTP API: by default `acm serve` takes 127.0.0.1:8080 when free, and another worker's `acm serve`
    # starting at the same time saw it free too (one of them exits).
    env = _clean_env(ACM_METRICS_PORT=str(metrics_port), ACM_EMBEDDER="wordllama", ACM_HTTP_ADDR="")
    acm = [sys.executable, "-m", "acm_cli"]
    with _running([*acm, "serve", "--data-dir", str(data), "--listen", addr], env, tmp_path / "serve.log") as serve:
        serve.until(lambda: _serving(grpc_port), "health SERVING", within_s=120)
        where = ["--addr", addr, "--data-dir", str(data), "-c", "acme", "-u", "alice"]
        for command in (
            ["ingest", *where, "-s", "s1", "I moved to Lisbon in May", "--wait"],
            ["fetch", *where, "where do I live?"],
        ):
            done = subprocess.run([*acm, *command], env=env, capture_output=True, timeout=120, check=False)
            assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
        serve.until(
            lambda: (
                _has(samples := _scrape(metrics_port), "acm_jobs_transitions_total", kind="ingest", state="pending")
                and _has(samples, "acm_jobs_transitions_total", kind="ingest", state="done")
                and _has(samples, "acm_bus_handler_duration_milliseconds_count", group="ingest", outcome="ok")
                and _has(samples, "acm_fetch_duration_milliseconds_count", outcome="full")
            ),
            "job transitions, handler and Fetch latency",
        )
