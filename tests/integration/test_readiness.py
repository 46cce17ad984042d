"""Readiness follows the dependencies, liveness does not: a HealthServer watching the real Postgres (reached through
a TCP relay this test can cut and restore, so the shared server is never touched) turns NOT_SERVING when the
relay is down and SERVING again when it is back, while the liveness service stays SERVING; a Kafka bus whose
broker does not answer keeps a consumer not ready."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import grpc
import psycopg
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from acm.adapters.kafka_bus import KafkaBus
from acm.adapters.postgres_store import PostgresStore
from acm.runtime import LIVENESS, HealthServer, dependency_checks
from tests.support.ports import unused_ports

pytestmark = pytest.mark.infra

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class Relay:
    """A TCP relay from a local port to ``target``; stop() closes the port and every relayed connection, start()
    opens the same port again. The port is below the kernel's ephemeral range (unused_ports): while the relay is
    stopped, no other worker's port-0 server can be given it."""

    def __init__(self, target: tuple[str, int]) -> None:
        [self.port], self.target = unused_ports(1), target
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except asyncio.CancelledError:
            pass  # stop(): the connection is cut
        finally:
            for w in (writer, up_writer):
                w.close()
            self._tasks.discard(task)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


async def _status(port: int, service: str = "") -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=2
        )
        return int(reply.status)


async def _wait_for(port: int, wanted: int, within_s: float = 10.0) -> float:
    """Seconds until the overall status is ``wanted``; fails after ``within_s``."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while loop.time() - started < within_s:
        if await _status(port) == wanted:
            return loop.time() - started
        await asyncio.sleep(0.05)
    pytest.fail(f"health did not turn {health_pb2.HealthCheckResponse.ServingStatus.Name(wanted)} in {within_s}s")


@pytest.fixture
async def relayed_store(postgres_dsn: str) -> AsyncIterator[tuple[PostgresStore, Relay]]:
    parts = urlsplit(postgres_dsn)
    relay = Relay((parts.hostname or "127.0.0.1", parts.port or 5432))
    await relay.start()
    netloc = parts.netloc.rsplit("@", 1)
    via_relay = f"{netloc[0]}@127.0.0.1:{relay.port}" if len(netloc) == 2 else f"127.0.0.1:{relay.port}"
    schema = f"ready_{uuid.uuid4().hex[:10]}"
    store = await PostgresStore.open(urlunsplit(parts._replace(netloc=via_relay)), schema=schema, timeout_s=1.0)
    try:
        yield store, relay
    finally:
        await store.close()
        await relay.stop()
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


async def test_readiness_follows_postgres_and_liveness_does_not(
    relayed_store: tuple[PostgresStore, Relay],
) -> None:
    store, relay = relayed_store
    server = HealthServer("127.0.0.1:0", ["acm.v1.Example"])
    server.watch(dependency_checks(store), every_s=0.2, timeout_s=1.0)
    await server.start()
    try:
        await _wait_for(server.port, SERVING)
        assert await _status(server.port, "acm.v1.Example") == SERVING

        await relay.stop()  # Postgres unreachable: the pool's connections are cut, new ones refused
        await _wait_for(server.port, NOT_SERVING)
        assert await _status(server.port, "acm.v1.Example") == NOT_SERVING
        assert await _status(server.port, LIVENESS) == SERVING  # no restart for a dependency's outage

        await relay.start()  # same port: the pool reconnects
        await _wait_for(server.port, SERVING, within_s=15)
        assert await _status(server.port, "acm.v1.Example") == SERVING
    finally:
        await server.stop()


async def test_a_consumer_is_ready_only_while_its_broker_answers(
    relayed_store: tuple[PostgresStore, Relay], kafka_bootstrap: str, refused_port: int
) -> None:
    store, _ = relayed_store
    reachable = KafkaBus(kafka_bootstrap, client_id="ready-test", namespace=f"ready-{uuid.uuid4().hex[:8]}.")
    nowhere = KafkaBus(f"127.0.0.1:{refused_port}", client_id="ready-test", publish_timeout_s=0.5)
    await reachable.start()
    servers = []
    try:
        for bus in (reachable, nowhere):
            server = HealthServer("127.0.0.1:0")
            server.watch(dependency_checks(store, bus), every_s=0.2, timeout_s=1.0)
            await server.start()
            servers.append(server)
        await _wait_for(servers[0].port, SERVING)
        await asyncio.sleep(0.5)  # a few check periods
        assert await _status(servers[1].port) == NOT_SERVING
        assert await _status(servers[1].port, LIVENESS) == SERVING
    finally:
        for server in servers:
            await server.stop()
        await reachable.stop()
