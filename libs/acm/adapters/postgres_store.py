"""Postgres adapters (psycopg 3, async) for the relational ports: memories, jobs, API keys, processed
events, the audit log and agent schemas.

The queries are acm.adapters.sql_repos's, shared with SQLite; what is Postgres's own is here: the tables,
the executor (pool and deadline), the Dialect, and the memories' full-text search (tsvector) and upsert
lock.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from psycopg import AsyncConnection, AsyncCursor
from psycopg.errors import QueryCanceled
from psycopg.rows import DictRow, dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from acm.adapters.sql_migrations import POSTGRES, Migrations, migrate
from acm.adapters.sql_repos import Dialect, Params, SqlMemoryRepo, SqlStore, Tx, pyformat
from acm.domain.models import Memory

__all__ = ["PG", "PgExecutor", "PgMemoryRepo", "PostgresStore"]

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# Letters and digits only: whatever else a user types (quotes, !, &, :*) never reaches the tsquery parser.
_WORD = re.compile(r"[^\W_]+")
_MAX_TERMS = 64


def _utc(value: datetime | None) -> datetime | None:
    """Naive datetimes are taken as UTC, the same choice the SQLite adapter makes."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _native(sql: str, params: Params) -> str:
    # Named params are the shared queries' (":name"); a statement with positional ones is run as written.
    return pyformat(sql) if isinstance(params, Mapping) else sql


class PgTx:
    def __init__(self, cur: AsyncCursor[DictRow]) -> None:
        self._cur = cur

    async def execute(self, sql: str, params: Params = ()) -> int:
        await self._cur.execute(_native(sql, params), params)
        return self._cur.rowcount

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        await self._cur.executemany(pyformat(sql), rows)

    async def fetch(self, sql: str, params: Params = ()) -> list[DictRow]:
        await self._cur.execute(_native(sql, params), params)
        return await self._cur.fetchall()


