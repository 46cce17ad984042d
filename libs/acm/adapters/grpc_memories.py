"""MemoryReader over gRPC (distributed mode: the gateway's Memory API reads, and a session's newest memories
for the gateway, compact and anticipate; retrieve serves both), with a deadline on every call, a service
token, the caller's trace carried on, and status codes back to errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc
from google.protobuf.message import Message

from acm.auth import SERVICE_TOKEN_HEADER, required_service_secret, service_token
from acm.convert import LAYER_TO_PB, scope_to_pb
from acm.domain.models import ALL_LAYERS, Layer, Memory
from acm.domain.scope import Scope
from acm.memory_wire import query_to_pb, stored_from_pb, users_from_pb
from acm.ports.memories import MemoryPage, MemoryQuery, UsersPage
from acm.runtime import error_of_status
from acm.telemetry import traceparent_of_current_span
from acm.v1 import common_pb2, memories_pb2, memories_pb2_grpc

R = TypeVar("R", bound=Message)


class GrpcMemoryReader:
    """Implements acm.ports.memories.MemoryReader."""

    def __init__(self, channel: grpc.aio.Channel, timeout_s: float, service_token_secret: str | None = None) -> None:
        self._stub = memories_pb2_grpc.MemoriesStub(channel)
        self._timeout_s = timeout_s
        # Signs each call's scope (acm.auth.service_token); None: ACM_SERVICE_TOKEN_SECRET, required; "": unsigned.
        self._secret = required_service_secret() if service_token_secret is None else service_token_secret

    async def _call(
        self, method: str, rpc: Callable[..., Awaitable[R]], request: Message, scope: common_pb2.Scope
    ) -> R:
        metadata: tuple[tuple[str, str], ...] = (("traceparent", traceparent_of_current_span()),)
        if self._secret:
            metadata += ((SERVICE_TOKEN_HEADER, service_token(self._secret, method, scope)),)
        try:
            return await rpc(request, timeout=self._timeout_s, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            raise error_of_status(exc, "retrieve") from exc

    async def get(self, scope: Scope, memory_id: str) -> Memory:
        request = memories_pb2.GetMemoryRequest(scope=scope_to_pb(scope), memory_id=memory_id)
        found = await self._call("GetMemory", self._stub.GetMemory, request, request.scope)
        return stored_from_pb(found, scope)

    async def users(self, client_id: str, page_size: int, page_token: str) -> UsersPage:
        request = memories_pb2.ListUsersRequest(
            scope=common_pb2.Scope(client_id=client_id), page_size=page_size, page_token=page_token
        )
        return users_from_pb(await self._call("ListUsers", self._stub.ListUsers, request, request.scope))

    async def list_memories(self, scope: Scope, query: MemoryQuery) -> MemoryPage:
        request = query_to_pb(scope, query)
        page = await self._call("ListMemories", self._stub.ListMemories, request, request.scope)
        return MemoryPage([stored_from_pb(m, scope) for m in page.memories], page.next_page_token)

    async def history(self, scope: Scope, memory_id: str = "", slot: str = "") -> list[Memory]:
        request = memories_pb2.MemoryHistoryRequest(scope=scope_to_pb(scope), memory_id=memory_id, slot=slot)
        found = await self._call("MemoryHistory", self._stub.MemoryHistory, request, request.scope)
        return [stored_from_pb(m, scope) for m in found.versions]

    async def session_memories(self, scope: Scope, limit: int, layers: tuple[Layer, ...] = ALL_LAYERS) -> list[Memory]:
        request = memories_pb2.SessionMemoriesRequest(
            scope=scope_to_pb(scope),
            limit=limit,
            layers=[] if set(layers) >= set(ALL_LAYERS) else [LAYER_TO_PB[x] for x in layers],
        )
        found = await self._call("SessionMemories", self._stub.SessionMemories, request, request.scope)
        return [stored_from_pb(m, scope) for m in found.memories]
