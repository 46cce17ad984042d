"""Anticipate builds a session's prefetch pool from retrieve's copy of the memories, so it must warm only once the
change is in that copy: retrieve publishes MemoriesIndexed after it applied (and made older pools stale), and
anticipate warms on that. Embedded, with retrieve's apply made slow: were anticipate to warm on acm.memories.v1
beside retrieve, its pool would be built from the copy before the write and made stale by retrieve's bump, with
nothing to rebuild it, and no Fetch would be served from the pool."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acm.client import AcmClient
from acm.domain.scope import Scope
from acm.v1 import common_pb2, gateway_pb2
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_retrieve.projection import MemoryChanges, MemoryProjection

SCOPE_PB = common_pb2.Scope(customer_id="acme", user_id="dora", agent_id="assistant", session_id="p1")
RETRIEVE_APPLIES_AFTER_S = 0.5


@pytest.fixture
async def acm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[EmbeddedAcm]:
    apply = MemoryProjection.apply

    async def slow(self: MemoryProjection, scope: Scope, changes: MemoryChanges) -> None:
        await asyncio.sleep(RETRIEVE_APPLIES_AFTER_S)  # retrieve's consumer lags behind the others
        await apply(self, scope, changes)

    monkeypatch.setattr(MemoryProjection, "apply", slow)
    async with EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")) as running:
        yield running


async def _served_from_pool(client: AcmClient, question: str) -> gateway_pb2.FetchResponse:
    for _ in range(120):  # up to 30 s for anticipate to warm the session
        answer = await client.fetch(SCOPE_PB, question, budget_tokens=500)
        if answer.from_prefetch:
            return answer
        await asyncio.sleep(0.25)
    raise AssertionError(f"no Fetch of {question!r} was served from the pool")


async def test_the_pool_is_built_after_the_write_reached_retrieves_copy(acm: EmbeddedAcm) -> None:
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client:
        for text in ("I live in Paris with my partner Sam.", "I live in Berlin now."):
            job = await client.wait_job(SCOPE_PB, (await client.ingest(SCOPE_PB, text)).job_id, timeout_s=60)
            assert job.status == gateway_pb2.JOB_STATUS_DONE
            answer = await _served_from_pool(client, "Where do I live?")
            city = text.split(" in ")[1].split()[0].rstrip(".")
            assert any(city in m.text for m in answer.memories), (city, [m.text for m in answer.memories])
