"""How the other services read memories: the gateway's Memory API (GetMemory, ListMemories, MemoryHistory,
ExportUser) and a session's newest memories (the gateway's session context, compact's turns, anticipate's
recent facts). Retrieve owns the memories' read model and serves them, in-process in embedded mode and over
gRPC (acm.v1.Memories) in distributed mode. The scope is already authenticated and authorised (client set by
the gateway, or the event's scope)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from acm.domain.models import ALL_LAYERS, Layer, Memory
from acm.domain.scope import Scope
from acm.ports.stores import MemoryFilter, UserSummary

MAX_PAGE_SIZE = 500
MAX_SESSION_MEMORIES = 10_000  # one session read; the callers' own limits are 120 (anticipate) to 2000 (turns)


@dataclass(frozen=True, slots=True)
class MemoryQuery:
    """ListMemories: ``where`` plus the entity the memories must mention, and the page asked for."""

    where: MemoryFilter = field(default_factory=MemoryFilter)
    entity: str = ""
    page_size: int = 0  # 0: the reader's default
    page_token: str = ""  # a previous page's next_page_token; "": the first page


@dataclass(frozen=True, slots=True)
class MemoryPage:
    memories: list[Memory]
    next_page_token: str = ""  # "": the last page


@dataclass(frozen=True)
class UsersPage:
    users: list[UserSummary]
    next_page_token: str = ""  # "": the last page


class SessionMemories(Protocol):
    async def session_memories(self, scope: Scope, limit: int, layers: tuple[Layer, ...] = ALL_LAYERS) -> list[Memory]:
        """The session's newest ``limit`` memories in ``layers``, newest first (stale ones too: the caller
        decides). InvalidRequest without scope.session_id or for a limit out of 1..MAX_SESSION_MEMORIES."""


class MemoryReader(SessionMemories, Protocol):
    async def get(self, scope: Scope, memory_id: str) -> Memory:
        """The memory, if the scope sees it; NotFound otherwise (whether or not it exists elsewhere)."""

    async def users(self, client_id: str, page_size: int, page_token: str) -> UsersPage:
        """The client's customers and users with memories of their own (ListUsers), by customer then user.
        InvalidRequest for a page size out of 1..MAX_PAGE_SIZE or a page token this reader did not issue."""

    async def list_memories(self, scope: Scope, query: MemoryQuery) -> MemoryPage:
        """A page of the visible memories matching ``query``, newest first. InvalidRequest for a page size out of
        1..MAX_PAGE_SIZE or a page token this reader did not issue."""

    async def history(self, scope: Scope, memory_id: str = "", slot: str = "") -> list[Memory]:
        """The versions of one memory (what it replaced and what replaced it) or of one slot, oldest first.
        Exactly one of ``memory_id`` and ``slot``; NotFound for a memory the scope does not see or a slot with
        no visible version."""
