"""SQLite reads outside a transaction run on the store's reader connections, in worker threads (off the event
loop), see what was committed, not what a transaction still holds, and keep the deadline; an in-memory
database reads inline. Decoded memories are reused for identical rows only. Real SQLite files."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from acm.adapters.sqlite_store import MEMORY_NAMES, DecodedRows, SqliteStore
from acm.bootstrap import open_relational
from acm.domain.models import Layer, Memory, Owner
from acm.domain.scope import Scope, Tier
from acm_cli.embedded import EmbeddedSettings


async def test_reads_run_on_reader_threads_and_see_committed_rows_only(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "acm.db", readers=2)
    ex = store.executor
    try:
        await ex.execute("CREATE TABLE t (v INTEGER)")
        await ex.execute("INSERT INTO t VALUES (1)")
        main = threading.get_ident()
        seen: set[int] = set()
        row = await ex.fetchone("SELECT count(*) AS n FROM t")
        assert row is not None and row["n"] == 1
        # Concurrent reads: each on a reader thread, none on the loop's.
        rows = await asyncio.gather(*(ex.fetch("SELECT v FROM t") for _ in range(8)))
        assert all([r["v"] for r in rs] == [1] for rs in rows)
        for t in threading.enumerate():
            if t.name.startswith("sqlite-read"):
                seen.add(t.ident or 0)
        assert seen and main not in seen and len(seen) <= 2
        async with ex.transaction() as tx:
            await tx.execute("INSERT INTO t VALUES (2)")
            assert [r["v"] for r in await tx.fetch("SELECT v FROM t ORDER BY v")] == [1, 2]
            # Outside the transaction (as on Postgres's pool): the committed rows only.
            assert [r["v"] for r in await ex.fetch("SELECT v FROM t ORDER BY v")] == [1]
        assert [r["v"] for r in await ex.fetch("SELECT v FROM t ORDER BY v")] == [1, 2]
        # A reader connection is read-only.
        with pytest.raises(sqlite3.OperationalError) as refused:
            await ex.fetch("INSERT INTO t VALUES (3) RETURNING v")
        assert refused.value.sqlite_errorcode == sqlite3.SQLITE_READONLY
    finally:
        await store.close()


async def test_a_read_past_the_deadline_times_out_on_a_reader(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "acm.db", timeout_s=0.05, readers=1)
    try:
        slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
        with pytest.raises(TimeoutError):
            await store.executor.fetch(slow)
        row = await store.executor.fetchone("SELECT 1 AS one")  # the reader still works afterwards
        assert row is not None and row["one"] == 1
    finally:
        await store.close()


async def test_in_memory_and_zero_readers_read_inline(tmp_path: Path) -> None:
    for path, readers in ((":memory:", 4), (tmp_path / "acm.db", 0)):
        store = await SqliteStore.open(path, readers=readers)
        try:
            await store.executor.execute("CREATE TABLE t (v INTEGER)")
            async with store.executor.transaction() as tx:
                await tx.execute("INSERT INTO t VALUES (1)")
            assert (await store.executor.fetchone("SELECT count(*) AS n FROM t"))["n"] == 1  # type: ignore[index]
            assert store.executor._readers is None
        finally:
            await store.close()


async def test_decoded_memories_are_reused_only_for_identical_rows(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "acm.db")
    repo = store.memories
    now = datetime.now(UTC)
    scope = Scope("c", "cu", "u", "a", "s")
    owner = Owner("c", Tier.USER, "cu", "u")
    memory = Memory("m1", owner, "Caroline went hiking.", Layer.LONG, "fact", ("t1",), now, session_id="s")
    try:
        await repo.upsert([memory, replace(memory, memory_id="m2", text="Jon paints.")])
        first = await repo.get(scope, ["m1", "m2"])
        again = await repo.get(scope, ["m1", "m2"])
        assert [m.memory_id for m in again] == [m.memory_id for m in first]
        assert all(a is b for a, b in zip(again, first, strict=True))  # decoded once
        hit = (await repo.keyword_search(scope, "hiking", 5, (Tier.USER,), (Layer.LONG,)))[0]
        assert hit.memory is first[0]  # the search's score column is not part of the key
        await repo.upsert([replace(memory, text="Caroline went hiking twice.", access_count=3)])
        changed = {m.memory_id: m for m in await repo.get(scope, ["m1", "m2"])}
        assert changed["m1"].text == "Caroline went hiking twice." and changed["m1"].access_count == 3
        assert changed["m2"] is first[1]
    finally:
        await store.close()


def test_decoded_rows_are_bounded() -> None:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    cols = ", ".join(f"{i} AS {name}" for i, name in enumerate(MEMORY_NAMES))
    decoded = DecodedRows(2)
    calls: list[int] = []

    def decode(row: Any) -> Any:
        calls.append(row["memory_id"])
        return object()

    rows = [
        conn.execute(f"SELECT {cols.replace('0 AS memory_id', f'{k} AS memory_id', 1)}").fetchone() for k in range(3)
    ]
    for row in (*rows, rows[0]):
        decoded.get(row, decode)
    assert len(decoded) == 2 and calls == [0, 1, 2, 0]  # the oldest was dropped, so decoded again
    assert decoded.get(rows[0], decode) is decoded.get(rows[0], decode) and calls == [0, 1, 2, 0]
    off = DecodedRows(0)
    off.get(rows[1], decode)
    off.get(rows[1], decode)
    assert calls[-2:] == [1, 1] and len(off) == 0


async def test_the_reader_count_comes_from_the_caller(tmp_path: Path) -> None:
    """ACM_SQLITE_READERS reaches the store: open_relational sizes the reader pool (0: inline)."""
    for readers in (0, 2):
        rel = await open_relational(f"sqlite:///{tmp_path / f'r{readers}.db'}", sqlite_readers=readers)
        try:
            pool = rel._handle.executor._readers  # type: ignore[attr-defined]
            assert (None if pool is None else pool._pool._max_workers) == (None if readers == 0 else readers)
        finally:
            await rel.close()
    assert EmbeddedSettings(data_dir=tmp_path).sqlite_readers == 4
