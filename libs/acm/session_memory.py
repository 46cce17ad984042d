"""A session's token: replaced whenever what the read side's LoadSession (acm.read.session) reads changes,
so readers may keep what they loaded while it stays the same. Written by ingest (a turn stored) and compact
(a compaction swapped in), read by acm.read.kept_sessions."""

from __future__ import annotations

import uuid

from acm.domain.scope import Scope
from acm.ports.stores import Cache

# A random token per session, replaced whenever what LoadSession reads changes (a turn stored, a compaction
# swapped or recorded): readers may keep what they loaded while the token stays the same, and keep nothing
# while there is none (never touched, forgotten, evicted). Random, not a counter: a token cleared by Forget
# or eviction never matches an old one again.
SESSION_TOKEN_KEY = "session:token"
SESSION_TOKEN_TTL_S = 7 * 86400.0


async def touch_session(cache: Cache, scope: Scope) -> None:
    """Call after the write is stored (a reader that saw the old token then reloads)."""
    if scope.session_id:
        await cache.set(scope, SESSION_TOKEN_KEY, uuid.uuid4().hex.encode(), SESSION_TOKEN_TTL_S)
