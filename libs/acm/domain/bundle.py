"""What a Fetch hands back: the memories retrieved for it and, for a session, the assembled context (pinned
state, memories, summary, recent turns) with its parts' token counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acm.domain.compaction.engine import SessionTurn
from acm.domain.compaction.pinned import PinnedEntity
from acm.domain.compaction.record import CompactionRecord
from acm.domain.retrieved import Ranked


@dataclass(frozen=True, slots=True)
class ContextPart:
    name: str  # pinned, memories, summary, recent
    tokens: int
    text: str


@dataclass(frozen=True, slots=True)
class ContextBundle:
    memories: Sequence[Ranked]
    total_tokens: int  # the memories' tokens
    budget_tokens: int
    dropped: int
    encoding: str
    from_prefetch: bool = False
    # A session's assembled context (empty without a session):
    context_tokens: int = 0
    pinned: Sequence[PinnedEntity] = ()
    summary: str = ""
    recent_turns: Sequence[SessionTurn] = ()
    parts: Sequence[ContextPart] = ()
    context: str = ""
    notice: str = ""
    last_compaction: CompactionRecord | None = None
