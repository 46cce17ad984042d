"""The gateway's agent-schema use cases: the caller's client is put in the scope, then the architect
answers (in-process in embedded mode, over gRPC in distributed mode)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from acm.domain.errors import InvalidRequest
from acm.domain.scope import Scope
from acm.ports.architect import AgentDefinition, AgentInfo, Architect


@dataclass
class Agents:
    architect: Architect

    async def define(self, scope: Scope, definition: AgentDefinition) -> AgentInfo:
        if not scope.agent_id:
            raise InvalidRequest("scope.agent_id is required: it names the agent being defined")
        return await self.architect.define_agent(scope, definition)

    async def get(self, scope: Scope, version: int) -> AgentInfo:
        return await self.architect.get_agent(scope, version)

    async def list(self, scope: Scope) -> Sequence[AgentInfo]:
        return await self.architect.list_agents(scope)
