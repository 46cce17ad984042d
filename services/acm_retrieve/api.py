"""The Retrieve API: one implementation, served over gRPC and called in-process by the embedded gateway."""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager
from datetime import UTC, datetime

import grpc
from opentelemetry import trace

from acm.convert import query_from_pb, retrieval_to_pb
from acm.domain.errors import InvalidRequest
from acm.domain.retrieved import Ranked, Retrieval, RetrievalQuery, RetrievedMemory
from acm.domain.timeparse import query_window
from acm.domain.tokens import ENCODINGS
from acm.servicing import InternalServicer
from acm.telemetry import context_from_traceparent
from acm.v1 import retrieve_pb2, retrieve_pb2_grpc
from acm_retrieve.usecases import Retrieve

_tracer = trace.get_tracer("acm.retrieve")
_log = logging.getLogger("acm.retrieve")


class RetrieveApi:
    """Implements acm.ports.retriever.Retriever."""

    def __init__(self, retrieve: Retrieve) -> None:
        self._retrieve = retrieve

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        if query.encoding not in ENCODINGS:
            raise InvalidRequest(f"encoding {query.encoding!r} is not supported; use one of {', '.join(ENCODINGS)}")
        if query.budget_tokens <= 0:
            raise InvalidRequest("budget_tokens must be positive")
        as_of = query.as_of or datetime.now(UTC)
        window = query_window(query.text, as_of) if query.text and not query.from_context else None
        bundle = await self._retrieve(query.scope, query.text, query.budget_tokens, query.tiers, query.encoding, window)
        items = [Ranked(RetrievedMemory.of(r.memory, r.tokens), r.score) for r in bundle.items]
        return Retrieval(items, bundle.total_tokens, bundle.dropped)

    async def keyword_ids(self, query: RetrievalQuery, limit: int) -> list[str]:
        if limit <= 0:
            raise InvalidRequest("limit must be positive")
        return await self._retrieve.keyword_ids(query.scope, query.text, limit, query.tiers)


def _server_span(context: grpc.aio.ServicerContext, method: str) -> AbstractContextManager[trace.Span]:
    """The call's span, a child of the caller's (its traceparent header)."""
    md = {k: v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}
    return _tracer.start_as_current_span(
        f"acm.v1.Retrieve/{method}",
        context=context_from_traceparent(md.get("traceparent", "")),
        kind=trace.SpanKind.SERVER,
    )


class RetrieveServicer(InternalServicer[RetrieveApi], retrieve_pb2_grpc.RetrieveServicer, log=_log):
    async def Retrieve(
        self, request: retrieve_pb2.RetrieveRequest, context: grpc.aio.ServicerContext
    ) -> retrieve_pb2.RetrieveResponse:
        async with self.serving(context, "Retrieve", request.scope):
            with _server_span(context, "Retrieve"):
                return retrieval_to_pb(await self._api.retrieve(query_from_pb(request)))

    async def KeywordIds(
        self, request: retrieve_pb2.KeywordIdsRequest, context: grpc.aio.ServicerContext
    ) -> retrieve_pb2.KeywordIdsResponse:
        async with self.serving(context, "KeywordIds", request.query.scope):
            with _server_span(context, "KeywordIds"):
                ids = await self._api.keyword_ids(query_from_pb(request.query), request.limit)
                return retrieve_pb2.KeywordIdsResponse(memory_ids=ids)
