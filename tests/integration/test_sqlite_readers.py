"""SQLite reads outside a transaction run on the store's reader connections, in worker threads (off the event
loop), see what was committed, not what a transaction still holds, and keep the deadline; an in-memory
database reads inline. Real SQLite files."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from acm.adapters.sqlite_store import SqliteStore


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
