"""The entity graph's share of a MemoriesWritten (acm/v1/events.proto: GraphEntity, GraphMention, GraphRelation)
↔ acm.domain.graph.GraphChanges, for both ends: ingest's events and retrieve's projection. Owners travel as a
tier; the owner is the envelope's scope at that tier (as for the memories)."""

from __future__ import annotations

from acm.convert import TIER_FROM_PB, TIER_TO_PB
from acm.domain.errors import InvalidRequest
from acm.domain.graph import GraphChanges, Mentions
from acm.domain.models import Entity, Relation
from acm.domain.scope import Owner, Scope
from acm.v1 import events_pb2


def graph_to_pb(changes: GraphChanges, body: events_pb2.MemoriesWritten) -> None:
    """Fills ``body``'s entities, mentions and relations."""
    body.entities.extend(
        events_pb2.GraphEntity(
            entity_id=e.entity_id, tier=TIER_TO_PB[e.owner.tier], name=e.name, type=e.type, aliases=list(e.aliases)
        )
        for e in changes.entities
    )
    body.mentions.extend(
        events_pb2.GraphMention(
            memory_id=m.memory_id, tier=TIER_TO_PB[m.owner.tier], session_id=m.session_id, entity_ids=m.entity_ids
        )
        for m in changes.mentions
    )
    body.relations.extend(
        events_pb2.GraphRelation(
            src_entity_id=r.src_entity_id,
            dst_entity_id=r.dst_entity_id,
            type=r.type,
            memory_id=r.memory_id,
            tier=TIER_TO_PB[r.owner.tier],
        )
        for r in changes.relations
    )


def graph_from_pb(body: events_pb2.MemoriesWritten, scope: Scope) -> GraphChanges:
    """InvalidRequest for an unknown tier (nothing of such an event can be placed)."""

    def owner(tier: int, what: str) -> Owner:
        if tier not in TIER_FROM_PB:
            raise InvalidRequest(f"{what} has an unknown tier {tier}")
        return scope.owner(TIER_FROM_PB[tier])  # type: ignore[index]

    return GraphChanges(
        [
            Entity(e.entity_id, owner(e.tier, f"entity {e.entity_id[:40]!r}"), e.name, e.type, tuple(e.aliases))
            for e in body.entities
        ],
        [
            Mentions(owner(m.tier, f"mention of {m.memory_id[:40]!r}"), m.memory_id, tuple(m.entity_ids), m.session_id)
            for m in body.mentions
        ],
        [
            Relation(r.src_entity_id, r.dst_entity_id, r.type, r.memory_id, owner(r.tier, f"relation {r.type!r}"))
            for r in body.relations
        ],
    )
