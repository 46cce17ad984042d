"""Postgres adapters (psycopg 3, async) for the relational ports: memories, jobs, API keys, processed
events and the audit log.

One ``PgExecutor`` owns the pool and the deadline; each port is a small class over it. Every read puts the
scope's visibility rule (acm.domain.scope.visible) into its WHERE clause, so a bug upstream cannot make a
query return another tenant's rows.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from psycopg import AsyncConnection, AsyncCursor
from psycopg.errors import QueryCanceled
from psycopg.rows import DictRow, dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool, PoolTimeout

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
    "PgApiKeyRepo",
    "PgAuditLog",
    "PgExecutor",
    "PgJobRepo",
    "PgMemoryRepo",
    "PgProcessedEvents",
    "PgSchemaRepo",
    "PostgresStore",
]

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# Letters and digits only: whatever else a user types (quotes, !, &, :*) never reaches the tsquery parser.
_WORD = re.compile(r"[^\W_]+")
_MAX_TERMS = 64

# Idempotent: every statement is IF NOT EXISTS, and open() runs them under an advisory lock because two
# concurrent CREATE TABLE IF NOT EXISTS can still collide on the catalog's unique indexes.
_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS memories (
        memory_id       text PRIMARY KEY,
        client_id       text NOT NULL,
        tier            text NOT NULL CHECK (tier IN ('user', 'customer', 'client')),
        customer_id     text NOT NULL DEFAULT '',
        user_id         text NOT NULL DEFAULT '',
        agent_id        text NOT NULL DEFAULT '',
        session_id      text NOT NULL DEFAULT '',
        text            text NOT NULL,
        layer           text NOT NULL,
        kind            text NOT NULL,
        source_turn_ids text[] NOT NULL DEFAULT '{}',
        created_at      timestamptz NOT NULL,
        updated_at      timestamptz,
        valid_from      timestamptz,
        valid_to        timestamptz,
        token_count     integer NOT NULL DEFAULT 0,
        mention_count   integer NOT NULL DEFAULT 1,
        access_count    integer NOT NULL DEFAULT 0,
        status          text NOT NULL DEFAULT 'active',
        superseded_by   text NOT NULL DEFAULT '',
        schema_version  integer NOT NULL DEFAULT 0,
        slot            text NOT NULL DEFAULT '',
        role            text NOT NULL DEFAULT '',
        tool_name       text NOT NULL DEFAULT '',
        trust           text NOT NULL DEFAULT 'normal',
        tsv             tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED
    )
    """,
    "CREATE INDEX IF NOT EXISTS memories_scope_idx ON memories (client_id, customer_id, user_id)",
    """
    CREATE INDEX IF NOT EXISTS memories_session_idx
        ON memories (client_id, customer_id, user_id, session_id, created_at DESC)
    """,
    "CREATE INDEX IF NOT EXISTS memories_tsv_idx ON memories USING gin (tsv)",
    # Added after the first release of the table: a database created before keeps working.
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS slot text NOT NULL DEFAULT ''",
    "CREATE INDEX IF NOT EXISTS memories_slot_idx ON memories (client_id, slot) WHERE slot <> ''",
    # Provenance and trust (issue 18): rows stored before them read as trusted, of an unknown role.
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS role text NOT NULL DEFAULT ''",
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS tool_name text NOT NULL DEFAULT ''",
    "ALTER TABLE memories ADD COLUMN IF NOT EXISTS trust text NOT NULL DEFAULT 'normal'",
    # The idle expiry sweep: distinct clients / agents by index seeks, due users as a range per layer.
    """
    CREATE INDEX IF NOT EXISTS memories_expiry_idx
        ON memories (client_id, agent_id, layer, (COALESCE(updated_at, created_at)), customer_id, user_id)
        WHERE tier = 'user'
    """,
    """
    CREATE TABLE IF NOT EXISTS jobs (
        job_id      text PRIMARY KEY,
        client_id   text NOT NULL,
        customer_id text NOT NULL,
        user_id     text NOT NULL,
        agent_id    text NOT NULL DEFAULT '',
        session_id  text NOT NULL DEFAULT '',
        kind        text NOT NULL,
        status      text NOT NULL,
        error       text NOT NULL DEFAULT '',
        counts      jsonb NOT NULL DEFAULT '{}',
        created_at  timestamptz NOT NULL,
        updated_at  timestamptz NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS api_keys (
        key_id     text PRIMARY KEY,
        client_id  text NOT NULL,
        key_hash   text NOT NULL UNIQUE,
        name       text NOT NULL,
        created_at timestamptz NOT NULL,
        revoked    boolean NOT NULL DEFAULT false
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS processed_events (
        group_name text NOT NULL,
        event_id   text NOT NULL,
        at         timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (group_name, event_id)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS audit_log (
        id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        client_id text NOT NULL,
        action    text NOT NULL,
        detail    text NOT NULL,
        at        timestamptz NOT NULL DEFAULT clock_timestamp()
    )
    """,
    # Roles (added after the first release): keys stored before them keep working as admin keys.
    "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS role text NOT NULL DEFAULT 'admin'",
    "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS customers text[] NOT NULL DEFAULT '{}'",
    "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS users text[] NOT NULL DEFAULT '{}'",
    "CREATE INDEX IF NOT EXISTS audit_log_client_idx ON audit_log (client_id, at DESC, id DESC)",
    """
    CREATE TABLE IF NOT EXISTS agent_schemas (
        client_id  text NOT NULL,
        agent_id   text NOT NULL,
        version    integer NOT NULL,
        body       jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (client_id, agent_id, version)
    )
    """,
)


