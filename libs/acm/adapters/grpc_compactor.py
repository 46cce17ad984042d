"""Compactor over gRPC (distributed mode; the gateway's Compact RPC), with a deadline on every call, the
caller's trace carried on, and status codes back to errors."""

from __future__ import annotations

import grpc

from acm.auth import SERVICE_TOKEN_HEADER, required_service_secret, service_token
from acm.convert import compaction_from_pb, scope_to_pb
from acm.domain.compaction.record import CompactionRecord
from acm.domain.scope import Scope
from acm.runtime import error_of_status
from acm.telemetry import traceparent_of_current_span
from acm.v1 import compact_pb2_grpc, gateway_pb2


class GrpcCompactor:
    """Implements acm.ports.compactor.Compactor."""

    def __init__(self, channel: grpc.aio.Channel, timeout_s: float, service_token_secret: str | None = None) -> None:
        self._stub = compact_pb2_grpc.CompactStub(channel)
        self._timeout_s = timeout_s
        # Signs each call's scope (acm.auth.service_token); None: ACM_SERVICE_TOKEN_SECRET, required; "": unsigned.
        self._secret = required_service_secret() if service_token_secret is None else service_token_secret

    async def compact(self, scope: Scope, budget_tokens: int = 0) -> CompactionRecord:
        request = gateway_pb2.CompactRequest(scope=scope_to_pb(scope), budget_tokens=budget_tokens)
        metadata: tuple[tuple[str, str], ...] = (("traceparent", traceparent_of_current_span()),)
        if self._secret:
            metadata += ((SERVICE_TOKEN_HEADER, service_token(self._secret, "Compact", request.scope)),)
        try:
            response: gateway_pb2.CompactResponse = await self._stub.Compact(
                request, timeout=self._timeout_s, metadata=metadata
            )
        except grpc.aio.AioRpcError as exc:
            raise error_of_status(exc, "compact") from exc
        return compaction_from_pb(response.compaction)
