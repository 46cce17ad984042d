"""Per-session hot state: the entities a session mentioned, newest first, bounded."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from acm.domain.scope import ForgetLevel, Scope
from acm.ports.stores import Cache

RECENT_ENTITIES_KEY = "recent_entities"


def merge_recent(previous: Sequence[str], mentioned: Sequence[str], limit: int) -> list[str]:
    """Newest mentions first, each name once (case-insensitive), at most ``limit``."""
    out: list[str] = []
    seen: set[str] = set()
    for name in [*reversed(mentioned), *previous]:
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append(name)
    return out[:limit]


@dataclass
class TrackMentions:
    cache: Cache
    limit: int
    ttl_s: float

    async def __call__(self, scope: Scope, names: Sequence[str]) -> list[str]:
        raw = await self.cache.get(scope, RECENT_ENTITIES_KEY)
        recent = merge_recent(json.loads(raw) if raw else [], names, self.limit)
        await self.cache.set(scope, RECENT_ENTITIES_KEY, json.dumps(recent).encode(), self.ttl_s)
        return recent

    async def recent(self, scope: Scope) -> list[str]:
        raw = await self.cache.get(scope, RECENT_ENTITIES_KEY)
        return list(json.loads(raw)) if raw else []


@dataclass
class DropHotState:
    cache: Cache

    async def __call__(self, scope: Scope, level: ForgetLevel) -> int:
        return await self.cache.clear(scope, level)
