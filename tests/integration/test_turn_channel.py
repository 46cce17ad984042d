"""The turn channel end to end (embedded ACM, real embedder and stores): ingest embeds each turn whole beside its
sentences, retrieve stores it as a point hosted by the turn's first fact, under the turn model; a Forget takes
the turn points with the rest."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acm.adapters.embedders import build_embedder
from acm.client import AcmClient
from acm.domain.retrieval import turn_model, turn_point_id
from acm.domain.scope import ALL_TIERS, Scope
from acm.v1 import common_pb2, gateway_pb2
from acm_benchmarks.locomo import wait_until_indexed
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings

SCOPE_PB = common_pb2.Scope(customer_id="acme", user_id="alice", agent_id="bot", session_id="s1")
READER = Scope("local", "acme", "alice", "bot")
QUESTION = "What did Jon sign, and when does he get the keys?"
TURNS = [
    ("Jon", "Big news, everyone! Signed the papers this morning. The keys are ours on Friday."),
    ("Gina", "I painted the fence blue yesterday."),
    ("Jon", "The weather was lovely all week."),
    ("Jon", "My brother called me."),
    ("Gina", "Did you see the game last night?"),
]


@pytest.fixture
async def acm(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    settings = EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")
    async with EmbeddedAcm(settings) as running, AcmClient(f"127.0.0.1:{running.port}", running.api_key) as client:
        jobs = [(await client.ingest(SCOPE_PB, text, metadata={"speaker": who})).job_id for who, text in TURNS]
        done = [await client.wait_job(SCOPE_PB, job_id, timeout_s=60) for job_id in jobs]
        assert {job.status for job in done} == {gateway_pb2.JOB_STATUS_DONE}, [job.error for job in done]
        await wait_until_indexed(running)
        yield running


async def test_a_turn_is_one_point_hosted_by_its_first_fact_and_ranks_as_a_unit(acm: EmbeddedAcm) -> None:
    embedder = build_embedder(acm.settings.embedder)
    query = embedder.embed_query([QUESTION])[0]
    turns = await acm.vectors.search(READER, query, 10, ALL_TIERS, model=turn_model(embedder.name))
    assert len(turns) == len(TURNS)  # one point a turn, however many sentences it has
    hosts = await acm.stores["retrieve"].memories.get(READER, [turn_point_id(pid) for pid, _ in turns])
    by_id = {m.memory_id: m.text for m in hosts}
    first = by_id[turn_point_id(turns[0][0])]
    # The three-sentence turn about a house ranks first, as its first sentence, which alone says nothing of one.
    assert first == "Jon: Big news, everyone!"
    sentences = await acm.vectors.search(READER, query, 10, ALL_TIERS, model=embedder.name)
    assert not {pid for pid, _ in turns} & {pid for pid, _ in sentences}

    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client:
        await client.forget(SCOPE_PB, "user")
    await wait_until_indexed(acm)
    assert await acm.vectors.search(READER, query, 10, ALL_TIERS, model=turn_model(embedder.name)) == []
