"""How the gateway reaches the architect: in-process in embedded mode, over gRPC in distributed mode.
The requests' scopes are already authenticated (client set by the gateway)."""

from __future__ import annotations

from typing import Protocol

from acm.domain.errors import NotFound, Rejected
from acm.v1 import gateway_pb2


class AgentNotFoundError(NotFound):
    """No such agent (or version) in the caller's client."""


class SchemaRejectedError(Rejected):
    """A drafted schema could not be used; the previous version stays active."""


class Architect(Protocol):
    async def define_agent(self, request: gateway_pb2.DefineAgentRequest) -> gateway_pb2.AgentSchemaInfo:
        """Raises ValueError naming the field for an invalid schema, SchemaRejectedError for a rejected draft."""

    async def get_agent(self, request: gateway_pb2.GetAgentRequest) -> gateway_pb2.AgentSchemaInfo:
        """Raises AgentNotFoundError."""

    async def list_agents(self, request: gateway_pb2.ListAgentsRequest) -> gateway_pb2.ListAgentsResponse: ...
