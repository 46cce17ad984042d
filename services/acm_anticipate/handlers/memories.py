"""acm.memories.indexed.v1 → the session's recently mentioned entities, then a fresh prefetch pool. Retrieve
publishes it once a session's memories are in its copy (the one the pool is built from), so the pool is never
built before the change it follows. Idempotent: merging the same names twice is a no-op, and a rebuilt pool
replaces the previous one."""

from __future__ import annotations

from dataclasses import dataclass

from acm.envelopes import decode
from acm.ports.bus import Record
from acm_anticipate.usecases import TrackMentions, WarmSession


@dataclass
class MemoriesIndexedHandler:
    track: TrackMentions
    warm: WarmSession | None = None

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "memories_indexed")
        if not scope.session_id:
            return
        body = env.memories_indexed
        if body.entity_names:
            await self.track(scope, list(body.entity_names))
        if self.warm is not None and body.kinds:
            await self.warm(scope, list(body.kinds))
