"""Sessions the gateway loaded, kept between Fetches while nothing they were read from changed.

A Fetch in a session reads the agent's schema, the working memory, the turns since it and the latest
compaction record. An agent fetches before every model call, often with no write in between, so the
gateway keeps what it read, keyed by three values read before the stores: the session's token (replaced
after every stored turn and every compaction, cleared by Forget: acm.session_memory.touch_session), the
user's prefetch generation (Forget, expiry) and the schema's version. A write landing between those reads
and the store reads only makes the next Fetch reload. Bounded by the characters the kept sessions hold,
least recently used out first.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field

from acm.domain.compaction.record import CompactionRecord
from acm.domain.scope import Scope, Tier
from acm.ports.stores import Cache
from acm.prefetch_state import as_text, generation_ref
from acm.read.session import LoadSession, SessionState
from acm.session_memory import SESSION_TOKEN_KEY


@dataclass
class _Kept:
    key: tuple[str, str, int]  # session token, user generation, schema version
    state: SessionState
    latest: CompactionRecord | None
    chars: int = 0  # its size, for the bound

    def __post_init__(self) -> None:
        m = self.state.memory
        turns = (*m.recent, *self.state.tail)
        self.chars = sum(len(t.text) for t in turns) + sum(len(line) for line in m.episodes)


@dataclass
class KeptSessions:
    load: LoadSession
    cache: Cache
    max_chars: int = 32_000_000  # what the kept sessions may hold, in characters of turns and summary lines
    _kept: OrderedDict[Scope, _Kept] = field(default_factory=OrderedDict)
    _used: int = 0

    def holds(self, scope: Scope) -> bool:
        return scope in self._kept

    async def __call__(self, scope: Scope) -> tuple[SessionState, CompactionRecord | None]:
        """The session as stored and its latest compaction record."""
        # One round trip for both tokens (no session token: never touched, forgotten, evicted).
        (token, generation), schema = await asyncio.gather(self._tokens(scope), self.load.schema(scope))
        key = (token, generation, schema.version)
        kept = self._kept.get(scope)
        if token and kept is not None and kept.key == key:
            self._kept.move_to_end(scope)
            return kept.state, kept.latest
        state = await self.load(scope, schema=schema)
        if kept is not None:  # a turn or a compaction since: what did not change need not be read again
            state.follows(kept.state)
        loaded = _Kept(key, state, state.latest)
        self._drop(scope)
        if token:  # no token (never touched, forgotten, evicted): nothing may be kept under it
            self._kept[scope] = loaded
            self._used += loaded.chars
            while self._used > self.max_chars:
                self._drop(next(iter(self._kept)))
        return loaded.state, loaded.latest

    async def _tokens(self, scope: Scope) -> tuple[str, str]:
        raw = await self.cache.get_many([(scope, SESSION_TOKEN_KEY), generation_ref(scope, Tier.USER)])
        token, generation = (as_text(v) for v in raw)
        return token, generation

    def _drop(self, scope: Scope) -> None:
        gone = self._kept.pop(scope, None)
        if gone is not None:
            self._used -= gone.chars
