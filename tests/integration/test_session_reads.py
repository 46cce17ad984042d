"""A session's reads go to their owners (issue 19, item 1): its turns and recent facts to retrieve's Memories
API (SessionMemories), its working memory and latest compaction record to compact's API (GetWorkingMemory).
Over real gRPC with service tokens, on the real Postgres and Redis: what comes back equals what the owners'
stores hold, and a session loaded through the clients equals one loaded in-process."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest

from acm.adapters.grpc_compactor import GrpcCompactor
from acm.adapters.grpc_memories import GrpcMemoryReader
from acm.adapters.tokenizer import TiktokenCounter
from acm.bootstrap import Relational, open_bus, open_cache, open_graph, open_relational
from acm.client import AcmClient
from acm.domain.compaction.engine import working_tokens
from acm.domain.errors import InvalidRequest, Unavailable
from acm.domain.models import ALL_LAYERS, Layer, Memory, MemoryStatus, stable_id
from acm.domain.schema import default_schema
from acm.domain.scope import Scope, Tier
from acm.ports.stores import Cache, GraphStore
from acm.read.session import LoadSession, SessionState
from acm.schemas import RepoSchemaSource
from acm.v1 import common_pb2, compact_pb2_grpc, memories_pb2_grpc
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_compact.api import CompactApi, CompactServicer
from acm_compact.usecases import CompactSession, ReadWorkingMemory
from acm_gateway.app import build_server, build_servicer
from acm_retrieve.memories import ReadMemories
from acm_retrieve.memories_api import MemoriesServicer
from tests.integration.test_compact_llm import TEXTS  # a session whose compaction shrinks it
from tests.support.gateway import gateway_settings

SECRET = "session-reads-test-secret-0123456789"
T0 = datetime(2026, 10, 28, 9, 0, tzinfo=UTC)


@dataclass
class Served:
    rel: Relational
    cache: Cache
    reader: GrpcMemoryReader
    compactor: GrpcCompactor
    local: ReadMemories
    api: CompactApi
    session: CompactSession
    scope: Scope
    channel: grpc.aio.Channel


@pytest.fixture
async def served(postgres_dsn: str, redis_url: str, tmp_path: Path) -> AsyncIterator[Served]:
    rel = await open_relational(postgres_dsn)
    cache = await open_cache(redis_url)
    graph: GraphStore = await open_graph(f"sqlite:///{tmp_path / 'graph.db'}")  # unused by session reads
    scope = Scope(f"c{uuid.uuid4().hex[:10]}", "acme", "alice", agent_id="clerk", session_id="s1")
    schema = default_schema("clerk")
    rules = replace(schema.compaction, budget_tokens=200, recent_turns_verbatim=2, target_ratio=0.3)
    await rel.schemas.put(scope.client_id, replace(schema, compaction=rules))
    await _store_session(rel, scope)

    local = ReadMemories(rel.memories, graph)
    working = ReadWorkingMemory(rel.working)
    load = LoadSession(local, working, RepoSchemaSource(rel.schemas), 100)
    session = CompactSession(load, rel.working, cache, TiktokenCounter())
    api = CompactApi(session, working)
    server = grpc.aio.server()
    memories_pb2_grpc.add_MemoriesServicer_to_server(MemoriesServicer(local, SECRET), server)
    compact_pb2_grpc.add_CompactServicer_to_server(CompactServicer(api, SECRET), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        reader = GrpcMemoryReader(channel, 5.0, SECRET)
        compactor = GrpcCompactor(channel, 30.0, SECRET, 5.0)
        yield Served(rel, cache, reader, compactor, local, api, session, scope, channel)
    finally:
        await channel.close()
        await server.stop(None)
        await graph.close()
        await cache.close()
        await rel.close()


async def _store_session(rel: Relational, scope: Scope) -> None:
    """Five turns in s1, with a fact (a superseded one too) beside them, and a turn of another session."""
    counter = TiktokenCounter()
    owner = scope.owner(Tier.USER)

    def memory(key: str, text: str, minute: int, layer: Layer = Layer.SHORT, kind: str = "turn", **kw: Any) -> Memory:
        at = T0 + timedelta(minutes=minute)
        return Memory(
            stable_id(scope.client_id, key), owner, text, layer, kind, (key,), at, agent_id="clerk",
            token_count=counter.count(text), **kw,
        )  # fmt: skip

    s1 = [memory(f"t{i}", text, i, session_id="s1") for i, text in enumerate(TEXTS)]
    facts = [
        memory("f-old", "The laptops ship from Shenzhen.", 1, Layer.MID, "fact", session_id="s1",
               status=MemoryStatus.STALE, superseded_by=stable_id(scope.client_id, "f-new")),
        memory("f-new", "The laptops ship from Shanghai.", 2, Layer.MID, "fact", session_id="s1"),
    ]  # fmt: skip
    other = [memory("o1", "user: a turn of another session", 9, session_id="s2")]
    await rel.memories.upsert([*s1, *facts, *other])


def _shown(memories: list[Memory]) -> list[tuple[object, ...]]:
    """What the session's readers use of a memory (LoadSession's turns, anticipate's recent facts)."""
    return [
        (m.memory_id, m.text, m.kind, m.layer, m.status, m.token_count, m.created_at, m.source_turn_ids, m.session_id)
        for m in memories
    ]


