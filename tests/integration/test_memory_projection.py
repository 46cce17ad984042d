"""Retrieve's memories are its own read model, built from acm.memories.v1; jobs finish by events on acm.jobs.v1,
applied by the gateway (the jobs' owner). Embedded mode, real SQLite stores and the durable log."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acm import topics
from acm.adapters.edge_store import EdgeVectorStore
from acm.adapters.memory_cache import MemoryCache
from acm.adapters.sqlite_graph import SqliteGraphStore
from acm.bootstrap import Relational, open_relational
from acm.channels import open_channel
from acm.client import AcmClient
from acm.domain.models import Job, JobStatus, Layer, Memory, utcnow
from acm.domain.scope import Scope, Tier
from acm.envelopes import envelope
from acm.job_events import JobEvents, JobUpdate, update_to_pb
from acm.ports.bus import Record
from acm.prefetch_state import read_generations
from acm.v1 import common_pb2, events_pb2, gateway_pb2, memories_pb2
from acm_cli.embedded import DEV_CLIENT, EmbeddedAcm, EmbeddedSettings
from acm_cli.memories import MemoryCalls
from acm_gateway.handlers.jobs import JobUpdatedHandler
from acm_retrieve.handlers.memories import MemoriesHandler
from acm_retrieve.projection import MemoryChanges, MemoryProjection


@pytest.fixture
async def acm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[EmbeddedAcm, list[Record]]]:
    """A fresh embedded ACM and every record published on acm.memories.v1 while it runs."""
    settings = EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0", embedder="wordllama")
    sent: list[Record] = []
    async with EmbeddedAcm(settings) as embedded:
        publish = embedded.bus.publish

        async def recording(topic: str, key: str, value: bytes) -> None:
            if topic == topics.MEMORIES:
                sent.append(Record(topic, key, value))
            await publish(topic, key, value)

        monkeypatch.setattr(embedded.bus, "publish", recording)
        yield embedded, sent


def _retrieve_store(acm: EmbeddedAcm) -> Relational:
    return acm.stores["retrieve"]


def _scope(user: str) -> common_pb2.Scope:
    return common_pb2.Scope(customer_id="acme", user_id=user, agent_id="bot", session_id="s1")


def _domain(scope: common_pb2.Scope) -> Scope:
    return Scope(DEV_CLIENT, scope.customer_id, scope.user_id, scope.agent_id, scope.session_id)


async def _ingest(client: AcmClient, scope: common_pb2.Scope, turn_id: str, text: str) -> gateway_pb2.Job:
    accepted = await client.ingest(scope, text, turn_id=turn_id)
    job = await client.wait_job(scope, accepted.job_id, timeout_s=60)
    assert job.status == gateway_pb2.JOB_STATUS_DONE, job
    return job


async def test_done_means_retrievable_from_retrieves_own_store(acm: tuple[EmbeddedAcm, list[Record]]) -> None:
    running, _ = acm
    scope = _scope(f"u{uuid.uuid4().hex[:8]}")
    async with AcmClient(f"127.0.0.1:{running.port}", running.api_key) as client:
        job = await _ingest(client, scope, "t1", "I keep my racing bike, a blue Bianchi, in locker 7 at the velodrome.")
        assert job.counts["facts"] >= 1 and job.counts["turns"] == 1  # the counts travel with the events
        # DONE is reported by retrieve after it applied the memories: a keyword Fetch right away finds them.
        # (Not a locker's code: that is a secret, redacted before anything is stored.)
        found = await client.fetch(scope, "which locker is my racing bike in?", 2000)
        assert any("Bianchi" in m.text for m in found.memories), found
    held = await _retrieve_store(running).memories.keyword_search(_domain(scope), "locker", 10)
    assert any("Bianchi" in s.memory.text for s in held)


async def test_a_fresh_projection_fed_the_same_events_equals_the_original(
    acm: tuple[EmbeddedAcm, list[Record]], tmp_path: Path
) -> None:
    running, sent = acm
    scope = _scope(f"u{uuid.uuid4().hex[:8]}")
    addr = f"127.0.0.1:{running.port}"
    async with AcmClient(addr, running.api_key) as client:
        await _ingest(client, scope, "t1", "I live in Porto. My dog is called Bolt.")
        await _ingest(client, scope, "t2", "I live in Lisbon now.")  # Porto goes stale, pointing at Lisbon
        await _ingest(client, scope, "t3", "I live in Lisbon. My cat is called Mia.")  # a fact said again
        channel = open_channel(addr, None)
        memories = MemoryCalls(channel, running.api_key)
        try:
            listed = await memories.list_memories(memories_pb2.ListMemoriesRequest(scope=scope, kinds=["fact"]))
            bolt = next(m for m in listed.memories if "Bolt" in m.memory.text)
            mia = next(m for m in listed.memories if "Mia" in m.memory.text)
            updated = await memories.update(scope, bolt.memory.memory_id, "My dog is called Bolt Junior.", "test")
            assert (await client.wait_job(scope, updated.job_id, timeout_s=60)).status == gateway_pb2.JOB_STATUS_DONE
            deleted = await memories.delete(scope, mia.memory.memory_id)
            assert (await client.wait_job(scope, deleted.job_id, timeout_s=60)).status == gateway_pb2.JOB_STATUS_DONE
        finally:
            await channel.close()

    fresh = await open_relational(f"sqlite:///{tmp_path / 'replay' / 'retrieve.db'}", service="retrieve")
    vectors = EdgeVectorStore(tmp_path / "replay" / "vectors")
    dim = len(next(m.embedding for r in sent for m in _written(r) if m.embedding))
    await vectors.ensure(dim)

    class NoJobs:
        async def publish(self, topic: str, key: str, value: bytes) -> None:
            pass

    graph = SqliteGraphStore(tmp_path / "replay" / "retrieve.graph.db")
    replay = MemoriesHandler(MemoryProjection(fresh.memories, vectors, graph), JobEvents(NoJobs()), dim)  # type: ignore[arg-type]
    try:
        for record in sent:
            await replay(record)
        for record in sent:  # redelivered, all of it: nothing changes
            await replay(record)
        original = await _retrieve_store(running).memories.scan("", 10_000)
        rebuilt = await fresh.memories.scan("", 10_000)
        assert _by_id(rebuilt) == _by_id(original)
        assert any(m.status.value == "stale" for m in rebuilt)  # Porto, and Bolt's first version
        assert mia.memory.memory_id not in _by_id(rebuilt)  # deleted (its turn's preview stays)
        ids = [m.memory_id for m in original]
        assert await vectors.models_of(ids) == await running.vectors.models_of(ids)
        # The graph too: retrieve's own, kept from the same events (ingest never opened it).
        replayed, kept = _graph_rows(tmp_path / "replay" / "retrieve.graph.db"), _graph_rows(graph_file(running))
        assert replayed == kept
        assert kept["entities"] and kept["mentions"]
        assert not any(mia.memory.memory_id in row for row in kept["mentions"])  # unlinked with its deletion
        reader = _domain(scope)
        [bolt_entity] = await graph.find_entities(reader, ["Bolt"])
        linked = {m for m, _ in await graph.expand(reader, [bolt_entity.entity_id], 0, 10)}
        # The corrected version took the stale one's mentions: the graph leads to "Bolt Junior" only.
        [junior] = [m.memory_id for m in rebuilt if "Bolt Junior" in m.text]
        assert junior in linked and bolt.memory.memory_id not in linked
    finally:
        await graph.close()
        await vectors.close()
        await fresh.close()


def graph_file(acm: EmbeddedAcm) -> Path:
    return Path(acm.urls.graph.removeprefix("sqlite:///"))


def _graph_rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the SQLite graph's tables, sorted (the two files were written in different orders)."""
    with sqlite3.connect(path) as conn:
        return {
            table: sorted(tuple(r) for r in conn.execute(f"SELECT * FROM {table}"))
            for table in ("entities", "entity_aliases", "mentions", "relations")
        }


