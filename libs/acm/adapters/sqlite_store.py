"""SQLite adapters (stdlib sqlite3 + FTS5) for the relational ports, the embedded default of the Postgres
ones: the queries are acm.adapters.sql_repos's, shared with Postgres; what is SQLite's own is here: the
tables, the executor, the Dialect, and the memories' full-text search (FTS5) and upsert check.

One connection in WAL mode for writes and migrations, inline in the async methods; writes go through an
asyncio.Lock so a transaction is never interleaved with another coroutine's, and a progress handler
enforces the deadline. Reads outside a transaction (a Fetch's keyword search, hydration, neighbours) run
on a small, bounded pool of reader connections in worker threads (a file database only): sqlite3 releases
the GIL while a statement steps, so under concurrent Fetches they run beside the event loop, on another
core, instead of holding it (issue 20: 31 % of the loop's time with 16 Fetching clients). WAL lets them
read while a write is in progress; like the Postgres pool, they see committed rows only.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from acm.adapters.sql_migrations import SQLITE as SQLITE_MIGRATIONS
from acm.adapters.sql_migrations import migrate
from acm.adapters.sql_repos import MEMORY_COLUMNS, Dialect, Params, Row, SqlMemoryRepo, SqlStore, Tx
from acm.domain.models import Memory
from acm.domain.scope import Scope, Tier

__all__ = ["SQLITE", "SqliteExecutor", "SqliteMemoryRepo", "SqliteStore"]

# Reader connections (threads) per file store: enough to keep both cores of a small host busy while the event
# loop serves RPCs; more would only contend for the GIL when rows become Python objects.
DEFAULT_READERS = 4
DECODED_MEMORIES = 4096  # memories kept decoded per store (DecodedRows), a few MB
KEPT_READS = 1024  # results of memory reads kept per store while it is unchanged (KeptReads)
# And the values their rows may hold in all: about 10,000 memory rows of 26 columns, a few tens of MB.
KEPT_VALUES = 250_000

_WORD = re.compile(r"[^\W_]+")
MEMORY_NAMES = [c.strip() for c in MEMORY_COLUMNS.split(",")]
_N = len(MEMORY_NAMES)
_MAX_TERMS = 64
# FTS5 has no stop-word list; without one, "what"/"the" in a question would match (and rank) nearly every
# row. Kept short: only words that carry no topic. If a query is all stop words, they are used anyway.
_STOP_WORDS = frozenset(
    "a about after all also an and any are as at be been but by can could did do does for from had has "
    "have he her him his how i if in into is it its just me my no not of on or our she so than that the "
    "their them then there these they this to too up us was we were what when where which who whom why "
    "will with would you your".split()
)


def _ts(value: datetime | None) -> str | None:
    """Fixed-width UTC text (naive taken as UTC), so ORDER BY on the column is chronological."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _json_list(values: Sequence[str]) -> str:
    return json.dumps(list(values))


def _str_tuple(value: str) -> tuple[str, ...]:
    return tuple(json.loads(value)) if value != "[]" else ()


SQLITE = Dialect(
    ts=_ts,
    dt=datetime.fromisoformat,
    array=_json_list,
    from_array=_str_tuple,
    obj=json.dumps,
    from_obj=json.loads,
    in_list=lambda column, param: f"{column} IN (SELECT value FROM json_each(:{param}))",
    json_text=lambda column: column,
    json_param=lambda param: f":{param}",
    # Every (key, value) of the param's object is one of the column's: as many matches as the param has keys.
    json_contains=lambda column, param: (
        f"(SELECT count(*) FROM json_each({column}) AS h JOIN json_each(:{param}) AS w "
        f"ON h.key = w.key AND h.value = w.value) = (SELECT count(*) FROM json_each(:{param}))"
    ),
    planner_hint="+",
)


class SqliteTx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params = ()) -> int:
        return int(self._conn.execute(sql, params).rowcount)

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        self._conn.executemany(sql, rows)

    async def fetch(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        return self._conn.execute(sql, params).fetchall()


@contextmanager
def _deadline(conn: sqlite3.Connection, timeout_s: float) -> Iterator[None]:
    # SQLite calls the handler every N VM steps; a non-zero return aborts the statement
    # ("interrupted"), which we surface as TimeoutError like the Postgres adapter's deadline.
    end = time.monotonic() + timeout_s
    conn.set_progress_handler(lambda: int(time.monotonic() > end), 10_000)
    try:
        yield
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_INTERRUPT:
            raise TimeoutError(f"sqlite statement exceeded {timeout_s}s") from exc
        raise
    finally:
        conn.set_progress_handler(None, 0)


def _connect(path: str, timeout_s: float) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN/COMMIT ourselves instead of sqlite3's implicit transactions.
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=timeout_s)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={max(1, int(timeout_s * 1000))}")
    return conn


