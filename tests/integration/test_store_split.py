"""A data folder from before per-service stores (one acm.db) is split once into the services' own files on
start (acm_cli.store_split): each keeps only its own tables, with the rows it had."""

from __future__ import annotations

import sqlite3
import uuid
from datetime import UTC, datetime
from pathlib import Path

from acm.auth import create_api_key, key_hash
from acm.bootstrap import Relational, open_relational
from acm.domain.compaction.engine import WorkingMemory
from acm.domain.compaction.pinned import PinnedState
from acm.domain.compaction.record import CompactionRecord
from acm.domain.models import Job, Layer, Memory, Tier
from acm.domain.schema import default_schema
from acm.domain.scope import Scope
from acm.ownership import SERVICES
from acm_cli.store_split import KEPT, SHARED, database_file, split_shared_database

ALICE = Scope("c1", "acme", "alice", session_id="s1")
T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _memory(memory_id: str, text: str) -> Memory:
    return Memory(memory_id, ALICE.owner(Tier.USER), text, Layer.LONG, "fact", ("t1",), T0, session_id="s1")


async def _old_folder(data_dir: Path) -> str:
    """An acm.db as the release before per-service stores wrote it: a row in every table; the key's secret."""
    old = await open_relational(f"sqlite:///{data_dir / SHARED}")
    try:
        await old.memories.upsert([_memory("m1", "Alice wants a refund for invoice 42")])
        await old.jobs.create(Job("job-1", ALICE, "ingest", created_at=T0, updated_at=T0))
        _, secret = await create_api_key(old.api_keys, "c1", "old key")
        await old.processed.mark("ingest", "e1")
        await old.audit.record("c1", "forget.requested", "before the split")
        await old.schemas.put("c1", default_schema("helpdesk"))
        first = WorkingMemory(1, PinnedState(), ("summary",), (), None, (), 5)
        await old.working.swap(ALICE, first, CompactionRecord(uuid.uuid4().hex, "compacted", 10, 5, 0.5, True, 1))
    finally:
        await old.close()
    return secret


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        return {r[0] for r in rows if not r[0].startswith("memories_fts")} - {"schema_versions"}


async def test_the_shared_file_is_split_into_the_services_files_once(tmp_path: Path) -> None:
    secret = await _old_folder(tmp_path)
    assert await split_shared_database(tmp_path)
    assert not (tmp_path / SHARED).exists() and (tmp_path / KEPT).is_file()  # kept, renamed
    assert {s: _tables(database_file(tmp_path, s)) for s in SERVICES} == {
        "gateway": {"api_keys", "data_keys", "jobs", "dead_letters", "audit_log"},
        "ingest": {"memories", "memory_authors", "entities", "entity_aliases", "processed_events", "audit_log"},
        "retrieve": {"memories", "memory_authors", "processed_events", "audit_log"},
        "architect": {"agent_schemas", "processed_events", "audit_log"},
        "compact": {"working_memory", "compactions", "processed_events", "audit_log"},
        "anticipate": {"processed_events", "audit_log"},
    }
    stores: dict[str, Relational] = {
        s: await open_relational(f"sqlite:///{database_file(tmp_path, s)}", service=s) for s in SERVICES
    }
    try:
        for owner in ("ingest", "retrieve"):  # the rows, and the FTS5 index rebuilt by the triggers
            found = await stores[owner].memories.keyword_search(ALICE, "refund", 5)
            assert [s.memory.memory_id for s in found] == ["m1"], owner
        key = await stores["gateway"].api_keys.by_hash(key_hash(secret))
        assert key is not None and key.client_id == "c1"
        job = await stores["gateway"].jobs.get(ALICE, "job-1")
        assert job is not None and job.kind == "ingest"
        assert [e.detail for e in await stores["gateway"].audit.list(ALICE)] == ["before the split"]
        assert await stores["ingest"].audit.list(ALICE) == []  # the old audit went to the gateway alone
        assert await stores["ingest"].processed.seen("ingest", "e1")
        assert not await stores["anticipate"].processed.seen("ingest", "e1")
        assert await stores["architect"].schemas.latest(ALICE, "helpdesk") is not None
        working = await stores["compact"].working.get(ALICE)
        assert working is not None and working.episodes == ("summary",)
        assert len(await stores["compact"].working.compactions(ALICE)) == 1
        # Written to after the split as before: a new memory is found next to the copied one.
        await stores["ingest"].memories.upsert([_memory("m2", "Alice also asked about a refund")])
        found = await stores["ingest"].memories.keyword_search(ALICE, "refund", 5)
        assert sorted(s.memory.memory_id for s in found) == ["m1", "m2"]
    finally:
        for rel in stores.values():
            await rel.close()
    assert not await split_shared_database(tmp_path)  # nothing left to split


async def test_a_split_that_stopped_half_way_is_done_again_from_the_shared_file(tmp_path: Path) -> None:
    await _old_folder(tmp_path)
    # As if a first start had made some files and stopped before renaming acm.db.
    half = await open_relational(f"sqlite:///{database_file(tmp_path, 'architect')}", service="architect")
    await half.close()
    (tmp_path / "gateway.db.splitting").write_bytes(b"not a database")
    assert await split_shared_database(tmp_path)
    architect = await open_relational(f"sqlite:///{database_file(tmp_path, 'architect')}", service="architect")
    try:
        assert await architect.schemas.latest(ALICE, "helpdesk") is not None
    finally:
        await architect.close()
    assert not (tmp_path / "gateway.db.splitting").exists()


async def test_a_shared_file_from_before_the_newer_tables_is_split_too(tmp_path: Path) -> None:
    # A real acm.db predates the tables added since (data keys, the entity registry, dead letters): those are
    # made empty in the services' files, and the rest is copied.
    await _old_folder(tmp_path)
    with sqlite3.connect(tmp_path / SHARED) as conn:
        for table in ("data_keys", "entities", "entity_aliases", "dead_letters"):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    assert await split_shared_database(tmp_path)
    gateway = await open_relational(f"sqlite:///{database_file(tmp_path, 'gateway')}", service="gateway")
    try:
        job = await gateway.jobs.get(ALICE, "job-1")
        assert job is not None and job.kind == "ingest"
    finally:
        await gateway.close()
