"""Port: a session's working memory (pinned state + summary + verbatim turns), durable and swapped
atomically, and the record of every compaction."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from acm.domain.compaction.engine import WorkingMemory
from acm.domain.compaction.record import CompactionRecord
from acm.domain.scope import ForgetLevel, Scope


class WorkingMemoryRepo(Protocol):
    """Keyed by the scope's (client, customer, user, session); every method needs scope.session_id
    except forget above session level."""

    async def get(self, scope: Scope) -> WorkingMemory | None:
        """The session's working memory, or None before its first compaction."""

    async def swap(self, scope: Scope, memory: WorkingMemory, record: CompactionRecord) -> bool:
        """Store ``memory`` if the stored version is still ``memory.version - 1`` (0: none stored), and
        ``record`` with it, in one transaction. False, and nothing written, when another compaction
        swapped first (compare-and-swap: concurrent compactions of one session, one wins)."""

    async def record(self, scope: Scope, record: CompactionRecord) -> None:
        """A compaction that changed nothing (unchanged, failed, lost the swap)."""

    async def compactions(self, scope: Scope, limit: int = 20) -> list[CompactionRecord]:
        """The session's compactions, newest first."""

    async def of_client(
        self, client_id: str, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[tuple[Scope, CompactionRecord]]:
        """The client's compactions in every session, each with its session's scope, newest first (created_at,
        then compaction_id, descending), those after ``after`` in that order, at most ``limit`` (ListCompactions)."""

    async def forget(self, scope: Scope, level: ForgetLevel) -> int:
        """Erase the working memories (and compaction records) that ``level`` of ``scope`` covers."""
