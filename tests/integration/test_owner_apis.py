"""Distributed wiring of the owners' APIs (issue 19), over real gRPC servers and the real Postgres:

- a consumer (the architect's turns handler) verifies a signed turn with the key the gateway serves on its
  internal Keys API, next to its public API; a turn signed with another client's key is refused for good
  (PermanentError: dead letter), while a gateway that cannot answer, or refuses the service token, is
  transient (Unavailable: the consumer retries the record);
- a schema defined through the architect's API is the one ingest uses, read over GetAgent, within the cache's TTL
  (a clock the test advances)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import grpc
import pytest

from acm import topics
from acm.adapters.embedded_bus import EmbeddedBus
from acm.adapters.embedders import build_embedder
from acm.adapters.grpc_architect import GrpcArchitect
from acm.adapters.grpc_keys import CachedKeySource, GrpcKeySource
from acm.adapters.grpc_retriever import GrpcRetriever
from acm.adapters.memory_cache import MemoryCache
from acm.adapters.tokenizer import TiktokenCounter
from acm.auth import create_api_key
from acm.bootstrap import Relational, open_relational
from acm.domain.errors import Unavailable
from acm.domain.models import Role, Turn
from acm.domain.scope import Scope
from acm.ports.architect import AgentDefinition
from acm.ports.bus import PermanentError, Record
from acm.schemas import ArchitectSchemaSource, CachedSchemaSource, RepoSchemaSource
from acm.v1 import architect_pb2_grpc, common_pb2, events_pb2, keys_pb2_grpc
from acm_architect.api import ArchitectApi, ArchitectServicer
from acm_architect.handlers.turns import TurnsHandler
from acm_architect.usecases import DefineAgent, EnsureAgent, GetAgent, ListAgents
from acm_benchmarks.fleet_stack import create_database, drop_database
from acm_gateway.app import build_server, build_servicer
from acm_gateway.keys_api import KeysServicer
from acm_ingest.events import BusEvents
from acm_ingest.usecases import IngestTurn
from tests.support.events import signed, turn_envelope
from tests.support.gateway import gateway_settings

pytestmark = pytest.mark.infra

SECRET = f"owners-{uuid.uuid4().hex}"  # ACM_SERVICE_TOKEN_SECRET of every process here


@pytest.fixture(scope="module")
def database(postgres_dsn: str) -> Iterator[str]:
    """A database of its own, so the run starts empty and leaves nothing behind."""
    url = create_database(postgres_dsn)
    yield url
    drop_database(url)


@dataclass
class Gateway:
    addr: str
    rel: Relational
    server: object


@pytest.fixture
async def gateway(database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Gateway]:
    """The gateway's own server (build_server, as its process wires it), serving the Keys API over its keys."""
    monkeypatch.setenv("ACM_SERVICE_TOKEN_SECRET", SECRET)
    rel = await open_relational(database)
    bus = EmbeddedBus(tmp_path / "bus.db")  # never started: nothing here publishes through the gateway
    unused = grpc.aio.insecure_channel("127.0.0.1:1")
    servicer = build_servicer(
        rel,
        bus,
        GrpcRetriever(unused, 1.0, ""),
        MemoryCache(),
        gateway_settings(database),
        RepoSchemaSource(rel.schemas),
    )
    server = build_server(servicer, "127.0.0.1:0", keys=rel.api_keys)
    await server.start()
    try:
        yield Gateway(f"127.0.0.1:{server.port}", rel, server)
    finally:
        await server.stop()
        await unused.close()
        await bus.stop()
        await rel.close()


def _turn(scope: Scope, content: str) -> events_pb2.Envelope:
    return turn_envelope(scope, content, f"t-{uuid.uuid4().hex[:8]}", f"j-{uuid.uuid4().hex[:8]}")


async def test_a_consumer_verifies_a_signed_turn_through_the_gateways_keys_api(
    gateway: Gateway, database: str, tmp_path: Path
) -> None:
    client, other = f"c-{uuid.uuid4().hex[:6]}", f"o-{uuid.uuid4().hex[:6]}"
    key, _ = await create_api_key(gateway.rel.api_keys, client, "agent fleet")
    other_key, _ = await create_api_key(gateway.rel.api_keys, other, "another client")
    architect = await open_relational(database)  # the consumer's own store
    channel = grpc.aio.insecure_channel(gateway.addr)
    try:
        keys = CachedKeySource(GrpcKeySource(channel, 2.0, SECRET), ttl_s=5.0)
        handler = TurnsHandler(EnsureAgent(architect.schemas, EmbeddedBus(tmp_path / "arch.db")), keys, architect.audit)
        scope = Scope(client, "acme", "alice", "helpdesk", "s1")

        await handler(Record(topics.TURNS, scope.session_key, signed(_turn(scope, "hello"), key)))
        stored = await architect.schemas.latest(scope, "helpdesk")
        assert stored is not None and stored.version == 1  # verified: the agent got its schema

        forged = Scope(client, "acme", "alice", "coder", "s1")
        with pytest.raises(PermanentError, match="signature does not verify"):
            await handler(Record(topics.TURNS, forged.session_key, signed(_turn(forged, "hi"), other_key)))
        assert await architect.schemas.latest(forged, "coder") is None
        assert "event.rejected" in [e.action for e in await architect.audit.list(forged)]

        # A wrong service token is the deployment's fault, not the record's: transient, never a dead letter.
        wrong = TurnsHandler(
            EnsureAgent(architect.schemas, EmbeddedBus(tmp_path / "arch.db")),
            GrpcKeySource(channel, 2.0, "not-the-shared-secret"),
            architect.audit,
        )
        with pytest.raises(Unavailable, match="UNAUTHENTICATED"):
            await wrong(Record(topics.TURNS, scope.session_key, signed(_turn(scope, "again"), key)))
    finally:
        await channel.close()
        await architect.close()


