"""Registering agents: the first turn of an unknown agent gives it the default schema, once."""

from __future__ import annotations

from dataclasses import dataclass

from acm import topics
from acm.domain.schema import DEFAULT_AGENT, AgentSchema, default_schema
from acm.domain.scope import Scope
from acm.envelopes import envelope
from acm.ports.bus import EventBus
from acm.ports.stores import SchemaRepo


@dataclass
class EnsureAgent:
    schemas: SchemaRepo
    bus: EventBus

    async def __call__(self, scope: Scope, traceparent: str = "") -> AgentSchema:
        agent_id = scope.agent_id or DEFAULT_AGENT
        current = await self.schemas.latest(scope, agent_id)
        if current is not None:
            return current
        schema = default_schema(agent_id)
        await self.schemas.put(scope.client_id, schema)
        event = envelope(scope, traceparent=traceparent)
        event.schema_changed.agent_id = agent_id
        event.schema_changed.version = schema.version
        await self.bus.publish(topics.SCHEMAS, f"{scope.client_id}/{agent_id}", event.SerializeToString())
        return schema
