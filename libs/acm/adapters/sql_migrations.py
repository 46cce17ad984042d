"""Versioned migrations of the relational store (memories, jobs, keys, events, audit, schemas, working
memory), for Postgres and SQLite, applied by the stores' open() at every start (and so in CI, by every test
that opens a store).

A numbered list per group of tables and dialect (a group is one repository of acm.bootstrap.Relational;
a service's store holds only the groups it owns, acm.ownership), and a schema_versions table recording
which (group, number) a database has had: a start runs only the ones it has not, in order, once, in one
transaction under a lock, so two processes starting together neither collide nor run one twice. Number 1
of each group is its schema in the releases before this table, written so that it also brings any
database they made up to date. A change to the schema is a new number at the end of the group's list in
both dialects; a released number is never edited.

A small runner of our own rather than Alembic: the DDL is dialect text either way (FTS5 and its triggers,
tsvector), nothing here is an ORM model to autogenerate from, and Alembic would bring SQLAlchemy into every
service for this alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from acm.adapters.sql_repos import Executor, Tx
from acm.domain.models import utcnow

Step = str | Callable[[Tx], Awaitable[None]]


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Migrations:
    """One dialect's numbered lists, one per group of tables (a repository of acm.bootstrap.Relational, see
    acm.ownership.REPOS), and the statement that serialises concurrent runs ("" when the transaction does).
    A service's store has only the groups it owns, so each group's versions are tracked on their own."""

    lock: str
    groups: Mapping[str, tuple[Migration, ...]]

    def only(self, groups: Iterable[str]) -> Migrations:
        wanted = set(groups)
        unknown = wanted - set(self.groups)
        if unknown:
            raise ValueError(f"no migrations for {sorted(unknown)}: groups are {list(self.groups)}")
        return replace(self, groups={g: steps for g, steps in self.groups.items() if g in wanted})


# schema_versions, not the schema_migrations of the releases before groups (one list, version 1 = all the
# tables): each group's version 1 is written to bring their databases up to date too (IF NOT EXISTS).
_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_versions (grp text NOT NULL, version integer NOT NULL, "
    "name text NOT NULL, applied_at text NOT NULL, PRIMARY KEY (grp, version))"
)


async def migrate(ex: Executor, migrations: Migrations, before: Sequence[str] = ()) -> list[tuple[str, int]]:
    """Applies the migrations this database has not had; their (group, number). ``before``: statements to
    run first, under the same lock (e.g. creating the Postgres schema the tables live in)."""
    async with ex.transaction() as tx:
        if migrations.lock:
            await tx.execute(migrations.lock)
        for statement in (*before, _TABLE):
            await tx.execute(statement)
        done = {(r["grp"], int(r["version"])) for r in await tx.fetch("SELECT grp, version FROM schema_versions")}
        applied = []
        for group, steps in migrations.groups.items():
            for m in steps:
                if (group, m.version) in done:
                    continue
                for step in m.steps:
                    await (tx.execute(step) if isinstance(step, str) else step(tx))
                await tx.execute(
                    "INSERT INTO schema_versions (grp, version, name, applied_at) VALUES (:grp, :version, :name, :at)",
                    {"grp": group, "version": m.version, "name": m.name, "at": utcnow().isoformat()},
                )
                applied.append((group, m.version))
    return applied


# --- Postgres -------------------------------------------------------------------------------------------

# Version 1 of each group is the schema as the releases before versioned migrations made it, written so
# that it also brings any of their databases up to date (every statement IF NOT EXISTS).
_PG_MEMORIES: tuple[str, ...] = (
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
)

_PG_JOBS = (
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
)

_PG_API_KEYS = (
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
    # Roles (added after the first release): keys stored before them keep working as admin keys.
    "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS role text NOT NULL DEFAULT 'admin'",
    "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS customers text[] NOT NULL DEFAULT '{}'",
    "ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS users text[] NOT NULL DEFAULT '{}'",
)

_PG_PROCESSED = (
    """
    CREATE TABLE IF NOT EXISTS processed_events (
        group_name text NOT NULL,
        event_id   text NOT NULL,
        at         timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (group_name, event_id)
    )
    """,
)

_PG_AUDIT = (
    """
    CREATE TABLE IF NOT EXISTS audit_log (
        id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        client_id text NOT NULL,
        action    text NOT NULL,
        detail    text NOT NULL,
        at        timestamptz NOT NULL DEFAULT clock_timestamp()
    )
    """,
    "CREATE INDEX IF NOT EXISTS audit_log_client_idx ON audit_log (client_id, at DESC, id DESC)",
)

_PG_SCHEMAS = (
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
_PG_AUTHORS: tuple[str, ...] = (
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

_PG_WORKING = (
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


# Ingest's entity registry (issue 19: the graph is retrieve's; entity resolution reads this instead): each entity
# with its owner, and one row per alias (aliases only grow). The same DDL in both dialects.
_ENTITIES = (
    """
    CREATE TABLE IF NOT EXISTS entities (
        entity_id   text PRIMARY KEY,
        client_id   text NOT NULL,
        tier        text NOT NULL CHECK (tier IN ('user', 'customer', 'client')),
        customer_id text NOT NULL DEFAULT '',
        user_id     text NOT NULL DEFAULT '',
        name        text NOT NULL,
        name_lc     text NOT NULL,
        type        text NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS entities_name_idx ON entities (client_id, name_lc)",
    "CREATE INDEX IF NOT EXISTS entities_owner_idx ON entities (client_id, customer_id, user_id)",
    """
    CREATE TABLE IF NOT EXISTS entity_aliases (
        entity_id text NOT NULL,
        alias     text NOT NULL,
        alias_lc  text NOT NULL,
        PRIMARY KEY (entity_id, alias)
    )
    """,
    "CREATE INDEX IF NOT EXISTS entity_aliases_lc_idx ON entity_aliases (alias_lc)",
)

