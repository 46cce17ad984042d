"""ACM_STORE_TIMEOUT_S reaches the embedded (SQLite) relational and graph stores, as it does Postgres and
Neo4j."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from acm.adapters.sqlite_store import SqliteStore
from acm.bootstrap import open_graph, open_relational
from acm.domain.models import Entity
from acm.domain.scope import Scope, Tier

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


async def test_the_store_timeout_bounds_the_wait_for_a_locked_sqlite_graph(tmp_path: Path) -> None:
    graph = await open_graph(f"sqlite:///{tmp_path}/graph.db", timeout_s=0.2)
    other = sqlite3.connect(tmp_path / "graph.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        started = time.monotonic()
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await graph.upsert_entities([Entity("e1", Scope("c1", "acme", "alice").owner(Tier.USER), "Ann", "person")])
        assert time.monotonic() - started < 2.0  # the 0.2 s busy timeout, not the 5 s default
    finally:
        other.execute("ROLLBACK")
        other.close()
