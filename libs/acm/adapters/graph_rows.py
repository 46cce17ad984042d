"""The parameters both GraphStore adapters send (neo4j_graph as Cypher parameters, sqlite_graph as SQL ones,
its lists as JSON text): one layout for entities, mentions, relations and the reader's scope."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from acm.domain.models import Entity, Relation
from acm.domain.scope import ALL_TIERS, Owner, Scope, Tier, owner_columns


def scope_params(scope: Scope, tiers: tuple[Tier, ...] = ALL_TIERS) -> dict[str, Any]:
    """What visible() and forgets() compare against: the reader's ids and the tiers it reads."""
    return {
        "client_id": scope.client_id,
        "customer_id": scope.customer_id,
        "user_id": scope.user_id,
        "session_id": scope.session_id,
        "tiers": [str(t) for t in tiers],
    }


def entity_row(e: Entity) -> dict[str, Any]:
    return {
        "entity_id": e.entity_id,
        **owner_columns(e.owner),
        "name": e.name,
        "name_lc": e.name.lower(),
        "type": e.type,
        "aliases": list(e.aliases),
        "aliases_lc": sorted({a.lower() for a in e.aliases}),
    }


def mention_params(owner: Owner, memory_id: str, entity_ids: Sequence[str], session_id: str) -> dict[str, Any]:
    """``session_id`` lets a session-level forget find the memory."""
    return {
        **owner_columns(owner),
        "memory_id": memory_id,
        "session_id": session_id,
        "entity_ids": list(dict.fromkeys(entity_ids)),
    }


def relation_row(r: Relation) -> dict[str, Any]:
    return {
        "src": r.src_entity_id,
        "dst": r.dst_entity_id,
        "type": r.type,
        "memory_id": r.memory_id,
        **owner_columns(r.owner),
    }


class GraphReads(ABC):
    """GraphStore's reads for both adapters: what can find nothing asks neither store; each adapter looks names up
    (lower-cased, each once) and walks from the seeds (each once, in the caller's order) its own way."""

    async def find_entities(
        self, scope: Scope, names: Sequence[str], tiers: tuple[Tier, ...] = ALL_TIERS
    ) -> list[Entity]:
        wanted = sorted({n.lower() for n in names if n})
        if not wanted or not tiers:
            return []
        return await self._find(scope, wanted, tiers)

    @abstractmethod
    async def _find(self, scope: Scope, wanted: list[str], tiers: tuple[Tier, ...]) -> list[Entity]:
        """Visible entities whose name or an alias, lower-cased, is one of ``wanted``."""

    async def expand(
        self,
        scope: Scope,
        entity_ids: Sequence[str],
        depth: int,
        limit: int,
        tiers: tuple[Tier, ...] = ALL_TIERS,
    ) -> list[tuple[str, int]]:
        if not entity_ids or limit <= 0 or not tiers:
            return []
        return await self._walk(scope, list(dict.fromkeys(entity_ids)), max(0, depth), limit, tiers)

    @abstractmethod
    async def _walk(
        self, scope: Scope, seeds: list[str], max_depth: int, limit: int, tiers: tuple[Tier, ...]
    ) -> list[tuple[str, int]]:
        """(memory_id, hops) of visible memories mentioning a visible entity within ``max_depth`` hops of
        ``seeds``, nearest first, at most ``limit``."""