class _Readers:
    """At most ``size`` reader connections to one file, each owned by one worker thread of a bounded pool
    (opened on its first read, query_only). A statement waits in the pool's queue when all are busy."""

    def __init__(self, path: str, size: int, timeout_s: float) -> None:
        self._path = path
        self._timeout_s = timeout_s
        self._pool = ThreadPoolExecutor(size, thread_name_prefix="sqlite-read")
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = _connect(self._path, self._timeout_s)
            conn.execute("PRAGMA query_only=ON")
            self._local.conn = conn
            with self._opened_lock:
                self._opened.append(conn)
        return conn

    def _run(self, read: Callable[[sqlite3.Cursor], Any], sql: str, params: Params) -> Any:
        conn = self._conn()
        with _deadline(conn, self._timeout_s):
            return read(conn.execute(sql, params))

    async def read(self, read: Callable[[sqlite3.Cursor], Any], sql: str, params: Params) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._run, read, sql, params)

    def close(self) -> None:
        self._pool.shutdown(wait=True)  # no statement still running on a connection closed below
        with self._opened_lock:
            for conn in self._opened:
                conn.close()
            self._opened.clear()


class DecodedRows:
    """The memories decoded from the most recently read rows (LRU, at most ``max_entries``), by memory id with
    every memory column of the row they came from: a row that changed in any way compares unequal and is
    decoded again, so nothing needs invalidating. A Fetch decodes a few hundred rows (hydration, keyword hits,
    neighbours) and under concurrent Fetches the same ones again and again; decoding (timestamps, JSON, the
    dataclass) costs ~7 us a row. Looked up by id and compared, not hashed whole: hashing a row's fresh strings
    (its text, timestamps, JSON) cost more than comparing them (issue 20, CPU per Fetch, second round).
    Memories are values (changed with dataclasses.replace, never in place), so one instance is shared.
    Used from the event loop only: no lock."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        # memory id -> (its memory columns, the memory, the row they came from)
        self._memories: OrderedDict[str, tuple[tuple[Any, ...], Memory, Row]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._memories)

    def get(self, row: Row, decode: Callable[[Row], Memory]) -> Memory:
        return self.many([row], decode)[0]

    def many(self, rows: Sequence[Row], decode: Callable[[Row], Memory]) -> list[Memory]:
        """The memories of rows of one query (they share its columns, so those are checked once)."""
        if not rows:
            return []
        # The memory columns lead every memory query (M_COLUMNS first); the extra ones (a search's score) are
        # left out. By position: a lookup by name costs as much as decoding.
        first = rows[0]
        if self.max_entries == 0 or not isinstance(first, sqlite3.Row) or first.keys()[:_N] != MEMORY_NAMES:
            return [decode(r) for r in rows]
        kept, out = self._memories, []
        for row in rows:
            hit = kept.get(row[0])  # type: ignore[index]
            # The very row again (a read KeptReads kept): nothing to compare.
            if hit is not None and (hit[2] is row or hit[0] == row[:_N]):  # type: ignore[index]
                kept.move_to_end(row[0])  # type: ignore[index]
                out.append(hit[1])
                continue
            memory = decode(row)
            kept[row[0]] = (row[:_N], memory, row)  # type: ignore[index]
            kept.move_to_end(row[0])  # type: ignore[index]
            if len(kept) > self.max_entries:
                kept.popitem(last=False)
            out.append(memory)
        return out


T = TypeVar("T")


class KeptReads:
    """The results of the most recent reads (LRU, at most ``max_entries`` of ``max_size`` in all: ``size`` of each),
    by their key (the statement and its parameters), for as long as the store's version
    (``SqliteExecutor.version``) is the one they were read at: any write to the file empties it, so a hit is
    what the read would return now. A Fetch repeats the reads of the Fetches before it while nothing is
    written: the keyword search of the names its query mentions (the same person in every question about
    them, up to 2,000 rows), the session's newest memories, and under an agent loop's repeated questions the
    rest too (issue 20, CPU per Fetch, third round). Each caller gets its own list (of shared, immutable rows).
    Used from the event loop only: no lock."""

    def __init__(self, max_entries: int, max_size: int = KEPT_VALUES, size: Callable[[list[Any]], int] = len) -> None:
        self.max_entries = max_entries
        self.max_size = max_size
        self._size = size
        self._version: tuple[int, int] | None = None
        self._results: OrderedDict[tuple[Any, ...], tuple[list[Any], int]] = OrderedDict()
        self._used = 0
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._results)

    async def read(
        self, version: tuple[int, int], key: tuple[Any, ...], read: Callable[[], Awaitable[list[T]]]
    ) -> list[T]:
        """``read()``'s result, kept under ``version``, which the caller takes before the read starts: the
        rows are then at least as new as it."""
        if self.max_entries <= 0:
            return await read()
        if version != self._version:
            self._results.clear()
            self._used = 0
            self._version = version
        kept = self._results.get(key)
        if kept is not None:
            self._results.move_to_end(key)
            self.hits += 1
            return list(kept[0])
        self.misses += 1
        result = await read()
        # Not kept when a newer version was seen while it read (its rows may be older than that version).
        size = self._size(result)
        if self._version == version and size <= self.max_size and key not in self._results:
            self._results[key] = (list(result), size)
            self._used += size
            while len(self._results) > self.max_entries or self._used > self.max_size:
                self._used -= self._results.popitem(last=False)[1][1]
        return result


class _KeptFetch:
    """An executor whose reads outside a transaction are kept (KeptReads) by their statement and parameters:
    the same statement with the same parameters on an unchanged file returns the same rows. Everything else
    (transactions, writes) is the executor's own."""

    def __init__(self, ex: SqliteExecutor, kept: KeptReads) -> None:
        self._ex = ex
        self._kept = kept

    async def fetch(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        frozen = tuple(params.items()) if isinstance(params, Mapping) else tuple(params)
        return await self._kept.read(self._ex.version(), (sql, frozen), lambda: self._ex.fetch(sql, params))

    async def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        return await self._ex.fetchone(sql, params)

    async def execute(self, sql: str, params: Params = ()) -> int:
        return await self._ex.execute(sql, params)

    def transaction(self) -> contextlib.AbstractAsyncContextManager[SqliteTx]:
        return self._ex.transaction()

    async def purge(self) -> None:
        await self._ex.purge()


def _values(rows: list[sqlite3.Row]) -> int:
    return len(rows) * len(rows[0]) if rows else 0


def _all(cursor: sqlite3.Cursor) -> list[sqlite3.Row]:
    return cursor.fetchall()


def _one(cursor: sqlite3.Cursor) -> sqlite3.Row | None:
    row: sqlite3.Row | None = cursor.fetchone()
    cursor.close()  # an unfinished statement would hold its read snapshot (and block a checkpoint) until collected
    return row


class SqliteExecutor:
    """The connection, the write lock, the reader pool and the deadline every statement runs under."""

    def __init__(
        self, conn: sqlite3.Connection, timeout_s: float, *, fts: bool = True, readers: _Readers | None = None
    ) -> None:
        """``readers``: the pool reads outside a transaction run on (None: inline on ``conn``, as an in-memory
        database must, having no file another connection could open)."""
        self._conn = conn
        self._timeout_s = timeout_s
        self._fts = fts  # whether this file holds the memories' FTS5 index (a service's own file may not)
        self._write_lock = asyncio.Lock()
        self._readers = readers
        self._writes = 0  # write transactions ended (committed or rolled back) on this connection

    def _deadline(self) -> contextlib.AbstractContextManager[None]:
        return _deadline(self._conn, self._timeout_s)

    async def fetch(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        if self._readers is not None:
            rows: list[sqlite3.Row] = await self._readers.read(_all, sql, params)
            return rows
        with self._deadline():
            return _all(self._conn.execute(sql, params))

    async def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        if self._readers is not None:
            row: sqlite3.Row | None = await self._readers.read(_one, sql, params)
            return row
        with self._deadline():
            return _one(self._conn.execute(sql, params))

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[SqliteTx]:
        """A write transaction: holds the write lock, BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error)."""
        async with self._write_lock:
            # IMMEDIATE takes SQLite's write lock up front, so another process waits (busy_timeout) instead
            # of failing on a read-to-write upgrade.
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                with self._deadline():
                    yield SqliteTx(self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
            finally:
                # After the commit, in the same step: a read that began before it is kept under the old
                # version; one inline on this connection inside the transaction (an in-memory database)
                # saw rows that may have been rolled back, and is dropped too.
                self._writes += 1

    async def execute(self, sql: str, params: Params = ()) -> int:
        """One statement in its own transaction; returns the affected row count."""
        async with self.transaction() as tx:
            return await tx.execute(sql, params)

    def version(self) -> tuple[int, int]:
        """Changes when the database may have changed: this process's write transactions (counted at their
        end) and any other connection's commits (``PRAGMA data_version`` of the write connection, which only
        others' commits move: another process on the same file, too). Inline on the loop: a few µs."""
        row = self._conn.execute("PRAGMA data_version").fetchone()
        return self._writes, int(row[0])

    async def purge(self) -> None:
        """After an erasure: FTS5's index rewritten without the deleted rows' terms (its segments keep them
        until merged), then a TRUNCATE checkpoint, so the zeroed pages (secure_delete) reach the file and the
        WAL, whose frames still held the old rows, is emptied (docs/privacy.md)."""
        async with self._write_lock:
            with self._deadline():
                if self._fts:
                    self._conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    async def close(self) -> None:
        async with self._write_lock:  # let an in-flight write finish first
            if self._readers is not None:
                await asyncio.to_thread(self._readers.close)
            self._conn.close()


# --- memories: full-text search and the upsert check ------------------------------------------------


def fts_phrase_query(phrases: Sequence[str]) -> str:
    """An FTS5 MATCH expression matching ANY of the phrases, each phrase's words consecutive and quoted."""
    quoted = []
    for phrase in phrases[:_MAX_TERMS]:
        words = [w.lower() for w in _WORD.findall(phrase)]
        if words:
            quoted.append('"' + " ".join(words).replace('"', '""') + '"')
    return " OR ".join(quoted)


@functools.lru_cache(maxsize=4096)  # by text: an agent loop asks again what it asked before
def fts_or_query(query: str) -> str:
    """An FTS5 MATCH expression matching ANY of the query's words.

    Each term is double-quoted, so words like AND, OR, NEAR or a trailing * are plain text, not syntax.
    """
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))
    terms = [w for w in words if w not in _STOP_WORDS] or words
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms[:_MAX_TERMS])


