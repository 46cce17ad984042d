"""How the gateway's Compact RPC reaches the compact service: in-process in embedded mode, over gRPC in
distributed mode. The scope is already authenticated (client set by the gateway)."""

from __future__ import annotations

from typing import Protocol

from acm.domain.compaction.record import CompactionRecord
from acm.domain.scope import Scope


class Compactor(Protocol):
    async def compact(self, scope: Scope, budget_tokens: int = 0) -> CompactionRecord:
        """Compact the session's working memory now (budget 0: the agent schema's compaction budget) and return
        the compaction's record. Raises InvalidRequest without scope.session_id or for a negative budget,
        NotFound for a session with no turns and no working memory."""
