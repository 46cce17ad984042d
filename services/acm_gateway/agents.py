"""The gateway's agent-schema use cases: the caller's client is put in the scope, then the architect
answers (in-process in embedded mode, over gRPC in distributed mode)."""

from __future__ import annotations

from dataclasses import dataclass

from acm.convert import scope_to_pb
from acm.domain.errors import InvalidRequest
from acm.domain.scope import Scope
from acm.ports.architect import Architect
from acm.v1 import gateway_pb2


@dataclass
class Agents:
    architect: Architect

    async def define(self, scope: Scope, request: gateway_pb2.DefineAgentRequest) -> gateway_pb2.AgentSchemaInfo:
        if not scope.agent_id:
            raise InvalidRequest("scope.agent_id is required: it names the agent being defined")
        checked = gateway_pb2.DefineAgentRequest()
        checked.CopyFrom(request)
        checked.scope.CopyFrom(scope_to_pb(scope))
        return await self.architect.define_agent(checked)

    async def get(self, scope: Scope, request: gateway_pb2.GetAgentRequest) -> gateway_pb2.AgentSchemaInfo:
        return await self.architect.get_agent(
            gateway_pb2.GetAgentRequest(scope=scope_to_pb(scope), version=request.version)
        )

    async def list(self, scope: Scope) -> gateway_pb2.ListAgentsResponse:
        return await self.architect.list_agents(gateway_pb2.ListAgentsRequest(scope=scope_to_pb(scope)))
