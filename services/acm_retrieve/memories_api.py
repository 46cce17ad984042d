"""gRPC servicer for acm.v1.Memories (internal): the gateway's Memory API reads and a session's newest memories
(gateway, compact, anticipate), service token checked."""

from __future__ import annotations

import logging

import grpc

from acm.convert import scope_from_pb
from acm.memory_wire import layers_from_pb, query_from_pb, stored_to_pb, users_to_pb
from acm.servicing import InternalServicer
from acm.v1 import memories_pb2, memories_pb2_grpc
from acm_retrieve.memories import ReadMemories

log = logging.getLogger("acm.retrieve")


class MemoriesServicer(InternalServicer[ReadMemories], memories_pb2_grpc.MemoriesServicer, log=log):
    async def GetMemory(
        self, request: memories_pb2.GetMemoryRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.StoredMemory:
        async with self.serving(context, "GetMemory", request.scope):
            return stored_to_pb(await self._api.get(scope_from_pb(request.scope), request.memory_id))

    async def ListMemories(
        self, request: memories_pb2.ListMemoriesRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.ListMemoriesResponse:
        async with self.serving(context, "ListMemories", request.scope):
            page = await self._api.list_memories(scope_from_pb(request.scope), query_from_pb(request))
            return memories_pb2.ListMemoriesResponse(
                memories=[stored_to_pb(m) for m in page.memories], next_page_token=page.next_page_token
            )

    async def MemoryHistory(
        self, request: memories_pb2.MemoryHistoryRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.MemoryHistoryResponse:
        async with self.serving(context, "MemoryHistory", request.scope):
            versions = await self._api.history(scope_from_pb(request.scope), request.memory_id, request.slot)
            return memories_pb2.MemoryHistoryResponse(versions=[stored_to_pb(m) for m in versions])

    async def SessionMemories(
        self, request: memories_pb2.SessionMemoriesRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.SessionMemoriesResponse:
        async with self.serving(context, "SessionMemories", request.scope):
            found = await self._api.session_memories(
                scope_from_pb(request.scope), request.limit, layers_from_pb(request.layers)
            )
            return memories_pb2.SessionMemoriesResponse(memories=[stored_to_pb(m) for m in found])

    async def ListUsers(
        self, request: memories_pb2.ListUsersRequest, context: grpc.aio.ServicerContext
    ) -> memories_pb2.ListUsersResponse:
        async with self.serving(context, "ListUsers", request.scope):
            page = await self._api.users(request.scope.client_id, request.page_size, request.page_token)
            return users_to_pb(page)
