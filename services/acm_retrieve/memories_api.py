"""gRPC servicer for acm.v1.Memories (internal): the gateway's Memory API reads, service token checked."""

from __future__ import annotations

import logging

import grpc

from acm.auth import check_service_call, required_service_secret
from acm.convert import scope_from_pb
from acm.memory_wire import query_from_pb, stored_to_pb
from acm.runtime import abort_with_status
from acm.v1 import memories_pb2, memories_pb2_grpc
from acm_retrieve.memories import ReadMemories

log = logging.getLogger("acm.retrieve")


class MemoriesServicer(memories_pb2_grpc.MemoriesServicer):
    def __init__(self, read: ReadMemories, service_token_secret: str | None = None) -> None:
        """Each call must carry a service token (acm.auth) signed with ``service_token_secret``; None: the
        secret from ACM_SERVICE_TOKEN_SECRET, required."""
        self._read = read
        self._secret = required_service_secret() if service_token_secret is None else service_token_secret

    async def GetMemory(
        self, request: memories_pb2.GetMemoryRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.StoredMemory:
        await check_service_call(context, self._secret, "GetMemory", request.scope)
        try:
            return stored_to_pb(await self._read.get(scope_from_pb(request.scope), request.memory_id))
        except Exception as exc:
            await abort_with_status(context, exc, log)

    async def ListMemories(
        self, request: memories_pb2.ListMemoriesRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.ListMemoriesResponse:
        await check_service_call(context, self._secret, "ListMemories", request.scope)
        try:
            page = await self._read.list_memories(scope_from_pb(request.scope), query_from_pb(request))
            return memories_pb2.ListMemoriesResponse(
                memories=[stored_to_pb(m) for m in page.memories], next_page_token=page.next_page_token
            )
        except Exception as exc:
            await abort_with_status(context, exc, log)

    async def MemoryHistory(
        self, request: memories_pb2.MemoryHistoryRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.MemoryHistoryResponse:
        await check_service_call(context, self._secret, "MemoryHistory", request.scope)
        try:
            versions = await self._read.history(scope_from_pb(request.scope), request.memory_id, request.slot)
            return memories_pb2.MemoryHistoryResponse(versions=[stored_to_pb(m) for m in versions])
        except Exception as exc:
            await abort_with_status(context, exc, log)