# Who said each customer- and client-tier memory (one row per user who stated it; a memory id is shared by
# every user who says the same fact): a user-level Forget erases what that user alone said at those tiers.
_AUTHORS_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE IF NOT EXISTS memory_authors (
        memory_id   text NOT NULL,
        client_id   text NOT NULL,
        customer_id text NOT NULL,
        user_id     text NOT NULL,
        PRIMARY KEY (memory_id, client_id, customer_id, user_id)
    )
    """,
    "CREATE INDEX IF NOT EXISTS memory_authors_user ON memory_authors (client_id, customer_id, user_id)",
)


def _utc(value: datetime | None) -> datetime | None:
    """Naive datetimes are taken as UTC, the same choice the SQLite adapter makes."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


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

    async def fetch(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[DictRow]:
        async with self.cursor() as cur:
            await cur.execute(sql, params)
            return await cur.fetchall()

    async def fetchone(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> DictRow | None:
        async with self.cursor() as cur:
            await cur.execute(sql, params)
            return await cur.fetchone()

    async def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Runs one statement; returns the affected row count."""
        async with self.cursor() as cur:
            await cur.execute(sql, params)
            return cur.rowcount


# --- memories -------------------------------------------------------------------------------------------

_MEMORY_COLUMNS = (
    "memory_id, client_id, tier, customer_id, user_id, agent_id, session_id, text, layer, kind, "
    "source_turn_ids, created_at, updated_at, valid_from, valid_to, token_count, mention_count, "
    "access_count, status, superseded_by, schema_version, slot, role, tool_name, trust"
)

# visible() in SQL. Client-tier rows carry no customer/user id and customer-tier rows no user id (Owner
# enforces it), so matching on the tier column is enough to keep tiers apart.
_VISIBLE = (
    "client_id = %(client_id)s AND tier = ANY(%(tiers)s) AND (tier = 'client' OR "
    "(customer_id = %(customer_id)s AND (tier = 'customer' OR user_id = %(user_id)s)))"
)

_UPSERT_MEMORY = f"""
INSERT INTO memories ({_MEMORY_COLUMNS})
VALUES ({", ".join(["%s"] * 25)})
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


def _scope_params(scope: Scope, tiers: tuple[Tier, ...] = ALL_TIERS) -> dict[str, Any]:
    return {
        "client_id": scope.client_id,
        "customer_id": scope.customer_id,
        "user_id": scope.user_id,
        "tiers": [str(t) for t in tiers],
    }


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
        list(m.source_turn_ids),
        _utc(m.created_at),
        _utc(m.updated_at),
        _utc(m.valid_from),
        _utc(m.valid_to),
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


def _memory(row: DictRow) -> Memory:
    return Memory(
        memory_id=row["memory_id"],
        owner=Owner(row["client_id"], Tier(row["tier"]), row["customer_id"], row["user_id"]),
        text=row["text"],
        layer=Layer(row["layer"]),
        kind=row["kind"],
        source_turn_ids=tuple(row["source_turn_ids"]),
        created_at=row["created_at"],
        agent_id=row["agent_id"],
        session_id=row["session_id"],
        updated_at=row["updated_at"],
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        token_count=row["token_count"],
        mention_count=row["mention_count"],
        access_count=row["access_count"],
        status=MemoryStatus(row["status"]),
        superseded_by=row["superseded_by"],
        schema_version=row["schema_version"],
        slot=row["slot"],
        role=row["role"],
        tool_name=row["tool_name"],
        trust=row["trust"],
    )


def or_tsquery_text(query: str) -> str:
    """``to_tsquery`` input matching ANY of the query's words.

    Users ask natural questions ("What did Sarah say about the invoice?"); plainto_tsquery would AND every
    word and find nothing. Stop words drop out inside to_tsquery('english', ...).
    """
    terms = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))[:_MAX_TERMS]
    return " | ".join(terms)


