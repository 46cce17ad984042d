"""The agent schema every service reads: the latest stored version, or the default one."""

from __future__ import annotations

from acm.domain.schema import DEFAULT_AGENT, AgentSchema, default_schema
from acm.domain.scope import Scope
from acm.ports.stores import SchemaRepo


async def latest_schema(schemas: SchemaRepo, scope: Scope, agent_id: str = "") -> AgentSchema:
    """The agent's (``agent_id``, else the scope's, else DEFAULT_AGENT) latest schema in the scope's client;
    before one is stored, the default schema of that agent, the one the architect stores on its first turn."""
    agent = agent_id or scope.agent_id or DEFAULT_AGENT
    return await schemas.latest(scope, agent) or default_schema(agent)
