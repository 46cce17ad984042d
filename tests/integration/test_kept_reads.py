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
from acm.domain.scope import ALL_TIERS, ForgetLevel, Scope, Tier, forgets
from acm.ports.stores import MemoryFilter

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


# --- issue 20, fourth round: kept reads per owner ------------------------------------------------------------
# A write drops only the kept reads whose owners (the reader's user, customer and client tiers) it changed.

ALICE = READER
BOB = Scope("c1", "acme", "bob", "bot", "s2")
CAROL = Scope("c1", "globex", "carol", "bot", "s3")
DAVE = Scope("c2", "acme", "dave", "bot", "s4")  # another client, same customer and user names as c1's
READERS = {"alice": ALICE, "bob": BOB, "carol": CAROL, "dave": DAVE}


def _of(i: int, who: Scope, text: str, tier: Tier = Tier.USER) -> Memory:
    owner = Owner(
        who.client_id,
        tier,
        who.customer_id if tier is not Tier.CLIENT else "",
        who.user_id if tier is Tier.USER else "",
    )
    return replace(_memory(i, text), owner=owner, session_id=who.session_id)


def _fleet() -> list[Memory]:
    out = []
    for n, who in enumerate(READERS.values()):
        out += [
            _of(10 * n + 1, who, "Caroline: I went to the adoption agency on Friday."),
            _of(10 * n + 2, who, "Melanie: Pottery class keeps me sane, says Caroline."),
        ]
    return out


async def _scored(repo: SqliteMemoryRepo, who: Scope) -> list[Any]:
    """The full-text reads ordered by bm25, whose scores weigh a word by the whole index (every owner's rows)."""
    return [
        await repo.keyword_search(who, "Caroline support group", 10, ALL_TIERS),
        await repo.keyword_ids(who, "Caroline Melanie", 2000, ALL_TIERS),
    ]


async def _owned(repo: SqliteMemoryRepo, who: Scope) -> list[Any]:
    """The reads whose rows are the reader's owners' alone (its own memories as the turns' anchors)."""
    own = await repo.page(who, MemoryFilter(tiers=(Tier.USER,)), 10)
    ids = [m.memory_id for m in own] or [_of(99, who, "x").memory_id]
    return [
        own,
        await repo.get(who, ids[::-1]),
        await repo.phrase_search(who, ["support group", "adoption agency"], 10, ALL_TIERS),
        await repo.turn_neighbours(who, own[:1]),
        await repo.session_memories(who, 10),
    ]


async def _reads_of(repo: SqliteMemoryRepo, who: Scope) -> list[Any]:
    return await _scored(repo, who) + await _owned(repo, who)


def _ids(reads: list[Any]) -> set[str]:
    """The memory ids in every read's result (scored memories, memories or ids)."""
    out = set()
    for read in reads:
        for r in read:
            out.add(r if isinstance(r, str) else getattr(r, "memory", r).memory_id)
    return out


class _Fleet:
    """The repo, one keeping nothing, and which readers' reads were kept since the last look."""

    def __init__(self, store: SqliteStore) -> None:
        assert isinstance(store.memories, SqliteMemoryRepo)
        self.repo = store.memories
        self.fresh = SqliteMemoryRepo(store.executor, SQLITE, decoded=0, kept=0)

    async def warm(self) -> None:
        for who in READERS.values():
            await _reads_of(self.repo, who)

    async def _all_kept(self, name: str, reads: Any) -> bool:
        """Whether every read was kept (else none was: a reader's reads of a kind have the same owners); each
        equals a read keeping nothing."""
        who = READERS[name]
        hits, misses = self.repo.kept.hits, self.repo.kept.misses
        assert await reads(self.repo, who) == await reads(self.fresh, who), name
        assert self.repo.kept.misses == misses or self.repo.kept.hits == hits, name
        return self.repo.kept.misses == misses

    async def kept(self) -> set[str]:
        """The readers whose owned reads were all kept. The scored ones are kept only when nothing was written."""
        owned = {name for name in READERS if await self._all_kept(name, _owned)}
        scored = {name for name in READERS if await self._all_kept(name, _scored)}
        assert scored in (set(), set(READERS)), scored
        if scored:
            assert owned == set(READERS), owned
        return owned


async def _open(tmp_path: Path) -> tuple[SqliteStore, _Fleet]:
    store = await SqliteStore.open(tmp_path / "retrieve.db", readers=2)
    fleet = _Fleet(store)
    await fleet.repo.upsert(_fleet())
    await fleet.warm()
    assert await fleet.kept() == set(READERS)  # nothing written since: everyone's reads kept
    assert await fleet.kept() == set(READERS)
    return store, fleet


async def test_a_write_drops_only_the_reads_of_the_owners_it_changed(tmp_path: Path) -> None:
    store, fleet = await _open(tmp_path)
    try:
        # Alice's own memory: her reads go, everyone else's stay (bob shares her customer, dave her names).
        await fleet.repo.upsert([_of(50, ALICE, "Caroline: The support group meets every Tuesday.")])
        assert await fleet.kept() == {"bob", "carol", "dave"}
        # A customer-tier memory of acme: every reader of acme sees it (alice, bob), not globex's carol.
        await fleet.repo.upsert([_of(51, ALICE, "Acme policy: the support group is for members.", Tier.CUSTOMER)])
        assert await fleet.kept() == {"carol", "dave"}
        # A client-tier memory of c1: every reader of c1, not c2's dave.
        await fleet.repo.upsert([_of(52, ALICE, "c1 policy: Caroline's support group notes stay.", Tier.CLIENT)])
        assert await fleet.kept() == {"dave"}
        # Nothing changed (another client's id is refused, an empty write): everything stays.
        await fleet.repo.upsert([])
        assert await fleet.kept() == set(READERS)
    finally:
        await store.close()


