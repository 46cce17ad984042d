"""SQLite adapters (stdlib sqlite3 + FTS5) for the relational ports, the embedded default of the Postgres
ones in acm.adapters.postgres_store: same classes per object type, same contract.

One connection in WAL mode. Calls take microseconds to milliseconds, so they run inline in the async
methods (a thread hop would cost more than the query); writes go through an asyncio.Lock so a transaction
is never interleaved with another coroutine's, and a progress handler enforces the deadline.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from acm.adapters.sql_shapes import turn_neighbours_sql
from acm.domain.models import (
    ALL_LAYERS,
    Job,
    JobStatus,
    Layer,
    Memory,
    MemoryStatus,
    ScoredMemory,
    in_own_session,
    utcnow,
)
from acm.domain.schema import AgentSchema
from acm.domain.scope import ALL_TIERS, ForgetLevel, Grant, KeyRole, Owner, Scope, ScopeError, Tier, forget_columns
from acm.ports.stores import (
    ApiKey,
    ApiKeyRepo,
    AuditEntry,
    AuditLog,
    JobRepo,
    MemoryRepo,
    ProcessedEvents,
    SchemaRepo,
)

__all__ = [
    "SqliteApiKeyRepo",
    "SqliteAuditLog",
    "SqliteExecutor",
    "SqliteJobRepo",
    "SqliteMemoryRepo",
    "SqliteProcessedEvents",
    "SqliteSchemaRepo",
    "SqliteStore",
]

_WORD = re.compile(r"[^\W_]+")
_MAX_TERMS = 64
# FTS5 has no stop-word list; without one, "what"/"the" in a question would match (and rank) nearly every
# row. Kept short: only words that carry no topic. If a query is all stop words, they are used anyway.
_STOP_WORDS = frozenset(
    "a about after all also an and any are as at be been but by can could did do does for from had has "
    "have he her him his how i if in into is it its just me my no not of on or our she so than that the "
    "their them then there these they this to too up us was we were what when where which who whom why "
    "will with would you your".split()
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    rid             INTEGER PRIMARY KEY,  -- stable rowid for the external-content FTS table
    memory_id       TEXT NOT NULL UNIQUE,
    client_id       TEXT NOT NULL,
    tier            TEXT NOT NULL CHECK (tier IN ('user', 'customer', 'client')),
    customer_id     TEXT NOT NULL DEFAULT '',
    user_id         TEXT NOT NULL DEFAULT '',
    agent_id        TEXT NOT NULL DEFAULT '',
    session_id      TEXT NOT NULL DEFAULT '',
    text            TEXT NOT NULL,
    layer           TEXT NOT NULL,
    kind            TEXT NOT NULL,
    source_turn_ids TEXT NOT NULL DEFAULT '[]',  -- JSON array
    created_at      TEXT NOT NULL,  -- ISO 8601 UTC, fixed width, so text order is time order
    updated_at      TEXT,
    valid_from      TEXT,
    valid_to        TEXT,
    token_count     INTEGER NOT NULL DEFAULT 0,
    mention_count   INTEGER NOT NULL DEFAULT 1,
    access_count    INTEGER NOT NULL DEFAULT 0,
    status          TEXT NOT NULL DEFAULT 'active',
    superseded_by   TEXT NOT NULL DEFAULT '',
    schema_version  INTEGER NOT NULL DEFAULT 0,
    slot            TEXT NOT NULL DEFAULT '',
    role            TEXT NOT NULL DEFAULT '',
    tool_name       TEXT NOT NULL DEFAULT '',
    trust           TEXT NOT NULL DEFAULT 'normal'
);
CREATE INDEX IF NOT EXISTS memories_scope_idx ON memories (client_id, customer_id, user_id);
CREATE INDEX IF NOT EXISTS memories_session_idx
    ON memories (client_id, customer_id, user_id, session_id, created_at);

CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    text, content='memories', content_rowid='rid', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.rid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_au AFTER UPDATE OF text ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rid, old.text);
    INSERT INTO memories_fts (rowid, text) VALUES (new.rid, new.text);
END;

CREATE TABLE IF NOT EXISTS jobs (
    job_id      TEXT PRIMARY KEY,
    client_id   TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    agent_id    TEXT NOT NULL DEFAULT '',
    session_id  TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    status      TEXT NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    counts      TEXT NOT NULL DEFAULT '{}',  -- JSON object
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS api_keys (
    key_id     TEXT PRIMARY KEY,
    client_id  TEXT NOT NULL,
    key_hash   TEXT NOT NULL UNIQUE,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS processed_events (
    group_name TEXT NOT NULL,
    event_id   TEXT NOT NULL,
    at         TEXT NOT NULL,
    PRIMARY KEY (group_name, event_id)
);

CREATE TABLE IF NOT EXISTS audit_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id TEXT NOT NULL,
    action    TEXT NOT NULL,
    detail    TEXT NOT NULL,
    at        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_client_idx ON audit_log (client_id, at, id);

CREATE TABLE IF NOT EXISTS agent_schemas (
    client_id  TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    version    INTEGER NOT NULL,
    body       TEXT NOT NULL,  -- AgentSchema.to_json()
    created_at TEXT NOT NULL,
    PRIMARY KEY (client_id, agent_id, version)
);
"""


