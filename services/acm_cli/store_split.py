"""Embedded mode keeps each service's tables in its own SQLite file (acm.ownership): ``gateway.db``,
``ingest.db``, ``retrieve.db``, ``architect.db``, ``compact.db``, ``anticipate.db``. A data folder from before
has one ``acm.db`` with every table; the first start splits it once, before any service opens its store.

Each group of tables is copied to the services that own it (memories to ingest, the write model, and to
retrieve, whose read model then follows acm.memories.v1); the processed events to ingest (the only service that
marked any before), the audit log to the gateway (requests'). The new files are written beside, under a
temporary name, and take their names together; the old file is then renamed ``acm.db.before-split`` and
kept. A start that stops half-way leaves ``acm.db`` in place, and the next one splits it again from scratch.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

from acm.bootstrap import open_relational
from acm.ownership import OWNS, SERVICES

log = logging.getLogger("acm.embedded")

SHARED = "acm.db"
KEPT = "acm.db.before-split"
# The tables of each group (acm.adapters.sql_migrations); the FTS5 index follows memories by its triggers.
TABLES = {
    "memories": ("memories", "memory_authors"),
    "jobs": ("jobs", "dead_letters"),
    "api_keys": ("api_keys", "data_keys"),
    "processed": ("processed_events",),
    "audit": ("audit_log",),
    "schemas": ("agent_schemas",),
    "working": ("working_memory", "compactions"),
    "entities": ("entities", "entity_aliases"),
}
# Groups every service has its own of: the old rows go to the one service that wrote them.
ONE_HEIR = {"processed": "ingest", "audit": "gateway"}


def database_file(data_dir: Path, service: str) -> Path:
    return data_dir / f"{service}.db"


def heirs(group: str) -> list[str]:
    """The services whose file gets the shared file's rows of ``group``."""
    if group in ONE_HEIR:
        return [ONE_HEIR[group]]
    return [s for s in SERVICES if group in OWNS[s]]


async def split_shared_database(data_dir: Path, timeout_s: float = 5.0) -> bool:
    """Splits <data_dir>/acm.db into the services' files, if it is there; whether it did."""
    shared = data_dir / SHARED
    if not shared.is_file():
        return False
    # Brought to the latest full schema first, so that its tables have every column the new files have.
    await (await open_relational(f"sqlite:///{shared}", timeout_s)).close()
    staged = {s: data_dir / f"{s}.db.splitting" for s in SERVICES}
    for service, path in staged.items():
        _remove(path)
        await (await open_relational(f"sqlite:///{path}", timeout_s, service=service)).close()
        copied = _copy(shared, path, [t for g in sorted(OWNS[service]) if service in heirs(g) for t in TABLES[g]])
        log.info("split %s: %s", path.name.removesuffix(".splitting"), copied or "no rows")
    for service, path in staged.items():
        _remove(database_file(data_dir, service))  # a WAL left beside an older file must not meet the new one
        os.replace(path, database_file(data_dir, service))
    for suffix in ("", "-wal", "-shm"):
        if (data_dir / f"{SHARED}{suffix}").exists():
            os.replace(data_dir / f"{SHARED}{suffix}", data_dir / f"{KEPT}{suffix}")
    log.warning("the data folder's %s was split into one file per service; the old file is kept as %s", SHARED, KEPT)
    return True


def _copy(shared: Path, target: Path, tables: list[str]) -> dict[str, int]:
    """Every row of ``tables`` from the shared file into the target's tables of the same name."""
    counts = {}
    # URIs (percent-encoded paths) so that the shared file is attached read-only.
    conn = sqlite3.connect(target.resolve().as_uri(), uri=True, isolation_level=None)
    try:
        conn.execute("ATTACH DATABASE ? AS shared", (shared.resolve().as_uri() + "?mode=ro",))
        conn.execute("BEGIN")
        old = {row[0] for row in conn.execute("SELECT name FROM shared.sqlite_master WHERE type = 'table'")}
        for table in tables:
            if table not in old:  # a table added after the file was shared (data keys, entities, dead letters)
                continue
            columns = ", ".join(row[1] for row in conn.execute(f"PRAGMA main.table_info({table})"))
            cur = conn.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} FROM shared.{table}")
            counts[table] = cur.rowcount
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE shared")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the file before it is renamed
    finally:
        conn.close()
    return {t: n for t, n in counts.items() if n}


GRAPH_BEFORE = "graph.db"  # the embedded graph when ingest wrote it


def graph_file(data_dir: Path) -> Path:
    """The embedded entity graph: retrieve's (acm.ownership.GRAPH_OWNER), named after it."""
    return data_dir / "retrieve.graph.db"


def adopt_graph_file(data_dir: Path) -> bool:
    """A data folder from before keeps its graph: ``graph.db`` becomes retrieve's file (its rows stay valid);
    whether it did."""
    old, new = data_dir / GRAPH_BEFORE, graph_file(data_dir)
    if not old.is_file() or new.exists():
        return False
    backfill_marker(data_dir).touch()  # ingest's registry is filled from it next (acm_cli.graph_backfill)
    for suffix in ("-wal", "-shm", ""):  # the WAL first: a stop half-way leaves graph.db to be taken again
        if Path(f"{old}{suffix}").exists():
            os.replace(f"{old}{suffix}", f"{new}{suffix}")
    log.warning("the data folder's %s is retrieve's now: %s", GRAPH_BEFORE, new.name)
    return True


def backfill_marker(data_dir: Path) -> Path:
    """Present from the graph's adoption until ingest's registry has its entities (a start stopped in between
    copies them again)."""
    return data_dir / "retrieve.graph.db.backfill"


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
