"""How the gateway reaches the compact service (the Compact RPC, and a session's working memory for its
session context): in-process in embedded mode, over gRPC in distributed mode. The scope is already
authenticated (client set by the gateway)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from acm.domain.compaction.engine import WorkingMemory
from acm.domain.compaction.record import CompactionRecord
from acm.domain.scope import Scope


@dataclass(frozen=True, slots=True)
class StoredWorkingMemory:
    memory: WorkingMemory | None  # None before the session's first compaction
    latest: CompactionRecord | None  # the newest compaction record; None before the first attempt


@dataclass(frozen=True, slots=True)
class CompactionsPage:
    compactions: list[tuple[Scope, CompactionRecord]]  # each with its session's scope, newest first
    next_page_token: str = ""


class WorkingMemorySource(Protocol):
    async def working_memory(self, scope: Scope) -> StoredWorkingMemory:
        """The session's working memory and latest compaction record, as compact stored them. InvalidRequest
        without scope.session_id."""


class Compactor(WorkingMemorySource, Protocol):
    async def compact(self, scope: Scope, budget_tokens: int = 0) -> CompactionRecord:
        """Compact the session's working memory now (budget 0: the agent schema's compaction budget) and return
        the compaction's record. Raises InvalidRequest without scope.session_id or for a negative budget,
        NotFound for a session with no turns and no working memory."""

    async def compactions(self, client_id: str, page_size: int, page_token: str) -> CompactionsPage:
        """The client's compactions in every session, newest first, a page at a time (ListCompactions).
        InvalidRequest for a page size out of 1..500 or a page token this service did not issue."""