async def test_session_memories_over_grpc_are_what_retrieve_reads(served: Served) -> None:
    s, scope = served, served.scope
    for limit, layers in [(10, (Layer.SHORT,)), (10, ALL_LAYERS), (3, ALL_LAYERS), (100, (Layer.MID,))]:
        over_grpc = await s.reader.session_memories(scope, limit, layers)
        stored = await s.rel.memories.session_memories(scope, limit, layers)
        assert _shown(over_grpc) == _shown(stored), (limit, layers)
    turns = await s.reader.session_memories(scope, 10, (Layer.SHORT,))
    assert [m.text for m in turns] == TEXTS[::-1]  # newest first, this session's only
    facts = await s.reader.session_memories(scope, 10, (Layer.MID,))
    assert [m.status for m in facts] == [MemoryStatus.ACTIVE, MemoryStatus.STALE]  # the caller decides


async def test_session_memories_refuse_what_they_cannot_answer(served: Served) -> None:
    s, scope = served, served.scope
    with pytest.raises(InvalidRequest, match="session_id"):
        await s.reader.session_memories(replace(scope, session_id=""), 10)
    for limit in (0, 10_001):
        with pytest.raises(InvalidRequest, match="limit must be between 1 and 10000"):
            await s.reader.session_memories(scope, limit)
    wrong_secret = GrpcMemoryReader(s.channel, 5.0, "another-secret-0123456789abcdef")
    with pytest.raises(Unavailable, match="UNAUTHENTICATED"):
        await wrong_secret.session_memories(scope, 10)
    with pytest.raises(Unavailable, match="UNAUTHENTICATED"):
        await GrpcCompactor(s.channel, 5.0, "another-secret-0123456789abcdef").working_memory(scope)


async def test_the_working_memory_over_grpc_is_what_compact_stored(served: Served) -> None:
    s, scope = served, served.scope
    before = await s.compactor.working_memory(scope)
    assert before.memory is None and before.latest is None  # never compacted
    record = await s.api.compact(scope)
    assert record.outcome in ("compacted", "degraded")
    after = await s.compactor.working_memory(scope)
    assert after.memory is not None and after.memory == await s.rel.working.get(scope)
    assert after.latest == replace(record, summariser="deterministic")  # not part of the message
    with pytest.raises(InvalidRequest, match="session_id"):
        await s.compactor.working_memory(replace(scope, session_id=""))


async def test_a_session_loaded_through_its_owners_apis_equals_one_loaded_in_process(served: Served) -> None:
    s, scope = served, served.scope
    remote = LoadSession(s.reader, s.compactor, RepoSchemaSource(s.rel.schemas), 100)
    local = LoadSession(s.local, ReadWorkingMemory(s.rel.working), RepoSchemaSource(s.rel.schemas), 100)

    def same(a: SessionState, b: SessionState) -> None:
        assert (a.memory, a.tail, a.stored, a.local_only) == (b.memory, b.tail, b.stored, b.local_only)
        assert a.rules == b.rules
        assert (a.latest is None) == (b.latest is None)
        if a.latest is not None and b.latest is not None:
            assert a.latest == replace(b.latest, summariser=a.latest.summariser)

    fresh = await remote(scope)
    same(fresh, await local(scope))
    assert [t.text for t in fresh.tail] == TEXTS and not fresh.stored
    await s.api.compact(scope)
    compacted = await remote(scope)
    same(compacted, await local(scope))
    assert compacted.stored and compacted.latest is not None
    # Every turn is either compacted, kept verbatim, or still to come.
    m = compacted.memory
    assert m.turns_compacted + len(m.recent) + len(compacted.tail) == len(TEXTS)


