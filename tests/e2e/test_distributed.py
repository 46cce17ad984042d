"""End-to-end in distributed mode: each service its own OS process, turns through real Kafka, ingest
writing to Postgres and Neo4j, retrieve indexing vectors through the Qdrant adapter (local mode, as no
Qdrant server runs here), and Fetch over gRPC returning them in scope and nothing out of scope."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import psycopg
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from acm.adapters.neo4j_graph import Neo4jGraphStore
from acm.adapters.qdrant_store import QdrantVectorStore
from acm.auth import create_api_key
from acm.bootstrap import open_relational
from acm.domain.scope import Scope
from tests.e2e.scenario import check_bad_requests, run_scenario

pytestmark = [pytest.mark.infra, pytest.mark.e2e]

SERVICES = ("gateway", "retrieve", "ingest", "architect", "anticipate", "compact")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Stack:
    addr: str
    dsn: str
    neo4j_uri: str
    vector_path: Path
    logs: Path
    procs: dict[str, subprocess.Popen[bytes]]
    client_ids: tuple[str, str]


@pytest.fixture(scope="module")
def database(postgres_dsn: str) -> Iterator[str]:
    """A database of its own, so the run starts empty and leaves nothing behind."""
    name = f"acm_e2e_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = postgres_dsn.rpartition("/")
    yield f"{base}/{name}"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def _serving(addr: str) -> bool:
    async with grpc.aio.insecure_channel(addr) as channel:
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=1)
        except grpc.aio.AioRpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def _start(name: str, env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log:
        return subprocess.Popen([sys.executable, "-m", f"acm_{name}"], env=env, stdout=log, stderr=log)


def _stop(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs.values():
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
async def stack(
    database: str, kafka_bootstrap: str, neo4j_uri: str, redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Stack]:
    work = tmp_path_factory.mktemp("distributed")
    ports = {name: free_port() for name in SERVICES}
    common = {
        "ACM_DATABASE_URL": database,
        "ACM_BUS_URL": f"kafka://{kafka_bootstrap}",
        "ACM_GRAPH_URL": neo4j_uri,
        "ACM_CACHE_URL": redis_url,
        "ACM_VECTOR_URL": f"qdrant-local://{work / 'qdrant'}",
        "ACM_RETRIEVE_ADDR": f"127.0.0.1:{ports['retrieve']}",
        "ACM_LOG_LEVEL": "INFO",
    }
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name in SERVICES:
            addr_var = "ACM_LISTEN_ADDR" if name in ("gateway", "retrieve") else "ACM_HEALTH_ADDR"
            env = {**os.environ, **common, addr_var: f"127.0.0.1:{ports[name]}"}
            procs[name] = _start(name, env, work / f"{name}.log")
        for _ in range(240):
            dead = [n for n, p in procs.items() if p.poll() is not None]
            assert not dead, f"{dead} exited: " + (work / f"{dead[0]}.log").read_text()[-3000:]
            if all([await _serving(f"127.0.0.1:{ports[n]}") for n in SERVICES]):
                break
            await asyncio.sleep(0.5)
        else:
            pytest.fail("services did not become healthy in 120 s")

        suffix = uuid.uuid4().hex[:6]
        client_ids = (f"c1-{suffix}", f"c2-{suffix}")
        rel = await open_relational(database)
        try:
            keys = [await create_api_key(rel.api_keys, c, "e2e") for c in client_ids]
        finally:
            await rel.close()
        stack = Stack(f"127.0.0.1:{ports['gateway']}", database, neo4j_uri, work / "qdrant", work, procs, client_ids)
        stack.keys = tuple(secret for _, secret in keys)  # type: ignore[attr-defined]
        yield stack
    finally:
        _stop(procs)


async def test_one_turn_flows_through_every_process(stack: Stack) -> None:
    key_c1, key_c2 = stack.keys  # type: ignore[attr-defined]
    try:
        await run_scenario(stack.addr, key_c1, key_c2, wait_s=90)
    except BaseException:
        for name in SERVICES:
            print(f"--- {name} ---\n" + (stack.logs / f"{name}.log").read_text()[-2000:])
        raise

    # Ingest wrote the entities to Neo4j, in Bob's scope (Alice was forgotten by the scenario).
    graph = await Neo4jGraphStore.open(stack.neo4j_uri)
    try:
        bob = Scope(stack.client_ids[0], "acme", "bob")
        assert [e.name for e in await graph.find_entities(bob, ["Lisbon"])] == ["Lisbon"]
        alice = Scope(stack.client_ids[0], "acme", "alice")
        assert await graph.find_entities(alice, ["Lisbon"]) == []
    finally:
        await graph.close()


async def test_bad_requests_get_actionable_errors(stack: Stack) -> None:
    key_c1, _ = stack.keys  # type: ignore[attr-defined]
    await check_bad_requests(stack.addr, key_c1)


async def test_retrieve_indexed_vectors_through_the_qdrant_adapter(stack: Stack) -> None:
    """Runs last in this module: stops the processes so the local-mode Qdrant folder can be opened."""
    _stop(stack.procs)
    vectors = QdrantVectorStore.from_url(f"qdrant-local://{stack.vector_path}")
    try:
        bob = Scope(stack.client_ids[0], "acme", "bob")
        alice = Scope(stack.client_ids[0], "acme", "alice")
        probe = [1.0] + [0.0] * 255
        assert len(await vectors.search(bob, probe, 10)) == 1  # Bob's one turn
        assert await vectors.search(alice, probe, 10) == []  # forgotten
    finally:
        await vectors.close()
