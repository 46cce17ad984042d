"""How the gateway asks for memories: in-process in embedded mode, over gRPC in distributed mode."""

from __future__ import annotations

from typing import Protocol

from acm.domain.retrieved import Retrieval, RetrievalQuery


class Retriever(Protocol):
    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        """Raises ValueError for an invalid query (encoding, budget)."""
