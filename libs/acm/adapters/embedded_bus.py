"""EventBus for the single-process embedded mode: an append-only log in one SQLite file.

`records` holds every published record (seq is global and increasing, so it orders each topic);
`offsets` holds, per (group, topic), the seq of the last record the group is done with. publish()
returns after its INSERT is committed, and a group's offset moves only after `deliver` returned, so a
crash loses nothing and a restart (a new EmbeddedBus on the same file) redelivers what was not done.
SQLite calls are short and run inline on the event loop.

Pruning: a record is deleted once every consumer group of its topic has committed past it and it was
published ``retention_s`` ago (default 0: as soon as it is consumed). The groups counted are those
subscribed here and those of other instances on the same file (readers) that committed within
``reader_idle_s``. A topic nobody consumes keeps its records ``unconsumed_retention_s``, and so does a topic
``kept`` names (dead letters: the gateway indexes them, but the record is what an operator replays, as Kafka's
retention keeps it whoever read it).
``secure_delete`` zeroes the deleted bytes and each prune ends with a TRUNCATE checkpoint, so no copy is left
in the file or its WAL (docs/privacy.md). Prunes run after commits and on idle polls, at most every
``prune_every_s``.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from acm.adapters.delivery import Worker, batch_size, deliver_batch
from acm.ports.bus import BusUnavailable, Record, RecordHandler
from acm.topics import is_dead_letter

log = logging.getLogger("acm.bus")
MESSAGING_SYSTEM = "acm_embedded_log"  # OpenTelemetry has no name for it

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- AUTOINCREMENT: a seq is never reused
    topic TEXT NOT NULL,
    key TEXT NOT NULL,
    value BLOB NOT NULL,
    at REAL NOT NULL DEFAULT 0  -- unix time of the publish (0: written before pruning existed)
);
CREATE INDEX IF NOT EXISTS records_by_topic ON records (topic, seq);
CREATE TABLE IF NOT EXISTS offsets (
    consumer_group TEXT NOT NULL,
    topic TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at REAL NOT NULL DEFAULT 0,  -- unix time of the last commit
    PRIMARY KEY (consumer_group, topic)
);
"""
# Files made before pruning existed lack the time columns.
_MIGRATIONS = {
    "records": "ALTER TABLE records ADD COLUMN at REAL NOT NULL DEFAULT 0",
    "offsets": "ALTER TABLE offsets ADD COLUMN at REAL NOT NULL DEFAULT 0",
}


