"""Architect over gRPC (distributed mode: the gateway's agent RPCs, and every service's agent schemas through
acm.schemas.ArchitectSchemaSource), with a deadline on every call; status codes back to errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc

from acm.auth import call_metadata, required_service_secret
from acm.convert import info_from_pb, scope_to_pb
from acm.domain.scope import Scope
from acm.ports.architect import AgentDefinition, AgentInfo, AgentNotFoundError, SchemaRejectedError
from acm.runtime import error_of_status
from acm.v1 import architect_pb2_grpc, gateway_pb2

# The port's own types where it names them (acm.ports.architect); the other codes as every client maps them.
_KINDS = {grpc.StatusCode.NOT_FOUND: AgentNotFoundError, grpc.StatusCode.FAILED_PRECONDITION: SchemaRejectedError}
RequestWithScope = gateway_pb2.DefineAgentRequest | gateway_pb2.GetAgentRequest | gateway_pb2.ListAgentsRequest


class GrpcArchitect:
    def __init__(
        self,
        channel: grpc.aio.Channel,
        timeout_s: float,
        service_token_secret: str | None = None,
        wait_for_ready: bool = False,
    ) -> None:
        """``wait_for_ready``: a call waits for the architect up to its deadline instead of failing at once (for
        consumers reading schemas, which would rather wait than retry; a person's request fails fast)."""
        self._stub = architect_pb2_grpc.ArchitectStub(channel)
        self._timeout_s = timeout_s
        self._wait_for_ready = wait_for_ready
        # Signs each call's scope (acm.auth.service_token); None: ACM_SERVICE_TOKEN_SECRET, required; "": unsigned.
        self._secret = required_service_secret() if service_token_secret is None else service_token_secret

    async def _call(self, method: str, request: RequestWithScope) -> Any:
        """The stub's ``method`` with the deadline and the signed metadata; a failed status as its error."""
        try:
            return await getattr(self._stub, method)(
                request,
                timeout=self._timeout_s,
                metadata=call_metadata(self._secret, method, request.scope),
                wait_for_ready=self._wait_for_ready,
            )
        except grpc.aio.AioRpcError as exc:
            raise error_of_status(exc, "architect", _KINDS) from exc

    async def define_agent(self, scope: Scope, definition: AgentDefinition) -> AgentInfo:
        request = gateway_pb2.DefineAgentRequest(
            scope=scope_to_pb(scope),
            description=definition.description,
            overrides_json=definition.overrides_json,
            archetype=definition.archetype,
        )
        answer: gateway_pb2.AgentSchemaInfo = await self._call("DefineAgent", request)
        return info_from_pb(answer)

    async def get_agent(self, scope: Scope, version: int = 0) -> AgentInfo:
        request = gateway_pb2.GetAgentRequest(scope=scope_to_pb(scope), version=version)
        answer: gateway_pb2.AgentSchemaInfo = await self._call("GetAgent", request)
        return info_from_pb(answer)

    async def list_agents(self, scope: Scope) -> Sequence[AgentInfo]:
        request = gateway_pb2.ListAgentsRequest(scope=scope_to_pb(scope))
        answer: gateway_pb2.ListAgentsResponse = await self._call("ListAgents", request)
        return [info_from_pb(a) for a in answer.agents]
