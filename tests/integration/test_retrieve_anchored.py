"""Retrieval anchored on the entities a query names (embedded stores, real embedder): what a person said
and what was said about them is searched by the question's meaning, apart from everything else."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acm.adapters.embedders import build_embedder
from acm.adapters.tokenizer import TiktokenCounter
from acm.client import AcmClient
from acm.domain.retrieval import preset
from acm.domain.scope import ALL_TIERS, Scope
from acm.schemas import RepoSchemaSource
from acm.v1 import common_pb2, gateway_pb2
from acm_benchmarks.locomo import wait_until_indexed
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_retrieve.usecases import Retrieve

SCOPE_PB = common_pb2.Scope(customer_id="acme", user_id="alice", agent_id="bot", session_id="s1")
READER = Scope("local", "acme", "alice", "bot")
OTHER_PB = common_pb2.Scope(customer_id="acme", user_id="bob", agent_id="bot", session_id="s1")

TURNS = [
    ("Melanie", "I took the kids swimming at the lake."),
    ("Melanie", "Pottery class keeps me sane these days."),
    ("Caroline", "I have been reading a lot about adoption agencies."),
    ("Caroline", "My friend Melanie loves her vegetable garden."),
    ("Caroline", "The support group meets every Tuesday evening."),
    # Caroline's words match the question better than anything Melanie said.
    ("Caroline", "The community center lists its activities for the summer."),
    ("Caroline", "Group activities help me feel less alone."),
    ("Caroline", "I want to partake in more activities outdoors."),
    ("Caroline", "Which activities suit a beginner best?"),
    ("Caroline", "Art activities at the shelter were a hit."),
    ("Caroline", "I wrote a list of activities to try this year."),
]


@pytest.fixture
async def acm(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    async with EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")) as running:
        async with AcmClient(f"127.0.0.1:{running.port}", running.api_key) as client:
            for scope, turns in ((SCOPE_PB, TURNS), (OTHER_PB, [("Melanie", "I collect vintage stamps.")])):
                accepted = [await client.ingest(scope, text, metadata={"speaker": who}) for who, text in turns]
                for a in accepted:
                    job = await client.wait_job(scope, a.job_id, timeout_s=60)
                    assert job.status == gateway_pb2.JOB_STATUS_DONE, job.error
        await wait_until_indexed(running)
        yield running


def _retrieve(acm: EmbeddedAcm) -> Retrieve:
    embedder = build_embedder(acm.settings.embedder)
    return Retrieve(
        acm.stores["retrieve"].memories,
        acm.vectors,
        acm.graph,
        RepoSchemaSource(acm.stores["architect"].schemas),
        embedder,
        TiktokenCounter(),
    )


async def test_the_anchor_is_what_the_person_said_and_what_was_said_about_them(acm: EmbeddedAcm) -> None:
    retrieve = _retrieve(acm)
    about = await retrieve._about_entities(READER, "What does Melanie do for fun?", ALL_TIERS, preset("balanced"))
    texts = {m.text for m in await acm.stores["retrieve"].memories.get(READER, about)}
    assert texts == {
        "Melanie: I took the kids swimming at the lake.",
        "Melanie: Pottery class keeps me sane these days.",
        "Caroline: My friend Melanie loves her vegetable garden.",
    }  # not Caroline's own facts, and never the other user's Melanie
    assert await retrieve._about_entities(READER, "What is the weather like?", ALL_TIERS, preset("balanced")) == []


async def test_what_the_named_person_did_outranks_other_peoples_matching_words(acm: EmbeddedAcm) -> None:
    bundle = await _retrieve(acm)(READER, "What activities does Melanie partake in?", 2000, ALL_TIERS)
    texts = [r.memory.text for r in bundle.items]
    assert texts.index("Melanie: I took the kids swimming at the lake.") < 3
    assert "Melanie: I collect vintage stamps." not in texts