async def test_a_gateway_that_cannot_answer_is_transient_within_the_deadline(gateway: Gateway) -> None:
    addr = gateway.addr
    await gateway.server.stop()  # type: ignore[attr-defined]
    channel = grpc.aio.insecure_channel(addr)
    try:
        started = datetime.now(UTC)
        with pytest.raises(Unavailable, match="gateway service"):
            await GrpcKeySource(channel, 1.0, SECRET).by_id("c1", "k1")
        assert (datetime.now(UTC) - started).total_seconds() < 5
    finally:
        await channel.close()


async def test_a_consumer_rides_out_a_gateway_restart_within_the_deadline(gateway: Gateway) -> None:
    """The lookup waits for the gateway (wait_for_ready) instead of failing while it restarts."""
    key, _ = await create_api_key(gateway.rel.api_keys, f"c-{uuid.uuid4().hex[:6]}", "agent fleet")
    await gateway.server.stop()  # type: ignore[attr-defined]
    channel = grpc.aio.insecure_channel(gateway.addr)
    restarted = grpc.aio.server()
    try:
        lookup = asyncio.create_task(GrpcKeySource(channel, 10.0, SECRET).by_id(key.client_id, key.key_id))
        await asyncio.sleep(0.5)
        assert not lookup.done()  # still waiting, not UNAVAILABLE
        keys_pb2_grpc.add_KeysServicer_to_server(KeysServicer(gateway.rel.api_keys, SECRET), restarted)
        restarted.add_insecure_port(gateway.addr)
        await restarted.start()
        assert await asyncio.wait_for(lookup, 10) == key
    finally:
        await restarted.stop(None)
        await channel.close()


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class CapturingBus:
    """What IngestTurn publishes (its memories, with their kinds and schema versions)."""

    def __init__(self) -> None:
        self.published: list[tuple[str, bytes]] = []

    async def publish(self, topic: str, key: str, value: bytes) -> None:
        self.published.append((topic, value))

    def kept(self) -> list[events_pb2.WrittenMemory]:
        found: list[events_pb2.WrittenMemory] = []
        for topic, value in self.published:
            if topic == topics.MEMORIES:
                found.extend(events_pb2.Envelope.FromString(value).memories_written.memories)
        return found


async def test_a_schema_defined_through_the_architect_is_used_by_ingest(database: str, tmp_path: Path) -> None:
    architect_rel = await open_relational(database)
    architect_bus = EmbeddedBus(tmp_path / "arch.db")
    api = ArchitectApi(
        DefineAgent(architect_rel.schemas, architect_bus),
        GetAgent(architect_rel.schemas),
        ListAgents(architect_rel.schemas),
    )
    server = grpc.aio.server()
    architect_pb2_grpc.add_ArchitectServicer_to_server(ArchitectServicer(api, SECRET), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    ingest_rel = await open_relational(database)
    try:
        clock, bus = Clock(), CapturingBus()
        schemas = CachedSchemaSource(ArchitectSchemaSource(GrpcArchitect(channel, 2.0, SECRET)), 5.0, clock)
        ingest = IngestTurn(
            memories=ingest_rel.memories,
            entities=ingest_rel.entities,
            cache=MemoryCache(),
            events=BusEvents(bus),  # type: ignore[arg-type]  # publish is all BusEvents uses
            embedder=build_embedder("all-minilm-l6-v2"),
            tokens=TiktokenCounter(),
            schemas=schemas,
            audit=ingest_rel.audit,
        )
        client = f"c-{uuid.uuid4().hex[:6]}"
        carol = Scope(client, "acme", "carol", "coder", "s1")
        refund = "I was charged twice and want a refund of $49.99 for order ORD-1234."
        admin = GrpcArchitect(channel, 2.0, SECRET)  # the gateway's DefineAgent, as it calls the architect
        await admin.define_agent(carol, AgentDefinition("", archetype="coding_agent"))

        async def ingest_refund(session: str) -> list[events_pb2.WrittenMemory]:
            bus.published.clear()
            at = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
            scope = Scope(client, "acme", "carol", "coder", session)
            await ingest(Turn(f"t-{session}", scope, Role.USER, refund, at), f"j-{session}", "")
            return [m for m in bus.kept() if "refund" in m.text and m.kind != "turn"]

        assert await ingest_refund("s1") == []  # v1 of a coding agent keeps no billing facts

        overrides = {"fallback_category": "code_fact", "category_tiers": {"code_fact": "client"}}
        v2 = await admin.define_agent(carol, AgentDefinition("", json.dumps(overrides), "coding_agent"))
        assert v2.version == 2
        clock.now += 4.0
        assert await ingest_refund("s2") == []  # v1 still, for the cache's TTL
        clock.now += 1.5
        kept = await ingest_refund("s3")
        # Both from v2: what matches no category is a code fact, kept in the client tier.
        assert [(m.kind, m.tier) for m in kept] == [("code_fact", common_pb2.TIER_CLIENT)]
    finally:
        await channel.close()
        await server.stop(None)
        await ingest_rel.close()
        await architect_bus.stop()
        await architect_rel.close()
