"""WorkingMemoryRepo over the relational store: Postgres (PgWorkingMemoryRepo) and SQLite
(SqliteWorkingMemoryRepo). One row per session holds the working memory as JSON with a version; a swap is
a compare-and-swap on that version, in the same transaction as the compaction record."""

from __future__ import annotations

from typing import Any

from acm.adapters.postgres_store import PgExecutor
from acm.adapters.sql_repos import Tx
from acm.adapters.sqlite_store import SqliteExecutor
from acm.domain.compaction.engine import WorkingMemory
from acm.domain.compaction.record import CompactionRecord
from acm.domain.scope import ForgetLevel, Scope, ScopeError

_KEY = ("client_id", "customer_id", "user_id", "session_id")


def _session(scope: Scope) -> dict[str, Any]:
    if not scope.session_id:
        raise ScopeError("working memory needs scope.session_id")
    return {k: getattr(scope, k) for k in _KEY}


def _forget_where(scope: Scope, level: ForgetLevel, mark: str) -> tuple[str, list[str]]:
    """acm.domain.scope.forgets() for session-keyed rows: each level narrows by one more id."""
    if level is ForgetLevel.SESSION and not scope.session_id:
        raise ScopeError("forgetting a session needs scope.session_id")
    depth = {ForgetLevel.CLIENT: 1, ForgetLevel.CUSTOMER: 2, ForgetLevel.USER: 3, ForgetLevel.SESSION: 4}[level]
    keys = _KEY[:depth]
    return " AND ".join(f"{k} = {mark}" for k in keys), [getattr(scope, k) for k in keys]


