"""How the gateway asks for memories: in-process in embedded mode, over gRPC in distributed mode."""

from __future__ import annotations

from typing import Protocol

from acm.v1 import retrieve_pb2


class Retriever(Protocol):
    async def retrieve(self, request: retrieve_pb2.RetrieveRequest) -> retrieve_pb2.RetrieveResponse:
        """Raises ValueError for an invalid request (scope, tiers, encoding)."""
