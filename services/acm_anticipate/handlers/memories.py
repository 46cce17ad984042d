"""acm.memories.v1 → the session's recently mentioned entities, then a fresh prefetch pool (idempotent:
merging the same names twice is a no-op, and a rebuilt pool replaces the previous one)."""

from __future__ import annotations

from dataclasses import dataclass

from acm.envelopes import decode
from acm.ports.bus import Record
from acm_anticipate.usecases import TrackMentions, WarmSession


@dataclass
class MemoriesHandler:
    track: TrackMentions
    warm: WarmSession | None = None

    async def __call__(self, record: Record) -> None:
        env, scope = decode(record.value, "memories_written")
        if not scope.session_id:
            return
        # The searched memories (those with a vector): turn previews and versions made stale change no pool.
        written = [m for m in env.memories_written.memories if m.embedding]
        names = [n for m in written for n in m.entity_names]
        if names:
            await self.track(scope, names)
        if self.warm is not None and written:
            await self.warm(scope, [m.kind for m in written])
