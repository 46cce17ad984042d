"""Ingest use cases: what happens to one turn, and to one forget request."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass

from acm import topics
from acm.convert import LAYER_TO_PB, TIER_TO_PB, ts
from acm.domain.extract import mentions
from acm.domain.models import Entity, Layer, Memory, Relation, Turn, stable_id
from acm.domain.schema import DEFAULT_AGENT
from acm.domain.scope import ForgetLevel, Owner, Scope, Tier
from acm.domain.tokens import TokenCounter
from acm.envelopes import envelope
from acm.ports.bus import EventBus
from acm.ports.embedder import Embedder
from acm.ports.stores import Cache, GraphStore, MemoryRepo, SchemaRepo
from acm.telemetry import traceparent_of_current_span
from acm.v1 import events_pb2

MAX_RELATED_PAIRS = 45  # co-mention edges per turn: enough for 10 entities, bounded for long tool outputs


@dataclass
class IngestTurn:
    memories: MemoryRepo
    graph: GraphStore
    cache: Cache
    bus: EventBus
    embedder: Embedder
    tokens: TokenCounter
    schemas: SchemaRepo
    session_budget_tokens: int  # used until the agent's schema exists
    session_soft_ratio: float

    async def __call__(self, turn: Turn, job_id: str, traceparent: str) -> dict[str, int]:
        # Follow-up events are children of the span handling this turn (the consumer span); the turn's
        # own traceparent is their parent only when no span is current (called outside a consumer).
        parent = traceparent_of_current_span() or traceparent
        scope = turn.scope
        owner = scope.owner(Tier.USER)
        schema = await self.schemas.latest(scope, scope.agent_id or DEFAULT_AGENT)
        speaker = turn.metadata.get("speaker") or turn.role.value
        text = f"{speaker}: {turn.content}"
        memory = Memory(
            # Deterministic: a redelivered turn rewrites the same memory instead of adding one.
            memory_id=stable_id(scope.client_id, "turn", turn.turn_id),
            owner=owner,
            text=text,
            layer=Layer.SHORT,
            kind="turn",
            source_turn_ids=(turn.turn_id,),
            created_at=turn.occurred_at,
            agent_id=scope.agent_id,
            session_id=scope.session_id,
            valid_from=turn.occurred_at,
            token_count=self.tokens.count(text),
            schema_version=schema.version if schema else 0,
        )
        entities = _entities(owner, turn.content)
        relations = [
            Relation(a.entity_id, b.entity_id, "co_mentioned", memory.memory_id, owner)
            for a, b in itertools.islice(itertools.combinations(entities, 2), MAX_RELATED_PAIRS)
        ]
        vector = (await asyncio.to_thread(self.embedder.embed, [text]))[0]

        await self.memories.upsert([memory])
        if entities:
            await self.graph.upsert_entities(entities)
            await self.graph.link_mentions(owner, memory.memory_id, [e.entity_id for e in entities], memory.session_id)
        if relations:
            await self.graph.upsert_relations(relations)

        written = events_pb2.WrittenMemory(
            memory_id=memory.memory_id,
            tier=TIER_TO_PB[owner.tier],
            layer=LAYER_TO_PB[memory.layer],
            kind=memory.kind,
            text=memory.text,
            source_turn_ids=list(memory.source_turn_ids),
            embedding=vector,
            created_at=ts(memory.created_at),
            entity_names=[e.name for e in entities],
        )
        event = envelope(scope, event_id=stable_id("memories", job_id), traceparent=parent)
        event.memories_written.CopyFrom(
            events_pb2.MemoriesWritten(job_id=job_id, memories=[written], embedding_model=self.embedder.name)
        )
        await self.bus.publish(topics.MEMORIES, scope.session_key, event.SerializeToString())

        budget, soft_ratio = (
            (schema.compaction.budget_tokens, schema.compaction.soft_ratio)
            if schema
            else (self.session_budget_tokens, self.session_soft_ratio)
        )
        await self._maybe_request_compaction(scope, memory.token_count, budget, soft_ratio, parent)
        return {"memories": 1, "entities": len(entities), "relations": len(relations)}

    async def _maybe_request_compaction(
        self, scope: Scope, added: int, budget: int, soft_ratio: float, traceparent: str
    ) -> None:
        if not scope.session_id:
            return
        soft = int(budget * soft_ratio)
        total = await self.cache.incr(scope, "session_tokens", added)
        if total - added < soft <= total:  # ask once per crossing, not on every later turn
            event = envelope(scope, traceparent=traceparent)
            event.compaction_requested.CopyFrom(
                events_pb2.CompactionRequested(session_tokens=total, budget_tokens=budget)
            )
            await self.bus.publish(topics.COMPACTION_REQUESTS, scope.session_key, event.SerializeToString())


def _entities(owner: Owner, content: str) -> list[Entity]:
    return [
        Entity(
            entity_id=stable_id(owner.client_id, owner.customer_id, owner.user_id, m.type, m.text.lower()),
            owner=owner,
            name=m.text,
            type=m.type,
        )
        for m in mentions(content)
    ]


@dataclass
class ForgetScope:
    memories: MemoryRepo
    graph: GraphStore

    async def __call__(self, scope: Scope, level: ForgetLevel) -> dict[str, int]:
        erased = await self.memories.forget(scope, level)
        await self.graph.forget(scope, level)
        return {"memories_erased": erased}
