"""Ingest's outbound events: domain values as acm.v1 envelopes on the bus (its edge to Kafka or the embedded
log, as the turns handler is its edge in). Each event is keyed by the session, so one session's events stay
ordered."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from acm import topics
from acm.domain.scope import Scope
from acm.envelopes import envelope
from acm.graph_wire import graph_to_pb
from acm.memory_wire import written_to_pb
from acm.ports.bus import EventBus
from acm.v1 import events_pb2
from acm_ingest.usecases import Changes


class BusEvents:
    """Implements acm_ingest.usecases.Events (and acm_ingest.consolidate.ExpiryEvents)."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    async def memories_written(
        self,
        scope: Scope,
        event_id: str,
        job_id: str,
        changes: Changes,
        counts: Mapping[str, int],
        embedding_model: str,
        traceparent: str,
    ) -> None:
        memories = [written_to_pb(w.memory, w.embedding, w.entity_names) for w in changes.written.values()]
        event = envelope(scope, event_id=event_id, traceparent=traceparent)
        body = events_pb2.MemoriesWritten(
            job_id=job_id,
            memories=memories,
            embedding_model=embedding_model,
            expired_memory_ids=list(dict.fromkeys(changes.erased)),
            authored_memory_ids=list(dict.fromkeys(changes.authored)),
            counts=dict(counts),
        )
        graph_to_pb(changes.graph, body)
        event.memories_written.CopyFrom(body)
        await self._publish(topics.MEMORIES, scope, event)

    async def memories_expired(
        self, scope: Scope, memory_ids: Sequence[str], event_id: str, traceparent: str = ""
    ) -> None:
        event = envelope(scope, event_id=event_id, traceparent=traceparent)
        event.memories_written.CopyFrom(events_pb2.MemoriesWritten(expired_memory_ids=list(memory_ids)))
        await self._publish(topics.MEMORIES, scope, event)

    async def compaction_requested(
        self, scope: Scope, session_tokens: int, budget_tokens: int, traceparent: str, turn_id: str = ""
    ) -> None:
        event = envelope(scope, traceparent=traceparent)
        event.compaction_requested.CopyFrom(
            events_pb2.CompactionRequested(session_tokens=session_tokens, budget_tokens=budget_tokens, turn_id=turn_id)
        )
        await self._publish(topics.COMPACTION_REQUESTS, scope, event)

    async def _publish(self, topic: str, scope: Scope, event: events_pb2.Envelope) -> None:
        await self._bus.publish(topic, scope.session_key, event.SerializeToString())