def _written(record: Record) -> list[events_pb2.WrittenMemory]:
    return list(events_pb2.Envelope.FromString(record.value).memories_written.memories)


def _by_id(memories: list[Memory]) -> dict[str, Memory]:
    return {m.memory_id: m for m in memories}


async def test_the_gateway_applies_job_updates_once_and_never_moves_a_finished_job_back(tmp_path: Path) -> None:
    gateway = await open_relational(f"sqlite:///{tmp_path / 'gateway.db'}", service="gateway")
    scope = Scope(DEV_CLIENT, "acme", "alice", "bot", "s1")
    handler = JobUpdatedHandler(gateway.jobs)

    async def update(job_id: str, status: JobStatus, counts: dict[str, int], error: str = "") -> None:
        event = envelope(scope)
        event.job_updated.CopyFrom(update_to_pb(JobUpdate(job_id, status, counts, error)))
        await handler(Record(topics.JOBS, scope.session_key, event.SerializeToString()))

    try:
        # The outcome overtakes the gateway's own insert (published before the row was written): not lost.
        await update("job-early", JobStatus.DONE, {"facts": 2})
        await gateway.jobs.create(Job("job-early", scope, "ingest"))
        early = await gateway.jobs.get(scope, "job-early")
        assert early is not None and (early.status, early.counts) == (JobStatus.DONE, {"facts": 2})

        await gateway.jobs.create(Job("job-1", scope, "ingest"))
        await update("job-1", JobStatus.DONE, {"facts": 1})
        await update("job-1", JobStatus.FAILED, {}, "a late failure")  # finished: stays as it finished
        await update("job-1", JobStatus.DONE, {"facts": 1})  # redelivered
        done = await gateway.jobs.get(scope, "job-1")
        assert done is not None and (done.status, done.counts, done.error) == (JobStatus.DONE, {"facts": 1}, "")
    finally:
        await gateway.close()


async def test_a_change_applied_to_the_copy_makes_pools_built_before_it_stale(tmp_path: Path) -> None:
    """Anticipate reads the generations, then this copy: a pool built before a change reached the copy must not
    stay current (ingest's bump at its own write came before the copy had it)."""
    store = await open_relational(f"sqlite:///{tmp_path / 'retrieve.db'}", service="retrieve")
    vectors = EdgeVectorStore(tmp_path / "vectors")
    await vectors.ensure(2)
    cache = MemoryCache()
    scope = Scope(DEV_CLIENT, "acme", "alice", "bot", "s1")
    graph = SqliteGraphStore(tmp_path / "graph.db")
    projection = MemoryProjection(store.memories, vectors, graph, cache)
    memory = Memory("0" * 32, scope.owner(Tier.USER), "user: I live in Porto.", Layer.SHORT, "turn", ("t1",), utcnow())
    try:
        before = await read_generations(cache, scope)
        await projection.apply(scope, MemoryChanges(written=[memory]))
        after_write = await read_generations(cache, scope)
        assert after_write[0] != before[0]  # the user tier's pools
        await projection.apply(scope, MemoryChanges())  # nothing changed (a dropped turn's job): pools stay
        assert await read_generations(cache, scope) == after_write
        await projection.apply(scope, MemoryChanges(erased=[memory.memory_id]))
        assert all(a != b for a, b in zip(await read_generations(cache, scope), after_write, strict=True))
        assert await store.memories.get(scope, [memory.memory_id]) == []
    finally:
        await graph.close()
        await vectors.close()
        await store.close()
