"""The periodic expiry sweep (embedded): a user who stopped writing loses what outlived the schema's TTL in
every store, while a user whose memories are fresh keeps them."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from acm.adapters.sqlite_store import SqliteStore
from acm.client import AcmClient
from acm.domain.models import Layer, Memory
from acm.domain.retention import expiry_cutoffs
from acm.domain.schema import Retention, default_schema
from acm.domain.scope import Scope, Tier
from acm.schemas import RepoSchemaSource
from acm.v1 import common_pb2, gateway_pb2
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_ingest.consolidate import ExpireMemories, SweepIdle, SweepReport
from tests.support.clock import ShiftedClock

TTL_S = 3600.0


@pytest.fixture
def clock() -> ShiftedClock:
    return ShiftedClock()


@pytest.fixture
async def acm(tmp_path: Path, clock: ShiftedClock) -> AsyncIterator[EmbeddedAcm]:
    settings = EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")
    async with EmbeddedAcm(settings, clock=clock) as running:
        yield running


async def _ingest(acm: EmbeddedAcm, user: str, text: str) -> None:
    scope = common_pb2.Scope(customer_id="acme", user_id=user, agent_id="bot", session_id="s1")
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client:
        accepted = await client.ingest(scope, text)
        job = await client.wait_job(scope, accepted.job_id, timeout_s=60)
    assert job.status == gateway_pb2.JOB_STATUS_DONE


def _ids_of(acm: EmbeddedAcm, user: str) -> set[str]:
    with sqlite3.connect(acm.settings.data_dir / "ingest.db") as conn:
        rows = conn.execute("SELECT memory_id FROM memories WHERE tier = 'user' AND user_id = ?", (user,))
        return {m for (m,) in rows}


def _linked(acm: EmbeddedAcm) -> set[str]:
    with sqlite3.connect(acm.settings.data_dir / "retrieve.graph.db") as conn:  # retrieve's graph
        return {m for (m,) in conn.execute("SELECT memory_id FROM mentions")}


async def _indexed(acm: EmbeddedAcm, user: str) -> set[str]:
    scope = Scope("local", "acme", user, "bot")
    probe = [1.0] + [0.0] * 383
    return {m for m, _ in await acm.vectors.search(scope, probe, 50, (Tier.USER,), model=acm.settings.embedder)}


async def _indexed_once_written(acm: EmbeddedAcm, user: str) -> set[str]:
    for _ in range(100):  # the retrieve service indexes what it reads on the memories topic
        if indexed := await _indexed(acm, user):
            return indexed
        await asyncio.sleep(0.05)
    raise AssertionError(f"nothing of {user} was indexed")


async def test_a_user_who_stopped_writing_loses_expired_memories_everywhere(
    acm: EmbeddedAcm, clock: ShiftedClock
) -> None:
    ttl_days = TTL_S / 86400
    assert await acm.stores["architect"].schemas.put(
        "local", replace(default_schema("bot"), retention=Retention(ttl_days, ttl_days, 3650))
    )
    await _ingest(acm, "alice", "We adopted a dog named Max from the shelter in Porto.")
    alice = _ids_of(acm, "alice")
    assert alice and alice & _linked(acm) and await _indexed_once_written(acm, "alice") <= alice

    clock.advance(TTL_S + 60)  # alice never writes again; her TTL passes
    await _ingest(acm, "bob", "Our new office is in Utrecht near the central station.")
    bob = _ids_of(acm, "bob")
    assert bob and bob & _linked(acm)
    bob_indexed = await _indexed_once_written(acm, "bob")

    report = await acm.idle_sweep.run_once()  # what the service runs every interval
    assert report == SweepReport(users=1, expired=len(alice))
    assert _ids_of(acm, "alice") == set()
    for _ in range(100):  # the retrieve service drops the vectors and the graph's links when it reads the event
        if not await _indexed(acm, "alice") and not alice & _linked(acm):
            break
        await asyncio.sleep(0.05)
    assert await _indexed(acm, "alice") == set() and not alice & _linked(acm)
    # bob's memories are fresh: all kept, in every store.
    assert _ids_of(acm, "bob") == bob and bob & _linked(acm) and await _indexed(acm, "bob") == bob_indexed
    assert await acm.idle_sweep.run_once() == SweepReport()  # nothing left to do


class _RecordingExpire(ExpireMemories):
    """The real per-user expiry, recording who was swept; one user's sweep fails."""

    def __init__(self, store: SqliteStore, failing_user: str) -> None:
        super().__init__(store.memories, None, None, None)  # type: ignore[arg-type]  # sweep() is overridden
        self.store, self.failing_user, self.swept = store, failing_user, list[str]()

    async def sweep(self, scope: Scope, retention: Retention, now: datetime, traceparent: str = "") -> int:
        self.swept.append(f"{scope.client_id}/{scope.user_id}/{scope.agent_id}")
        if scope.user_id == self.failing_user:
            raise RuntimeError("graph down")
        return len(await self.store.memories.expire(scope, expiry_cutoffs(retention, now), self.batch))


async def test_the_sweep_is_bounded_per_run_and_one_failing_user_does_not_stall_the_rest() -> None:
    store = await SqliteStore.open(":memory:")
    now = datetime.now(UTC)

    def old(memory_id: str, client: str, user: str, agent: str) -> Memory:
        owner = Scope(client, "acme", user).owner(Tier.USER)
        created = now - timedelta(days=3)  # past the default schema's 2-day SHORT TTL
        return Memory(memory_id, owner, "text", Layer.SHORT, "fact", (), created, agent, updated_at=None)

    await store.memories.upsert(
        [
            old("1", "c1", "alice", "bot"),
            old("2", "c1", "bob", "bot"),
            old("3", "c1", "carol", "helper"),
            old("4", "c2", "dave", "bot"),
        ]
    )
    expire = _RecordingExpire(store, failing_user="bob")
    sweep = SweepIdle(store.memories, RepoSchemaSource(store.schemas), expire, max_users=2)
    first = await sweep(now)
    assert first == SweepReport(users=2, expired=1, failed=1, capped=True)
    assert expire.swept == ["c1/alice/bot", "c1/bob/bot"]
    second = await sweep(now)  # bob is due again (and fails again); the cap still lets the run go on
    assert expire.swept[2:] == ["c1/bob/bot", "c1/carol/helper"] and second.capped
    sweep.max_users = 10
    assert await sweep(now) == SweepReport(users=2, expired=1, failed=1)
    assert expire.swept[4:] == ["c1/bob/bot", "c2/dave/bot"]
    await store.close()
