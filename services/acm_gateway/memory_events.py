"""The Memory API's writes as signed events on acm.memory.edits.v1, for ingest to apply (the gateway's edge to
the bus, as acm_gateway.events is for turns and Forget)."""

from __future__ import annotations

from collections.abc import Sequence

from acm import topics
from acm.domain.models import Memory
from acm.domain.scope import Scope
from acm.envelopes import envelope
from acm.memory_wire import stored_to_pb
from acm.ports.stores import ApiKey
from acm.v1 import events_pb2
from acm_gateway.events import BusEvents


class BusMemoryEvents(BusEvents):
    """Implements acm_gateway.usecases.Events and acm_gateway.memories.MemoryEvents; keyed by the scope's
    session key, so one user's edits stay in order."""

    async def memory_updated(
        self, key: ApiKey, scope: Scope, job_id: str, old: Memory, new_memory_id: str, text: str, source: str
    ) -> None:
        update = events_pb2.MemoryUpdate(memory_id=old.memory_id, new_memory_id=new_memory_id, text=text, source=source)
        await self._edit(key, scope, events_pb2.MemoryEditRequested(job_id=job_id, update=update))

    async def memory_deleted(self, key: ApiKey, scope: Scope, job_id: str, memory_id: str) -> None:
        delete = events_pb2.MemoryDelete(memory_id=memory_id)
        await self._edit(key, scope, events_pb2.MemoryEditRequested(job_id=job_id, delete=delete))

    async def memories_imported(self, key: ApiKey, scope: Scope, job_id: str, memories: Sequence[Memory]) -> None:
        imported = events_pb2.MemoryImport(memories=[stored_to_pb(m) for m in memories])
        await self._edit(key, scope, events_pb2.MemoryEditRequested(job_id=job_id, imported=imported))

    async def _edit(self, key: ApiKey, scope: Scope, body: events_pb2.MemoryEditRequested) -> None:
        env = envelope(scope)
        env.memory_edit_requested.CopyFrom(body)
        await self._publish(topics.MEMORY_EDITS, scope, env, key)