_FTS = "FROM memories_fts JOIN memories m ON m.rid = memories_fts.rowid WHERE memories_fts MATCH :match"


def _hex(*ids: str) -> str:
    return "\x1f".join(ids).encode().hex().upper()  # as SQLite's hex(a || char(31) || b) of the UTF-8 text


def fts_scope_keys(scope: Scope, tiers: Sequence[Tier]) -> list[str]:
    """The owner tokens (memories.scope_key, sql_migrations) of the rows the reader sees at those tiers."""
    key = {
        Tier.USER: "u" + _hex(scope.client_id, scope.customer_id, scope.user_id),
        Tier.CUSTOMER: "c" + _hex(scope.client_id, scope.customer_id),
        Tier.CLIENT: "k" + _hex(scope.client_id),
    }
    return [key[Tier(t)] for t in dict.fromkeys(tiers)]


def fts_scoped(match: str, scope: Scope, tiers: Sequence[Tier]) -> str:
    """``match`` on the text column of the reader's rows only: FTS5 intersects it with the owner tokens."""
    keys = _owner_tokens(scope.client_id, scope.customer_id, scope.user_id, tuple(tiers))
    return f"scope_key : ({keys}) AND text : ({match})"


@functools.lru_cache(maxsize=4096)  # a handful of readers, every search
def _owner_tokens(client_id: str, customer_id: str, user_id: str, tiers: tuple[Tier, ...]) -> str:
    keys = fts_scope_keys(Scope(client_id, customer_id, user_id, ""), tiers)
    return " OR ".join(f'"{k}"' for k in keys)


