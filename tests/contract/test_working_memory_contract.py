"""One contract for WorkingMemoryRepo, run against Postgres (a real server, a fresh schema per test) and
SQLite: compare-and-swap versions (concurrent swaps, one wins), records, isolation, forget levels."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from acm.adapters.postgres_store import PostgresStore
from acm.adapters.sqlite_store import SqliteStore
from acm.adapters.working_memory_sql import PgWorkingMemoryRepo, SqliteWorkingMemoryRepo
from acm.domain.compaction.engine import SessionTurn, WorkingMemory
from acm.domain.compaction.pinned import PinnedState
from acm.domain.compaction.record import CompactionRecord
from acm.domain.scope import ForgetLevel, Scope, ScopeError
from acm.ports.working_memory import WorkingMemoryRepo

ALICE = Scope("c1", "acme", "alice", session_id="s1")
ALICE_S2 = Scope("c1", "acme", "alice", session_id="s2")
NEIGHBOURS = [
    Scope("c1", "acme", "bob", session_id="s1"),
    Scope("c1", "globex", "alice", session_id="s1"),
    Scope("c2", "acme", "alice", session_id="s1"),
]
T0 = datetime(2026, 10, 1, tzinfo=UTC)


def memory(version: int, note: str = "") -> WorkingMemory:
    pinned = PinnedState().set("PO-1", {"status": note or f"v{version}"}, "t1", T0)
    turn = SessionTurn("t9", "user", "user: hi", 3, T0 + timedelta(minutes=9), speaker="user")
    return WorkingMemory(version, pinned, (f"line {version}",), (turn,), turn.at, ("t9",), version * 10)


def record(outcome: str = "compacted", minutes: int = 0) -> CompactionRecord:
    return CompactionRecord(
        uuid.uuid4().hex, outcome, 100, 40, 0.4, True, 1, created_at=T0 + timedelta(minutes=minutes)
    )


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.infra)])
async def repo(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[WorkingMemoryRepo]:
    if request.param == "sqlite":
        lite = await SqliteStore.open(tmp_path / "acm.db")
        sqlite_repo = SqliteWorkingMemoryRepo(lite.executor)
        await sqlite_repo.migrate()
        yield sqlite_repo
        await lite.close()
        return
    dsn: str = request.getfixturevalue("postgres_dsn")
    schema = f"wm_{uuid.uuid4().hex[:12]}"
    pg = await PostgresStore.open(dsn, schema=schema)
    pg_repo = PgWorkingMemoryRepo(pg.executor)
    await pg_repo.migrate()
    await pg_repo.migrate()  # idempotent
    try:
        yield pg_repo
    finally:
        await pg.close()
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


async def test_swap_is_a_compare_and_swap_on_the_version(repo: WorkingMemoryRepo) -> None:
    assert await repo.get(ALICE) is None
    assert await repo.swap(ALICE, memory(1), record())
    assert await repo.get(ALICE) == memory(1)
    assert not await repo.swap(ALICE, memory(1, "late"), record())  # version 1 exists: a stale writer loses
    assert not await repo.swap(ALICE, memory(3), record())  # skipping a version is refused too
    assert await repo.swap(ALICE, memory(2), record())
    assert await repo.get(ALICE) == memory(2)


async def test_concurrent_swaps_of_one_session_one_wins(repo: WorkingMemoryRepo) -> None:
    assert await repo.swap(ALICE, memory(1), record())
    wins = await asyncio.gather(*(repo.swap(ALICE, memory(2, f"writer {i}"), record()) for i in range(5)))
    assert sum(wins) == 1
    stored = await repo.get(ALICE)
    assert stored is not None and stored.version == 2
    assert len(await repo.compactions(ALICE)) == 2  # only the winner's record was written with the swap


async def test_records_newest_first_and_a_lost_swap_writes_no_record(repo: WorkingMemoryRepo) -> None:
    await repo.swap(ALICE, memory(1), record(minutes=1))
    await repo.swap(ALICE, memory(1), record("compacted", minutes=5))  # lost
    await repo.record(ALICE, record("failed", minutes=2))
    await repo.record(ALICE, record("unchanged", minutes=3))
    outcomes = [r.outcome for r in await repo.compactions(ALICE)]
    assert outcomes == ["unchanged", "failed", "compacted"]
    assert [r.outcome for r in await repo.compactions(ALICE, limit=1)] == ["unchanged"]


async def test_sessions_and_scopes_are_isolated(repo: WorkingMemoryRepo) -> None:
    await repo.swap(ALICE, memory(1), record())
    await repo.record(ALICE, record("failed"))
    for other in [ALICE_S2, *NEIGHBOURS]:
        assert await repo.get(other) is None
        assert await repo.compactions(other) == []
        assert await repo.swap(other, memory(1), record())  # their own version 1, not ALICE's
    assert await repo.get(ALICE) == memory(1)


async def test_every_method_needs_a_session(repo: WorkingMemoryRepo) -> None:
    no_session = Scope("c1", "acme", "alice")
    with pytest.raises(ScopeError):
        await repo.get(no_session)
    with pytest.raises(ScopeError):
        await repo.swap(no_session, memory(1), record())
    with pytest.raises(ScopeError):
        await repo.forget(no_session, ForgetLevel.SESSION)


@pytest.mark.parametrize(
    ("level", "gone"),
    [
        (ForgetLevel.SESSION, {ALICE}),
        (ForgetLevel.USER, {ALICE, ALICE_S2}),
        (ForgetLevel.CUSTOMER, {ALICE, ALICE_S2, NEIGHBOURS[0]}),
        (ForgetLevel.CLIENT, {ALICE, ALICE_S2, NEIGHBOURS[0], NEIGHBOURS[1]}),
    ],
)
async def test_forget_levels(repo: WorkingMemoryRepo, level: ForgetLevel, gone: set[Any]) -> None:
    everyone = [ALICE, ALICE_S2, *NEIGHBOURS]
    for scope in everyone:
        await repo.swap(scope, memory(1), record())
    assert await repo.forget(ALICE, level) == len(gone)
    for scope in everyone:
        assert (await repo.get(scope) is None) == (scope in gone), scope
        assert (await repo.compactions(scope) == []) == (scope in gone), scope
    # Forgotten means forgotten: a new compaction starts again from version 1.
    assert await repo.swap(ALICE, memory(1), record())
