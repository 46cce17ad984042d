"""The Architect API: one implementation, served over gRPC and called in-process by the embedded gateway."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import grpc

from acm.convert import info_to_pb, scope_from_pb
from acm.domain.errors import InvalidRequest
from acm.domain.schema import AgentSchema
from acm.domain.scope import Scope
from acm.ports.architect import AgentDefinition, AgentInfo
from acm.servicing import InternalServicer
from acm.v1 import architect_pb2_grpc, gateway_pb2
from acm_architect.usecases import DefineAgent, GetAgent, ListAgents, schema_json

log = logging.getLogger("acm.architect")


def info(schema: AgentSchema, rationale: str = "") -> AgentInfo:
    return AgentInfo(schema.agent_id, schema.version, schema.archetype, schema_json(schema), rationale)


class ArchitectApi:
    """Implements acm.ports.architect.Architect."""

    def __init__(self, define: DefineAgent, get: GetAgent, list_agents: ListAgents) -> None:
        self._define = define
        self._get = get
        self._list = list_agents

    async def define_agent(self, scope: Scope, definition: AgentDefinition) -> AgentInfo:
        if not scope.agent_id:
            raise InvalidRequest("scope.agent_id is required: it names the agent being defined")
        d = definition
        defined = await self._define(scope, d.description, d.overrides_json, d.archetype)
        return info(defined.schema, defined.rationale)

    async def get_agent(self, scope: Scope, version: int = 0) -> AgentInfo:
        return info(await self._get(scope, version))

    async def list_agents(self, scope: Scope) -> Sequence[AgentInfo]:
        return [info(s) for s in await self._list(scope)]


class ArchitectServicer(InternalServicer[ArchitectApi], architect_pb2_grpc.ArchitectServicer, log=log):
    async def DefineAgent(
        self, request: gateway_pb2.DefineAgentRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.AgentSchemaInfo:
        async with self.serving(context, "DefineAgent", request.scope):
            definition = AgentDefinition(request.description, request.overrides_json, request.archetype)
            return info_to_pb(await self._api.define_agent(scope_from_pb(request.scope), definition))

    async def GetAgent(
        self, request: gateway_pb2.GetAgentRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.AgentSchemaInfo:
        async with self.serving(context, "GetAgent", request.scope):
            return info_to_pb(await self._api.get_agent(scope_from_pb(request.scope), request.version))

    async def ListAgents(
        self, request: gateway_pb2.ListAgentsRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ListAgentsResponse:
        async with self.serving(context, "ListAgents", request.scope):
            agents = await self._api.list_agents(scope_from_pb(request.scope))
            return gateway_pb2.ListAgentsResponse(agents=[info_to_pb(a) for a in agents])
