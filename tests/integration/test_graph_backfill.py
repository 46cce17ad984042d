"""Upgrading to a graph only retrieve opens (issue 19): ingest's entity registry is filled from the graph written
before, by `acm db entities` (both graph adapters) or, embedded, at the first start with the old graph.db."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import pytest

from acm.adapters.neo4j_graph import Neo4jGraphStore
from acm.adapters.sqlite_graph import SqliteGraphStore
from acm.bootstrap import open_relational
from acm.domain.models import Entity
from acm.domain.scope import ForgetLevel, Scope, Tier
from acm.ports.stores import GraphStore
from acm_cli.embedded import DEV_CLIENT, EmbeddedAcm, EmbeddedSettings
from acm_cli.graph_backfill import backfill_entities
from acm_cli.store_split import backfill_marker, graph_file


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.infra)])
async def graph(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[GraphStore, str]]:
    client = f"bf-{uuid.uuid4().hex[:8]}"
    store: GraphStore
    if request.param == "neo4j":
        store = await Neo4jGraphStore.open(request.getfixturevalue("neo4j_uri"))
    else:
        store = await SqliteGraphStore.open(tmp_path / "graph.db")
    try:
        yield store, client
    finally:
        await store.forget(Scope(client, "x", "x"), ForgetLevel.CLIENT)
        await store.close()


class _OneClient:
    """The entities of ``store`` whose ids start with ``prefix``, paged as backfill_entities pages the whole graph.
    Other tests write and erase entities on the shared Neo4j while this one runs (on the other xdist worker), so a
    count over the whole server can change between two backfills. A client's ids here share the prefix, so they
    are one unbroken run of the id order: the pages from ``prefix`` on, cut where the run ends."""

    def __init__(self, store: GraphStore, prefix: str) -> None:
        self._store, self._prefix = store, prefix

    async def entities_after(self, after: str, limit: int) -> list[Entity]:
        page = await self._store.entities_after(max(after, self._prefix), limit)
        return [e for e in page if e.entity_id.startswith(self._prefix)]


async def test_every_entity_of_the_graph_reaches_ingests_registry(
    graph: tuple[GraphStore, str], tmp_path: Path
) -> None:
    store, client = graph
    ours = cast(GraphStore, _OneClient(store, f"{client}-"))  # backfill_entities only pages (entities_after)
    alice = Scope(client, "acme", "alice")
    entities = [
        Entity(f"{client}-e{i:03d}", alice.owner(Tier.USER), f"Person {i}", "person", (f"P{i}", f"Person {i}"))
        for i in range(25)
    ]
    await store.upsert_entities([*entities, Entity(f"{client}-c", alice.owner(Tier.CLIENT), "Acme", "org", ())])
    ingest = await open_relational(f"sqlite:///{tmp_path / 'ingest.db'}", service="ingest")
    try:
        copied = await backfill_entities(ours, ingest.entities, batch=7)  # several pages
        assert copied == 26
        assert await ingest.entities.find(alice, ["p7"]) == [entities[7]]
        assert [e.name for e in await ingest.entities.find(Scope(client, "other", "bob"), ["acme"])] == ["Acme"]
        assert await backfill_entities(ours, ingest.entities) == copied  # again: nothing changes
        assert await ingest.entities.find(alice, ["p7"]) == [entities[7]]
    finally:
        await ingest.close()


async def test_an_embedded_data_folder_from_before_keeps_its_graph_and_fills_the_registry(tmp_path: Path) -> None:
    data = tmp_path / "acm"
    alice = Scope(DEV_CLIENT, "acme", "alice")
    # Aliases sorted, as the registry lists them.
    bob = Entity("e-bob", alice.owner(Tier.USER), "Robert Smith", "person", ("Bob", "Robert Smith"))
    old = await SqliteGraphStore.open(data / "graph.db")  # as ingest wrote it before
    await old.upsert_entities([bob])
    await old.close()
    settings = EmbeddedSettings(data_dir=data, listen_addr="127.0.0.1:0", embedder="wordllama")
    async with EmbeddedAcm(settings) as running:
        assert not (data / "graph.db").exists() and graph_file(data).exists()
        assert not backfill_marker(data).exists()
        assert await running.stores["ingest"].entities.find(alice, ["bob"]) == [bob]
        assert await running.graph.find_entities(alice, ["bob"]) == [bob]  # retrieve's graph kept it
