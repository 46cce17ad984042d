"""qdrant-edge searches run in worker threads (the event loop stays free while the shard searches); a vacuum
or close waits for the searches already running on the shard it closes. A real qdrant-edge shard."""

from __future__ import annotations

import asyncio
import random
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
import qdrant_edge as qe

from acm.adapters.edge_store import EdgeVectorStore
from acm.domain.models import Layer, Owner
from acm.domain.scope import Scope, Tier
from acm.ports.stores import VectorPoint

DIM = 64
SCOPE = Scope("c", "cu", "u", "a", "s")


async def _store(path: Path, n: int = 2000) -> EdgeVectorStore:
    store = EdgeVectorStore(path)
    await store.ensure(DIM)
    rng = random.Random(20)
    owner, now = Owner("c", Tier.USER, "cu", "u"), datetime.now(UTC)
    await store.upsert(
        [
            VectorPoint(str(uuid.UUID(int=i + 1)), [rng.random() for _ in range(DIM)], owner, Layer.LONG, now, "s", "m")
            for i in range(n)
        ]
    )
    return store


def _query() -> list[float]:
    return [random.random() for _ in range(DIM)]


async def test_searches_run_off_the_event_loop_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = await _store(tmp_path / "v")
    threads: set[int] = set()
    query = qe.EdgeShard.query

    def recording(shard: qe.EdgeShard, request: qe.QueryRequest) -> object:
        threads.add(threading.get_ident())
        return query(shard, request)

    monkeypatch.setattr(qe.EdgeShard, "query", recording)
    try:
        found = await asyncio.gather(*(store.search(SCOPE, _query(), 10, model="m") for _ in range(8)))
        assert all(len(f) == 10 for f in found)
        assert threads and threading.get_ident() not in threads
    finally:
        await store.close()


async def test_vacuum_and_close_wait_for_running_searches(tmp_path: Path) -> None:
    store = await _store(tmp_path / "v")
    searches = [asyncio.create_task(store.search(SCOPE, _query(), 10, model="m")) for _ in range(16)]
    await asyncio.sleep(0)  # each has taken the shard and is in its thread
    await store.vacuum()
    assert all(len(found) == 10 for found in await asyncio.gather(*searches))
    searches = [asyncio.create_task(store.search(SCOPE, _query(), 10, model="m")) for _ in range(16)]
    await asyncio.sleep(0)
    await store.close()
    assert all(len(found) == 10 for found in await asyncio.gather(*searches))
