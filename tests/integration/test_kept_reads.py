"""sqlite_store.KeptReads (issue 20, CPU per Fetch, third round): the SQLite memory repo keeps its reads' results
while the file is unchanged, and a changed memory is read afresh at once: after an upsert, a delete or a Forget
through the repo, and after a commit by another connection to the file (as another process's would be). A read
that overlapped a write is never kept. Real SQLite files; each read is compared with a repo that keeps nothing."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from acm.adapters.sqlite_store import SQLITE, KeptReads, SqliteMemoryRepo, SqliteStore
from acm.domain.models import Layer, Memory, MemoryStatus, Owner
from acm.domain.scope import ALL_TIERS, ForgetLevel, Scope, Tier

READER = Scope("c1", "acme", "alice", "bot", "s1")
OWNER = Owner("c1", Tier.USER, "acme", "alice")
T0 = datetime(2026, 5, 1, 12, tzinfo=UTC)


def _memory(i: int, text: str) -> Memory:
    return Memory(
        memory_id=f"00000000-0000-4000-8000-{i:012d}",
        owner=OWNER,
        text=text,
        layer=Layer.MID,
        kind="fact",
        source_turn_ids=(f"t{i}",),
        created_at=T0 + timedelta(minutes=i),
        agent_id="bot",
        session_id="s1",
    )


MEMORIES = [
    _memory(1, "Caroline: I went to the adoption agency on Friday."),
    _memory(2, "Melanie: Pottery class keeps me sane."),
    _memory(3, "Caroline: The support group meets every Tuesday."),
    _memory(4, "Melanie: We are going camping in June with Caroline."),
]


async def _reads(repo: SqliteMemoryRepo) -> list[Any]:
    """Every read the repo keeps, as a Fetch makes them."""
    ids = [m.memory_id for m in MEMORIES]
    return [
        await repo.keyword_search(READER, "Caroline support group", 10, ALL_TIERS),
        await repo.keyword_ids(READER, "Caroline Melanie", 2000, ALL_TIERS),
        await repo.get(READER, ids[::-1]),
        await repo.phrase_search(READER, ["support group"], 10, ALL_TIERS),
        await repo.turn_neighbours(READER, [MEMORIES[1]]),
        await repo.session_memories(READER, 10),
    ]


async def test_kept_reads_are_read_afresh_after_each_change(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "retrieve.db", readers=2)
    repo = store.memories
    assert isinstance(repo, SqliteMemoryRepo)
    fresh = SqliteMemoryRepo(store.executor, SQLITE, decoded=0, kept=0)  # keeps nothing
    try:
        await repo.upsert(MEMORIES)
        first = await _reads(repo)
        assert first == await _reads(fresh) and all(first)
        hits = repo.kept.hits
        assert await _reads(repo) == first and repo.kept.hits == hits + len(first)  # kept while unchanged

        # A memory changed through the repo (its text, then its status): every read sees it at once.
        changed = replace(MEMORIES[2], text="Caroline: The support group moved to Wednesday.")
        await repo.upsert([changed])
        after = await _reads(repo)
        assert after == await _reads(fresh) and after != first
        assert changed in after[2] and MEMORIES[2] not in after[2]
        await repo.upsert([replace(changed, status=MemoryStatus.STALE)])
        stale = await _reads(repo)
        assert stale == await _reads(fresh)
        assert changed.memory_id not in [s.memory.memory_id for s in stale[0]]

        # Deleted, then forgotten.
        await repo.delete(READER, [MEMORIES[0].memory_id])
        deleted = await _reads(repo)
        assert deleted == await _reads(fresh) and MEMORIES[0].memory_id not in deleted[1]
        await repo.forget(READER, ForgetLevel.USER)
        assert await _reads(repo) == await _reads(fresh) == [[], [], [], [], [], []]
    finally:
        await store.close()


async def test_a_commit_by_another_connection_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "retrieve.db"
    store = await SqliteStore.open(path, readers=2)
    other = await SqliteStore.open(path, readers=0)  # another writer of the same file (as another process)
    repo = store.memories
    assert isinstance(repo, SqliteMemoryRepo)
    try:
        await repo.upsert(MEMORIES)
        before = await _reads(repo)
        await other.memories.upsert([_memory(5, "Caroline: The support group has a new leader.")])
        after = await _reads(repo)
        assert after != before and _memory(5, "").memory_id in after[1]
        assert after == await _reads(SqliteMemoryRepo(store.executor, SQLITE, decoded=0, kept=0))
    finally:
        await other.close()
        await store.close()


async def test_a_read_that_overlapped_a_write_is_not_kept() -> None:
    kept = KeptReads(8)
    started, release = asyncio.Event(), asyncio.Event()

    async def slow() -> list[str]:
        started.set()
        await release.wait()
        return ["old"]

    async def now() -> list[str]:
        return ["new"]

    reading = asyncio.create_task(kept.read((0, 1), ("k",), slow))
    await started.wait()
    assert await kept.read((1, 1), ("k",), now) == ["new"]  # a write ended meanwhile: version (1, 1)
    release.set()
    assert await reading == ["old"]
    assert await kept.read((1, 1), ("k",), slow) == ["new"]  # the overlapping read's rows were not kept
    assert await kept.read((2, 1), ("k",), now) == ["new"] and len(kept) == 1
    off = KeptReads(0)
    assert await off.read((0, 1), ("k",), now) == ["new"] and len(off) == 0


async def test_kept_reads_hold_at_most_their_rows() -> None:
    kept = KeptReads(8, max_size=5)

    async def rows(n: int) -> list[int]:
        return list(range(n))

    for i, n in enumerate((2, 2, 2)):
        await kept.read((0, 0), (i,), lambda n=n: rows(n))  # type: ignore[misc]
    assert len(kept) == 2  # 6 rows > 5: the oldest went
    await kept.read((0, 0), ("big",), lambda: rows(6))
    assert len(kept) == 2 and ("big",) not in kept._results  # more rows than the bound: not kept