async def test_a_requested_compaction_runs_only_while_the_session_is_over_its_soft_limit(served: Served) -> None:
    """Ingest's running count of a session's tokens only grows (compact no longer resets ingest's cache keys), so
    its requests keep coming every tenth of the budget; compact compacts only a session over the soft limit."""
    s, scope = served, served.scope
    assert await s.session.if_due(scope, 100_000) is None  # the session is far under a large budget's limit
    assert await s.rel.working.compactions(scope) == []  # and nothing is recorded
    # The session's ~210 tokens are over the soft limit of a 290-token budget (203); compacted, they are under it.
    record = await s.session.if_due(scope, 290)
    assert record is not None and record.outcome in ("compacted", "degraded")
    assert record.tokens_before >= 203 > record.tokens_after
    assert await s.session.if_due(scope, 290) is None  # compacted under the limit: the next request waits
    assert len(await s.rel.working.compactions(scope)) == 1
    keys = [k for k in ("session_tokens", "compaction_due_at") if await s.cache.get(scope, k) is not None]
    assert keys == []  # compact wrote none of ingest's keys


async def test_a_fetch_answers_with_memories_and_a_notice_while_compact_is_down(
    tmp_path: Path, refused_port: int
) -> None:
    """The session's owners are services now: with compact unreachable, a Fetch in a session still answers (the
    memories retrieved for the question) and says why the session's context is missing."""
    settings = EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0", embedder="wordllama")
    scope = common_pb2.Scope(customer_id="acme", user_id="alice", session_id="s1")
    async with EmbeddedAcm(settings) as acm:
        async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client:
            accepted = await client.ingest(scope, "I work at the harbour office in Rotterdam.")
            await client.wait_job(scope, accepted.job_id, timeout_s=60)
            whole = await client.fetch(scope, "where do I work?")
        assert "Recent turns:" in whole.context and not whole.notice
        # A second gateway on the same stores whose compact service is a port nothing listens on (a bus of its
        # own: a Fetch publishes nothing, and the running one takes no more subscribers).
        dead = grpc.aio.insecure_channel(f"127.0.0.1:{refused_port}")
        bus = open_bus(f"sqlite:///{tmp_path / 'bus2.db'}", client_id="second-gateway")
        servicer = build_servicer(
            acm.stores["gateway"],
            bus,
            acm.full_retriever,
            acm.cache,
            gateway_settings(acm.urls.databases["gateway"]),
            RepoSchemaSource(acm.stores["architect"].schemas),
            compactor=GrpcCompactor(dead, 2.0, ""),
            memory_reader=acm.memories,
        )
        gateway = build_server(servicer, "127.0.0.1:0")
        await gateway.start()
        try:
            async with AcmClient(f"127.0.0.1:{gateway.port}", acm.api_key, timeout_s=60) as client:
                degraded = await client.fetch(scope, "where do I work?")
        finally:
            await gateway.stop()
            await dead.close()
            await bus.stop()
    assert "session's context is unavailable" in degraded.notice and "compact" in degraded.notice
    assert any("harbour office" in m.text for m in degraded.memories)
    assert not degraded.context  # no session parts: nothing pretends to be the session


async def test_a_request_waits_for_the_turn_that_triggered_it(served: Served) -> None:
    """A request can arrive before retrieve's projection shows the turn that triggered it: compact reads the session
    again, for at most catch_up_s, instead of calling it not due (ingest asks again only after the session grew)."""
    s, scope = served, served.scope
    counter = TiktokenCounter()
    before = await s.session.load(scope, 100_000)
    size = await asyncio.to_thread(working_tokens, before.memory, before.tail, counter, before.rules)
    ratio = default_schema("clerk").compaction.soft_ratio
    budget = int((size + 2) / ratio) + 1  # the session as stored is just under the soft limit
    text = "user: the order also needs ten docking stations, two projectors and a whiteboard. " * 4
    late = Memory(
        stable_id(scope.client_id, "t-late"), scope.owner(Tier.USER), text, Layer.SHORT, "turn", ("t-late",),
        T0 + timedelta(minutes=8), agent_id="clerk", token_count=counter.count(text), session_id="s1",
    )  # fmt: skip
    naps: list[float] = []

    async def nap(seconds: float) -> None:
        naps.append(seconds)

    async def projected_meanwhile(seconds: float) -> None:
        naps.append(seconds)
        if len(naps) == 2:
            await s.rel.memories.upsert([late])

    waiting = replace(s.session, sleep=nap)
    assert await waiting.if_due(scope, budget, "t-never") is None  # waited catch_up_s for it, then not due
    assert len(naps) == round(waiting.catch_up_s / waiting.catch_up_poll_s)
    assert await s.rel.working.compactions(scope) == []
    naps.clear()
    record = await replace(s.session, sleep=projected_meanwhile).if_due(scope, budget, "t-late")
    assert record is not None and record.outcome in ("compacted", "degraded") and len(naps) == 2
