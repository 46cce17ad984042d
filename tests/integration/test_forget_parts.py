"""A Forget's job is DONE only once every service a Fetch reads from erased its share (issue 19): ingest (the
memories and the graph) and retrieve (its copy of the memories, the vectors, the pools) each report a part, and the
gateway marks the job DONE when both did. Embedded, with retrieve's erasure made slow so that ingest's part comes
first: the job stays PENDING meanwhile, and once it is DONE nothing of the forgotten user is in retrieve's copy or
its vectors, and a Fetch returns none of it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acm.client import AcmClient
from acm.domain.scope import ForgetLevel, Scope
from acm.job_events import PART_PREFIX
from acm.v1 import common_pb2, gateway_pb2
from acm_benchmarks.locomo import wait_until_indexed
from acm_cli.embedded import DEV_CLIENT, EmbeddedAcm, EmbeddedSettings
from acm_retrieve.projection import MemoryProjection

ALICE = common_pb2.Scope(customer_id="acme", user_id="alice", agent_id="bot", session_id="s1")
BOB = common_pb2.Scope(customer_id="acme", user_id="bob", agent_id="bot", session_id="s2")
RETRIEVE_ERASES_AFTER_S = 1.5


@pytest.fixture
async def acm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[EmbeddedAcm]:
    erase = MemoryProjection.forget

    async def slow(self: MemoryProjection, scope: Scope, level: ForgetLevel) -> dict[str, int]:
        await asyncio.sleep(RETRIEVE_ERASES_AFTER_S)  # retrieve's consumer lags behind ingest's
        return await erase(self, scope, level)

    monkeypatch.setattr(MemoryProjection, "forget", slow)  # before start: the handler binds it at register
    async with EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")) as running:
        yield running


async def _say(client: AcmClient, scope: common_pb2.Scope, text: str) -> None:
    job = await client.wait_job(scope, (await client.ingest(scope, text)).job_id, timeout_s=60)
    assert job.status == gateway_pb2.JOB_STATUS_DONE, job.error


async def test_a_forget_is_done_only_once_retrieve_erased_its_copy_and_vectors_too(acm: EmbeddedAcm) -> None:
    copy, vectors = acm.stores["retrieve"].memories, acm.vectors
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client:
        for text in ("My sister Jane adopted a puppy called Biscuit.", "I live in Paris with my partner Sam."):
            await _say(client, ALICE, text)
        await _say(client, BOB, "I keep my sailing boat in Zanzibar.")
        await wait_until_indexed(acm)
        stored = await copy.scan("", 10_000)
        alice = [m.memory_id for m in stored if m.owner.user_id == "alice"]
        bob = [m.memory_id for m in stored if m.owner.user_id == "bob"]
        assert alice and bob
        assert await vectors.models_of(alice)  # her facts are searched by vector

        job_id = await client.forget(ALICE, "user")
        seen: list[gateway_pb2.Job] = []
        deadline = time.monotonic() + 60
        while not seen or seen[-1].status == gateway_pb2.JOB_STATUS_PENDING:
            assert time.monotonic() < deadline, "the forget job never finished"
            seen.append(await client.get_job(ALICE, job_id))
            await asyncio.sleep(0.02)
        done = seen[-1]
        # The moment it is DONE: nothing of alice in retrieve's copy or its vectors; bob's stay.
        assert await copy.get(Scope(DEV_CLIENT, "acme", "alice", "bot", "s1"), alice) == []
        remaining = {m.memory_id for m in await copy.scan("", 10_000)}
        assert not remaining & set(alice)
        assert set(bob) <= remaining
        assert await vectors.models_of(alice) == {}
        assert done.status == gateway_pb2.JOB_STATUS_DONE
        assert done.counts["memories_erased"] == len(alice)
        assert not any(k.startswith(PART_PREFIX) for k in done.counts)
        # Ingest's part came first: the job waited, pending, for retrieve's.
        waiting = [dict(j.counts) for j in seen if j.status == gateway_pb2.JOB_STATUS_PENDING]
        assert any(c.get(f"{PART_PREFIX}ingest") == 1 and c.get(f"{PART_PREFIX}retrieve") == 0 for c in waiting)

        gone = await client.fetch(ALICE, "Where do I live? Biscuit puppy Paris", budget_tokens=500)
        assert not gone.memories
        kept = await client.fetch(BOB, "Where is my sailing boat?", budget_tokens=500)
        assert any("Zanzibar" in m.text for m in kept.memories)
