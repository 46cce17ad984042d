"""Retrieve's read model of the memories: a projection of acm.memories.v1 into retrieve's own MemoryRepo (keyword
index, hydrate, the Memory API's reads), its vector index and the entity graph (retrieve is the graph's only reader
and writer: ingest resolves entities in its own registry and says what a change taught it). Ingest owns the
memories and publishes each change it made, in full, after its write; this applies it. Upserts and deletes by id,
so a redelivered event is harmless and a projection built afresh from the same events equals this one
(docs/memory-projection.md: rebuilding it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from acm.domain.graph import GraphChanges
from acm.domain.models import Memory, MemoryStatus
from acm.domain.scope import ForgetLevel, Scope, Tier
from acm.ports.stores import Cache, GraphStore, MemoryRepo, VectorPoint, VectorStore
from acm.prefetch_state import TIERS_IN_ORDER, bump_generations, forget_prefetch


@dataclass(frozen=True, slots=True)
class MemoryChanges:
    """One MemoriesWritten, as domain values."""

    written: Sequence[Memory] = ()
    vectors: Sequence[VectorPoint] = ()  # the written memories that are searched by vector
    authored: Sequence[str] = ()  # shared memories the scope's user is now an author of
    erased: Sequence[str] = ()  # expired, deleted, or erased from the shared tiers by a user's Forget
    graph: GraphChanges = field(default_factory=GraphChanges)  # entities, mentions, relations learned


def _written_at(m: Memory) -> datetime:
    return m.updated_at or m.created_at


def newest(old: Memory | None, new: Memory) -> Memory:
    """What the projection keeps when ``new`` arrives over ``old`` (events of one user's sessions may be applied
    out of order across partitions): the later write, and a memory made stale never active again (ingest never
    reactivates one; a correction is a new memory)."""
    if old is None:
        return new
    kept = old if _written_at(old) > _written_at(new) else new
    if old.status is MemoryStatus.STALE and kept.status is not MemoryStatus.STALE:
        kept = replace(kept, status=MemoryStatus.STALE, superseded_by=old.superseded_by, valid_to=old.valid_to)
    return kept


@dataclass
class MemoryProjection:
    memories: MemoryRepo  # retrieve's own store, never ingest's
    vectors: VectorStore
    graph: GraphStore  # retrieve's alone (acm.ownership.GRAPH_OWNER)
    # Prefetched pools are built from this copy: one built before a change landed here is made stale after it
    # (ingest's own bump, at its write, comes before this copy has the change). None: no pools (a rebuild).
    cache: Cache | None = None

    async def apply(self, scope: Scope, changes: MemoryChanges) -> None:
        kept: list[Memory] = []
        if changes.written:
            ids = [m.memory_id for m in changes.written]
            known = {m.memory_id: m for m in await self.memories.get(scope, ids)}
            kept = [newest(known.get(m.memory_id), m) for m in changes.written]
            await self.memories.upsert(kept)
        await self._apply_graph(changes.graph)
        # A superseded memory's mentions pass to its successor, so graph expansion reaches the current value and
        # spends its limit on no stale one. After the links: an event applied late may link a memory kept stale.
        for m in kept:
            if m.status is MemoryStatus.STALE and m.superseded_by:
                await self.graph.supersede(m.owner, m.memory_id, m.superseded_by)
        if changes.authored:
            await self.memories.add_authors(scope, changes.authored)
        if changes.vectors:
            await self.vectors.upsert(list(changes.vectors))
        if changes.erased:
            await self.memories.delete(scope, changes.erased)
            await self.vectors.delete(scope, changes.erased)
            await self.graph.unlink_memories(scope, changes.erased)  # their edges go; entities stay
        if self.cache is not None and (changes.written or changes.erased):
            await bump_generations(self.cache, scope, _tiers(changes))

    async def forget(self, scope: Scope, level: ForgetLevel) -> dict[str, int]:
        """The projection's and the index's share of a Forget, as ingest erases its own (acm_ingest.usecases
        ForgetScope): a user's Forget also takes the shared memories that user alone said."""
        shared = await self.memories.forget_authored(scope) if level is ForgetLevel.USER else []
        erased = await self.memories.forget(scope, level)
        await self.vectors.forget(scope, level)
        await self.graph.forget(scope, level)
        if shared:
            await self.vectors.delete(scope, shared)
        if self.cache is not None:
            await forget_prefetch(self.cache, scope)  # a pool built from this copy before the erasure
        return {"memories_erased": erased + len(shared)}

    async def _apply_graph(self, graph: GraphChanges) -> None:
        """Entities before what links them (a mention or relation whose end is missing is dropped by the store).
        Each write is an upsert by id, so a redelivery changes nothing."""
        await self.graph.upsert_entities(graph.entities)
        for m in graph.mentions:
            await self.graph.link_mentions(m.owner, m.memory_id, m.entity_ids, m.session_id)
        await self.graph.upsert_relations(graph.relations)


def _tiers(changes: MemoryChanges) -> set[Tier]:
    """The tiers whose pools may hold what changed (an erased memory's tier is not known here: all)."""
    if changes.erased:
        return set(TIERS_IN_ORDER)
    return {m.tier for m in changes.written} | {Tier.USER}
