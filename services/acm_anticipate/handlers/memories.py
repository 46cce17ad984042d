"""acm.memories.v1 → the session's recently mentioned entities (idempotent: merging twice is a no-op)."""

from __future__ import annotations

from dataclasses import dataclass

from acm.envelopes import decode
from acm.ports.bus import Record
from acm_anticipate.usecases import TrackMentions


@dataclass
class MemoriesHandler:
    track: TrackMentions

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "memories_written")
        names = [n for m in env.memories_written.memories for n in m.entity_names]
        if names and scope.session_id:
            await self.track(scope, names)
