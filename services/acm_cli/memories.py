"""The Memory API's calls for the CLI (and tests): one stub per gateway, the key in each call's metadata."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from acm.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc, memories_pb2


class MemoryCalls:
    def __init__(self, channel: grpc.aio.Channel, api_key: str, timeout_s: float = 30.0) -> None:
        self._stub = gateway_pb2_grpc.GatewayStub(channel)
        self._md = (("authorization", f"Bearer {api_key}"),)
        self._timeout_s = timeout_s

    async def get(self, scope: common_pb2.Scope, memory_id: str) -> memories_pb2.StoredMemory:
        request = memories_pb2.GetMemoryRequest(scope=scope, memory_id=memory_id)
        found: memories_pb2.StoredMemory = await self._stub.GetMemory(
            request, metadata=self._md, timeout=self._timeout_s
        )
        return found

    async def list_memories(self, request: memories_pb2.ListMemoriesRequest) -> memories_pb2.ListMemoriesResponse:
        page: memories_pb2.ListMemoriesResponse = await self._stub.ListMemories(
            request, metadata=self._md, timeout=self._timeout_s
        )
        return page

    async def history(
        self, scope: common_pb2.Scope, memory_id: str = "", slot: str = ""
    ) -> memories_pb2.MemoryHistoryResponse:
        request = memories_pb2.MemoryHistoryRequest(scope=scope, memory_id=memory_id, slot=slot)
        found: memories_pb2.MemoryHistoryResponse = await self._stub.MemoryHistory(
            request, metadata=self._md, timeout=self._timeout_s
        )
        return found

    async def update(self, scope: common_pb2.Scope, memory_id: str, text: str, source: str) -> gateway_pb2.MemoryJob:
        request = gateway_pb2.UpdateMemoryRequest(scope=scope, memory_id=memory_id, text=text, source=source)
        job: gateway_pb2.MemoryJob = await self._stub.UpdateMemory(request, metadata=self._md, timeout=self._timeout_s)
        return job

    async def delete(self, scope: common_pb2.Scope, memory_id: str) -> gateway_pb2.MemoryJob:
        request = gateway_pb2.DeleteMemoryRequest(scope=scope, memory_id=memory_id)
        job: gateway_pb2.MemoryJob = await self._stub.DeleteMemory(request, metadata=self._md, timeout=self._timeout_s)
        return job

    async def export(self, scope: common_pb2.Scope, page_size: int = 0) -> AsyncIterator[str]:
        """ExportUser's JSON lines, page after page."""
        token = ""
        while True:
            request = gateway_pb2.ExportUserRequest(scope=scope, page_size=page_size, page_token=token)
            page: gateway_pb2.ExportUserResponse = await self._stub.ExportUser(
                request, metadata=self._md, timeout=self._timeout_s
            )
            for line in page.jsonl.splitlines():
                yield line
            token = page.next_page_token
            if not token:
                return

    async def import_(self, scope: common_pb2.Scope, jsonl: str) -> gateway_pb2.MemoryJob:
        request = gateway_pb2.ImportUserRequest(scope=scope, jsonl=jsonl)
        job: gateway_pb2.MemoryJob = await self._stub.ImportUser(request, metadata=self._md, timeout=self._timeout_s)
        return job

    async def ingest_batch(
        self, scope: common_pb2.Scope, turns: list[common_pb2.Turn]
    ) -> gateway_pb2.IngestBatchResponse:
        request = gateway_pb2.IngestBatchRequest(scope=scope, turns=turns)
        accepted: gateway_pb2.IngestBatchResponse = await self._stub.IngestBatch(
            request, metadata=self._md, timeout=self._timeout_s
        )
        return accepted
