"""acm.memories.v1 → the vector index. Upserts and deletes by memory id, so redelivery is harmless."""

from __future__ import annotations

from dataclasses import dataclass

from acm.convert import LAYER_FROM_PB, TIER_FROM_PB, from_ts
from acm.domain.models import utcnow
from acm.envelopes import decode
from acm.ports.bus import PermanentError, Record
from acm.ports.stores import VectorPoint, VectorStore


@dataclass
class MemoriesHandler:
    vectors: VectorStore
    dim: int

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "memories_written")
        points = []
        for m in env.memories_written.memories:
            if len(m.embedding) != self.dim:
                raise PermanentError(
                    f"memory {m.memory_id} has a {len(m.embedding)}-d embedding, the index is {self.dim}-d "
                    "(ingest and retrieve must use the same ACM_EMBEDDER)"
                )
            if m.tier not in TIER_FROM_PB or m.layer not in LAYER_FROM_PB:
                raise PermanentError(f"memory {m.memory_id} has no tier or layer")
            points.append(
                VectorPoint(
                    memory_id=m.memory_id,
                    vector=list(m.embedding),
                    owner=scope.owner(TIER_FROM_PB[m.tier]),
                    layer=LAYER_FROM_PB[m.layer],
                    created_at=from_ts(m.created_at) or utcnow(),
                    session_id=scope.session_id,
                    model=env.memories_written.embedding_model,
                )
            )
        if points:
            await self.vectors.upsert(points)
        if env.memories_written.expired_memory_ids:
            await self.vectors.delete(scope, list(env.memories_written.expired_memory_ids))