_BEFORE = "the schema before versions"

# The turn's metadata on each memory (ListMemories filters by key=value); rows stored before it have none.
_METADATA = "turn metadata on memories"
_PG_MEMORY_METADATA = Migration(
    3, _METADATA, ("ALTER TABLE memories ADD COLUMN IF NOT EXISTS metadata jsonb NOT NULL DEFAULT '{}'",)
)

# The bus's data keys (acm.sealing), in the gateway's store: one current key per owner (a user, a customer, a
# client: "" for the parts below its level), wrapped by the master key. A Forget deletes the owner's rows.
_DATA_KEYS = (
    """
    CREATE TABLE IF NOT EXISTS data_keys (
        key_id      text PRIMARY KEY,
        client_id   text NOT NULL,
        customer_id text NOT NULL,
        user_id     text NOT NULL,
        wrapped     text NOT NULL,
        created_at  text NOT NULL,
        UNIQUE (client_id, customer_id, user_id)
    )
    """,
)
_DATA_KEYS_MIGRATION = Migration(2, "data keys of the sealed bus", _DATA_KEYS)

# Data keys per session (a session Forget destroys its key) and the master key that wrapped each (rotation):
# the owner gains session_id ("" for a user's own key and above), unique with it. Re-runnable.
_DATA_KEY_SESSIONS = "data keys per session, and the master key of each"
_PG_DATA_KEY_SESSIONS = Migration(
    3,
    _DATA_KEY_SESSIONS,
    (
        "ALTER TABLE data_keys ADD COLUMN IF NOT EXISTS session_id text NOT NULL DEFAULT ''",
        "ALTER TABLE data_keys ADD COLUMN IF NOT EXISTS master_id text NOT NULL DEFAULT ''",
        "ALTER TABLE data_keys DROP CONSTRAINT IF EXISTS data_keys_client_id_customer_id_user_id_key",
        "CREATE UNIQUE INDEX IF NOT EXISTS data_keys_owner_idx "
        "ON data_keys (client_id, customer_id, user_id, session_id)",
    ),
)


