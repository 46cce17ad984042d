"""The agent schema every service reads: the latest stored version, or the default one. The architect owns the
schemas; the others read them through it (acm.ports.owners.SchemaSource): its store in-process in embedded mode,
its GetAgent RPC in distributed mode, cached for a few seconds."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace

from acm.domain.schema import DEFAULT_AGENT, AgentSchema, default_schema
from acm.domain.scope import Scope
from acm.ports.architect import AgentNotFoundError, Architect
from acm.ports.owners import SchemaSource
from acm.ports.stores import SchemaRepo
from acm.ttl_cache import TtlCache


def agent_of(scope: Scope, agent_id: str = "") -> str:
    return agent_id or scope.agent_id or DEFAULT_AGENT


class RepoSchemaSource:
    """Implements SchemaSource over the architect's own store (the architect itself, and every service of the
    embedded process: no network hop)."""

    def __init__(self, schemas: SchemaRepo) -> None:
        self._schemas = schemas

    async def latest(self, scope: Scope, agent_id: str = "") -> AgentSchema:
        agent = agent_of(scope, agent_id)
        return await self._schemas.latest(scope, agent) or default_schema(agent)


class KeptLatest:
    """Implements SchemaRepo over the architect's store, keeping each agent's latest version (or its absence)
    once read: every Fetch and every ingested turn asked the store for it (a SQLite read and a JSON decode,
    4-5 % of a Fetch's CPU). Exact, with no TTL, because this object is the store's only writer: the embedded
    process, where one process holds the data folder's lock and the architect and every reader share it. A
    ``put`` forgets the agent's kept version and a read that overlapped it keeps nothing, so the next read
    sees the new version. Not for a store other processes write (distributed: CachedSchemaSource's TTL)."""

    def __init__(self, schemas: SchemaRepo, max_entries: int = 10_000) -> None:
        self._schemas = schemas
        self._max_entries = max_entries
        self._kept: OrderedDict[tuple[str, str], AgentSchema | None] = OrderedDict()
        self._writes = 0  # puts started: a read that saw it change may hold the old version

    async def latest(self, scope: Scope, agent_id: str) -> AgentSchema | None:
        key = (scope.client_id, agent_id)
        if key in self._kept:
            self._kept.move_to_end(key)
            return self._kept[key]
        writes = self._writes
        found = await self._schemas.latest(scope, agent_id)
        if writes == self._writes and self._max_entries > 0:
            self._kept[key] = found
            while len(self._kept) > self._max_entries:
                self._kept.popitem(last=False)
        return found

    async def put(self, client_id: str, schema: AgentSchema) -> bool:
        self._writes += 1
        self._kept.pop((client_id, schema.agent_id), None)
        try:
            return await self._schemas.put(client_id, schema)
        finally:
            self._writes += 1  # a read started during the write may have seen the row either way
            self._kept.pop((client_id, schema.agent_id), None)

    async def version(self, scope: Scope, agent_id: str, version: int) -> AgentSchema | None:
        return await self._schemas.version(scope, agent_id, version)

    async def agents(self, scope: Scope) -> list[AgentSchema]:
        return await self._schemas.agents(scope)


class ArchitectSchemaSource:
    """Implements SchemaSource over the Architect API (GetAgent of the latest version; over gRPC in distributed
    mode)."""

    def __init__(self, architect: Architect) -> None:
        self._architect = architect

    async def latest(self, scope: Scope, agent_id: str = "") -> AgentSchema:
        agent = agent_of(scope, agent_id)
        try:
            info = await self._architect.get_agent(replace(scope, agent_id=agent))
        except AgentNotFoundError:
            return default_schema(agent)
        return AgentSchema.from_json(info.schema_json)


class CachedSchemaSource:
    """A SchemaSource whose answers are kept ``ttl_s`` per client and agent: a new version (DefineAgent) reaches
    this replica within that long. No service consumes acm.schemas.v1 to invalidate sooner; the TTL is the bound."""

    def __init__(
        self,
        source: SchemaSource,
        ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = 10_000,
    ) -> None:
        self._source = source
        self._cache: TtlCache[tuple[str, str], AgentSchema] = TtlCache(ttl_s, max_entries, clock)

    async def latest(self, scope: Scope, agent_id: str = "") -> AgentSchema:
        agent = agent_of(scope, agent_id)
        return await self._cache.get((scope.client_id, agent), lambda: self._source.latest(scope, agent))