def _ts(value: datetime | None) -> str | None:
    """Fixed-width UTC text (naive taken as UTC), so ORDER BY on the column is chronological."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


def _dt_required(value: str) -> datetime:
    return datetime.fromisoformat(value)


Params = Sequence[Any] | dict[str, Any]


class SqliteExecutor:
    """The connection, the write lock and the deadline every statement runs under."""

    def __init__(self, conn: sqlite3.Connection, timeout_s: float) -> None:
        self._conn = conn
        self._timeout_s = timeout_s
        self._write_lock = asyncio.Lock()

    @contextmanager
    def _deadline(self) -> Iterator[None]:
        # SQLite calls the handler every N VM steps; a non-zero return aborts the statement
        # ("interrupted"), which we surface as TimeoutError like the Postgres adapter's deadline.
        end = time.monotonic() + self._timeout_s
        self._conn.set_progress_handler(lambda: int(time.monotonic() > end), 10_000)
        try:
            yield
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise TimeoutError(f"sqlite statement exceeded {self._timeout_s}s") from exc
            raise
        finally:
            self._conn.set_progress_handler(None, 0)

    async def fetch(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        with self._deadline():
            return self._conn.execute(sql, params).fetchall()

    async def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        with self._deadline():
            row: sqlite3.Row | None = self._conn.execute(sql, params).fetchone()
            return row

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[sqlite3.Connection]:
        """A write transaction: holds the write lock, BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error)."""
        async with self._write_lock:
            # IMMEDIATE takes SQLite's write lock up front, so another process waits (busy_timeout) instead
            # of failing on a read-to-write upgrade.
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                with self._deadline():
                    yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    async def write(self, sql: str, params: Params = ()) -> int:
        """One statement in its own transaction; returns the affected row count."""
        async with self.transaction() as conn:
            return conn.execute(sql, params).rowcount

    async def purge(self) -> None:
        """After an erasure: FTS5's index rewritten without the deleted rows' terms (its segments keep them
        until merged), then a TRUNCATE checkpoint, so the zeroed pages (secure_delete) reach the file and the
        WAL, whose frames still held the old rows, is emptied (docs/privacy.md)."""
        async with self._write_lock:
            with self._deadline():
                self._conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    async def close(self) -> None:
        async with self._write_lock:  # let an in-flight write finish first
            self._conn.close()


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    """Columns added after a database was first created (CREATE TABLE IF NOT EXISTS keeps the old shape)."""
    have = {row["name"] for row in conn.execute("PRAGMA table_info(memories)")}
    for column, ddl in (
        ("slot", "slot TEXT NOT NULL DEFAULT ''"),
        # Provenance and trust (issue 18): rows stored before them read as trusted, of an unknown role.
        ("role", "role TEXT NOT NULL DEFAULT ''"),
        ("tool_name", "tool_name TEXT NOT NULL DEFAULT ''"),
        ("trust", "trust TEXT NOT NULL DEFAULT 'normal'"),
    ):
        if column not in have:
            conn.execute(f"ALTER TABLE memories ADD COLUMN {ddl}")
    conn.execute("CREATE INDEX IF NOT EXISTS memories_slot_idx ON memories (client_id, slot) WHERE slot != ''")
    conn.execute(_EXPIRY_INDEX)
    # Roles: keys stored before them keep working as admin keys.
    key_columns = {row["name"] for row in conn.execute("PRAGMA table_info(api_keys)")}
    for column, ddl in (
        ("role", "role TEXT NOT NULL DEFAULT 'admin'"),
        ("customers", "customers TEXT NOT NULL DEFAULT '[]'"),  # JSON array
        ("users", "users TEXT NOT NULL DEFAULT '[]'"),  # JSON array
    ):
        if column not in key_columns:
            conn.execute(f"ALTER TABLE api_keys ADD COLUMN {ddl}")


# --- memories -------------------------------------------------------------------------------------------

_MEMORY_COLUMNS = (
    "memory_id, client_id, tier, customer_id, user_id, agent_id, session_id, text, layer, kind, "
    "source_turn_ids, created_at, updated_at, valid_from, valid_to, token_count, mention_count, "
    "access_count, status, superseded_by, schema_version, slot, role, tool_name, trust"
)
_M_COLUMNS = ", ".join(f"m.{c.strip()}" for c in _MEMORY_COLUMNS.split(","))


def _visible(tiers: tuple[Tier, ...], alias: str = "m") -> str:
    """visible() in SQL; client-tier rows carry no customer/user id and customer-tier rows no user id."""
    tier_list = ", ".join(f"'{Tier(t).value}'" for t in tiers)  # enum values only, never user input
    return (
        f"{alias}.client_id = :client_id AND {alias}.tier IN ({tier_list}) AND ({alias}.tier = 'client' OR "
        f"({alias}.customer_id = :customer_id AND ({alias}.tier = 'customer' OR {alias}.user_id = :user_id)))"
    )


def _scope_params(scope: Scope) -> dict[str, Any]:
    return {"client_id": scope.client_id, "customer_id": scope.customer_id, "user_id": scope.user_id}


_UPSERT_MEMORY = f"""
INSERT INTO memories ({_MEMORY_COLUMNS})
VALUES ({", ".join(["?"] * 25)})
ON CONFLICT (memory_id) DO UPDATE SET
    tier = excluded.tier, customer_id = excluded.customer_id, user_id = excluded.user_id,
    agent_id = excluded.agent_id, session_id = excluded.session_id, text = excluded.text,
    layer = excluded.layer, kind = excluded.kind, source_turn_ids = excluded.source_turn_ids,
    created_at = excluded.created_at, updated_at = excluded.updated_at,
    valid_from = excluded.valid_from, valid_to = excluded.valid_to,
    token_count = excluded.token_count, mention_count = excluded.mention_count,
    access_count = excluded.access_count, status = excluded.status,
    superseded_by = excluded.superseded_by, schema_version = excluded.schema_version, slot = excluded.slot,
    role = excluded.role, tool_name = excluded.tool_name, trust = excluded.trust
