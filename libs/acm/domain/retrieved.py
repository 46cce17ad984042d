"""What a retrieval is asked and what it answers, in domain terms: the Retriever port's language. Protobuf
stays at the edges (the gRPC servicers and clients convert)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from acm.domain.models import Layer, Memory
from acm.domain.scope import ALL_TIERS, Scope, Tier
from acm.domain.tokens import DEFAULT_ENCODING


@dataclass(frozen=True, slots=True)
class RetrievalQuery:
    scope: Scope
    text: str
    budget_tokens: int
    encoding: str = DEFAULT_ENCODING
    tiers: tuple[Tier, ...] = ALL_TIERS
    as_of: datetime | None = None  # the present that time words in the text are read against; None: now
    # The text is the session's latest turns, not a question (a session-context Fetch without one): dates in
    # it are data, not a time window to search in.
    from_context: bool = False


@dataclass(frozen=True, slots=True)
class RetrievedMemory:
    """What a reader is shown of a memory: its text, where it sits (tier, layer), where it came from (source
    turns, session, role, tool) and how far to trust it."""

    memory_id: str
    tier: Tier
    layer: Layer
    kind: str
    text: str
    source_turn_ids: tuple[str, ...]
    tokens: int  # in the encoding asked for
    created_at: datetime | None
    valid_from: datetime | None = None
    session_id: str = ""
    role: str = ""
    tool_name: str = ""
    trust: str = "normal"

    @classmethod
    def of(cls, memory: Memory, tokens: int) -> RetrievedMemory:
        return cls(
            memory.memory_id,
            memory.tier,
            memory.layer,
            memory.kind,
            memory.text,
            memory.source_turn_ids,
            tokens,
            memory.created_at,
            memory.valid_from,
            memory.session_id,
            memory.role,
            memory.tool_name,
            memory.trust,
        )


@dataclass(frozen=True, slots=True)
class Ranked:
    memory: RetrievedMemory
    score: float


@dataclass(frozen=True, slots=True)
class Retrieval:
    items: Sequence[Ranked]  # best first, within the budget
    total_tokens: int
    dropped: int  # eligible memories left out for the budget
    from_prefetch: bool = False  # served from the session's prefetch pool
