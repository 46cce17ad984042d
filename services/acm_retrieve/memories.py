"""The Memory API's reads (GetMemory, ListMemories, MemoryHistory) and a session's newest memories (the
gateway's session context, compact, anticipate), over the memories' store and the graph (for "mentions this
entity"). Implements acm.ports.memories.MemoryReader; served over gRPC by
acm_retrieve.api.MemoriesServicer and called in-process by the embedded gateway."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, replace
from datetime import datetime

from acm.domain.errors import InvalidRequest, NotFound
from acm.domain.models import ALL_LAYERS, Layer, Memory
from acm.domain.scope import Scope
from acm.ports.memories import MAX_PAGE_SIZE, MAX_SESSION_MEMORIES, MemoryPage, MemoryQuery, UsersPage
from acm.ports.stores import GraphStore, MemoryFilter, MemoryRepo, PageMark

DEFAULT_PAGE_SIZE = 50
DEFAULT_USERS_PAGE = 100
# The most memories one entity filter considers (a person named in a long history is in thousands of facts).
MAX_ENTITY_MEMORIES = 5000
MAX_VERSIONS = 500  # a memory corrected more often than this shows its newest MAX_VERSIONS versions


def page_token(mark: PageMark) -> str:
    raw = f"{mark.created_at.isoformat()}|{mark.memory_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def page_mark(token: str) -> PageMark | None:
    if not token:
        return None
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        at, memory_id = raw.split("|", 1)
        created = datetime.fromisoformat(at)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidRequest("page_token is not one this server issued: pass next_page_token unchanged") from None
    if created.tzinfo is None or not memory_id:
        raise InvalidRequest("page_token is not one this server issued: pass next_page_token unchanged")
    return PageMark(created, memory_id)


def _user_mark(token: str) -> tuple[str, str] | None:
    """ListUsers' page token: the last (customer, user) of the page before."""
    if not token:
        return None
    try:
        customer, user = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode().split("\x1f")
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidRequest("page_token is not one this server issued: pass next_page_token unchanged") from None
    return customer, user


def page_size(asked: int, default: int = DEFAULT_PAGE_SIZE) -> int:
    if asked < 0 or asked > MAX_PAGE_SIZE:
        raise InvalidRequest(f"page_size must be between 1 and {MAX_PAGE_SIZE}, or 0 for {default} (got {asked})")
    return asked or default


@dataclass
class ReadMemories:
    memories: MemoryRepo
    graph: GraphStore

    async def get(self, scope: Scope, memory_id: str) -> Memory:
        found = await self.memories.get(scope, [memory_id]) if memory_id else []
        if not found:
            raise NotFound(f"no memory {memory_id[:64]!r} in this scope (ids come from Fetch or ListMemories)")
        return found[0]

    async def users(self, client_id: str, page_size_asked: int, token: str) -> UsersPage:
        size = page_size(page_size_asked, DEFAULT_USERS_PAGE)
        after = _user_mark(token)
        found = await self.memories.users(client_id, size + 1, after)
        if len(found) <= size:
            return UsersPage(found)
        last = found[size - 1]
        raw = f"{last.customer_id}\x1f{last.user_id}".encode()
        return UsersPage(found[:size], base64.urlsafe_b64encode(raw).decode().rstrip("="))

    async def list_memories(self, scope: Scope, query: MemoryQuery) -> MemoryPage:
        size = page_size(query.page_size)
        where = query.where
        if where.created_after and where.created_before and where.created_after >= where.created_before:
            raise InvalidRequest("created_after must be before created_before")
        if query.entity:
            where = replace(where, among=await self._mentioning(scope, query.entity, where))
        # One more than the page: whether another page follows, without an empty last page.
        found = await self.memories.page(scope, where, size + 1, page_mark(query.page_token))
        if len(found) <= size:
            return MemoryPage(found)
        last = found[size - 1]
        return MemoryPage(found[:size], page_token(PageMark(last.created_at, last.memory_id)))

    async def _mentioning(self, scope: Scope, name: str, where: MemoryFilter) -> tuple[str, ...]:
        entities = await self.graph.find_entities(scope, [name], where.tiers)
        hits = await self.graph.expand(scope, [e.entity_id for e in entities], 0, MAX_ENTITY_MEMORIES, where.tiers)
        return tuple(memory_id for memory_id, _ in hits)

    async def session_memories(self, scope: Scope, limit: int, layers: tuple[Layer, ...] = ALL_LAYERS) -> list[Memory]:
        if not scope.session_id:
            raise InvalidRequest("a session's memories need scope.session_id")
        if not 1 <= limit <= MAX_SESSION_MEMORIES:
            raise InvalidRequest(f"limit must be between 1 and {MAX_SESSION_MEMORIES} (got {limit})")
        return await self.memories.session_memories(scope, limit, layers or ALL_LAYERS)

    async def history(self, scope: Scope, memory_id: str = "", slot: str = "") -> list[Memory]:
        if bool(memory_id) == bool(slot):
            raise InvalidRequest("give either memory_id or slot (e.g. 'alice|lives_in'), not both or neither")
        if slot:
            versions = await self._all(scope, MemoryFilter(slot=slot, include_stale=True))
            if not versions:
                raise NotFound(f"no memory states slot {slot[:64]!r} in this scope")
            return versions
        memory = await self.get(scope, memory_id)
        if memory.slot:
            return await self._all(scope, MemoryFilter(slot=memory.slot, include_stale=True))
        return await self._chain(scope, memory)

    async def _all(self, scope: Scope, where: MemoryFilter) -> list[Memory]:
        return sorted(await self.memories.page(scope, where, MAX_VERSIONS), key=_oldest_first)

    async def _chain(self, scope: Scope, memory: Memory) -> list[Memory]:
        """What ``memory`` replaced (back through superseded_by) and what replaced it (forward)."""
        found = {memory.memory_id: memory}
        frontier = [memory.memory_id]
        while frontier and len(found) < MAX_VERSIONS:
            older = await self.memories.page(
                scope, MemoryFilter(superseded_by=frontier.pop(), include_stale=True), MAX_VERSIONS
            )
            for m in older:
                if m.memory_id not in found:
                    found[m.memory_id] = m
                    frontier.append(m.memory_id)
        newer = memory.superseded_by
        while newer and newer not in found and len(found) < MAX_VERSIONS:
            hit = await self.memories.get(scope, [newer])
            if not hit:
                break
            found[newer] = hit[0]
            newer = hit[0].superseded_by
        return sorted(found.values(), key=_oldest_first)


def _oldest_first(m: Memory) -> tuple[datetime, str]:
    return m.created_at, m.memory_id
