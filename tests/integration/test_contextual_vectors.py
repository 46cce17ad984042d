"""A fact's vector is computed in the context of the question its turn answered (embedded stores, real embedder):
"We explored nature and roasted marshmallows." is found by a question about the camping trip it answered."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from acm import topics
from acm.adapters.embedders import build_embedder
from acm.adapters.tokenizer import TiktokenCounter
from acm.domain.facts import in_context
from acm.domain.models import Role, Turn
from acm.domain.scope import Scope
from acm.schemas import RepoSchemaSource
from acm.v1 import events_pb2
from acm_cli.embedded import DEV_CLIENT, EmbeddedAcm, EmbeddedSettings
from acm_ingest.events import BusEvents
from acm_ingest.usecases import IngestTurn

SESSION = Scope(DEV_CLIENT, "acme", "alice", "bot", "s1")
AT = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)


class CapturingBus:
    """Only what IngestTurn publishes is looked at here; consumers are not under test."""

    def __init__(self) -> None:
        self.published: list[tuple[str, bytes]] = []

    async def publish(self, topic: str, key: str, value: bytes) -> None:
        self.published.append((topic, value))


@pytest.fixture
async def acm(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    async with EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")) as running:
        yield running


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


async def test_a_reply_is_embedded_after_the_question_it_answers(acm: EmbeddedAcm) -> None:
    embedder = build_embedder(acm.settings.embedder)
    bus = CapturingBus()
    ingest = IngestTurn(
        memories=acm.stores["ingest"].memories,
        entities=acm.stores["ingest"].entities,
        cache=acm.cache,
        events=BusEvents(bus),  # type: ignore[arg-type]  # publish is all BusEvents uses
        embedder=embedder,
        tokens=TiktokenCounter(),
        schemas=RepoSchemaSource(acm.stores["architect"].schemas),
        audit=acm.stores["ingest"].audit,
    )
    said = [
        ("Caroline", "How was the camping trip with your family?"),
        ("Melanie", "We explored nature and roasted marshmallows."),
        ("Melanie", "The kids loved the museum downtown."),  # the same speaker again: no new question answered
    ]
    for i, (speaker, text) in enumerate(said):
        turn = Turn(f"t{i}", SESSION, Role.USER, text, AT + timedelta(seconds=i), metadata={"speaker": speaker})
        await ingest(turn, f"job{i}", "")
    written = {}
    for topic, value in bus.published:
        if topic == topics.MEMORIES:
            event = events_pb2.Envelope.FromString(value)
            written.update({m.text: list(m.embedding) for m in event.memories_written.memories if m.embedding})

    reply = "Melanie: We explored nature and roasted marshmallows."
    asked = "How was the camping trip with your family?"
    assert written[reply] == pytest.approx(embedder.embed([in_context(reply, asked)])[0], abs=1e-6)
    # A question stands alone, and a speaker continuing their own turn replies to nothing new.
    assert written[f"Caroline: {asked}"] == pytest.approx(embedder.embed([f"Caroline: {asked}"])[0], abs=1e-6)
    museum = "Melanie: The kids loved the museum downtown."
    assert written[museum] == pytest.approx(embedder.embed([museum])[0], abs=1e-6)
    # Which is the point: the reply is now close to a question about the camping trip.
    question = embedder.embed(["What did the family do on the camping trip?"])[0]
    assert _cosine(question, written[reply]) > _cosine(question, embedder.embed([reply])[0]) + 0.05
