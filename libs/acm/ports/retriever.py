"""How the gateway asks for memories: in-process in embedded mode, over gRPC in distributed mode."""

from __future__ import annotations

from typing import Protocol

from acm.domain.retrieved import Retrieval, RetrievalQuery


class Retriever(Protocol):
    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        """Raises ValueError for an invalid query (encoding, budget)."""

    async def keyword_ids(self, query: RetrievalQuery, limit: int) -> list[str]:
        """The ids of the ``limit`` memories the full retrieval's keyword channel ranks first for the query's
        text, in its scope and tiers, best first: full-text match only, no embedding (a few ms)."""