async def _data_key_sessions(tx: Tx) -> None:
    # SQLite cannot drop a table's UNIQUE constraint: the table is copied into one with the new owner.
    have = {row["name"] for row in await tx.fetch("PRAGMA table_info(data_keys)")}
    if "session_id" in have:
        return
    await tx.execute(
        """
        CREATE TABLE data_keys_by_session (
            key_id      text PRIMARY KEY,
            client_id   text NOT NULL,
            customer_id text NOT NULL,
            user_id     text NOT NULL,
            session_id  text NOT NULL DEFAULT '',
            wrapped     text NOT NULL,
            master_id   text NOT NULL DEFAULT '',
            created_at  text NOT NULL,
            UNIQUE (client_id, customer_id, user_id, session_id)
        )
        """
    )
    await tx.execute(
        "INSERT INTO data_keys_by_session (key_id, client_id, customer_id, user_id, wrapped, created_at) "
        "SELECT key_id, client_id, customer_id, user_id, wrapped, created_at FROM data_keys"
    )
    await tx.execute("DROP TABLE data_keys")
    await tx.execute("ALTER TABLE data_keys_by_session RENAME TO data_keys")


_SQLITE_DATA_KEY_SESSIONS = Migration(3, _DATA_KEY_SESSIONS, (_data_key_sessions,))

_FORGET_IDS = ("customer_id", "user_id", "session_id")

# ListCompactions (the console's compactions view): a client's compactions in every session, newest first.
_COMPACTIONS_LISTING = Migration(
    2,
    "a client's compactions by time",
    ("CREATE INDEX IF NOT EXISTS compactions_client_time_idx ON compactions (client_id, created_at, compaction_id)",),
)

# ListJobs (the console's jobs view): a client's jobs newest first, all or of one status, by index seeks rather
# than a scan of every client's jobs. The same text in both dialects.
_JOBS_LISTING = Migration(
    2,
    "a client's jobs by time",
    (
        "CREATE INDEX IF NOT EXISTS jobs_client_time_idx ON jobs (client_id, created_at, job_id)",
        "CREATE INDEX IF NOT EXISTS jobs_client_status_time_idx ON jobs (client_id, status, created_at, job_id)",
    ),
)

# Dead letters, kept by the gateway for ListDeadLetters (acm_gateway.handlers.dead_letters): where, when, why and
# how large, never the event. Text columns only (failed_at: fixed-width UTC ISO text, ordered as text), one SQL
# for both dialects (acm.adapters.dead_letters_sql).
_DEAD_LETTERS = Migration(
    3,
    "dead letters",
    (
        """
        CREATE TABLE IF NOT EXISTS dead_letters (
            letter_id  text PRIMARY KEY,
            client_id  text NOT NULL,
            grp        text NOT NULL,
            topic      text NOT NULL,
            record_key text NOT NULL,
            reason     text NOT NULL,
            attempts   integer NOT NULL,
            size_bytes bigint NOT NULL,
            failed_at  text NOT NULL,
            event_id   text NOT NULL
        )
        """,
        "CREATE INDEX IF NOT EXISTS dead_letters_client_time_idx ON dead_letters (client_id, failed_at, letter_id)",
    ),
)
# A Forget deletes the forgotten scope's dead letters (their keys name the user): the rest of the claimed scope.
# Re-runnable, as every migration must be (a database whose versions table was lost runs them all again).
_PG_DEAD_LETTER_SCOPES = Migration(
    4,
    "dead letters' scopes",
    tuple(f"ALTER TABLE dead_letters ADD COLUMN IF NOT EXISTS {c} text NOT NULL DEFAULT ''" for c in _FORGET_IDS),
)


async def _add_dead_letter_scopes(tx: Tx) -> None:
    # SQLite has no ADD COLUMN IF NOT EXISTS.
    have = {row["name"] for row in await tx.fetch("PRAGMA table_info(dead_letters)")}
    for column in _FORGET_IDS:
        if column not in have:
            await tx.execute(f"ALTER TABLE dead_letters ADD COLUMN {column} text NOT NULL DEFAULT ''")


