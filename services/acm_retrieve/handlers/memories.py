"""acm.memories.v1 → retrieve's projection of the memories and its vector index (acm_retrieve.projection); then,
for a session's searched memories, MemoriesIndexed on acm.memories.indexed.v1 (anticipate warms the session's pool
from this copy only once the change is in it); then, for an event that finishes a job, the job DONE on acm.jobs.v1:
DONE means the memories are retrievable. Upserts and deletes by memory id, so redelivery is harmless (it publishes
the same hint and the same DONE again, both idempotent)."""

from __future__ import annotations

from dataclasses import dataclass

from acm import topics
from acm.domain.errors import InvalidRequest
from acm.domain.models import JobStatus, Memory, stable_id
from acm.domain.scope import Scope
from acm.envelopes import decode, envelope
from acm.graph_wire import graph_from_pb
from acm.job_events import JobEvents
from acm.memory_wire import written_from_pb
from acm.ports.bus import EventBus, PermanentError, Record
from acm.ports.stores import VectorPoint
from acm.v1 import events_pb2
from acm_retrieve.projection import MemoryChanges, MemoryProjection


def changes_from_pb(body: events_pb2.MemoriesWritten, scope: Scope, dim: int) -> MemoryChanges:
    """PermanentError for what can never apply: a memory without its stored form, an unknown tier or layer, or a
    vector of another size than the index's."""
    try:
        graph = graph_from_pb(body, scope)
    except InvalidRequest as exc:
        raise PermanentError(str(exc)) from None
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
    return MemoryChanges(written, points, list(body.authored_memory_ids), list(body.expired_memory_ids), graph)


def indexed_from_pb(body: events_pb2.MemoriesWritten) -> events_pb2.MemoriesIndexed | None:
    """What anticipate needs of an applied event: the searched memories' kinds and entities (turn previews and
    versions made stale change no pool); None when there are none."""
    searched = [m for m in body.memories if m.embedding]
    if not searched:
        return None
    return events_pb2.MemoriesIndexed(
        kinds=[m.kind for m in searched], entity_names=[n for m in searched for n in m.entity_names]
    )


@dataclass
class MemoriesHandler:
    projection: MemoryProjection
    jobs: JobEvents
    dim: int
    # Where the hint for anticipate goes (acm.memories.indexed.v1); None: no hints (a replay into a fresh copy).
    bus: EventBus | None = None

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "memories_written")
        body = env.memories_written
        await self.projection.apply(scope, changes_from_pb(body, scope, self.dim))
        indexed = indexed_from_pb(body) if scope.session_id else None
        if self.bus is not None and indexed is not None:
            # After the apply (and its generation bump): a pool built from here on sees the change.
            hint = envelope(scope, event_id=stable_id("indexed", env.event_id))  # the same on a redelivery
            hint.memories_indexed.CopyFrom(indexed)
            await self.bus.publish(topics.MEMORIES_INDEXED, scope.session_key, hint.SerializeToString())
        await self.jobs.finished(scope, body.job_id, JobStatus.DONE, {k: int(v) for k, v in body.counts.items()})