class SqliteMemoryRepo(SqlMemoryRepo):
    # bm25() is lower-is-better and negative (FTS5 floors idf at a tiny positive value), so -bm25 is a
    # positive, higher-is-better score.
    SCORE = "-bm25(memories_fts, 1.0, 0.0)"  # the owner token (scope_key) adds nothing to the score

    def __init__(
        self, ex: SqliteExecutor, dialect: Dialect, decoded: int = DECODED_MEMORIES, kept: int = KEPT_READS
    ) -> None:
        """``decoded``: how many decoded memories are kept, by their row (0: none); ``kept``: how many reads'
        results are kept while the store is unchanged (KeptReads; 0: none)."""
        self.kept = KeptReads(kept, size=_values)
        super().__init__(_KeptFetch(ex, self.kept), dialect)
        self._decoded = DecodedRows(decoded)

    def _memory(self, row: Row) -> Memory:
        return self._decoded.get(row, super()._memory)

    def _memories(self, rows: Sequence[Row]) -> list[Memory]:
        return self._decoded.many(rows, super()._memory)

    async def _taken(self, tx: Tx, memories: Sequence[Memory]) -> list[str]:
        rows = await tx.fetch(
            "SELECT memory_id, client_id FROM memories WHERE memory_id IN (SELECT value FROM json_each(:ids))",
            {"ids": _json_list([m.memory_id for m in memories])},
        )
        owners = {r["memory_id"]: r["client_id"] for r in rows}
        return [m.memory_id for m in memories if owners.get(m.memory_id, m.owner.client_id) != m.owner.client_id]

    def _words(self, query: str) -> tuple[str, dict[str, Any]] | None:
        match = fts_or_query(query)
        return (_FTS, {"match": match}) if match else None

    def _phrases(self, phrases: Sequence[str]) -> tuple[str, dict[str, Any]] | None:
        match = fts_phrase_query(phrases)
        return (_FTS, {"match": match}) if match else None

    async def _search(
        self, scope: Scope, source: tuple[str, dict[str, Any]], limit: int, tiers: tuple[Tier, ...], *rest: Any
    ) -> Sequence[Row]:
        # The words are matched among the reader's rows inside FTS5 (their owner tokens): the cost follows what
        # the reader sees, not the client (visible() in the query still decides, exactly).
        matching, params = source
        scoped = {**params, "match": fts_scoped(params["match"], scope, tiers)}
        return await super()._search(scope, (matching, scoped), limit, tiers, *rest)

    def _anchors(self, turns: Sequence[tuple[str, Any]]) -> tuple[str, dict[str, Any]]:
        params: dict[str, Any] = {}
        for i, (session_id, at) in enumerate(turns):
            params[f"s{i}"], params[f"t{i}"] = session_id, at
        return "VALUES " + ", ".join(f"(:s{i}, :t{i})" for i in range(len(turns))), params