WHERE memories.client_id = excluded.client_id
"""


def _memory_params(m: Memory) -> tuple[Any, ...]:
    o = m.owner
    return (
        m.memory_id,
        o.client_id,
        str(o.tier),
        o.customer_id,
        o.user_id,
        m.agent_id,
        m.session_id,
        m.text,
        str(m.layer),
        m.kind,
        json.dumps(list(m.source_turn_ids)),
        _ts(m.created_at),
        _ts(m.updated_at),
        _ts(m.valid_from),
        _ts(m.valid_to),
        m.token_count,
        m.mention_count,
        m.access_count,
        str(m.status),
        m.superseded_by,
        m.schema_version,
        m.slot,
        m.role,
        m.tool_name,
        m.trust,
    )


@lru_cache(maxsize=65_536)
def _owner(client_id: str, tier: str, customer_id: str, user_id: str) -> Owner:
    # A retrieval decodes a few hundred rows of a handful of owners: validate each owner once (Owner is frozen).
    return Owner(client_id, Tier(tier), customer_id, user_id)


_LAYERS = {str(layer): layer for layer in Layer}
_STATUSES = {str(status): status for status in MemoryStatus}


def _memory(row: sqlite3.Row) -> Memory:
    turns = row["source_turn_ids"]
    return Memory(
        memory_id=row["memory_id"],
        owner=_owner(row["client_id"], row["tier"], row["customer_id"], row["user_id"]),
        text=row["text"],
        layer=_LAYERS[row["layer"]],
        kind=row["kind"],
        source_turn_ids=tuple(json.loads(turns)) if turns != "[]" else (),
        created_at=_dt_required(row["created_at"]),
        agent_id=row["agent_id"],
        session_id=row["session_id"],
        updated_at=_dt(row["updated_at"]),
        valid_from=_dt(row["valid_from"]),
        valid_to=_dt(row["valid_to"]),
        token_count=row["token_count"],
        mention_count=row["mention_count"],
        access_count=row["access_count"],
        status=_STATUSES[row["status"]],
        superseded_by=row["superseded_by"],
        schema_version=row["schema_version"],
        slot=row["slot"],
        role=row["role"],
        tool_name=row["tool_name"],
        trust=row["trust"],
    )


def fts_phrase_query(phrases: Sequence[str]) -> str:
    """An FTS5 MATCH expression matching ANY of the phrases, each phrase's words consecutive and quoted."""
    quoted = []
    for phrase in phrases[:_MAX_TERMS]:
        words = [w.lower() for w in _WORD.findall(phrase)]
        if words:
            quoted.append('"' + " ".join(words).replace('"', '""') + '"')
    return " OR ".join(quoted)


