"""Retriever over gRPC (distributed mode; the gateway's Fetch and anticipate's predictions), with a deadline
on every call, the caller's trace carried on, and status codes back to errors."""

from __future__ import annotations

import grpc

from acm.auth import SERVICE_TOKEN_HEADER, required_service_secret, service_token
from acm.convert import query_to_pb, retrieval_from_pb
from acm.domain.retrieved import Retrieval, RetrievalQuery
from acm.runtime import error_of_status
from acm.telemetry import traceparent_of_current_span
from acm.v1 import common_pb2, retrieve_pb2, retrieve_pb2_grpc


class GrpcRetriever:
    """Implements acm.ports.retriever.Retriever."""

    def __init__(self, channel: grpc.aio.Channel, timeout_s: float, service_token_secret: str | None = None) -> None:
        self._stub = retrieve_pb2_grpc.RetrieveStub(channel)
        self._timeout_s = timeout_s
        # Signs each call's scope (acm.auth.service_token); None: ACM_SERVICE_TOKEN_SECRET, required; "": unsigned.
        self._secret = required_service_secret() if service_token_secret is None else service_token_secret

    def _metadata(self, method: str, scope: common_pb2.Scope) -> tuple[tuple[str, str], ...]:
        # The trace goes on into retrieve: it starts its span from this header.
        metadata: tuple[tuple[str, str], ...] = (("traceparent", traceparent_of_current_span()),)
        if self._secret:
            metadata += ((SERVICE_TOKEN_HEADER, service_token(self._secret, method, scope)),)
        return metadata

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        request = query_to_pb(query)
        try:
            response: retrieve_pb2.RetrieveResponse = await self._stub.Retrieve(
                request, timeout=self._timeout_s, metadata=self._metadata("Retrieve", request.scope)
            )
        except grpc.aio.AioRpcError as exc:
            raise error_of_status(exc, "retrieve") from exc
        return retrieval_from_pb(response)

    async def keyword_ids(self, query: RetrievalQuery, limit: int) -> list[str]:
        request = retrieve_pb2.KeywordIdsRequest(query=query_to_pb(query), limit=limit)
        try:
            response: retrieve_pb2.KeywordIdsResponse = await self._stub.KeywordIds(
                request, timeout=self._timeout_s, metadata=self._metadata("KeywordIds", request.query.scope)
            )
        except grpc.aio.AioRpcError as exc:
            raise error_of_status(exc, "retrieve") from exc
        return list(response.memory_ids)
