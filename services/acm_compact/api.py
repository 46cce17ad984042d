"""The Compact API: one implementation, served over gRPC and called in-process by the embedded gateway."""

from __future__ import annotations

import logging

import grpc

from acm.convert import compaction_to_pb, scope_from_pb
from acm.domain.compaction.record import CompactionRecord
from acm.domain.errors import InvalidRequest, NotFound
from acm.domain.scope import Scope, check_id
from acm.paging import page_after, page_size, position_token
from acm.ports.compactor import CompactionsPage, StoredWorkingMemory
from acm.read.session import SessionNotFound
from acm.servicing import InternalServicer
from acm.v1 import compact_pb2, compact_pb2_grpc, gateway_pb2
from acm.working_wire import compactions_to_pb, stored_working_to_pb
from acm_compact.usecases import CompactSession, ReadWorkingMemory

log = logging.getLogger("acm.compact")


class CompactApi:
    """Implements acm.ports.compactor.Compactor."""

    def __init__(self, compact: CompactSession, read: ReadWorkingMemory) -> None:
        self._compact = compact
        self._read = read

    async def compact(self, scope: Scope, budget_tokens: int = 0) -> CompactionRecord:
        if not scope.session_id:
            raise InvalidRequest("Compact needs scope.session_id")
        if budget_tokens < 0:
            raise InvalidRequest(f"budget_tokens must be ≥ 0 (got {budget_tokens})")
        try:
            record, _ = await self._compact(scope, budget_tokens)
        except SessionNotFound as exc:
            raise NotFound(str(exc)) from None
        return record

    async def working_memory(self, scope: Scope) -> StoredWorkingMemory:
        return await self._read.working_memory(scope)

    async def compactions(self, client_id: str, asked: int, page_token: str) -> CompactionsPage:
        size = page_size(asked)
        # One more than the page: whether another page follows, without an empty last page.
        found = await self._read.working.of_client(client_id, size + 1, page_after(page_token))
        if len(found) <= size:
            return CompactionsPage(found)
        last = found[size - 1][1]
        return CompactionsPage(found[:size], position_token(last.created_at, last.compaction_id))


class CompactServicer(InternalServicer[CompactApi], compact_pb2_grpc.CompactServicer, log=log):
    async def Compact(
        self, request: gateway_pb2.CompactRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.CompactResponse:
        async with self.serving(context, "Compact", request.scope):
            record = await self._api.compact(scope_from_pb(request.scope), request.budget_tokens)
            return gateway_pb2.CompactResponse(compaction=compaction_to_pb(record))

    async def GetWorkingMemory(
        self, request: compact_pb2.GetWorkingMemoryRequest, context: grpc.aio.ServicerContext
    ) -> compact_pb2.GetWorkingMemoryResponse:
        async with self.serving(context, "GetWorkingMemory", request.scope):
            return stored_working_to_pb(await self._api.working_memory(scope_from_pb(request.scope)))

    async def ListCompactions(
        self, request: gateway_pb2.ListCompactionsRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ListCompactionsResponse:
        async with self.serving(context, "ListCompactions", request.scope):
            check_id("scope.client_id", request.scope.client_id)
            page = await self._api.compactions(request.scope.client_id, request.page_size, request.page_token)
            return compactions_to_pb(page)
