"""A session's working memory as its owners hold it: the compacted part (compact's working memory) plus the
turns that arrived after it (the session's turn memories, read from retrieve's Memories API). Read by the
compact service and by the read side's session context, so both see the same session, and no turn is lost
between two compactions."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from acm.domain.compaction.engine import PinsAsOf, Rules, SessionTurn, WorkingMemory, pins_as_of
from acm.domain.compaction.pinned import PinnedState
from acm.domain.compaction.record import CompactionRecord
from acm.domain.models import Layer, Memory
from acm.domain.schema import AgentSchema, CompactionRules
from acm.domain.scope import Scope
from acm.ports.compactor import WorkingMemorySource
from acm.ports.memories import SessionMemories
from acm.ports.owners import SchemaSource

_ROLES = ("user", "assistant", "system", "tool")
TURN_LAYERS = (Layer.SHORT,)  # turn previews (and flagged episodes) live in SHORT; facts are not turns
FIRST_PAGE = 64  # turns read first; after a compaction the tail is usually shorter


class SessionNotFound(Exception):
    """No turns and no working memory for the session: it never existed, or it was forgotten."""


def rules_of(
    c: CompactionRules, budget_tokens: int = 0, pinned_fields: tuple[str, ...] = (), entity_types: tuple[str, ...] = ()
) -> Rules:
    return Rules(
        budget_tokens=budget_tokens or c.budget_tokens,
        soft_ratio=c.soft_ratio,
        hard_ratio=c.hard_ratio,
        recent_turns_verbatim=c.recent_turns_verbatim,
        target_ratio=c.target_ratio,
        summary_ratio=c.summary_ratio,
        max_attempts=c.max_attempts,
        pinned_fields=pinned_fields,
        pinned_max_tokens=c.pinned_max_tokens,
        pinned_max_entities=c.pinned_max_entities,
        entity_types=entity_types,
    )


def session_turn(memory: Memory) -> SessionTurn:
    """A turn memory ("<speaker>: <text>") as a working turn. A speaker "tool[<name>]" or "tool:<name>" is a
    tool output of that tool; a named speaker (a person) speaks like a user."""
    speaker, sep, _ = memory.text.partition(": ")
    speaker = speaker if sep else ""
    role, tool = "user", ""
    low = speaker.lower()
    if low in _ROLES:
        role = low
    elif low.startswith("tool"):
        role, tool = "tool", speaker[4:].strip("[]: ")
    return SessionTurn(
        turn_id=memory.source_turn_ids[0] if memory.source_turn_ids else memory.memory_id,
        role=role,
        text=memory.text,
        tokens=memory.token_count,
        at=memory.created_at,
        tool_name=tool,
        speaker=speaker,
    )


@dataclass
class SessionState:
    """A session's working memory as stored, plus the turns that arrived after it (oldest first)."""

    memory: WorkingMemory
    tail: list[SessionTurn]
    stored: bool
    rules: Rules
    local_only: bool
    latest: CompactionRecord | None = None  # the session's newest compaction record
    _pins: PinsAsOf | None = field(default=None, init=False, repr=False, compare=False)
    _earlier: SessionState | None = field(default=None, init=False, repr=False, compare=False)

    def pins(self) -> PinnedState:
        """The pinned state as of the newest turn (pins_as_of), made once: the read side keeps a state until a
        turn or a compaction replaces the session's token, and every Fetch in between (each budget) plans from
        the same pins. Callers never change a PinnedState (its updates return new ones)."""
        if self._pins is None:
            self._pins = pins_as_of(self.memory, self.tail, self.rules.pinned_fields, self._continued())
            self._earlier = None
        return self._pins.state

    def follows(self, earlier: SessionState) -> None:
        """``earlier``: the same session as loaded before this (its pins, when made, may be continued)."""
        if earlier._pins is not None:
            self._earlier = earlier

    def _continued(self) -> PinsAsOf | None:
        """The earlier load's pins when this load is that one with turns added at the end: the same working
        memory (no compaction in between), the same pinned fields, and its tail the start of this one's."""
        e = self._earlier
        if e is None or e._pins is None or e.rules.pinned_fields != self.rules.pinned_fields:
            return None
        n = len(e.tail)
        if len(self.tail) < n or self.tail[:n] != e.tail or e.memory != self.memory:
            return None
        return e._pins


@dataclass
class LoadSession:
    memories: SessionMemories  # retrieve's Memories API (it owns the memories' read model)
    working: WorkingMemorySource  # compact's API (it owns the working memory)
    schemas: SchemaSource  # the architect's (acm.ports.owners)
    max_session_turns: int

    async def schema(self, scope: Scope) -> AgentSchema:
        return await self.schemas.latest(scope)

    async def __call__(self, scope: Scope, budget_tokens: int = 0, schema: AgentSchema | None = None) -> SessionState:
        """`schema`: the agent's schema when the caller has just read it."""
        if not scope.session_id:
            raise ValueError("compaction needs scope.session_id")
        schema = schema or await self.schema(scope)
        # The first page of turns does not depend on the working memory: both owners are asked at once.
        limit = min(FIRST_PAGE, self.max_session_turns)
        found, first = await asyncio.gather(
            self.working.working_memory(scope), self.memories.session_memories(scope, limit, TURN_LAYERS)
        )
        stored = found.memory
        memory = stored or WorkingMemory()
        newest_first = await self._since(scope, memory, first, limit)
        kept = {r.turn_id for r in memory.recent}
        # Flagged episodes (poisoning attempts) are kept for audit, never put back in front of the model.
        turns = (session_turn(m) for m in reversed(newest_first) if m.kind == "turn")
        tail = [t for t in turns if not memory.covers(t) and t.turn_id not in kept]
        rules = rules_of(schema.compaction, budget_tokens, schema.pinned_fields, schema.entity_types)
        return SessionState(memory, tail, stored is not None, rules, schema.compaction.local_only, found.latest)

    async def _since(self, scope: Scope, memory: WorkingMemory, rows: list[Memory], limit: int) -> list[Memory]:
        """The session's memories newer than the working memory's mark, newest first, from the first page
        (``rows``, ``limit`` asked). Read in growing pages: after a compaction the tail is short, so a fetch
        does not re-read the whole session."""
        while True:
            reached = memory.through_at is not None and rows and rows[-1].created_at < memory.through_at
            if reached or len(rows) < limit or limit >= self.max_session_turns:
                return rows
            limit = min(limit * 4, self.max_session_turns)
            rows = await self.memories.session_memories(scope, limit, TURN_LAYERS)
