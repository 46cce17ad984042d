"""ACM_STORE_TIMEOUT_S reaches the embedded (SQLite) relational store, as it does Postgres."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from acm.adapters.sqlite_store import SqliteStore
from acm.bootstrap import open_relational

COUNT_FAR = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"


async def test_the_store_timeout_bounds_every_sqlite_statement(tmp_path: Path) -> None:
    rel = await open_relational(f"sqlite:///{tmp_path}/acm.db", timeout_s=0.2)
    try:
        store = rel._handle
        assert isinstance(store, SqliteStore)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await store.executor.fetch(COUNT_FAR)
        assert time.monotonic() - started < 2.0  # the 0.2 s deadline, not the 5 s default
    finally:
        await rel.close()