async def test_a_status_change_a_supersede_and_a_move_drop_the_reads_that_held_it(tmp_path: Path) -> None:
    store, fleet = await _open(tmp_path)
    try:
        old = _of(1, ALICE, "Caroline: I went to the adoption agency on Friday.")
        new = _of(60, ALICE, "Caroline: I went to the adoption agency on Saturday.")
        await fleet.repo.upsert([replace(old, status=MemoryStatus.STALE, superseded_by=new.memory_id), new])
        assert await fleet.kept() == {"bob", "carol", "dave"}
        got = await _reads_of(fleet.repo, ALICE)
        assert old.memory_id not in got[1] and new.memory_id in got[1]

        # Alice's memory moved to bob (same client, the upsert rewrites its owner): its old owner's reads go too.
        await fleet.repo.upsert([replace(new, owner=Owner("c1", Tier.USER, "acme", "bob"), session_id="s2")])
        assert await fleet.kept() == {"carol", "dave"}
        assert new.memory_id not in (await _reads_of(fleet.repo, ALICE))[1]
        assert new.memory_id in (await _reads_of(fleet.repo, BOB))[1]

        # A delete.
        await fleet.repo.delete(BOB, [new.memory_id])
        assert await fleet.kept() == {"alice", "carol", "dave"}
    finally:
        await store.close()


async def test_each_forget_level_drops_the_reads_of_what_it_erased(tmp_path: Path) -> None:
    store, fleet = await _open(tmp_path)
    shared = [_of(70, BOB, "Acme: Caroline runs the support group.", Tier.CUSTOMER)]
    shared += [_of(71, BOB, "c1: the support group list is Caroline's.", Tier.CLIENT)]
    written = _fleet() + shared
    try:
        await fleet.repo.upsert(shared)
        await fleet.warm()
        assert await fleet.kept() == set(READERS)
        for scope, level, dropped in (
            (ALICE, ForgetLevel.SESSION, {"alice"}),
            (BOB, ForgetLevel.USER, {"bob"}),
            (ALICE, ForgetLevel.CUSTOMER, {"alice", "bob"}),
            (CAROL, ForgetLevel.CLIENT, {"carol", "alice", "bob"}),
        ):
            await fleet.repo.forget(scope, level)
            assert await fleet.kept() == set(READERS) - dropped, level
            gone = {m.memory_id for m in written if forgets(scope, level, m.owner, m.session_id)}
            assert gone, level
            for who in READERS.values():  # nothing of the forgotten is read by anyone
                assert not gone & _ids(await _reads_of(fleet.repo, who)), (level, who)
        for who in (ALICE, BOB, CAROL):
            assert not _ids(await _reads_of(fleet.repo, who)), who
        assert _ids(await _reads_of(fleet.repo, DAVE))  # c2's dave was never forgotten
    finally:
        await store.close()


async def test_a_read_racing_a_write_of_its_owner_is_never_served(tmp_path: Path) -> None:
    store, fleet = await _open(tmp_path)
    ex = store.executor
    read, wrote = asyncio.Event(), asyncio.Event()
    real = ex.fetch

    async def racing(sql: str, params: Any = ()) -> Any:
        rows = await real(sql, params)  # the rows as they were
        read.set()
        await wrote.wait()  # a write of the same owner ends before the rows are handed back
        return rows

    try:
        await fleet.repo.upsert([_of(80, ALICE, "Caroline: the support group is on Monday.")])  # alice's reads go
        ex.fetch = racing  # type: ignore[method-assign]
        reading = asyncio.create_task(fleet.repo.phrase_search(ALICE, ["on Monday"], 10))  # alice's rows only
        await read.wait()
        ex.fetch = real  # type: ignore[method-assign]
        changed = _of(80, ALICE, "Caroline: the support group is on Thursday.")
        await fleet.repo.upsert([changed])
        wrote.set()
        assert [m.memory_id for m in await reading] == [changed.memory_id]  # the rows as they were
        after = await fleet.repo.phrase_search(ALICE, ["on Monday"], 10)
        assert after == await fleet.fresh.phrase_search(ALICE, ["on Monday"], 10) == []
    finally:
        await store.close()


async def test_another_connections_commit_and_an_autocommit_statement_drop_everything(tmp_path: Path) -> None:
    path = tmp_path / "retrieve.db"
    store, fleet = await _open(tmp_path)
    other = await SqliteStore.open(path, readers=0)  # another writer of the same file (as another process)
    try:
        # Its owners cannot be known: dave's write (another client) drops alice's reads too.
        await other.memories.upsert([_of(90, DAVE, "Caroline: dave's support group.")])
        assert await fleet.kept() == set()
        assert _of(90, DAVE, "").memory_id in (await _reads_of(fleet.repo, DAVE))[1]
        # A statement on the write connection outside a transaction is seen by its triggers.
        store.executor._conn.execute(
            "UPDATE memories SET status = 'stale' WHERE memory_id = :id", {"id": _of(1, ALICE, "").memory_id}
        )
        assert await fleet.kept() == {"bob", "carol", "dave"}
    finally:
        await other.close()
        await store.close()