_SQLITE_DEAD_LETTER_SCOPES = Migration(4, "dead letters' scopes", (_add_dead_letter_scopes,))

POSTGRES = Migrations(
    # Transaction-scoped, so it is released even if a statement fails; two concurrent CREATE TABLE IF NOT
    # EXISTS could otherwise still collide on the catalog's unique indexes.
    lock="SELECT pg_advisory_xact_lock(hashtext('acm.relational.migrate'))",
    groups={
        "memories": (
            Migration(1, _BEFORE, (*_PG_MEMORIES, *_PG_AUTHORS)),
            # The visibility predicate's client-tier branch (tier = 'client', any customer and user) cannot use
            # memories_scope_idx: keyword search was a parallel seq scan at 100k memories a client (93-126 ms);
            # with tier in the index it is a BitmapOr of index scans, 1.3-7.6 ms (acm bench scale, operations.md).
            Migration(
                2,
                "tier in the scope index",
                (
                    "CREATE INDEX IF NOT EXISTS memories_tier_scope_idx "
                    "ON memories (client_id, tier, customer_id, user_id)",
                ),
            ),
            _PG_MEMORY_METADATA,
        ),
        "jobs": (Migration(1, _BEFORE, _PG_JOBS), _JOBS_LISTING, _DEAD_LETTERS, _PG_DEAD_LETTER_SCOPES),
        "api_keys": (Migration(1, _BEFORE, _PG_API_KEYS), _DATA_KEYS_MIGRATION, _PG_DATA_KEY_SESSIONS),
        "processed": (Migration(1, _BEFORE, _PG_PROCESSED),),
        "audit": (Migration(1, _BEFORE, _PG_AUDIT),),
        "schemas": (Migration(1, _BEFORE, _PG_SCHEMAS),),
        "working": (Migration(1, _BEFORE, _PG_WORKING), _COMPACTIONS_LISTING),
        "entities": (Migration(1, "entity registry", _ENTITIES),),
    },
)


# --- SQLite ---------------------------------------------------------------------------------------------

_SQLITE_MEMORIES = (
    """
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
)
    """,
    "CREATE INDEX IF NOT EXISTS memories_scope_idx ON memories (client_id, customer_id, user_id)",
    """
CREATE INDEX IF NOT EXISTS memories_session_idx
    ON memories (client_id, customer_id, user_id, session_id, created_at)
    """,
    """
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    text, content='memories', content_rowid='rid', tokenize='porter unicode61'
)
    """,
    """
CREATE TRIGGER IF NOT EXISTS memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.rid, new.text);
END
    """,
    """
CREATE TRIGGER IF NOT EXISTS memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rid, old.text);
END
    """,
    """
CREATE TRIGGER IF NOT EXISTS memories_fts_au AFTER UPDATE OF text ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rid, old.text);
    INSERT INTO memories_fts (rowid, text) VALUES (new.rid, new.text);
END
    """,
)

_SQLITE_JOBS = (
    """
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
)
    """,
)

_SQLITE_API_KEYS = (
    """
CREATE TABLE IF NOT EXISTS api_keys (
    key_id     TEXT PRIMARY KEY,
    client_id  TEXT NOT NULL,
    key_hash   TEXT NOT NULL UNIQUE,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked    INTEGER NOT NULL DEFAULT 0
)
    """,
)

_SQLITE_PROCESSED = (
    """
CREATE TABLE IF NOT EXISTS processed_events (
    group_name TEXT NOT NULL,
    event_id   TEXT NOT NULL,
    at         TEXT NOT NULL,
    PRIMARY KEY (group_name, event_id)
)
    """,
)

_SQLITE_AUDIT = (
    """
CREATE TABLE IF NOT EXISTS audit_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    client_id TEXT NOT NULL,
    action    TEXT NOT NULL,
    detail    TEXT NOT NULL,
    at        TEXT NOT NULL
)
    """,
    "CREATE INDEX IF NOT EXISTS audit_log_client_idx ON audit_log (client_id, at, id)",
)

