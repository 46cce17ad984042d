"""The read side of a Fetch, composed: the session's context (acm.read.session_context) around the memories
(the prefetch pool when it can serve, acm.read.prefetching; else the full retrieval, in-process in embedded
mode and over gRPC to retrieve in distributed mode)."""

from __future__ import annotations

from dataclasses import dataclass

from acm.domain.bundle import ContextBundle
from acm.domain.retrieved import RetrievalQuery
from acm.domain.tokens import TokenCounter
from acm.ports.retriever import Retriever
from acm.ports.stores import Cache
from acm.read.kept_sessions import KeptSessions
from acm.read.prefetching import PrefetchingRetriever
from acm.read.session import LoadSession
from acm.read.session_context import SessionContext
from acm.read.warmup import WarmUp


@dataclass
class ReadSide:
    """Implements acm.ports.reader.ContextReader."""

    retriever: Retriever  # the full retrieval, or a PrefetchingRetriever around it
    session: SessionContext | None = None  # assembles a session's context when the scope names one
    warm_up: WarmUp | None = None  # acts on anticipate's PoolReady hints (with a pool and sessions only)

    async def fetch(self, request: RetrievalQuery) -> ContextBundle:
        if request.scope.session_id and self.session is not None:
            assembled = await self.session(request)
            if assembled is not None:
                return assembled
        answer = await self.retriever.retrieve(request)
        return ContextBundle(
            answer.items,
            answer.total_tokens,
            request.budget_tokens,
            answer.dropped,
            request.encoding,
            answer.from_prefetch,
        )


def read_side(retriever: Retriever, cache: Cache, tokens: TokenCounter, load: LoadSession | None) -> ReadSide:
    """The read side over ``retriever`` (the full retrieval, or a PrefetchingRetriever around it). ``load``:
    the session's owners (None: a Fetch in a session returns retrieved memories only). Warm-up needs both a
    pool and sessions to warm."""
    if load is None:
        return ReadSide(retriever)
    sessions = KeptSessions(load, cache)
    warm_up = WarmUp(retriever, sessions, tokens) if isinstance(retriever, PrefetchingRetriever) else None
    return ReadSide(retriever, SessionContext(retriever, tokens, sessions), warm_up)
