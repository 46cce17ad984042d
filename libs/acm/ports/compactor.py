"""Port: compact a session's working memory now (the compact service's use case; the gateway's Compact
RPC calls it in-process against the shared stores)."""

from __future__ import annotations

from typing import Protocol

from acm.domain.compaction.engine import WorkingMemory
from acm.domain.compaction.record import CompactionRecord
from acm.domain.scope import Scope


class Compactor(Protocol):
    async def __call__(self, scope: Scope, budget_tokens: int = 0) -> tuple[CompactionRecord, WorkingMemory | None]:
        """The compaction's record, and the working memory it swapped in (None if it changed nothing).
        Raises SessionNotFound for a session with no turns and no working memory."""
