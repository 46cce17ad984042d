"""What a service reads from data another service owns, through that owner (issue 19: one owner per table).
In embedded mode the owner's store in-process; in distributed mode the owner's internal gRPC API, cached
for a few seconds."""

from __future__ import annotations

from typing import Protocol

from acm.domain.schema import AgentSchema
from acm.domain.scope import Scope
from acm.ports.stores import ApiKey


class KeySource(Protocol):
    """The gateway's API keys, for verifying an envelope's signature. Raises Unavailable when the gateway
    cannot answer (a consumer retries the record)."""

    async def by_id(self, client_id: str, key_id: str) -> ApiKey | None:
        """The key ``key_id`` of client ``client_id`` (revoked ones too), or None."""


class SchemaSource(Protocol):
    """The architect's agent schemas. Raises Unavailable when the architect cannot answer."""

    async def latest(self, scope: Scope, agent_id: str = "") -> AgentSchema:
        """The agent's (``agent_id``, else the scope's, else DEFAULT_AGENT) latest schema in the scope's
        client; before one is stored, that agent's default schema (the one the architect stores on its first
        turn)."""
