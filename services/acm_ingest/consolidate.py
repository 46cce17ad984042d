"""The consolidator's expiry sweep: memories whose schema TTL has passed leave every store.

Promotion (MID → LONG when a fact comes back in another session) and dedup (one memory per fact, with a
mention count) happen as turns are written (usecases.IngestTurn). Expiry runs here, per user, at most once
per `every_s` for each user who is writing, so its cost follows the traffic and it never scans other
tenants. The vector index lives in the retrieve service: expired ids are published on the memories topic
for it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from acm import topics
from acm.domain.models import stable_id
from acm.domain.retention import expiry_cutoffs
from acm.domain.schema import Retention
from acm.domain.scope import Scope, Tier
from acm.envelopes import envelope
from acm.ports.bus import EventBus
from acm.ports.stores import Cache, GraphStore, MemoryRepo
from acm.prefetch_state import bump_generations
from acm.v1 import events_pb2

LAST_SWEEP_KEY = "consolidator_last_sweep"


@dataclass
class ExpireMemories:
    memories: MemoryRepo
    graph: GraphStore
    cache: Cache
    bus: EventBus
    every_s: float = 3600.0
    batch: int = 500

    async def __call__(self, scope: Scope, retention: Retention, now: datetime, traceparent: str = "") -> int:
        """Expired memories of the scope's user and agent, erased; returns how many (0 if swept recently)."""
        user = Scope(scope.client_id, scope.customer_id, scope.user_id, scope.agent_id)
        if await self.cache.get(user, LAST_SWEEP_KEY):
            return 0
        await self.cache.set(user, LAST_SWEEP_KEY, now.isoformat().encode(), self.every_s)
        expired = await self.memories.expire(user, expiry_cutoffs(retention, now), self.batch)
        if not expired:
            return 0
        await self.graph.unlink_memories(user, expired)
        # Prefetched bundles and assembled sessions of this user may hold what just expired.
        await bump_generations(self.cache, user, (Tier.USER,))
        event = envelope(user, event_id=stable_id("expired", *expired), traceparent=traceparent)
        event.memories_written.CopyFrom(events_pb2.MemoriesWritten(expired_memory_ids=expired))
        await self.bus.publish(topics.MEMORIES, user.session_key, event.SerializeToString())
        if len(expired) == self.batch:
            await self.cache.delete(user, LAST_SWEEP_KEY)  # more to do: the next turn sweeps again
        return len(expired)
