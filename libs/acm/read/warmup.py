"""Load what a session's next Fetch reads before it asks.

Anticipate publishes a PoolReady hint (acm.prefetch.pools.v1) after every write into a session, once the
session's prefetch pool is rebuilt or found current. The gateway then decodes that pool, reloads the
session it keeps (the write replaced the session's token) and counts the pool's lines and the recent
turns as a Fetch shows them, so the Fetch that follows finds all three in memory instead of paying for
them. Only sessions this replica already holds something of are warmed (those it served before)."""

from __future__ import annotations

from dataclasses import dataclass

from acm.domain.scope import Scope
from acm.domain.tokens import DEFAULT_ENCODING, TokenCounter
from acm.read.kept_sessions import KeptSessions
from acm.read.prefetching import PrefetchingRetriever
from acm.read.session_context import day_header, recent_pieces, said_day, shown_line


@dataclass
class WarmUp:
    pools: PrefetchingRetriever
    sessions: KeptSessions
    tokens: TokenCounter
    warmed: int = 0
    skipped: int = 0  # hints for sessions this replica holds nothing of

    async def __call__(self, scope: Scope, version: str) -> None:
        if not (self.sessions.holds(scope) or self.pools.holds(scope)):
            # Not a session this replica served: its first Fetch loads anyway, and warming every session
            # on every replica would multiply the store reads by the number of replicas.
            self.skipped += 1
            return
        state, _ = await self.sessions(scope)
        # The counter remembers counts: the Fetch's own counting of these pieces becomes a lookup.
        working = [*state.memory.recent, *state.tail]
        for turn in working[-state.rules.recent_turns_verbatim :] if state.rules.recent_turns_verbatim else ():
            for piece in recent_pieces([turn, turn])[1:]:  # the turn as a middle piece and as the last one
                self.tokens.count(piece, DEFAULT_ENCODING)
        for memory in await self.pools.warm(scope, version):
            line = shown_line(memory)
            self.tokens.count(line, DEFAULT_ENCODING)
            self.tokens.count(line[:-1], DEFAULT_ENCODING)  # as the last line shown (no newline)
            day = said_day(memory)
            if day is not None:
                self.tokens.count(day_header(day), DEFAULT_ENCODING)
        self.warmed += 1
