"""Versioned migrations of the relational store (acm.adapters.sql_migrations), on SQLite and Postgres: a
database made by the release before them is upgraded in place, and a start runs each migration once."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from acm.adapters.postgres_store import PostgresStore
from acm.adapters.sql_migrations import POSTGRES, SQLITE, Migration, Migrations, migrate
from acm.adapters.sqlite_store import SqliteStore
from acm.domain.scope import Grant, KeyRole, Scope

FIXTURES = Path(__file__).parent / "fixtures"
ALICE = Scope("c1", "acme", "alice", session_id="s1")
KEY_HASH = "ab" * 32
# Rows as the release before versions wrote them (its own text formats).
OLD_ROWS = (
    "INSERT INTO memories (memory_id, client_id, tier, customer_id, user_id, session_id, text, layer, kind, "
    "created_at) VALUES ('m-old', 'c1', 'user', 'acme', 'alice', 's1', 'Alice wants a refund for invoice 42', "
    "'mid', 'fact', '2025-03-01T12:00:00.000000+00:00')",
    "INSERT INTO api_keys (key_id, client_id, key_hash, name, created_at, revoked) "
    f"VALUES ('k-old', 'c1', '{KEY_HASH}', 'old key', '2025-03-01T12:00:00+00:00', false)",
)

Store = SqliteStore | PostgresStore


def statements(name: str) -> list[str]:
    lines = (FIXTURES / name).read_text().splitlines()
    text = "\n".join(line for line in lines if not line.startswith("-- "))  # the file's header
    return [s.strip() for s in text.split("\n;") if s.strip()]


@dataclass
class Backend:
    migrations: Migrations
    run_old_ddl: Callable[[list[str]], Awaitable[None]]  # on an empty database, outside the store
    open: Callable[[], Awaitable[Store]]
    ddl_file: str


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.infra)])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    opened: list[Store] = []
    if request.param == "sqlite":
        db = tmp_path / "acm.db"

        async def old_sqlite(sql: list[str]) -> None:
            with sqlite3.connect(db) as conn:
                for s in sql:
                    conn.execute(s)

        async def open_sqlite() -> Store:
            opened.append(await SqliteStore.open(db))
            return opened[-1]

        yield Backend(SQLITE, old_sqlite, open_sqlite, "relational_before_versions.sqlite.sql")
    else:
        dsn: str = request.getfixturevalue("postgres_dsn")
        schema = f"migrations_{uuid.uuid4().hex[:12]}"

        async def old_pg(sql: list[str]) -> None:
            async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
                await conn.execute(f"CREATE SCHEMA {schema}")
                await conn.execute(f"SET search_path = {schema}")
                for s in sql:
                    await conn.execute(s)  # type: ignore[arg-type]

        async def open_pg() -> Store:
            opened.append(await PostgresStore.open(dsn, schema=schema))
            return opened[-1]

        try:
            yield Backend(POSTGRES, old_pg, open_pg, "relational_before_versions.postgres.sql")
        finally:
            async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
                await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")  # type: ignore[arg-type]
    for store in opened:
        await store.close()


GROUPS = ["api_keys", "audit", "entities", "jobs", "memories", "processed", "schemas", "working"]


def declared(migrations: Migrations) -> list[tuple[str, int]]:
    """Every (group, version) a backend declares: what a new or upgraded store has run."""
    return sorted((group, m.version) for group, steps in migrations.groups.items() for m in steps)


async def _versions(store: Store) -> list[tuple[str, int]]:
    rows = await store.executor.fetch("SELECT grp, version FROM schema_versions ORDER BY grp, version")
    return [(r["grp"], int(r["version"])) for r in rows]


async def test_a_database_made_before_versions_is_upgraded_in_place(backend: Backend) -> None:
    await backend.run_old_ddl([*statements(backend.ddl_file), *OLD_ROWS])
    store = await backend.open()  # the new release starting
    assert await _versions(store) == declared(backend.migrations)
    assert sorted({group for group, _ in declared(backend.migrations)}) == GROUPS
    [old] = await store.memories.get(ALICE, ["m-old"])
    assert old.text == "Alice wants a refund for invoice 42"
    assert old.created_at == datetime(2025, 3, 1, 12, tzinfo=UTC)
    assert [s.memory.memory_id for s in await store.memories.keyword_search(ALICE, "refund", 5)] == ["m-old"]
    key = await store.api_keys.by_hash(KEY_HASH)
    assert key is not None and key.grant == Grant(KeyRole.ADMIN)
    # Written and read as before, next to the old row.
    await store.memories.upsert([replace(old, memory_id="m-new", text="Alice also asked about refunds")])
    found = await store.memories.keyword_search(ALICE, "refund", 5)
    assert sorted(s.memory.memory_id for s in found) == ["m-new", "m-old"]


async def test_each_migration_runs_once(backend: Backend) -> None:
    store = await backend.open()
    assert await _versions(store) == declared(backend.migrations)
    assert await migrate(store.executor, backend.migrations) == []  # a second start runs nothing
    later_version = max(m.version for m in backend.migrations.groups["jobs"]) + 1
    jobs = (
        *backend.migrations.groups["jobs"],
        Migration(later_version, "a later change", ("CREATE TABLE later (id integer)",)),
    )
    later = replace(backend.migrations, groups={**backend.migrations.groups, "jobs": jobs})
    assert await migrate(store.executor, later) == [("jobs", later_version)]
    assert await migrate(store.executor, later) == []  # CREATE TABLE without IF NOT EXISTS: never run twice
    assert await _versions(store) == declared(later)
    assert await store.executor.fetch("SELECT id FROM later") == []
    reopened = await backend.open()
    assert await _versions(reopened) == declared(later)
