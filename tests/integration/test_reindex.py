"""`acm reindex` (acm.reindex): the vector index rebuilt from the stored memories with another embedder, on
small real stores (SQLite or Postgres for the memories, qdrant-edge or qdrant-client local mode for the
vectors): every fact gets the new model's vector, embedded as ingest does; turn previews stay out; an
interrupted run resumes; a model of another dimension resets the collection once."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import psycopg
import pytest

from acm.adapters.edge_store import EdgeVectorStore
from acm.adapters.postgres_store import PostgresStore
from acm.adapters.qdrant_store import QdrantVectorStore
from acm.adapters.sqlite_store import SqliteStore
from acm.domain.facts import in_context
from acm.domain.models import Layer, Memory, stable_id
from acm.domain.scope import Scope, Tier
from acm.ports.stores import MemoryRepo, VectorStore
from acm.reindex import Progress, other_models, reindex

T0 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
ALICE = Scope("c1", "acme", "alice", session_id="s1")
BOB = Scope("c1", "acme", "bob", session_id="s9")
QUESTION = "How was the camping trip?"


class FakeEmbedder:
    """Deterministic unit vectors from a hash of the text (and of the model's name: two models never agree)."""

    def __init__(self, name: str, dim: int = 8) -> None:
        self._name, self._dim = name, dim
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        out = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(f"{self._name}|{t}".encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self._dim)
            out.append((v / np.linalg.norm(v)).tolist())
        return out

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed([f"query: {t}" for t in texts])


def turn(scope: Scope, turn_id: str, text: str, minutes: int) -> Memory:
    owner = scope.owner(Tier.USER)
    return Memory(
        stable_id(owner.client_id, "turn", turn_id), owner, text, Layer.SHORT, "turn", (turn_id,),
        T0 + timedelta(minutes=minutes), session_id=scope.session_id,
    )  # fmt: skip


def fact(scope: Scope, name: str, text: str, turn_id: str, minutes: int, tier: Tier = Tier.USER) -> Memory:
    owner = scope.owner(tier)
    return Memory(
        stable_id("fact", name), owner, text, Layer.MID, "fact", (turn_id,), T0 + timedelta(minutes=minutes),
        session_id=scope.session_id,
    )  # fmt: skip


HIKE = fact(ALICE, "hike", "Melanie: We went on a hike.", "t2", 2)
FACTS = [
    fact(ALICE, "asked", f"Caroline: {QUESTION}", "t1", 1),
    HIKE,
    fact(ALICE, "policy", "Melanie: Refunds take five days.", "t2", 2, Tier.CUSTOMER),
    fact(BOB, "bob", "Bob: I live in Lisbon.", "b1", 1),
    *[fact(BOB, f"more{i}", f"Bob: fact number {i}.", f"b{i + 2}", i + 2) for i in range(6)],
]
TURNS = [
    turn(ALICE, "t1", f"Caroline: {QUESTION}", 1),
    turn(ALICE, "t2", "Melanie: We went on a hike. Refunds take five days.", 2),
    turn(BOB, "b1", "Bob: I live in Lisbon.", 1),
]


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.infra)])
async def memories(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryRepo]:
    if request.param == "sqlite":
        lite = await SqliteStore.open(tmp_path / "acm.db")
        await lite.memories.upsert([*TURNS, *FACTS])
        yield lite.memories
        await lite.close()
        return
    dsn: str = request.getfixturevalue("postgres_dsn")
    schema = f"reindex_{uuid.uuid4().hex[:12]}"
    pg = await PostgresStore.open(dsn, schema=schema)
    try:
        await pg.memories.upsert([*TURNS, *FACTS])
        yield pg.memories
    finally:
        await pg.close()
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(params=["edge", "qdrant-local"])
async def vectors(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[VectorStore]:
    store: VectorStore = (
        EdgeVectorStore(tmp_path / "edge")
        if request.param == "edge"
        else QdrantVectorStore.from_url(f"qdrant-local://{tmp_path / 'qdrant'}")
    )
    await store.ensure(8)
    yield store
    await store.close()


class Interrupted(Exception):
    pass


async def test_scan_pages_every_memory_by_id(memories: MemoryRepo) -> None:
    seen: list[str] = []
    after = ""
    while page := await memories.scan(after, 4):
        assert len(page) <= 4
        seen += [m.memory_id for m in page]
        after = page[-1].memory_id
    assert seen == sorted(m.memory_id for m in [*TURNS, *FACTS])


async def test_reindex_rebuilds_resumes_and_changes_dimension(memories: MemoryRepo, vectors: VectorStore) -> None:
    a = FakeEmbedder("model-a")
    done = await reindex(memories, vectors, a, batch=5)
    assert (done.embedded, done.kept, done.scanned, done.reset) == (len(FACTS), 0, len(FACTS) + len(TURNS), False)
    assert await vectors.count("model-a") == await vectors.count() == len(FACTS)  # turn previews stay out
    # Embedded as ingest does: a reply after the question the other speaker's turn before it asked.
    hike = await vectors.search(ALICE, a.embed([in_context(HIKE.text, QUESTION)])[0], 1, model="model-a")
    assert hike[0][0] == HIKE.memory_id and hike[0][1] == pytest.approx(1.0, abs=1e-5)
    again = await reindex(memories, vectors, a)
    assert (again.embedded, again.kept) == (0, len(FACTS))  # nothing to do

    # Another model, interrupted after its first page: the searches of each model see only their vectors.
    b = FakeEmbedder("model-b")

    def stop_after_first_page(p: Progress) -> None:
        raise Interrupted

    with pytest.raises(Interrupted):
        await reindex(memories, vectors, b, batch=5, report=stop_after_first_page)
    first = await vectors.count("model-b")
    assert 0 < first < len(FACTS) and await vectors.count("model-a") == len(FACTS) - first
    assert await other_models(vectors, "model-b") == len(FACTS) - first
    resumed = await reindex(memories, vectors, b, batch=5)
    assert (resumed.kept, resumed.embedded) == (first, len(FACTS) - first)
    assert sum(len(c) for c in b.calls) == len(FACTS)  # no fact embedded twice
    assert await vectors.count("model-b") == len(FACTS) and await vectors.count("model-a") == 0
    query = b.embed_query(["camping"])[0]
    assert {m for m, _ in await vectors.search(ALICE, query, 10, model="model-a")} == set()
    assert {m for m, _ in await vectors.search(BOB, query, 10, model="model-b")} == {
        f.memory_id for f in FACTS if f.owner.user_id == "bob" or f.owner.tier is Tier.CUSTOMER
    }

    # A model of another dimension: the collection is recreated, once.
    wide = FakeEmbedder("model-c", dim=16)
    done = await reindex(memories, vectors, wide, batch=3)
    assert done.reset and done.expected == len(FACTS) and done.embedded == len(FACTS)
    assert await vectors.count() == await vectors.count("model-c") == len(FACTS)
    again = await reindex(memories, vectors, wide)
    assert not again.reset and again.kept == len(FACTS)
    assert "model-c" in done.line() and f"{len(FACTS)} of ~{len(FACTS)}" in done.line()


async def test_the_command_on_an_embedded_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from acm.adapters.embedders import build_embedder
    from acm_cli import reindex as command

    lite = await SqliteStore.open(tmp_path / "acm.db")
    await lite.memories.upsert([*TURNS, *FACTS])
    await lite.close()
    old = EdgeVectorStore(tmp_path / "vectors")  # an index of MiniLM vectors, as before the change
    await old.ensure(384)
    minilm = build_embedder("all-minilm-l6-v2")
    await reindex((await SqliteStore.open(tmp_path / "acm.db")).memories, old, minilm)
    await old.close()

    monkeypatch.setenv("ACM_EMBEDDER", "bge-small-en-v1.5-int8")
    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers())
    args = parser.parse_args(["reindex", "--data-dir", str(tmp_path), "--batch", "4"])
    await args.run(args)
    assert f"reindex bge-small-en-v1.5-int8: {len(FACTS)} of ~{len(FACTS)} (100 %) indexed" in capsys.readouterr().err
    await args.run(args)  # resumable: nothing left to do
    assert f"(0 embedded, {len(FACTS)} already)" in capsys.readouterr().err

    index = EdgeVectorStore(tmp_path / "vectors")
    try:
        assert await index.count("bge-small-en-v1.5-int8") == await index.count() == len(FACTS)
        bge = build_embedder("bge-small-en-v1.5-int8")
        [query] = bge.embed_query(["Which city does Bob live in?"])
        best = await index.search(BOB, query, 1, model="bge-small-en-v1.5-int8")
        assert best[0][0] == stable_id("fact", "bob")
    finally:
        await index.close()
    with pytest.raises(ValueError, match="no embedded ACM data"):
        await args.run(parser.parse_args(["reindex", "--data-dir", str(tmp_path / "nothing")]))