class PgExecutor:
    """The pool plus the deadline every statement runs under."""

    def __init__(self, pool: AsyncConnectionPool[AsyncConnection[DictRow]], timeout_s: float) -> None:
        self._pool = pool
        self._timeout_s = timeout_s

    @asynccontextmanager
    async def cursor(self, *, transaction: bool = False) -> AsyncIterator[AsyncCursor[DictRow]]:
        # asyncio.timeout also bounds the wait for a pooled connection; statement_timeout (set on every
        # connection) makes the server give up too, so a cancelled query does not keep running there.
        # Both surface as TimeoutError, the same as the SQLite adapter's deadline.
        try:
            async with asyncio.timeout(self._timeout_s):
                async with self._pool.connection(timeout=self._timeout_s) as conn:
                    if transaction:
                        async with conn.transaction(), conn.cursor() as cur:
                            yield cur
                    else:
                        async with conn.cursor() as cur:
                            yield cur
        except (QueryCanceled, PoolTimeout) as exc:
            raise TimeoutError(f"postgres gave no answer within {self._timeout_s}s: {exc}") from exc

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[PgTx]:
        async with self.cursor(transaction=True) as cur:
            yield PgTx(cur)

    async def fetch(self, sql: str, params: Params = ()) -> list[DictRow]:
        async with self.cursor() as cur:
            await cur.execute(_native(sql, params), params)
            return await cur.fetchall()

    async def fetchone(self, sql: str, params: Params = ()) -> DictRow | None:
        async with self.cursor() as cur:
            await cur.execute(_native(sql, params), params)
            return await cur.fetchone()

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Runs one statement; returns the affected row count."""
        async with self.cursor() as cur:
            await cur.execute(_native(sql, params), params)
            return cur.rowcount

    async def purge(self) -> None:
        """Nothing to do at once: deleted tuples go with VACUUM (docs/privacy.md)."""


def _same(value: Any) -> Any:
    return value


PG = Dialect(
    ts=_utc,
    dt=_same,
    array=list,
    from_array=tuple,
    obj=lambda value: Jsonb(dict(value)),
    from_obj=_same,
    in_list=lambda column, param: f"{column} = ANY(:{param})",
    json_text=lambda column: f"{column}::text",
    json_param=lambda param: f":{param}::jsonb",
    json_contains=lambda column, param: f"{column} @> :{param}",
    planner_hint="",
)


def or_tsquery_text(query: str) -> str:
    """``to_tsquery`` input matching ANY of the query's words.

    Users ask natural questions ("What did Sarah say about the invoice?"); plainto_tsquery would AND every
    word and find nothing. Stop words drop out inside to_tsquery('english', ...).
    """
    terms = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))[:_MAX_TERMS]
    return " | ".join(terms)


class PgMemoryRepo(SqlMemoryRepo):
    SCORE = "ts_rank_cd(m.tsv, q)"

    async def _taken(self, tx: Tx, memories: Sequence[Memory]) -> list[str]:
        rows = await tx.fetch(
            "SELECT m.memory_id FROM memories m "
            "JOIN unnest(:ids::text[], :clients::text[]) AS n(memory_id, client_id) USING (memory_id) "
            "WHERE m.client_id <> n.client_id FOR UPDATE OF m",
            {"ids": [m.memory_id for m in memories], "clients": [m.owner.client_id for m in memories]},
        )
        return [r["memory_id"] for r in rows]

    def _words(self, query: str) -> tuple[str, dict[str, Any]] | None:
        terms = or_tsquery_text(query)
        return ("FROM memories m, to_tsquery('english', :q) AS q WHERE m.tsv @@ q", {"q": terms}) if terms else None

    def _phrases(self, phrases: Sequence[str]) -> tuple[str, dict[str, Any]] | None:
        wanted = [p for p in phrases if _WORD.search(p)][:_MAX_TERMS]
        if not wanted:
            return None
        # The same parser reads the phrase and the text, so an id's pieces line up as they were indexed.
        return (
            "FROM memories m "
            "WHERE m.tsv @@ ANY(ARRAY(SELECT phraseto_tsquery('english', p) FROM unnest(:phrases::text[]) AS p))",
            {"phrases": wanted},
        )

    def _anchors(self, turns: Sequence[tuple[str, Any]]) -> tuple[str, dict[str, Any]]:
        sids, ts = [sid for sid, _ in turns], [at for _, at in turns]
        return "SELECT * FROM unnest(:sids::text[], :ts::timestamptz[])", {"sids": sids, "ts": ts}


# --- the holder -----------------------------------------------------------------------------------------


class PostgresStore(SqlStore):
    """The pool and the repos over it. Build with ``await PostgresStore.open(dsn)``."""

    def __init__(self, pool: AsyncConnectionPool[AsyncConnection[DictRow]], timeout_s: float) -> None:
        self.pool = pool
        self.executor = PgExecutor(pool, timeout_s)
        super().__init__(self.executor, PG, PgMemoryRepo(self.executor, PG))

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        timeout_s: float = 5.0,
        schema: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
        groups: Iterable[str] | None = None,
    ) -> PostgresStore:
        """Connects, runs the migrations and returns the store.

        ``schema`` puts every table in that Postgres schema (created if missing) instead of the
        connection's default search_path: a service's own schema (acm.ownership), or a test's fresh, private
        set of tables. ``groups``: the table groups to migrate (acm.adapters.sql_migrations; None: all).
        """
        options = [f"-c statement_timeout={max(1, int(timeout_s * 1000))}", "-c TimeZone=UTC"]
        if schema is not None:
            if not _SCHEMA_NAME.match(schema):
                raise ValueError(f"schema name {schema!r} must match {_SCHEMA_NAME.pattern}")
            options.append(f"-c search_path={schema}")
        pool = AsyncConnectionPool(
            dsn,
            connection_class=AsyncConnection[DictRow],
            kwargs={
                "autocommit": True,
                "row_factory": dict_row,
                "options": " ".join(options),
                "application_name": "acm",
            },
            min_size=min_size,
            max_size=max_size,
            timeout=timeout_s,
            check=AsyncConnectionPool.check_connection,  # drops connections a server restart broke
            open=False,
        )
        try:
            await pool.open(wait=True, timeout=timeout_s)
            store = cls(pool, timeout_s)
            await store._migrate(schema, POSTGRES if groups is None else POSTGRES.only(groups))
        except BaseException:
            await pool.close()
            raise
        return store

    async def _migrate(self, schema: str | None, migrations: Migrations) -> None:
        # The schema is created under the migrations' lock: two concurrent CREATE SCHEMA IF NOT EXISTS can
        # still collide on the catalog's unique index. Only when missing: a service's role, whose schema an
        # admin made for it (`acm db roles`), has no right to CREATE on the database, and Postgres checks
        # that right before IF NOT EXISTS.
        create = (
            f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_namespace WHERE nspname = '{schema}') "
            f"THEN CREATE SCHEMA {schema}; END IF; END $$"
        )
        await migrate(self.executor, migrations, [create] if schema else [])

    async def close(self) -> None:
        await self.pool.close()