@dataclass(eq=False)
class _Subscription:
    topic: str
    group: str
    handler: RecordHandler
    worker: Worker
    from_now: bool = False
    concurrency: int = 1  # > 1: each read's rows are one micro-batch (deliver_batch)
    # Set by publish() so the consumer does not wait for the next poll.
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class EmbeddedBus:
    def __init__(
        self,
        path: str | Path,
        *,
        poll_interval_s: float = 1.0,
        batch_size: int = 100,
        stop_timeout_s: float = 10.0,
        busy_timeout_ms: int = 5000,
        deliver_attempts: int = 4,
        deliver_backoff_s: float = 0.2,
        retention_s: float = 0.0,
        unconsumed_retention_s: float = 7 * 86400.0,
        reader_idle_s: float = 3600.0,
        prune_every_s: float = 1.0,
        kept: Callable[[str], bool] = is_dead_letter,  # every instance on the file must agree
        clock: Callable[[], float] = time.time,
    ) -> None:
        # ``clock`` (wall seconds) stamps records and offsets and decides retention, so tests can advance it.
        self._clock = clock
        self._path = Path(path)
        self._poll_interval_s = poll_interval_s
        self._batch_size = batch_size
        self._stop_timeout_s = stop_timeout_s
        self._busy_timeout_ms = busy_timeout_ms
        self._deliver_attempts = deliver_attempts
        self._deliver_backoff_s = deliver_backoff_s
        self._retention_s = retention_s
        self._unconsumed_retention_s = unconsumed_retention_s
        self._reader_idle_s = reader_idle_s
        self._prune_every_s = prune_every_s
        self._kept = kept
        self._pruned_at = 0.0  # monotonic time of the last prune
        self._subscriptions: list[_Subscription] = []
        self._conn: sqlite3.Connection | None = None
        self._started = False

    # -- EventBus --------------------------------------------------------------------------------

    async def publish(self, topic: str, key: str, value: bytes) -> None:
        try:
            # Autocommit mode: this single INSERT is its own transaction, committed (and, with
            # synchronous=FULL, synced) before execute() returns.
            self._db().execute(
                "INSERT INTO records (topic, key, value, at) VALUES (?, ?, ?, ?)", (topic, key, value, self._clock())
            )
        except sqlite3.OperationalError as exc:  # locked past busy_timeout, disk full, I/O error
            raise BusUnavailable(f"embedded bus {self._path}: could not append to {topic}: {exc}") from exc
        for sub in self._subscriptions:
            if sub.topic == topic:
                sub.wake.set()

    def subscribe(
        self, topic: str, group: str, handler: RecordHandler, *, from_now: bool = False, concurrency: int = 1
    ) -> None:
        if self._started:
            raise RuntimeError("subscribe() must be called before start()")
        if any(s.topic == topic and s.group == group for s in self._subscriptions):
            raise ValueError(f"group {group!r} is already subscribed to {topic!r}")
        sub = _Subscription(
            topic,
            group,
            handler,
            Worker(f"embedded:{group}:{topic}", lambda w: self._consume(sub, w)),
            from_now,
            max(1, concurrency),
        )
        self._subscriptions.append(sub)

    async def start(self) -> None:
        if self._started:
            return
        self._db()  # fail here, not in a consumer task, if the file cannot be opened
        for sub in self._subscriptions:
            if sub.from_now and self._offset(sub) is None:
                # Pinned here, before start() returns: whatever is published after it is delivered.
                row = self._db().execute("SELECT MAX(seq) FROM records WHERE topic = ?", (sub.topic,)).fetchone()
                self._commit(sub, int(row[0] or 0))
        for sub in self._subscriptions:
            sub.worker.start()
        self._started = True

    async def stop(self) -> None:
        """Stop the consumers (the record being handled finishes and is committed), then close the file."""
        await asyncio.gather(*(s.worker.stop(self._stop_timeout_s) for s in self._subscriptions))
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        self._started = False

    # -- consuming -------------------------------------------------------------------------------

    async def _consume(self, sub: _Subscription, worker: Worker) -> None:
        done = self._committed(sub)
        while not worker.stopping:
            sub.wake.clear()  # before reading: a publish after this read sets it again, none is missed
            try:
                rows = self._fetch(sub.topic, done, batch_size(sub.concurrency, self._batch_size))
            except sqlite3.Error as exc:
                log.warning("%s: read failed (%r), retrying", worker.name, exc)
                rows = []
            if not rows:
                self._maybe_prune()
                with suppress(TimeoutError):
                    await asyncio.wait_for(sub.wake.wait(), self._poll_interval_s)
                continue
            # Concurrency 1: each record is a batch of its own, committed alone; else the read is one micro-batch.
            for batch in [rows] if sub.concurrency > 1 else [[row] for row in rows]:
                if worker.stopping:
                    break
                if not await self._deliver_batch(sub, worker, batch):
                    # Re-read from the last commit: this batch and those after it come again, in order.
                    await asyncio.sleep(max(self._deliver_backoff_s, 1.0))
                    break
                done = batch[-1][0]
            self._maybe_prune()

    async def _deliver_batch(self, sub: _Subscription, worker: Worker, rows: list[tuple[int, str, bytes]]) -> bool:
        """``rows`` delivered (deliver_batch) and committed together; False if not (they come again). A
        dead-letter write or the commit failed: deliver logged the former."""
        records = [Record(topic=sub.topic, key=key, value=value, partition=0, offset=seq) for seq, key, value in rows]
        with worker.busy():
            try:
                await deliver_batch(
                    self,
                    sub.group,
                    records,
                    sub.handler,
                    system=MESSAGING_SYSTEM,
                    concurrency=sub.concurrency,
                    attempts=self._deliver_attempts,
                    backoff_s=self._deliver_backoff_s,
                )
                self._commit(sub, rows[-1][0])
            except Exception as exc:
                log.warning("%s: records %d-%d not committed (%r), retrying", worker.name, rows[0][0], rows[-1][0], exc)
                return False
        return True

    # -- pruning ---------------------------------------------------------------------------------

    def _maybe_prune(self) -> None:
        if time.monotonic() - self._pruned_at < self._prune_every_s:
            return
        self._pruned_at = time.monotonic()
        try:
            self.prune()
        except sqlite3.Error as exc:  # locked by another instance past busy_timeout: the next prune retries
            log.warning("embedded bus %s: prune failed (%r)", self._path, exc)

    def prune(self, now: float | None = None) -> int:
        """Delete what every group of its topic is done with (see the module doc); the number of records."""
        now = self._clock() if now is None else now
        db = self._db()
        mine: dict[str, list[str]] = {}
        for sub in self._subscriptions:
            mine.setdefault(sub.topic, []).append(sub.group)
        offsets: dict[str, dict[str, int]] = {}
        for group, topic, seq, at in db.execute("SELECT consumer_group, topic, seq, at FROM offsets"):
            if group in mine.get(topic, ()) or at >= now - self._reader_idle_s:
                offsets.setdefault(topic, {})[group] = int(seq)
        deleted = 0
        for (topic,) in db.execute("SELECT DISTINCT topic FROM records").fetchall():
            groups = set(mine.get(topic, ())) | set(offsets.get(topic, {}))
            if groups and not self._kept(topic):
                done = min(offsets.get(topic, {}).get(g, 0) for g in groups)
                cursor = db.execute(
                    "DELETE FROM records WHERE topic = ? AND seq <= ? AND at <= ?",
                    (topic, done, now - self._retention_s),
                )
            else:
                cursor = db.execute(
                    "DELETE FROM records WHERE topic = ? AND at <= ?", (topic, now - self._unconsumed_retention_s)
                )
            deleted += max(cursor.rowcount, 0)
        if deleted:
            # secure_delete zeroed the rows in the pages; TRUNCATE copies those pages into the file and empties
            # the WAL, whose older frames still held the records.
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return deleted

    # -- storage ---------------------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: autocommit, each statement commits on its own.
            # check_same_thread=False: the bus may be built on one thread and used on the loop's.
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")  # survive power loss too, not only a crash
            conn.execute("PRAGMA secure_delete = ON")  # deleted records are zeroed, not just unlinked
            conn.executescript(_SCHEMA)
            for table, ddl in _MIGRATIONS.items():
                if "at" not in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
                    conn.execute(ddl)
            self._conn = conn
        return self._conn

    def _offset(self, sub: _Subscription) -> int | None:
        row = (
            self._db()
            .execute("SELECT seq FROM offsets WHERE consumer_group = ? AND topic = ?", (sub.group, sub.topic))
            .fetchone()
        )
        return int(row[0]) if row else None

    def _committed(self, sub: _Subscription) -> int:
        return self._offset(sub) or 0

    def _fetch(self, topic: str, after: int, limit: int) -> list[tuple[int, str, bytes]]:
        cursor = self._db().execute(
            "SELECT seq, key, value FROM records WHERE topic = ? AND seq > ? ORDER BY seq LIMIT ?",
            (topic, after, limit),
        )
        return [(int(seq), str(key), bytes(value)) for seq, key, value in cursor]

    def _commit(self, sub: _Subscription, seq: int) -> None:
        self._db().execute(
            "INSERT INTO offsets (consumer_group, topic, seq, at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (consumer_group, topic) DO UPDATE SET seq = excluded.seq, at = excluded.at",
            (sub.group, sub.topic, seq, self._clock()),
        )
