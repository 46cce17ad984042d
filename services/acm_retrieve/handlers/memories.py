"""acm.memories.v1 → retrieve's projection of the memories and its vector index (acm_retrieve.projection), then,
for an event that finishes a job, the job DONE on acm.jobs.v1: DONE means the memories are retrievable.
Upserts and deletes by memory id, so redelivery is harmless."""

from __future__ import annotations

from dataclasses import dataclass

from acm.domain.errors import InvalidRequest
from acm.domain.models import JobStatus, Memory
from acm.domain.scope import Scope
from acm.envelopes import decode
from acm.job_events import JobEvents
from acm.memory_wire import written_from_pb
from acm.ports.bus import PermanentError, Record
from acm.ports.stores import VectorPoint
from acm.v1 import events_pb2
from acm_retrieve.projection import MemoryChanges, MemoryProjection


def changes_from_pb(body: events_pb2.MemoriesWritten, scope: Scope, dim: int) -> MemoryChanges:
    """PermanentError for what can never apply: a memory without its stored form, an unknown tier or layer, or a
    vector of another size than the index's."""
    written: list[Memory] = []
    points = []
    for pb in body.memories:
        try:
            memory = written_from_pb(pb, scope)
        except InvalidRequest as exc:
            raise PermanentError(str(exc)) from None
        written.append(memory)
        if not pb.embedding:
            continue
        if len(pb.embedding) != dim:
            raise PermanentError(
                f"memory {pb.memory_id} has a {len(pb.embedding)}-d embedding, the index is {dim}-d "
                "(ingest and retrieve must use the same ACM_EMBEDDER)"
            )
        points.append(
            VectorPoint(
                memory_id=memory.memory_id,
                vector=list(pb.embedding),
                owner=memory.owner,
                layer=memory.layer,
                created_at=memory.created_at,
                session_id=memory.session_id,
                model=body.embedding_model,
            )
        )
    return MemoryChanges(written, points, list(body.authored_memory_ids), list(body.expired_memory_ids))


@dataclass
class MemoriesHandler:
    projection: MemoryProjection
    jobs: JobEvents
    dim: int

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "memories_written")
        body = env.memories_written
        await self.projection.apply(scope, changes_from_pb(body, scope, self.dim))
        await self.jobs.finished(scope, body.job_id, JobStatus.DONE, {k: int(v) for k, v in body.counts.items()})