def fts_or_query(query: str) -> str:
    """An FTS5 MATCH expression matching ANY of the query's words.

    Each term is double-quoted, so words like AND, OR, NEAR or a trailing * are plain text, not syntax.
    """
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))
    terms = [w for w in words if w not in _STOP_WORDS] or words
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms[:_MAX_TERMS])


def _forget_where(scope: Scope, level: ForgetLevel) -> tuple[str, list[str]]:
    """acm.domain.scope.forget_columns in SQL (memories and jobs)."""
    pairs = forget_columns(scope, level)
    return " AND ".join(f"{column} = ?" for column, _ in pairs), [value for _, value in pairs]


class SqliteMemoryRepo:
    def __init__(self, ex: SqliteExecutor) -> None:
        self._ex = ex

    async def upsert(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        async with self._ex.transaction() as conn:
            # A memory id is global; refuse to let one client rewrite another client's row.
            taken = []
            for m in memories:
                row = conn.execute("SELECT client_id FROM memories WHERE memory_id = ?", (m.memory_id,)).fetchone()
                if row is not None and row["client_id"] != m.owner.client_id:
                    taken.append(m.memory_id)
            if taken:
                raise ScopeError(f"memory ids belong to another client: {taken[:5]}")
            conn.executemany(_UPSERT_MEMORY, [_memory_params(m) for m in memories])

    async def get(self, scope: Scope, memory_ids: Sequence[str]) -> list[Memory]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return []
        found: dict[str, Memory] = {}
        # Chunked: SQLite caps the number of bound parameters per statement.
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join(f":id{i}" for i in range(len(chunk)))
            rows = await self._ex.fetch(
                # "+client_id": the same condition, but not an index choice: SQLite would otherwise walk the
                # client's index and filter the ids, not look each id up (measured 2.8 ms vs 0.9 ms for 146 ids).
                f"SELECT {_M_COLUMNS} FROM memories m WHERE m.memory_id IN ({marks}) AND +{_visible(ALL_TIERS)}",
                {**_scope_params(scope), **{f"id{i}": v for i, v in enumerate(chunk)}},
            )
            found.update((r["memory_id"], _memory(r)) for r in rows)
        return [found[i] for i in ids if i in found]  # in the caller's order (e.g. vector ranking)

    async def keyword_search(
        self,
        scope: Scope,
        query: str,
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
        layers: tuple[Layer, ...] = ALL_LAYERS,
    ) -> list[ScoredMemory]:
        rows = await self._keyword(scope, query, limit, tiers, layers, f"{_M_COLUMNS}, -bm25(memories_fts) AS score")
        return [ScoredMemory(_memory(r), float(r["score"])) for r in rows]

    async def keyword_ids(
        self,
        scope: Scope,
        query: str,
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
        layers: tuple[Layer, ...] = ALL_LAYERS,
    ) -> list[str]:
        rows = await self._keyword(scope, query, limit, tiers, layers, "m.memory_id AS memory_id")
        return [str(r["memory_id"]) for r in rows]

    async def phrase_search(
        self,
        scope: Scope,
        phrases: Sequence[str],
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
        layers: tuple[Layer, ...] = ALL_LAYERS,
    ) -> list[Memory]:
        match = fts_phrase_query(phrases)
        if not match or limit <= 0 or not tiers or not layers:
            return []
        layer_params = {f"layer{i}": str(layer) for i, layer in enumerate(layers)}
        layer_sql = ", ".join(f":{name}" for name in layer_params)
        rows = await self._ex.fetch(
            f"""
            SELECT {_M_COLUMNS}
            FROM memories_fts JOIN memories m ON m.rid = memories_fts.rowid
            WHERE memories_fts MATCH :match AND m.status = 'active' AND {_visible(tiers)}
              AND m.layer IN ({layer_sql})
            ORDER BY m.created_at DESC, m.memory_id
            LIMIT :limit
            """,
            {**_scope_params(scope), **layer_params, "match": match, "limit": limit},
        )
        return [_memory(r) for r in rows]

    async def _keyword(
        self, scope: Scope, query: str, limit: int, tiers: tuple[Tier, ...], layers: tuple[Layer, ...], columns: str
    ) -> list[sqlite3.Row]:
        """The active memories matching any of the query's words in the scope, best BM25 first."""
        match = fts_or_query(query)
        if not match or limit <= 0 or not tiers or not layers:
            return []
        layer_params = {f"layer{i}": str(layer) for i, layer in enumerate(layers)}
        layer_sql = ", ".join(f":{name}" for name in layer_params)
        # bm25() is lower-is-better and negative (FTS5 floors idf at a tiny positive value), so -bm25 is a
        # positive, higher-is-better score.
        return await self._ex.fetch(
            f"""
            SELECT {columns}
            FROM memories_fts JOIN memories m ON m.rid = memories_fts.rowid
            WHERE memories_fts MATCH :match AND m.status = 'active' AND {_visible(tiers)}
              AND m.layer IN ({layer_sql})
            ORDER BY -bm25(memories_fts) DESC, m.created_at DESC, m.memory_id
            LIMIT :limit
            """,
            {**_scope_params(scope), **layer_params, "match": match, "limit": limit},
        )

    async def turn_neighbours(
        self, scope: Scope, anchors: Sequence[Memory], layers: tuple[Layer, ...] = ALL_LAYERS
    ) -> list[Memory]:
        turns = sorted({(a.session_id, _ts(a.created_at)) for a in anchors if in_own_session(scope, a)})
        if not turns or not layers:
            return []
        turn_params: dict[str, Any] = {}
        for i, (session_id, at) in enumerate(turns):
            turn_params[f"s{i}"], turn_params[f"t{i}"] = session_id, at
        layer_params = {f"layer{i}": str(layer) for i, layer in enumerate(layers)}
        layer_sql = ", ".join(f":{name}" for name in layer_params)
        mine = (  # the reader's own active memories of those layers; {x} is the table alias
            "{x}.client_id = :client_id AND {x}.tier = 'user' AND {x}.customer_id = :customer_id "
            f"AND {{x}}.user_id = :user_id AND {{x}}.status = 'active' AND {{x}}.layer IN ({layer_sql})"
        )
        rows = await self._ex.fetch(
            turn_neighbours_sql("VALUES " + ", ".join(f"(:s{i}, :t{i})" for i in range(len(turns))), _M_COLUMNS, mine),
            {**_scope_params(scope), **turn_params, **layer_params},
        )
        return [_memory(r) for r in rows]

    async def active_in_slot(self, scope: Scope, slot: str) -> list[Memory]:
        if not slot:
            return []
        rows = await self._ex.fetch(
            f"""
            SELECT {_M_COLUMNS} FROM memories m
            WHERE m.slot = :slot AND m.status = 'active' AND {_visible(ALL_TIERS)}
            ORDER BY m.created_at DESC, m.memory_id
            """,
            {**_scope_params(scope), "slot": slot},
        )
        return [_memory(r) for r in rows]

    async def session_memories(self, scope: Scope, limit: int, layers: tuple[Layer, ...] = ALL_LAYERS) -> list[Memory]:
        if not scope.session_id:
            raise ScopeError("session_memories needs scope.session_id")
        if limit <= 0:
            return []
        rows = await self._ex.fetch(
            f"""
            SELECT {_M_COLUMNS} FROM memories m
            WHERE m.customer_id = :customer_id AND m.user_id = :user_id AND m.session_id = :session_id
              AND {_visible(ALL_TIERS)} AND m.layer IN (SELECT value FROM json_each(:layers))
            ORDER BY m.created_at DESC, m.memory_id DESC
            LIMIT :limit
            """,
            {
                **_scope_params(scope),
                "session_id": scope.session_id,
                "limit": limit,
                "layers": json.dumps([str(x) for x in layers]),
            },
        )
        return [_memory(r) for r in rows]

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        where, params = _forget_where(scope, level)
        async with self._ex.transaction() as conn:
            erased = conn.execute(f"DELETE FROM memories WHERE {where}", params).rowcount
            if level is not ForgetLevel.SESSION:  # authorship is per user, not per session
                conn.execute(f"DELETE FROM memory_authors WHERE {where}", params)
        await self._ex.purge()
        return int(erased)

    async def add_authors(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        async with self._ex.transaction() as conn:
            conn.executemany(
                "INSERT INTO memory_authors (memory_id, client_id, customer_id, user_id) VALUES (?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                [(m, scope.client_id, scope.customer_id, scope.user_id) for m in dict.fromkeys(memory_ids)],
            )

    async def forget_authored(self, scope: Scope) -> list[str]:
        who = (scope.client_id, scope.customer_id, scope.user_id)
        async with self._ex.transaction() as conn:
            mine = [r[0] for r in conn.execute(_AUTHORED, who)]
            conn.execute("DELETE FROM memory_authors WHERE client_id = ? AND customer_id = ? AND user_id = ?", who)
            erased = [
                r[0]
                for r in conn.execute(
                    "DELETE FROM memories WHERE client_id = ? AND tier != 'user' AND memory_id IN "
                    "(SELECT value FROM json_each(?)) AND NOT EXISTS "
                    "(SELECT 1 FROM memory_authors a WHERE a.memory_id = memories.memory_id) RETURNING memory_id",
                    (scope.client_id, json.dumps(mine)),
                ).fetchall()
            ]
        if erased:
            await self._ex.purge()
        return erased

    async def expire(self, scope: Scope, cutoffs: Mapping[Layer, datetime], limit: int) -> list[str]:
        if not cutoffs:
            return []
        by_layer = " OR ".join("(layer = ? AND COALESCE(updated_at, created_at) < ?)" for _ in cutoffs)
        params: list[Any] = [scope.client_id, scope.customer_id, scope.user_id, scope.agent_id]
        for layer, cutoff in cutoffs.items():
            params += [str(layer), _ts(cutoff)]
        async with self._ex.transaction() as conn:
            rows = conn.execute(
                "DELETE FROM memories WHERE memory_id IN (SELECT memory_id FROM memories WHERE tier = 'user' "
                f"AND client_id = ? AND customer_id = ? AND user_id = ? AND agent_id = ? AND ({by_layer}) LIMIT ?) "
                "RETURNING memory_id",
                [*params, limit],
            ).fetchall()
        return [r[0] for r in rows]

    # --- the idle expiry sweep (maintenance reads, served by _EXPIRY_INDEX) -----------------------------

    async def clients_with_memories(self) -> list[str]:
        return [r[0] for r in await self._ex.fetch(_DISTINCT_CLIENTS)]

    async def scan(self, after: str, limit: int) -> list[Memory]:
        rows = await self._ex.fetch(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE memory_id > :after ORDER BY memory_id LIMIT :limit",
            {"after": after, "limit": limit},
        )
        return [_memory(r) for r in rows]

    async def agents(self, scope: Scope) -> list[str]:
        return [r[0] for r in await self._ex.fetch(_DISTINCT_AGENTS, {"client_id": scope.client_id})]

    async def expiry_due(self, scope: Scope, cutoffs: Mapping[Layer, datetime], limit: int) -> list[Scope]:
        if not cutoffs or limit <= 0:
            return []
        # expire()'s predicate, one layer's disjunct per arm, so a listed user always has something to
        # expire; the arms (rather than one OR) make each a range scan of memories_expiry_idx.
        arm = (
            "SELECT customer_id, user_id FROM memories WHERE tier = 'user' AND client_id = ? AND agent_id = ? "
            "AND layer = ? AND COALESCE(updated_at, created_at) < ?"
        )
        params: list[Any] = []
        for layer, cutoff in cutoffs.items():
            params += [scope.client_id, scope.agent_id, str(layer), _ts(cutoff)]
        rows = await self._ex.fetch(
            " UNION ".join([arm] * len(cutoffs)) + " ORDER BY customer_id, user_id LIMIT ?", [*params, limit]
        )
        return [Scope(scope.client_id, r["customer_id"], r["user_id"], scope.agent_id) for r in rows]


# A covering index for the sweep's reads: the distinct clients and agents are walked with one index seek
# each (MIN ... > previous), and the due users of an agent are a range per layer on the last-write time.
_EXPIRY_INDEX = """
CREATE INDEX IF NOT EXISTS memories_expiry_idx
    ON memories (client_id, agent_id, layer, COALESCE(updated_at, created_at), customer_id, user_id)
    WHERE tier = 'user'
"""
_DISTINCT_CLIENTS = """
WITH RECURSIVE c(client_id) AS (
    SELECT MIN(client_id) FROM memories WHERE tier = 'user'
    UNION ALL
    SELECT (SELECT MIN(client_id) FROM memories WHERE tier = 'user' AND client_id > c.client_id)
    FROM c WHERE c.client_id IS NOT NULL
)
SELECT client_id FROM c WHERE client_id IS NOT NULL
"""
_DISTINCT_AGENTS = """
WITH RECURSIVE a(agent_id) AS (
    SELECT MIN(agent_id) FROM memories WHERE tier = 'user' AND client_id = :client_id
    UNION ALL
    SELECT (SELECT MIN(agent_id) FROM memories WHERE tier = 'user' AND client_id = :client_id
            AND agent_id > a.agent_id)
    FROM a WHERE a.agent_id IS NOT NULL
)
SELECT agent_id FROM a WHERE agent_id IS NOT NULL
"""


# Who said each customer- and client-tier memory (one row per user who stated it; a memory id is shared by
# every user who says the same fact): a user-level Forget erases what that user alone said at those tiers.
_AUTHORS_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_authors (
    memory_id   TEXT NOT NULL,
    client_id   TEXT NOT NULL,
    customer_id TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    PRIMARY KEY (memory_id, client_id, customer_id, user_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memory_authors_user ON memory_authors (client_id, customer_id, user_id);
"""
_AUTHORED = "SELECT memory_id FROM memory_authors WHERE client_id = ? AND customer_id = ? AND user_id = ?"


# --- jobs -----------------------------------------------------------------------------------------------

_JOB_COLUMNS = (
    "job_id, client_id, customer_id, user_id, agent_id, session_id, kind, status, error, counts, created_at, updated_at"
)


def _job_params(job: Job) -> tuple[Any, ...]:
    s = job.scope
    return (
        job.job_id,
        s.client_id,
        s.customer_id,
        s.user_id,
        s.agent_id,
        s.session_id,
        job.kind,
        str(job.status),
        job.error,
        json.dumps(job.counts),
        _ts(job.created_at),
        _ts(job.updated_at),
    )


def _job(row: sqlite3.Row) -> Job:
    return Job(
        job_id=row["job_id"],
        scope=Scope(row["client_id"], row["customer_id"], row["user_id"], row["agent_id"], row["session_id"]),
        kind=row["kind"],
        status=JobStatus(row["status"]),
        error=row["error"],
        counts={str(k): int(v) for k, v in json.loads(row["counts"]).items()},
        created_at=_dt_required(row["created_at"]),
        updated_at=_dt_required(row["updated_at"]),
    )


class SqliteJobRepo:
    def __init__(self, ex: SqliteExecutor) -> None:
        self._ex = ex

    async def create(self, job: Job) -> None:
        await self._ex.write(
            f"INSERT INTO jobs ({_JOB_COLUMNS}) VALUES ({', '.join(['?'] * 12)}) ON CONFLICT (job_id) DO NOTHING",
            _job_params(job),
        )

    async def get(self, scope: Scope, job_id: str) -> Job | None:
        row = await self._ex.fetchone(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE job_id = ? AND client_id = ? AND customer_id = ? AND user_id = ?",
            (job_id, scope.client_id, scope.customer_id, scope.user_id),
        )
        return _job(row) if row else None

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        where, params = _forget_where(scope, level)
        return await self._ex.write(f"DELETE FROM jobs WHERE {where}", params)

    async def finish(
        self, scope: Scope, job_id: str, status: JobStatus, counts: dict[str, int], error: str = ""
    ) -> None:
        # kind is unknown when the create was lost; another client's job with this id is left alone.
        job = Job(job_id, scope, kind="", status=status, error=error, counts=dict(counts))
        await self._ex.write(
            f"INSERT INTO jobs ({_JOB_COLUMNS}) VALUES ({', '.join(['?'] * 12)}) "
            "ON CONFLICT (job_id) DO UPDATE SET status = excluded.status, error = excluded.error, "
            "counts = excluded.counts, updated_at = excluded.updated_at "
            "WHERE jobs.client_id = excluded.client_id",
            _job_params(job),
        )


# --- API keys -------------------------------------------------------------------------------------------

_KEY_COLUMNS = "key_id, client_id, key_hash, name, created_at, revoked, role, customers, users"


def _key(row: sqlite3.Row) -> ApiKey:
    return ApiKey(
        key_id=row["key_id"],
        client_id=row["client_id"],
        key_hash=row["key_hash"],
        name=row["name"],
        created_at=_dt_required(row["created_at"]),
        revoked=bool(row["revoked"]),
        grant=Grant(KeyRole(row["role"]), tuple(json.loads(row["customers"])), tuple(json.loads(row["users"]))),
    )


class SqliteApiKeyRepo:
    def __init__(self, ex: SqliteExecutor) -> None:
        self._ex = ex

    async def add(self, key: ApiKey) -> None:
        # Re-adding a key (bootstrap scripts, revocation) updates it, but never moves it to another client.
        await self._ex.write(
            f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (key_id) DO UPDATE SET key_hash = excluded.key_hash, name = excluded.name, "
            "revoked = excluded.revoked, role = excluded.role, customers = excluded.customers, "
            "users = excluded.users WHERE api_keys.client_id = excluded.client_id",
            (
                key.key_id,
                key.client_id,
                key.key_hash,
                key.name,
                _ts(key.created_at),
                int(key.revoked),
                str(key.grant.role),
                json.dumps(list(key.grant.customers)),
                json.dumps(list(key.grant.users)),
            ),
        )

    async def by_hash(self, key_hash: str) -> ApiKey | None:
        row = await self._ex.fetchone(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_hash = ?", (key_hash,))
        return _key(row) if row else None

    async def by_id(self, client_id: str, key_id: str) -> ApiKey | None:
        row = await self._ex.fetchone(
            f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_id = ? AND client_id = ?", (key_id, client_id)
        )
        return _key(row) if row else None


# --- processed events and audit -------------------------------------------------------------------------


class SqliteProcessedEvents:
    def __init__(self, ex: SqliteExecutor) -> None:
        self._ex = ex

    async def seen(self, group: str, event_id: str) -> bool:
        row = await self._ex.fetchone(
            "SELECT 1 FROM processed_events WHERE group_name = ? AND event_id = ?", (group, event_id)
        )
        return row is not None

    async def mark(self, group: str, event_id: str) -> None:
        await self._ex.write(
            "INSERT INTO processed_events (group_name, event_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (group, event_id, _ts(utcnow())),
        )


class SqliteAuditLog:
    def __init__(self, ex: SqliteExecutor) -> None:
        self._ex = ex

    async def record(self, client_id: str, action: str, detail: str) -> None:
        await self._ex.write(
            "INSERT INTO audit_log (client_id, action, detail, at) VALUES (?, ?, ?, ?)",
            (client_id, action, detail, _ts(utcnow())),
        )

    async def list(self, scope: Scope, limit: int = 100) -> list[AuditEntry]:
        rows = await self._ex.fetch(
            "SELECT client_id, action, detail, at FROM audit_log WHERE client_id = ? ORDER BY at DESC, id DESC LIMIT ?",
            (scope.client_id, max(limit, 0)),
        )
        return [AuditEntry(r["client_id"], r["action"], r["detail"], _dt_required(r["at"])) for r in rows]


class SqliteSchemaRepo:
    """Agent schemas, one row per (client, agent, version); versions are immutable once written."""

    def __init__(self, ex: SqliteExecutor) -> None:
        self._ex = ex

    async def latest(self, scope: Scope, agent_id: str) -> AgentSchema | None:
        row = await self._ex.fetchone(
            "SELECT body FROM agent_schemas WHERE client_id = ? AND agent_id = ? ORDER BY version DESC LIMIT 1",
            (scope.client_id, agent_id),
        )
        return AgentSchema.from_json(row["body"]) if row else None

    async def put(self, client_id: str, schema: AgentSchema) -> bool:
        inserted = await self._ex.write(
            "INSERT INTO agent_schemas (client_id, agent_id, version, body, created_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (client_id, schema.agent_id, schema.version, schema.to_json(), _ts(utcnow())),
        )
        return inserted == 1

    async def version(self, scope: Scope, agent_id: str, version: int) -> AgentSchema | None:
        row = await self._ex.fetchone(
            "SELECT body FROM agent_schemas WHERE client_id = ? AND agent_id = ? AND version = ?",
            (scope.client_id, agent_id, version),
        )
        return AgentSchema.from_json(row["body"]) if row else None

    async def agents(self, scope: Scope) -> list[AgentSchema]:
        rows = await self._ex.fetch(
            "SELECT s.body FROM agent_schemas s JOIN (SELECT agent_id, MAX(version) AS v FROM agent_schemas "
            "WHERE client_id = ? GROUP BY agent_id) m ON s.agent_id = m.agent_id AND s.version = m.v "
            "WHERE s.client_id = ? ORDER BY s.agent_id",
            (scope.client_id, scope.client_id),
        )
        return [AgentSchema.from_json(r["body"]) for r in rows]


# --- the holder -----------------------------------------------------------------------------------------


class SqliteStore:
    """The connection and the five repos over it. Build with ``await SqliteStore.open(path)``."""

    def __init__(self, conn: sqlite3.Connection, timeout_s: float) -> None:
        self.executor = SqliteExecutor(conn, timeout_s)
        self.memories: MemoryRepo = SqliteMemoryRepo(self.executor)
        self.jobs: JobRepo = SqliteJobRepo(self.executor)
        self.api_keys: ApiKeyRepo = SqliteApiKeyRepo(self.executor)
        self.processed: ProcessedEvents = SqliteProcessedEvents(self.executor)
        self.audit: AuditLog = SqliteAuditLog(self.executor)
        self.schemas: SchemaRepo = SqliteSchemaRepo(self.executor)

    @classmethod
    async def open(cls, path: str | Path, *, timeout_s: float = 5.0) -> SqliteStore:
        """Opens (creating if needed) the database file, runs the migrations and returns the store.
        ``":memory:"`` gives a private in-memory database."""
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves instead of sqlite3's implicit transactions.
        conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=timeout_s)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # durable across app crashes in WAL mode
            conn.execute("PRAGMA secure_delete=ON")  # deleted rows are zeroed in the file, not only unlinked
            conn.execute(f"PRAGMA busy_timeout={max(1, int(timeout_s * 1000))}")
            # Idempotent DDL; BEGIN IMMEDIATE serialises two processes opening the same file at once.
            conn.executescript(f"BEGIN IMMEDIATE;\n{_SCHEMA}\nCOMMIT;")
            _add_missing_columns(conn)
            conn.executescript(f"BEGIN IMMEDIATE;\n{_AUTHORS_SCHEMA}\nCOMMIT;")
        except BaseException:
            conn.close()
            raise
        return cls(conn, timeout_s)

    async def close(self) -> None:
        await self.executor.close()