_SQLITE_DDL = (
    """CREATE TABLE IF NOT EXISTS working_memory (
        client_id TEXT NOT NULL, customer_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
        version INTEGER NOT NULL, body TEXT NOT NULL, updated_at TEXT NOT NULL,
        PRIMARY KEY (client_id, customer_id, user_id, session_id))""",
    """CREATE TABLE IF NOT EXISTS compactions (
        compaction_id TEXT PRIMARY KEY,
        client_id TEXT NOT NULL, customer_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
        body TEXT NOT NULL, created_at TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS compactions_session_idx ON compactions "
    "(client_id, customer_id, user_id, session_id, created_at)",
)


class SqliteWorkingMemoryRepo:
    def __init__(self, ex: SqliteExecutor) -> None:
        self._ex = ex

    async def migrate(self) -> None:
        async with self._ex.transaction() as tx:
            for ddl in _SQLITE_DDL:
                await tx.execute(ddl)

    async def get(self, scope: Scope) -> WorkingMemory | None:
        row = await self._ex.fetchone(
            "SELECT body FROM working_memory WHERE client_id = :client_id AND customer_id = :customer_id "
            "AND user_id = :user_id AND session_id = :session_id",
            _session(scope),
        )
        return WorkingMemory.from_json(row["body"]) if row else None

    async def swap(self, scope: Scope, memory: WorkingMemory, record: CompactionRecord) -> bool:
        key = _session(scope)
        async with self._ex.transaction() as tx:
            rows = await tx.fetch(
                "SELECT version FROM working_memory WHERE client_id = :client_id AND customer_id = :customer_id "
                "AND user_id = :user_id AND session_id = :session_id",
                key,
            )
            if (rows[0]["version"] if rows else 0) != memory.version - 1:
                return False
            await tx.execute(
                "INSERT INTO working_memory (client_id, customer_id, user_id, session_id, version, body, updated_at) "
                "VALUES (:client_id, :customer_id, :user_id, :session_id, :version, :body, :at) "
                "ON CONFLICT (client_id, customer_id, user_id, session_id) DO UPDATE SET "
                "version = excluded.version, body = excluded.body, updated_at = excluded.updated_at",
                {**key, "version": memory.version, "body": memory.to_json(), "at": record.created_at.isoformat()},
            )
            await self._insert_record(tx, key, record)
        return True

    @staticmethod
    async def _insert_record(tx: Tx, key: dict[str, Any], record: CompactionRecord) -> None:
        await tx.execute(
            "INSERT INTO compactions (compaction_id, client_id, customer_id, user_id, session_id, body, created_at) "
            "VALUES (:id, :client_id, :customer_id, :user_id, :session_id, :body, :at) ON CONFLICT DO NOTHING",
            {**key, "id": record.compaction_id, "body": record.to_json(), "at": record.created_at.isoformat()},
        )

    async def record(self, scope: Scope, record: CompactionRecord) -> None:
        key = _session(scope)
        async with self._ex.transaction() as tx:
            await self._insert_record(tx, key, record)

    async def compactions(self, scope: Scope, limit: int = 20) -> list[CompactionRecord]:
        rows = await self._ex.fetch(
            "SELECT body FROM compactions WHERE client_id = :client_id AND customer_id = :customer_id "
            "AND user_id = :user_id AND session_id = :session_id ORDER BY created_at DESC, compaction_id LIMIT :limit",
            {**_session(scope), "limit": max(limit, 0)},
        )
        return [CompactionRecord.from_json(r["body"]) for r in rows]

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        where, params = _forget_where(scope, level, "?")
        async with self._ex.transaction() as tx:
            await tx.execute(f"DELETE FROM compactions WHERE {where}", params)
            erased = await tx.execute(f"DELETE FROM working_memory WHERE {where}", params)
        await self._ex.purge()  # the zeroed pages into the file, the WAL that held the turns emptied
        return erased


_PG_DDL = (
    """CREATE TABLE IF NOT EXISTS working_memory (
        client_id TEXT NOT NULL, customer_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
        version INTEGER NOT NULL, body JSONB NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (client_id, customer_id, user_id, session_id))""",
    """CREATE TABLE IF NOT EXISTS compactions (
        compaction_id TEXT PRIMARY KEY,
        client_id TEXT NOT NULL, customer_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
        body JSONB NOT NULL, created_at TIMESTAMPTZ NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS compactions_session_idx ON compactions "
    "(client_id, customer_id, user_id, session_id, created_at)",
)
_PG_WHERE = (
    "client_id = %(client_id)s AND customer_id = %(customer_id)s AND user_id = %(user_id)s "
    "AND session_id = %(session_id)s"
)


class PgWorkingMemoryRepo:
    def __init__(self, ex: PgExecutor) -> None:
        self._ex = ex

    async def migrate(self) -> None:
        async with self._ex.cursor(transaction=True) as cur:
            await cur.execute("SELECT pg_advisory_xact_lock(hashtext('acm.working_memory.migrate'))")
            for ddl in _PG_DDL:
                await cur.execute(ddl)

    async def get(self, scope: Scope) -> WorkingMemory | None:
        row = await self._ex.fetchone(
            f"SELECT body::text AS body FROM working_memory WHERE {_PG_WHERE}", _session(scope)
        )
        return WorkingMemory.from_json(row["body"]) if row else None

    async def swap(self, scope: Scope, memory: WorkingMemory, record: CompactionRecord) -> bool:
        key = _session(scope)
        params = {**key, "version": memory.version, "prev": memory.version - 1, "body": memory.to_json()}
        async with self._ex.cursor(transaction=True) as cur:
            if memory.version == 1:
                # First compaction: the insert itself is the compare (a concurrent one hits the key).
                await cur.execute(
                    "INSERT INTO working_memory (client_id, customer_id, user_id, session_id, version, body) "
                    "VALUES (%(client_id)s, %(customer_id)s, %(user_id)s, %(session_id)s, %(version)s, "
                    "%(body)s::jsonb) "
                    "ON CONFLICT DO NOTHING",
                    params,
                )
            else:
                await cur.execute(
                    f"UPDATE working_memory SET version = %(version)s, body = %(body)s::jsonb, updated_at = now() "
                    f"WHERE {_PG_WHERE} AND version = %(prev)s",
                    params,
                )
            if cur.rowcount != 1:
                return False
            await cur.execute(*self._record_sql(key, record))
        return True

    @staticmethod
    def _record_sql(key: dict[str, Any], record: CompactionRecord) -> tuple[str, dict[str, Any]]:
        return (
            "INSERT INTO compactions (compaction_id, client_id, customer_id, user_id, session_id, body, created_at) "
            "VALUES (%(id)s, %(client_id)s, %(customer_id)s, %(user_id)s, %(session_id)s, %(body)s::jsonb, %(at)s) "
            "ON CONFLICT DO NOTHING",
            {**key, "id": record.compaction_id, "body": record.to_json(), "at": record.created_at},
        )

    async def record(self, scope: Scope, record: CompactionRecord) -> None:
        await self._ex.execute(*self._record_sql(_session(scope), record))

    async def compactions(self, scope: Scope, limit: int = 20) -> list[CompactionRecord]:
        rows = await self._ex.fetch(
            f"SELECT body::text AS body FROM compactions WHERE {_PG_WHERE} "
            "ORDER BY created_at DESC, compaction_id LIMIT %(limit)s",
            {**_session(scope), "limit": max(limit, 0)},
        )
        return [CompactionRecord.from_json(r["body"]) for r in rows]

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        where, params = _forget_where(scope, level, "%s")
        async with self._ex.cursor(transaction=True) as cur:
            await cur.execute(f"DELETE FROM compactions WHERE {where}", params)
            await cur.execute(f"DELETE FROM working_memory WHERE {where}", params)
            return cur.rowcount