# --- the holder -----------------------------------------------------------------------------------------


class SqliteStore(SqlStore):
    """The connection and the repos over it. Build with ``await SqliteStore.open(path)``."""

    def __init__(
        self, conn: sqlite3.Connection, timeout_s: float, *, fts: bool = True, readers: _Readers | None = None
    ) -> None:
        self.executor = SqliteExecutor(conn, timeout_s, fts=fts, readers=readers)
        super().__init__(self.executor, SQLITE, SqliteMemoryRepo(self.executor, SQLITE))

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        timeout_s: float = 5.0,
        groups: Iterable[str] | None = None,
        readers: int = DEFAULT_READERS,
    ) -> SqliteStore:
        """Opens (creating if needed) the database file, runs the migrations and returns the store.
        ``":memory:"`` gives a private in-memory database. ``groups``: the table groups to migrate
        (acm.adapters.sql_migrations; None: all), e.g. one service's own (acm.ownership). ``readers``: reader
        connections reads outside a transaction run on, in threads (0, or an in-memory database: inline)."""
        migrations = SQLITE_MIGRATIONS if groups is None else SQLITE_MIGRATIONS.only(groups)
        in_memory = str(path) == ":memory:"
        if not in_memory:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = _connect(str(path), timeout_s)
        pool = _Readers(str(path), readers, timeout_s) if readers > 0 and not in_memory else None
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # durable across app crashes in WAL mode
            conn.execute("PRAGMA secure_delete=ON")  # deleted rows are zeroed in the file, not only unlinked
            store = cls(conn, timeout_s, fts="memories" in migrations.groups, readers=pool)
            await migrate(store.executor, migrations)
        except BaseException:
            if pool is not None:
                pool.close()
            conn.close()
            raise
        return store

    async def close(self) -> None:
        await self.executor.close()
