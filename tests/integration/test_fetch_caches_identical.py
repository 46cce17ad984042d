"""What issue 20's CPU cuts keep between Fetches (the edge store's search filters, the agent's latest schema, the
SQLite memory repo's reads) changes no result: on a fixed data set in an embedded ACM (real stores, real
embedder), every query's bundle with the caches warm is the bundle retrieval makes with them off. (A deleted
point, a new schema version and a changed memory through the caches: tests/integration/test_edge_filters.py,
test_kept_schemas.py, test_kept_reads.py.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acm.adapters.edge_store import EdgeVectorStore, Filters
from acm.adapters.embedders import build_embedder
from acm.adapters.sqlite_store import SQLITE, SqliteMemoryRepo, SqliteStore
from acm.adapters.tokenizer import TiktokenCounter
from acm.client import AcmClient
from acm.domain.scope import ALL_TIERS, Scope
from acm.schemas import KeptLatest, RepoSchemaSource
from acm.v1 import common_pb2, gateway_pb2
from acm_benchmarks.locomo import wait_until_indexed
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_retrieve.usecases import Bundle, Retrieve

SCOPE_PB = common_pb2.Scope(customer_id="acme", user_id="alice", agent_id="bot", session_id="s1")
READER = Scope("local", "acme", "alice", "bot")

TURNS = [
    ("Melanie", "I took the kids swimming at the lake last weekend."),
    ("Melanie", "Pottery class keeps me sane these days."),
    ("Caroline", "I have been reading a lot about adoption agencies."),
    ("Caroline", "My friend Melanie loves her vegetable garden."),
    ("Caroline", "The support group meets every Tuesday evening."),
    ("Melanie", "We are going camping in the mountains in June."),
    ("Caroline", "I painted a sunrise over the lake for my mentor."),
    ("Melanie", "My daughter started violin lessons."),
    ("Caroline", "The charity race raised money for mental health."),
    ("Melanie", "Caroline gave a talk at the school about her journey."),
]
QUERIES = [
    "What activities does Melanie do?",
    "What is Caroline researching?",
    "When does the support group meet?",
    "What did Caroline paint?",
    "Where is Melanie going camping?",
    "What instrument does Melanie's daughter play?",
    "What did Melanie do?",
    "charity race",
]


async def _seed(client: AcmClient) -> None:
    jobs = [(await client.ingest(SCOPE_PB, text, metadata={"speaker": who})).job_id for who, text in TURNS]
    done = [await client.wait_job(SCOPE_PB, job_id, timeout_s=60) for job_id in jobs]
    assert {d.status for d in done} == {gateway_pb2.JOB_STATUS_DONE}, [d.error for d in done]


@pytest.fixture
async def acm(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    settings = EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")
    async with EmbeddedAcm(settings) as running, AcmClient(f"127.0.0.1:{running.port}", running.api_key) as client:
        await _seed(client)
        await wait_until_indexed(running)
        yield running


def _seen(bundle: Bundle) -> tuple[list[tuple[str, int, float]], int, int]:
    return ([(r.memory.memory_id, r.tokens, r.score) for r in bundle.items], bundle.total_tokens, bundle.dropped)


async def _bundles(retrieve: Retrieve) -> list[tuple[list[tuple[str, int, float]], int, int]]:
    return [_seen(await retrieve(READER, q, 400, ALL_TIERS)) for q in QUERIES]


async def test_bundles_with_warm_caches_are_those_without(acm: EmbeddedAcm) -> None:
    vectors, kept, memories = acm.vectors, acm.stores["architect"].schemas, acm.stores["retrieve"].memories
    assert isinstance(vectors, EdgeVectorStore) and isinstance(kept, KeptLatest)
    assert isinstance(memories, SqliteMemoryRepo)
    embedder, tokens = build_embedder(acm.settings.embedder), TiktokenCounter()
    cached = Retrieve(memories, vectors, acm.graph, RepoSchemaSource(kept), embedder, tokens)
    await _bundles(cached)  # warms the filters, the schema and the kept reads
    hits = memories.kept.hits
    warm = await _bundles(cached)
    assert len(vectors._filters) > 1  # searches among a person's memories were kept too
    assert memories.kept.hits > hits  # and the memory reads
    store = acm.stores["retrieve"]._handle  # type: ignore[attr-defined]
    assert isinstance(store, SqliteStore)
    filters, vectors._filters = vectors._filters, Filters(max_entries=0)
    try:
        uncached = Retrieve(
            SqliteMemoryRepo(store.executor, SQLITE, decoded=0, kept=0),  # nothing kept
            vectors,
            acm.graph,
            RepoSchemaSource(kept._schemas),  # the store itself
            embedder,
            tokens,
        )
        assert await _bundles(uncached) == warm
    finally:
        vectors._filters = filters
    assert all(b[0] for b in warm)