_SQLITE_SCHEMAS = (
    """
CREATE TABLE IF NOT EXISTS agent_schemas (
    client_id  TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    version    INTEGER NOT NULL,
    body       TEXT NOT NULL,  -- AgentSchema.to_json()
    created_at TEXT NOT NULL,
    PRIMARY KEY (client_id, agent_id, version)
)
    """,
)


async def _add_memory_columns(tx: Tx) -> None:
    """Columns added after a database was first created (CREATE TABLE IF NOT EXISTS keeps the old shape)."""
    have = {row["name"] for row in await tx.fetch("PRAGMA table_info(memories)")}
    for column, ddl in (
        ("slot", "slot TEXT NOT NULL DEFAULT ''"),
        # Provenance and trust (issue 18): rows stored before them read as trusted, of an unknown role.
        ("role", "role TEXT NOT NULL DEFAULT ''"),
        ("tool_name", "tool_name TEXT NOT NULL DEFAULT ''"),
        ("trust", "trust TEXT NOT NULL DEFAULT 'normal'"),
    ):
        if column not in have:
            await tx.execute(f"ALTER TABLE memories ADD COLUMN {ddl}")
    await tx.execute("CREATE INDEX IF NOT EXISTS memories_slot_idx ON memories (client_id, slot) WHERE slot != ''")
    await tx.execute(_SQLITE_EXPIRY_INDEX)


async def _add_memory_metadata(tx: Tx) -> None:
    # SQLite has no ADD COLUMN IF NOT EXISTS; a table made by a release that numbered no migrations may have it.
    if "metadata" not in {row["name"] for row in await tx.fetch("PRAGMA table_info(memories)")}:
        await tx.execute("ALTER TABLE memories ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'")


async def _add_key_columns(tx: Tx) -> None:
    # Roles: keys stored before them keep working as admin keys.
    key_columns = {row["name"] for row in await tx.fetch("PRAGMA table_info(api_keys)")}
    for column, ddl in (
        ("role", "role TEXT NOT NULL DEFAULT 'admin'"),
        ("customers", "customers TEXT NOT NULL DEFAULT '[]'"),  # JSON array
        ("users", "users TEXT NOT NULL DEFAULT '[]'"),  # JSON array
    ):
        if column not in key_columns:
            await tx.execute(f"ALTER TABLE api_keys ADD COLUMN {ddl}")


# A covering index for the sweep's reads: the distinct clients and agents are walked with one index seek
# each (MIN ... > previous), and the due users of an agent are a range per layer on the last-write time.
_SQLITE_EXPIRY_INDEX = """
CREATE INDEX IF NOT EXISTS memories_expiry_idx
    ON memories (client_id, agent_id, layer, COALESCE(updated_at, created_at), customer_id, user_id)
    WHERE tier = 'user'
"""

