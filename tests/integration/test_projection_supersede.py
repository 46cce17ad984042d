"""A superseded memory leaves retrieve's graph: its mentions pass to the memory that superseded it, so an expansion
reaches the current value and never the stale one, in either order the events arrive. Real stores: retrieve's
SQLite read model and qdrant-edge, with the SQLite graph and Neo4j."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from acm.adapters.edge_store import EdgeVectorStore
from acm.adapters.neo4j_graph import Neo4jGraphStore
from acm.adapters.sqlite_graph import SqliteGraphStore
from acm.bootstrap import open_relational
from acm.domain.graph import GraphChanges, Mentions
from acm.domain.models import Entity, Layer, Memory, MemoryStatus, Relation, utcnow
from acm.domain.scope import ForgetLevel, Scope, Tier
from acm.ports.stores import GraphStore
from acm_retrieve.projection import MemoryChanges, MemoryProjection


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.infra)])
async def projection(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryProjection]:
    graph: GraphStore
    if request.param == "neo4j":
        graph = await Neo4jGraphStore.open(request.getfixturevalue("neo4j_uri"))
    else:
        graph = await SqliteGraphStore.open(tmp_path / "graph.db")
    store = await open_relational(f"sqlite:///{tmp_path / 'retrieve.db'}", service="retrieve")
    vectors = EdgeVectorStore(tmp_path / "vectors")
    await vectors.ensure(2)
    try:
        yield MemoryProjection(store.memories, vectors, graph)
    finally:
        await graph.forget(SCOPE, ForgetLevel.CLIENT)
        await graph.close()
        await vectors.close()
        await store.close()


SCOPE = Scope(f"c{uuid.uuid4().hex[:12]}", "acme", "alice", "bot", "s1")
USER = SCOPE.owner(Tier.USER)
ALICE, PORTO, LISBON = (
    Entity(f"e-{n}-{SCOPE.client_id}", USER, n, "name" if n == "alice" else "place")
    for n in ("alice", "porto", "lisbon")
)
T0 = utcnow()


def _fact(memory_id: str, text: str, minutes: int) -> Memory:
    at = T0 + timedelta(minutes=minutes)
    return Memory(memory_id, USER, text, Layer.LONG, "fact", ("t",), at, session_id="s1", slot="alice|lives_in")


def _said(memory: Memory, *entities: Entity) -> MemoryChanges:
    """A turn's event: the memory, the entities it names, and the relation it teaches."""
    return MemoryChanges(
        written=[memory],
        graph=GraphChanges(
            [ALICE, *entities],
            [Mentions(USER, memory.memory_id, (ALICE.entity_id, *(e.entity_id for e in entities)), "s1")],
            [Relation(ALICE.entity_id, e.entity_id, "lives_in", memory.memory_id, USER) for e in entities],
        ),
    )


# Ids carry the client, as the entities' do: Neo4j keeps memory ids unique across clients, and the other
# test of this file may run at the same time on another worker.
OLD = _fact(f"m-porto-{SCOPE.client_id}", "alice: I live in Porto.", 0)
NEW = _fact(f"m-lisbon-{SCOPE.client_id}", "alice: I live in Lisbon now.", 5)
STALE = replace(OLD, status=MemoryStatus.STALE, superseded_by=NEW.memory_id, valid_to=NEW.created_at)


async def _reached(p: MemoryProjection, entity: Entity, depth: int = 0) -> set[str]:
    return {memory_id for memory_id, _ in await p.graph.expand(SCOPE, [entity.entity_id], depth, 10)}


async def test_a_superseded_fact_is_reached_through_its_successor_only(projection: MemoryProjection) -> None:
    await projection.apply(SCOPE, _said(OLD, PORTO))
    assert await _reached(projection, PORTO) == {OLD.memory_id}
    # The newer value: its own event writes it and makes the older one stale (ingest sends both).
    lisbon = _said(NEW, LISBON)
    await projection.apply(SCOPE, replace(lisbon, written=[STALE, NEW]))
    assert await _reached(projection, PORTO) == {NEW.memory_id}  # Porto leads to where she lives now
    assert await _reached(projection, ALICE, depth=1) == {NEW.memory_id}
    # Redelivered, both events: still no stale value.
    await projection.apply(SCOPE, _said(OLD, PORTO))
    await projection.apply(SCOPE, replace(lisbon, written=[STALE, NEW]))
    assert OLD.memory_id not in await _reached(projection, ALICE, depth=2)


async def test_the_first_write_arriving_after_the_supersession_links_no_stale_memory(
    projection: MemoryProjection,
) -> None:
    await projection.apply(SCOPE, replace(_said(NEW, LISBON), written=[STALE, NEW]))
    await projection.apply(SCOPE, _said(OLD, PORTO))  # the older event, late (another partition)
    assert (await projection.memories.get(SCOPE, [OLD.memory_id]))[0].status is MemoryStatus.STALE
    assert await _reached(projection, PORTO) == {NEW.memory_id}
    assert OLD.memory_id not in await _reached(projection, ALICE, depth=2)