def _forget_where(scope: Scope, level: ForgetLevel) -> tuple[str, list[str]]:
    """acm.domain.scope.forget_columns in SQL (memories and jobs)."""
    pairs = forget_columns(scope, level)
    return " AND ".join(f"{column} = %s" for column, _ in pairs), [value for _, value in pairs]


class PgMemoryRepo:
    def __init__(self, ex: PgExecutor) -> None:
        self._ex = ex

    async def upsert(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        ids = [m.memory_id for m in memories]
        clients = [m.owner.client_id for m in memories]
        async with self._ex.cursor(transaction=True) as cur:
            # A memory id is global; refuse to let one client rewrite another client's row.
            await cur.execute(
                "SELECT m.memory_id FROM memories m "
                "JOIN unnest(%s::text[], %s::text[]) AS n(memory_id, client_id) USING (memory_id) "
                "WHERE m.client_id <> n.client_id FOR UPDATE OF m",
                (ids, clients),
            )
            taken = [r["memory_id"] for r in await cur.fetchall()]
            if taken:
                raise ScopeError(f"memory ids belong to another client: {taken[:5]}")
            await cur.executemany(_UPSERT_MEMORY, [_memory_params(m) for m in memories])

    async def get(self, scope: Scope, memory_ids: Sequence[str]) -> list[Memory]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return []
        rows = await self._ex.fetch(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE memory_id = ANY(%(ids)s) AND {_VISIBLE}",
            {**_scope_params(scope), "ids": ids},
        )
        found = {r["memory_id"]: _memory(r) for r in rows}
        return [found[i] for i in ids if i in found]  # in the caller's order (e.g. vector ranking)

    async def keyword_search(
        self,
        scope: Scope,
        query: str,
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
        layers: tuple[Layer, ...] = ALL_LAYERS,
    ) -> list[ScoredMemory]:
        rows = await self._keyword(
            scope, query, limit, tiers, layers, f"{_MEMORY_COLUMNS}, ts_rank_cd(tsv, q) AS score"
        )
        return [ScoredMemory(_memory(r), float(r["score"])) for r in rows]

    async def keyword_ids(
        self,
        scope: Scope,
        query: str,
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
        layers: tuple[Layer, ...] = ALL_LAYERS,
    ) -> list[str]:
        rows = await self._keyword(scope, query, limit, tiers, layers, "memory_id")
        return [str(r["memory_id"]) for r in rows]

    async def phrase_search(
        self,
        scope: Scope,
        phrases: Sequence[str],
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
        layers: tuple[Layer, ...] = ALL_LAYERS,
    ) -> list[Memory]:
        wanted = [p for p in phrases if _WORD.search(p)][:_MAX_TERMS]
        if not wanted or limit <= 0 or not tiers or not layers:
            return []
        # The same parser reads the phrase and the text, so an id's pieces line up as they were indexed.
        rows = await self._ex.fetch(
            f"""
            SELECT {_MEMORY_COLUMNS}
            FROM memories
            WHERE tsv @@ ANY(ARRAY(SELECT phraseto_tsquery('english', p) FROM unnest(%(phrases)s::text[]) AS p))
              AND status = 'active' AND {_VISIBLE} AND layer = ANY(%(layers)s)
            ORDER BY created_at DESC, memory_id
            LIMIT %(limit)s
            """,
            {**_scope_params(scope, tiers), "phrases": wanted, "limit": limit, "layers": [str(x) for x in layers]},
        )
        return [_memory(r) for r in rows]

    async def _keyword(
        self, scope: Scope, query: str, limit: int, tiers: tuple[Tier, ...], layers: tuple[Layer, ...], columns: str
    ) -> list[DictRow]:
        """The active memories matching any of the query's words in the scope, best rank first."""
        terms = or_tsquery_text(query)
        if not terms or limit <= 0 or not tiers or not layers:
            return []
        return await self._ex.fetch(
            f"""
            SELECT {columns}
            FROM memories, to_tsquery('english', %(q)s) AS q
            WHERE tsv @@ q AND status = 'active' AND {_VISIBLE} AND layer = ANY(%(layers)s)
            ORDER BY ts_rank_cd(tsv, q) DESC, created_at DESC, memory_id
            LIMIT %(limit)s
            """,
            {**_scope_params(scope, tiers), "q": terms, "limit": limit, "layers": [str(x) for x in layers]},
        )

    async def active_in_slot(self, scope: Scope, slot: str) -> list[Memory]:
        if not slot:
            return []
        rows = await self._ex.fetch(
            f"""
            SELECT {_MEMORY_COLUMNS} FROM memories
            WHERE slot = %(slot)s AND status = 'active' AND {_VISIBLE}
            ORDER BY created_at DESC, memory_id
            """,
            {**_scope_params(scope), "slot": slot},
        )
        return [_memory(r) for r in rows]

    async def turn_neighbours(
        self, scope: Scope, anchors: Sequence[Memory], layers: tuple[Layer, ...] = ALL_LAYERS
    ) -> list[Memory]:
        turns = sorted({(a.session_id, a.created_at) for a in anchors if in_own_session(scope, a)})
        if not turns or not layers:
            return []
        mine = (  # the reader's own active memories of those layers; {x} is the table alias
            "{x}.client_id = %(client_id)s AND {x}.tier = 'user' AND {x}.customer_id = %(customer_id)s "
            "AND {x}.user_id = %(user_id)s AND {x}.status = 'active' AND {x}.layer = ANY(%(layers)s)"
        )
        rows = await self._ex.fetch(
            turn_neighbours_sql("SELECT * FROM unnest(%(sids)s::text[], %(ts)s::timestamptz[])", _MEMORY_COLUMNS, mine),
            {
                **_scope_params(scope),
                "sids": [sid for sid, _ in turns],
                "ts": [at for _, at in turns],
                "layers": [str(x) for x in layers],
            },
        )
        return [_memory(r) for r in rows]

    async def session_memories(self, scope: Scope, limit: int, layers: tuple[Layer, ...] = ALL_LAYERS) -> list[Memory]:
        if not scope.session_id:
            raise ScopeError("session_memories needs scope.session_id")
        if limit <= 0:
            return []
        rows = await self._ex.fetch(
            f"""
            SELECT {_MEMORY_COLUMNS} FROM memories
            WHERE customer_id = %(customer_id)s AND user_id = %(user_id)s
              AND session_id = %(session_id)s AND {_VISIBLE} AND layer = ANY(%(layers)s)
            ORDER BY created_at DESC, memory_id DESC
            LIMIT %(limit)s
            """,
            {
                **_scope_params(scope),
                "session_id": scope.session_id,
                "limit": limit,
                "layers": [str(x) for x in layers],
            },
        )
        return [_memory(r) for r in rows]

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        where, params = _forget_where(scope, level)
        async with self._ex.cursor(transaction=True) as cur:
            await cur.execute(f"DELETE FROM memories WHERE {where}", params)
            erased = cur.rowcount
            if level is not ForgetLevel.SESSION:  # authorship is per user, not per session
                await cur.execute(f"DELETE FROM memory_authors WHERE {where}", params)
        return erased

    async def add_authors(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        async with self._ex.cursor(transaction=True) as cur:
            await cur.executemany(
                "INSERT INTO memory_authors (memory_id, client_id, customer_id, user_id) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                [(m, scope.client_id, scope.customer_id, scope.user_id) for m in dict.fromkeys(memory_ids)],
            )

    async def forget_authored(self, scope: Scope) -> list[str]:
        who = {"client_id": scope.client_id, "customer_id": scope.customer_id, "user_id": scope.user_id}
        async with self._ex.cursor(transaction=True) as cur:
            await cur.execute(
                "DELETE FROM memory_authors WHERE client_id = %(client_id)s AND customer_id = %(customer_id)s "
                "AND user_id = %(user_id)s RETURNING memory_id",
                who,
            )
            mine = [r["memory_id"] for r in await cur.fetchall()]
            await cur.execute(
                "DELETE FROM memories m WHERE m.client_id = %(client_id)s AND m.tier <> 'user' "
                "AND m.memory_id = ANY(%(ids)s) "
                "AND NOT EXISTS (SELECT 1 FROM memory_authors a WHERE a.memory_id = m.memory_id) RETURNING memory_id",
                {**who, "ids": mine},
            )
            return [r["memory_id"] for r in await cur.fetchall()]

    async def expire(self, scope: Scope, cutoffs: Mapping[Layer, datetime], limit: int) -> list[str]:
        if not cutoffs:
            return []
        by_layer = " OR ".join("(layer = %s AND COALESCE(updated_at, created_at) < %s)" for _ in cutoffs)
        params: list[Any] = [scope.client_id, scope.customer_id, scope.user_id, scope.agent_id]
        for layer, cutoff in cutoffs.items():
            params += [str(layer), cutoff]
        rows = await self._ex.fetch(
            "DELETE FROM memories WHERE memory_id IN (SELECT memory_id FROM memories WHERE tier = 'user' "
            f"AND client_id = %s AND customer_id = %s AND user_id = %s AND agent_id = %s AND ({by_layer}) LIMIT %s) "
            "RETURNING memory_id",
            [*params, limit],
        )
        return [r["memory_id"] for r in rows]

    # --- the idle expiry sweep (maintenance reads, served by memories_expiry_idx) -----------------------

    async def clients_with_memories(self) -> list[str]:
        return [r["client_id"] for r in await self._ex.fetch(_DISTINCT_CLIENTS)]

    async def scan(self, after: str, limit: int) -> list[Memory]:
        rows = await self._ex.fetch(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE memory_id > %(after)s ORDER BY memory_id LIMIT %(limit)s",
            {"after": after, "limit": limit},
        )
        return [_memory(r) for r in rows]

    async def agents(self, scope: Scope) -> list[str]:
        return [r["agent_id"] for r in await self._ex.fetch(_DISTINCT_AGENTS, {"client_id": scope.client_id})]

    async def expiry_due(self, scope: Scope, cutoffs: Mapping[Layer, datetime], limit: int) -> list[Scope]:
        if not cutoffs or limit <= 0:
            return []
        # expire()'s predicate, one layer's disjunct per arm, so a listed user always has something to
        # expire; the arms (rather than one OR) make each a range scan of memories_expiry_idx.
        arm = (
            "SELECT customer_id, user_id FROM memories WHERE tier = 'user' AND client_id = %s AND agent_id = %s "
            "AND layer = %s AND COALESCE(updated_at, created_at) < %s"
        )
        params: list[Any] = []
        for layer, cutoff in cutoffs.items():
            params += [scope.client_id, scope.agent_id, str(layer), cutoff]
        rows = await self._ex.fetch(
            " UNION ".join([arm] * len(cutoffs)) + " ORDER BY customer_id, user_id LIMIT %s", [*params, limit]
        )
        return [Scope(scope.client_id, r["customer_id"], r["user_id"], scope.agent_id) for r in rows]


# Postgres has no skip scan: the distinct clients and agents are walked with one index seek each
# (MIN ... > previous) instead of reading every row of a big table.
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
    SELECT MIN(agent_id) FROM memories WHERE tier = 'user' AND client_id = %(client_id)s
    UNION ALL
    SELECT (SELECT MIN(agent_id) FROM memories WHERE tier = 'user' AND client_id = %(client_id)s
            AND agent_id > a.agent_id)
    FROM a WHERE a.agent_id IS NOT NULL
)
SELECT agent_id FROM a WHERE agent_id IS NOT NULL
"""


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
        Jsonb(job.counts),
        _utc(job.created_at),
        _utc(job.updated_at),
    )


def _job(row: DictRow) -> Job:
    return Job(
        job_id=row["job_id"],
        scope=Scope(row["client_id"], row["customer_id"], row["user_id"], row["agent_id"], row["session_id"]),
        kind=row["kind"],
        status=JobStatus(row["status"]),
        error=row["error"],
        counts={str(k): int(v) for k, v in row["counts"].items()},
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class PgJobRepo:
    def __init__(self, ex: PgExecutor) -> None:
        self._ex = ex

    async def create(self, job: Job) -> None:
        await self._ex.execute(
            f"INSERT INTO jobs ({_JOB_COLUMNS}) VALUES ({', '.join(['%s'] * 12)}) ON CONFLICT (job_id) DO NOTHING",
            _job_params(job),
        )

    async def get(self, scope: Scope, job_id: str) -> Job | None:
        row = await self._ex.fetchone(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE job_id = %s AND client_id = %s AND customer_id = %s "
            "AND user_id = %s",
            (job_id, scope.client_id, scope.customer_id, scope.user_id),
        )
        return _job(row) if row else None

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        where, params = _forget_where(scope, level)
        return await self._ex.execute(f"DELETE FROM jobs WHERE {where}", params)

    async def finish(
        self, scope: Scope, job_id: str, status: JobStatus, counts: dict[str, int], error: str = ""
    ) -> None:
        # kind is unknown when the create was lost; another client's job with this id is left alone.
        job = Job(job_id, scope, kind="", status=status, error=error, counts=dict(counts))
        await self._ex.execute(
            f"INSERT INTO jobs ({_JOB_COLUMNS}) VALUES ({', '.join(['%s'] * 12)}) "
            "ON CONFLICT (job_id) DO UPDATE SET status = excluded.status, error = excluded.error, "
            "counts = excluded.counts, updated_at = excluded.updated_at "
            "WHERE jobs.client_id = excluded.client_id",
            _job_params(job),
        )


# --- API keys -------------------------------------------------------------------------------------------

_KEY_COLUMNS = "key_id, client_id, key_hash, name, created_at, revoked, role, customers, users"


def _key(row: DictRow) -> ApiKey:
    return ApiKey(
        key_id=row["key_id"],
        client_id=row["client_id"],
        key_hash=row["key_hash"],
        name=row["name"],
        created_at=row["created_at"],
        revoked=row["revoked"],
        grant=Grant(KeyRole(row["role"]), tuple(row["customers"]), tuple(row["users"])),
    )


class PgApiKeyRepo:
    def __init__(self, ex: PgExecutor) -> None:
        self._ex = ex

    async def add(self, key: ApiKey) -> None:
        # Re-adding a key (bootstrap scripts, revocation) updates it, but never moves it to another client.
        await self._ex.execute(
            f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (key_id) DO UPDATE SET key_hash = excluded.key_hash, name = excluded.name, "
            "revoked = excluded.revoked, role = excluded.role, customers = excluded.customers, "
            "users = excluded.users WHERE api_keys.client_id = excluded.client_id",
            (
                key.key_id,
                key.client_id,
                key.key_hash,
                key.name,
                _utc(key.created_at),
                key.revoked,
                str(key.grant.role),
                list(key.grant.customers),
                list(key.grant.users),
            ),
        )

    async def by_hash(self, key_hash: str) -> ApiKey | None:
        row = await self._ex.fetchone(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_hash = %s", (key_hash,))
        return _key(row) if row else None

    async def by_id(self, client_id: str, key_id: str) -> ApiKey | None:
        row = await self._ex.fetchone(
            f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_id = %s AND client_id = %s", (key_id, client_id)
        )
        return _key(row) if row else None


# --- processed events and audit -------------------------------------------------------------------------


class PgProcessedEvents:
    def __init__(self, ex: PgExecutor) -> None:
        self._ex = ex

    async def seen(self, group: str, event_id: str) -> bool:
        row = await self._ex.fetchone(
            "SELECT 1 AS hit FROM processed_events WHERE group_name = %s AND event_id = %s", (group, event_id)
        )
        return row is not None

    async def mark(self, group: str, event_id: str) -> None:
        await self._ex.execute(
            "INSERT INTO processed_events (group_name, event_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (group, event_id),
        )


class PgAuditLog:
    def __init__(self, ex: PgExecutor) -> None:
        self._ex = ex

    async def record(self, client_id: str, action: str, detail: str) -> None:
        await self._ex.execute(
            "INSERT INTO audit_log (client_id, action, detail) VALUES (%s, %s, %s)",
            (client_id, action, detail),
        )

    async def list(self, scope: Scope, limit: int = 100) -> list[AuditEntry]:
        rows = await self._ex.fetch(
            "SELECT client_id, action, detail, at FROM audit_log WHERE client_id = %s "
            "ORDER BY at DESC, id DESC LIMIT %s",
            (scope.client_id, max(limit, 0)),
        )
        return [AuditEntry(r["client_id"], r["action"], r["detail"], r["at"]) for r in rows]


class PgSchemaRepo:
    """Agent schemas, one row per (client, agent, version); versions are immutable once written."""

    def __init__(self, ex: PgExecutor) -> None:
        self._ex = ex

    async def latest(self, scope: Scope, agent_id: str) -> AgentSchema | None:
        row = await self._ex.fetchone(
            "SELECT body::text AS body FROM agent_schemas WHERE client_id = %s AND agent_id = %s "
            "ORDER BY version DESC LIMIT 1",
            (scope.client_id, agent_id),
        )
        return AgentSchema.from_json(row["body"]) if row else None

    async def put(self, client_id: str, schema: AgentSchema) -> bool:
        inserted = await self._ex.execute(
            "INSERT INTO agent_schemas (client_id, agent_id, version, body) VALUES (%s, %s, %s, %s::jsonb) "
            "ON CONFLICT DO NOTHING",
            (client_id, schema.agent_id, schema.version, schema.to_json()),
        )
        return inserted == 1

    async def version(self, scope: Scope, agent_id: str, version: int) -> AgentSchema | None:
        row = await self._ex.fetchone(
            "SELECT body::text AS body FROM agent_schemas WHERE client_id = %s AND agent_id = %s AND version = %s",
            (scope.client_id, agent_id, version),
        )
        return AgentSchema.from_json(row["body"]) if row else None

    async def agents(self, scope: Scope) -> list[AgentSchema]:
        rows = await self._ex.fetch(
            "SELECT DISTINCT ON (agent_id) body::text AS body FROM agent_schemas WHERE client_id = %s "
            "ORDER BY agent_id, version DESC",
            (scope.client_id,),
        )
        return [AgentSchema.from_json(r["body"]) for r in rows]


# --- the holder -----------------------------------------------------------------------------------------


class PostgresStore:
    """The pool and the five repos over it. Build with ``await PostgresStore.open(dsn)``."""

    def __init__(self, pool: AsyncConnectionPool[AsyncConnection[DictRow]], timeout_s: float) -> None:
        self.pool = pool
        self.executor = PgExecutor(pool, timeout_s)
        self.memories: MemoryRepo = PgMemoryRepo(self.executor)
        self.jobs: JobRepo = PgJobRepo(self.executor)
        self.api_keys: ApiKeyRepo = PgApiKeyRepo(self.executor)
        self.processed: ProcessedEvents = PgProcessedEvents(self.executor)
        self.audit: AuditLog = PgAuditLog(self.executor)
        self.schemas: SchemaRepo = PgSchemaRepo(self.executor)

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        timeout_s: float = 5.0,
        schema: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
    ) -> PostgresStore:
        """Connects, runs the migrations and returns the store.

        ``schema`` puts every table in that Postgres schema (created if missing) instead of the
        connection's default search_path; tests use it to get a fresh, private set of tables.
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
            await store._migrate(schema)
        except BaseException:
            await pool.close()
            raise
        return store

    async def _migrate(self, schema: str | None) -> None:
        async with self.executor.cursor(transaction=True) as cur:
            # Transaction-scoped, so it is released even if a statement fails.
            await cur.execute("SELECT pg_advisory_xact_lock(hashtext('acm.relational.migrate'))")
            if schema is not None:
                await cur.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")  # validated identifier
            for ddl in (*_MIGRATIONS, *_AUTHORS_MIGRATIONS):
                await cur.execute(ddl)

    async def close(self) -> None:
        await self.pool.close()
