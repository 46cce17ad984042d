"""Compactor over gRPC (distributed mode; the gateway's Compact RPC and its session context's working memory),
with a deadline on every call, the caller's trace carried on, and status codes back to errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc
from google.protobuf.message import Message

from acm.auth import SERVICE_TOKEN_HEADER, required_service_secret, service_token
from acm.convert import compaction_from_pb, scope_to_pb
from acm.domain.compaction.record import CompactionRecord
from acm.domain.errors import InternalFault
from acm.domain.scope import Scope
from acm.ports.compactor import CompactionsPage, StoredWorkingMemory
from acm.runtime import error_of_status
from acm.telemetry import traceparent_of_current_span
from acm.v1 import common_pb2, compact_pb2, compact_pb2_grpc, gateway_pb2
from acm.working_wire import compactions_from_pb, stored_working_from_pb

R = TypeVar("R", bound=Message)


class GrpcCompactor:
    """Implements acm.ports.compactor.Compactor."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        timeout_s: float,
        service_token_secret: str | None = None,
        read_timeout_s: float | None = None,
    ) -> None:
        """``timeout_s``: a compaction's deadline; ``read_timeout_s``: GetWorkingMemory's (None: ``timeout_s``),
        a read on a Fetch's path."""
        self._stub = compact_pb2_grpc.CompactStub(channel)
        self._timeout_s = timeout_s
        self._read_timeout_s = timeout_s if read_timeout_s is None else read_timeout_s
        # Signs each call's scope (acm.auth.service_token); None: ACM_SERVICE_TOKEN_SECRET, required; "": unsigned.
        self._secret = required_service_secret() if service_token_secret is None else service_token_secret

    async def _call(
        self,
        method: str,
        rpc: Callable[..., Awaitable[R]],
        request: Message,
        scope: common_pb2.Scope,
        timeout_s: float,
    ) -> R:
        metadata: tuple[tuple[str, str], ...] = (("traceparent", traceparent_of_current_span()),)
        if self._secret:
            metadata += ((SERVICE_TOKEN_HEADER, service_token(self._secret, method, scope)),)
        try:
            return await rpc(request, timeout=timeout_s, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            raise error_of_status(exc, "compact") from exc

    async def compact(self, scope: Scope, budget_tokens: int = 0) -> CompactionRecord:
        request = gateway_pb2.CompactRequest(scope=scope_to_pb(scope), budget_tokens=budget_tokens)
        response = await self._call("Compact", self._stub.Compact, request, request.scope, self._timeout_s)
        return compaction_from_pb(response.compaction)

    async def working_memory(self, scope: Scope) -> StoredWorkingMemory:
        request = compact_pb2.GetWorkingMemoryRequest(scope=scope_to_pb(scope))
        found = await self._call(
            "GetWorkingMemory", self._stub.GetWorkingMemory, request, request.scope, self._read_timeout_s
        )
        try:
            return stored_working_from_pb(found)
        except ValueError as exc:
            raise InternalFault(f"compact sent a malformed working memory: {exc}") from None

    async def compactions(self, client_id: str, page_size: int, page_token: str) -> CompactionsPage:
        request = gateway_pb2.ListCompactionsRequest(
            scope=common_pb2.Scope(client_id=client_id), page_size=page_size, page_token=page_token
        )
        found = await self._call(
            "ListCompactions", self._stub.ListCompactions, request, request.scope, self._read_timeout_s
        )
        return compactions_from_pb(client_id, found)
