"""WorkingMemoryRepo over the relational store, one for both: Postgres (PgWorkingMemoryRepo) and SQLite
(SqliteWorkingMemoryRepo) differ only in their tables. One row per session holds the working memory as JSON
with a version; a swap is a compare-and-swap on that version, in the same transaction as the compaction
record."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from acm.adapters import sql_migrations
from acm.adapters.postgres_store import PG, PgExecutor
from acm.adapters.sql_migrations import Migrations, migrate
from acm.adapters.sql_repos import Dialect, Executor, Tx
from acm.adapters.sqlite_store import SQLITE, SqliteExecutor
from acm.domain.compaction.engine import WorkingMemory
from acm.domain.compaction.record import CompactionRecord
from acm.domain.scope import ForgetLevel, Scope, ScopeError

_KEY = ("client_id", "customer_id", "user_id", "session_id")
_WHERE = " AND ".join(f"{k} = :{k}" for k in _KEY)


def _session(scope: Scope) -> dict[str, Any]:
    if not scope.session_id:
        raise ScopeError("working memory needs scope.session_id")
    return {k: getattr(scope, k) for k in _KEY}


def _forget_where(scope: Scope, level: ForgetLevel) -> tuple[str, dict[str, str]]:
    """acm.domain.scope.forgets() for session-keyed rows: each level narrows by one more id."""
    if level is ForgetLevel.SESSION and not scope.session_id:
        raise ScopeError("forgetting a session needs scope.session_id")
    depth = {ForgetLevel.CLIENT: 1, ForgetLevel.CUSTOMER: 2, ForgetLevel.USER: 3, ForgetLevel.SESSION: 4}[level]
    keys = _KEY[:depth]
    return " AND ".join(f"{k} = :{k}" for k in keys), {k: getattr(scope, k) for k in keys}


class SqlWorkingMemoryRepo:
    def __init__(self, ex: Executor, dialect: Dialect, migrations: Migrations) -> None:
        self._ex = ex
        self._d = dialect
        self._migrations = migrations

    async def migrate(self) -> None:
        """The working memory's migrations (the store's include them); a no-op once the store has opened."""
        await migrate(self._ex, self._migrations.only(["working"]))

    async def get(self, scope: Scope) -> WorkingMemory | None:
        row = await self._ex.fetchone(
            f"SELECT {self._d.json_text('body')} AS body FROM working_memory WHERE {_WHERE}", _session(scope)
        )
        return WorkingMemory.from_json(row["body"]) if row else None

    async def swap(self, scope: Scope, memory: WorkingMemory, record: CompactionRecord) -> bool:
        key = _session(scope)
        body = self._d.json_param("body")
        params = {
            **key,
            "version": memory.version,
            "prev": memory.version - 1,
            "body": memory.to_json(),
            "at": self._d.ts(record.created_at),
        }
        async with self._ex.transaction() as tx:
            if memory.version == 1:
                # First compaction: the insert itself is the compare (a concurrent one hits the key).
                swapped = await tx.execute(
                    f"INSERT INTO working_memory ({', '.join(_KEY)}, version, body, updated_at) "
                    f"VALUES ({', '.join(f':{k}' for k in _KEY)}, :version, {body}, :at) "
                    "ON CONFLICT DO NOTHING",
                    params,
                )
            else:
                swapped = await tx.execute(
                    f"UPDATE working_memory SET version = :version, body = {body}, updated_at = :at "
                    f"WHERE {_WHERE} AND version = :prev",
                    params,
                )
            if swapped != 1:
                return False
            await self._insert_record(tx, key, record)
        return True

    async def _insert_record(self, tx: Tx, key: dict[str, Any], record: CompactionRecord) -> None:
        await tx.execute(
            f"INSERT INTO compactions (compaction_id, {', '.join(_KEY)}, body, created_at) "
            f"VALUES (:id, {', '.join(f':{k}' for k in _KEY)}, {self._d.json_param('body')}, :at) "
            "ON CONFLICT DO NOTHING",
            {**key, "id": record.compaction_id, "body": record.to_json(), "at": self._d.ts(record.created_at)},
        )

    async def record(self, scope: Scope, record: CompactionRecord) -> None:
        key = _session(scope)
        async with self._ex.transaction() as tx:
            await self._insert_record(tx, key, record)

    async def compactions(self, scope: Scope, limit: int = 20) -> list[CompactionRecord]:
        rows = await self._ex.fetch(
            f"SELECT {self._d.json_text('body')} AS body FROM compactions WHERE {_WHERE} "
            "ORDER BY created_at DESC, compaction_id LIMIT :limit",
            {**_session(scope), "limit": max(limit, 0)},
        )
        return [CompactionRecord.from_json(r["body"]) for r in rows]

    async def of_client(
        self, client_id: str, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[tuple[Scope, CompactionRecord]]:
        params: dict[str, Any] = {"client_id": client_id, "limit": max(limit, 0)}
        mark = ""
        if after is not None:
            mark = " AND (created_at < :mark_t OR (created_at = :mark_t AND compaction_id < :mark_id))"
            params.update(mark_t=self._d.ts(after[0]), mark_id=after[1])
        rows = await self._ex.fetch(
            f"SELECT {', '.join(_KEY)}, {self._d.json_text('body')} AS body FROM compactions "
            f"WHERE client_id = :client_id{mark} ORDER BY created_at DESC, compaction_id DESC LIMIT :limit",
            params,
        )
        return [
            (
                Scope(r["client_id"], r["customer_id"], r["user_id"], session_id=r["session_id"]),
                CompactionRecord.from_json(r["body"]),
            )
            for r in rows
        ]

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        where, params = _forget_where(scope, level)
        async with self._ex.transaction() as tx:
            await tx.execute(f"DELETE FROM compactions WHERE {where}", params)
            erased = await tx.execute(f"DELETE FROM working_memory WHERE {where}", params)
        await self._ex.purge()  # SQLite: the zeroed pages into the file, the WAL that held the turns emptied
        return erased


class SqliteWorkingMemoryRepo(SqlWorkingMemoryRepo):
    def __init__(self, ex: SqliteExecutor) -> None:
        super().__init__(ex, SQLITE, sql_migrations.SQLITE)


class PgWorkingMemoryRepo(SqlWorkingMemoryRepo):
    def __init__(self, ex: PgExecutor) -> None:
        super().__init__(ex, PG, sql_migrations.POSTGRES)