# Who said each customer- and client-tier memory (one row per user who stated it; a memory id is shared by
# every user who says the same fact): a user-level Forget erases what that user alone said at those tiers.
_SQLITE_AUTHORS = (
    """
    CREATE TABLE IF NOT EXISTS memory_authors (
        memory_id   TEXT NOT NULL,
        client_id   TEXT NOT NULL,
        customer_id TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        PRIMARY KEY (memory_id, client_id, customer_id, user_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX IF NOT EXISTS memory_authors_user ON memory_authors (client_id, customer_id, user_id)",
)


_SQLITE_WORKING = (
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


async def _add_scope_key(tx: Tx) -> None:
    # Once: a database whose versions table was lost runs the migrations again (generated columns are in
    # table_xinfo only).
    if "scope_key" not in {row["name"] for row in await tx.fetch("PRAGMA table_xinfo(memories)")}:
        await tx.execute(
            """
ALTER TABLE memories ADD COLUMN scope_key TEXT GENERATED ALWAYS AS (CASE tier
    WHEN 'user' THEN 'u' || hex(client_id || char(31) || customer_id || char(31) || user_id)
    WHEN 'customer' THEN 'c' || hex(client_id || char(31) || customer_id)
    ELSE 'k' || hex(client_id) END) VIRTUAL
            """
        )


# Keyword search restricted to the reader inside FTS5: each row's owner as one token in a second FTS column
# (scope_key, a virtual generated column), so MATCH intersects the query's words with the reader's tiers'
# owner tokens and never walks the client's other rows. Before, FTS5 matched the words over every client and
# each hit was joined to memories and filtered: at 100k memories a client 24.6k rows a query, 137-174 ms p50;
# with the owner token 19-22 ms, same top 10 on 60 queries (acm bench scale, docs/operations.md "Scale").
# A hex of the owner ids is one unicode61 token whatever the ids hold. The tier index serves visible() as
# migration 2 of Postgres does (a count of the reader's rows at 100k: 1,139 ms -> 35-50 ms).
_SQLITE_SCOPED_FTS = (
    "CREATE INDEX IF NOT EXISTS memories_tier_scope_idx ON memories (client_id, tier, customer_id, user_id)",
    _add_scope_key,
    "DROP TRIGGER IF EXISTS memories_fts_ai",
    "DROP TRIGGER IF EXISTS memories_fts_ad",
    "DROP TRIGGER IF EXISTS memories_fts_au",
    "DROP TABLE IF EXISTS memories_fts",
    """
CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, scope_key, content='memories', content_rowid='rid', tokenize='porter unicode61'
)
    """,
    "INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')",
    """
CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text, scope_key) VALUES (new.rid, new.text, new.scope_key);
END
    """,
    """
CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, scope_key) VALUES ('delete', old.rid, old.text, old.scope_key);
END
    """,
    """
CREATE TRIGGER memories_fts_au AFTER UPDATE OF text, client_id, tier, customer_id, user_id ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, scope_key) VALUES ('delete', old.rid, old.text, old.scope_key);
    INSERT INTO memories_fts (rowid, text, scope_key) VALUES (new.rid, new.text, new.scope_key);
END
    """,
)

SQLITE = Migrations(
    lock="",  # the transaction is BEGIN IMMEDIATE: a second process waits for the first (busy_timeout)
    groups={
        "memories": (
            Migration(1, _BEFORE, (*_SQLITE_MEMORIES, _add_memory_columns, *_SQLITE_AUTHORS)),
            Migration(2, _METADATA, (_add_memory_metadata,)),
            Migration(3, "keyword search scoped in FTS5, tier in the scope index", _SQLITE_SCOPED_FTS),
            # active_in_slot (ingest, every fact with a slot) never used memories_slot_idx: `slot = :slot` does not
            # prove the partial index's `slot != ''`, so SQLite walked the client's scope index: 1,159 ms at 100k
            # memories a client, the embedded ingest's 2 s a turn at 1M. A full index, the reader's ids last.
            Migration(
                4,
                "slot lookups by index",
                (
                    "CREATE INDEX IF NOT EXISTS memories_slot_scope_idx "
                    "ON memories (client_id, slot, tier, customer_id, user_id)",
                ),
            ),
        ),
        "jobs": (Migration(1, _BEFORE, _SQLITE_JOBS), _JOBS_LISTING, _DEAD_LETTERS, _SQLITE_DEAD_LETTER_SCOPES),
        "api_keys": (
            Migration(1, _BEFORE, (*_SQLITE_API_KEYS, _add_key_columns)),
            _DATA_KEYS_MIGRATION,
            _SQLITE_DATA_KEY_SESSIONS,
        ),
        "processed": (Migration(1, _BEFORE, _SQLITE_PROCESSED),),
        "audit": (Migration(1, _BEFORE, _SQLITE_AUDIT),),
        "schemas": (Migration(1, _BEFORE, _SQLITE_SCHEMAS),),
        "working": (Migration(1, _BEFORE, _SQLITE_WORKING), _COMPACTIONS_LISTING),
        "entities": (Migration(1, "entity registry", _ENTITIES),),
    },
)
