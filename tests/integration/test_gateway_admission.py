"""Through the real gateway over gRPC: with one Fetch allowed at a time and none waiting, a concurrent burst
gets RESOURCE_EXHAUSTED (saying to retry with backoff) for all but the one it serves, at once, and the
gateway serves Fetches again as soon as the slot frees."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from acm.adapters.embedded_bus import EmbeddedBus
from acm.adapters.memory_cache import MemoryCache
from acm.auth import create_api_key
from acm.bootstrap import open_relational
from acm.client import AcmClient
from acm.domain.retrieved import Retrieval, RetrievalQuery
from acm.schemas import RepoSchemaSource
from acm.v1 import common_pb2
from acm_gateway.app import build_server, build_servicer
from tests.support.gateway import gateway_settings

SCOPE = common_pb2.Scope(customer_id="acme", user_id="alice")  # no session: Fetch asks the retriever
BURST = 6


class GatedRetriever:
    """Answers nothing found, each call once ``gate`` is open; counts the calls it got."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        self.calls = 0

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        self.calls += 1
        self.entered.set()
        await self.gate.wait()
        return Retrieval(items=[], total_tokens=0, dropped=0)

    async def keyword_ids(self, query: RetrievalQuery, limit: int) -> list[str]:
        return []


@dataclass
class Stack:
    addr: str
    secret: str
    retriever: GatedRetriever


@pytest.fixture
async def stack(tmp_path: Path) -> AsyncIterator[Stack]:
    db = f"sqlite:///{tmp_path / 'acm.db'}"
    settings = gateway_settings(db).model_copy(update={"fetch_max_in_flight": 1, "fetch_max_queued": 0})
    rel = await open_relational(db)
    bus = EmbeddedBus(tmp_path / "bus.db")  # never started: Fetch publishes nothing
    retriever = GatedRetriever()
    gateway = build_server(
        build_servicer(rel, bus, retriever, MemoryCache(), settings, RepoSchemaSource(rel.schemas)), "127.0.0.1:0"
    )
    await gateway.start()
    try:
        _, secret = await create_api_key(rel.api_keys, "c1", "test")
        yield Stack(f"127.0.0.1:{gateway.port}", secret, retriever)
    finally:
        await gateway.stop()
        await bus.stop()
        await rel.close()


async def test_a_burst_beyond_the_limit_is_refused_with_resource_exhausted_and_the_rest_served(stack: Stack) -> None:
    async with AcmClient(stack.addr, stack.secret) as client:
        first = asyncio.create_task(client.fetch(SCOPE, "where do I work?"))
        await asyncio.wait_for(stack.retriever.entered.wait(), 10)  # it holds the one slot
        burst = await asyncio.wait_for(
            asyncio.gather(*(client.fetch(SCOPE, f"question {i}") for i in range(BURST)), return_exceptions=True),
            10,  # refused at once, while the first is still running
        )
        assert not first.done()
        assert all(isinstance(r, grpc.aio.AioRpcError) for r in burst), burst
        errors = [r for r in burst if isinstance(r, grpc.aio.AioRpcError)]
        assert {e.code() for e in errors} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
        assert all("retry with exponential backoff" in (e.details() or "") for e in errors)
        stack.retriever.gate.set()
        served = await first
        assert served.budget_tokens > 0
        assert stack.retriever.calls == 1  # the refused calls never reached retrieval
        again = await client.fetch(SCOPE, "and now?")  # the slot came back
        assert again.budget_tokens > 0 and stack.retriever.calls == 2
