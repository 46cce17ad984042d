"""Retriever over gRPC for the anticipate process (distributed mode), with a deadline on every call."""

from __future__ import annotations

import grpc

from acm.v1 import retrieve_pb2, retrieve_pb2_grpc


class GrpcRetriever:
    def __init__(self, channel: grpc.aio.Channel, timeout_s: float) -> None:
        self._stub = retrieve_pb2_grpc.RetrieveStub(channel)
        self._timeout_s = timeout_s

    async def retrieve(self, request: retrieve_pb2.RetrieveRequest) -> retrieve_pb2.RetrieveResponse:
        response: retrieve_pb2.RetrieveResponse = await self._stub.Retrieve(request, timeout=self._timeout_s)
        return response
