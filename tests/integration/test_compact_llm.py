"""The optional LLM summary goes through the same verifier: a draft that loses or invents a fact is never
swapped in (the deterministic summary is), a faithful draft is; a local_only agent never reaches the
endpoint. The endpoint is a real local HTTP server with scripted answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from acm.adapters.memory_cache import MemoryCache
from acm.adapters.openai_llm import OpenAiCompatibleLlm
from acm.adapters.tokenizer import TiktokenCounter
from acm.bootstrap import Relational, open_relational
from acm.domain.models import Layer, Memory, stable_id
from acm.domain.schema import default_schema
from acm.domain.scope import Scope, Tier
from acm.read.session import LoadSession
from acm.schemas import RepoSchemaSource
from acm_compact.usecases import CompactSession, ReadWorkingMemory
from tests.support.fake_llm import fake_llm

SCOPE = Scope("c1", "acme", "alice", agent_id="clerk", session_id="s1")
PO = "PO-20261028-0098"
T0 = datetime(2026, 10, 28, 9, 0, tzinfo=UTC)
TEXTS = [
    "user: Raise a purchase order for 40 laptops; we must stay under 130,000.00 CNY.",
    # What an ERP answers besides the business fields: compaction drops it, so compacting shrinks the session
    # (a compaction that does not shrink it is never swapped in).
    f'tool[erp.create_po]: {{"po_id": "{PO}", "amount": "125,000.00 CNY", "status": "pending_approval", '
    '"debug": {"sql": "INSERT INTO po (vendor_id, amount) VALUES ($1, $2) RETURNING po_id", "timings_ms": '
    '[3, 4, 1, 7, 2, 9, 4, 4, 6, 1, 3, 8]}, "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "node": "erp-db-7f9c"}',
    f"assistant: {PO} was created for 125,000.00 CNY.",
    "user: Thanks. What else is open?",
    "assistant: Nothing else is open right now.",
]


@pytest.fixture
async def rel(tmp_path: Path) -> AsyncIterator[Relational]:
    store = await open_relational(f"sqlite:///{tmp_path / 'acm.db'}")
    counter = TiktokenCounter()
    owner = SCOPE.owner(Tier.USER)
    await store.memories.upsert(
        [
            Memory(
                stable_id("turn", str(i)),
                owner,
                text,
                Layer.SHORT,
                "turn",
                (f"t{i}",),
                T0 + timedelta(minutes=i),
                agent_id="clerk",
                session_id="s1",
                token_count=counter.count(text),
            )
            for i, text in enumerate(TEXTS)
        ]
    )
    yield store
    await store.close()


async def _compactor(rel: Relational, url: str, local_only: bool) -> CompactSession:
    schema = default_schema("clerk")
    rules = replace(
        schema.compaction, budget_tokens=200, recent_turns_verbatim=2, target_ratio=0.3, local_only=local_only
    )
    await rel.schemas.put("c1", replace(schema, compaction=rules))
    load = LoadSession(rel.memories, ReadWorkingMemory(rel.working), RepoSchemaSource(rel.schemas), 100)
    return CompactSession(load, rel.working, MemoryCache(), TiktokenCounter(), OpenAiCompatibleLlm(url, "fake-model"))


async def test_an_unfaithful_draft_is_rejected_and_the_deterministic_summary_is_kept(rel: Relational) -> None:
    with fake_llm() as server:
        server.answers.append({"lines": [f"{PO} was approved for 99,000.00 CNY"]})  # invented amount, lost goal
        compactor = await _compactor(rel, server.url, local_only=False)
        record, memory = await compactor(SCOPE)
    assert len(server.requests) == 1
    assert record.verified and record.attempts == 2 and record.summariser == "deterministic"
    assert memory is not None and not any("99,000.00" in line for line in memory.episodes)
    assert (await rel.working.get(SCOPE)) == memory


async def test_a_faithful_draft_is_used(rel: Relational) -> None:
    faithful = [
        "user: Raise a purchase order for 40 laptops; we must stay under 130,000.00 CNY. → erp.create_po → "
        f"pending_approval: po_id={PO}, amount=125,000.00 CNY, status=pending_approval → assistant: {PO} was "
        "created for 125,000.00 CNY."
    ]
    with fake_llm() as server:
        server.answers.append({"lines": faithful})
        compactor = await _compactor(rel, server.url, local_only=False)
        record, memory = await compactor(SCOPE)
    assert record.verified and record.attempts == 1 and record.summariser == "fake-model"
    assert memory is not None and list(memory.episodes) == faithful


async def test_a_local_only_session_never_reaches_the_endpoint(rel: Relational) -> None:
    with fake_llm() as server:
        server.default = {"lines": ["should never be asked"]}
        compactor = await _compactor(rel, server.url, local_only=True)
        record, memory = await compactor(SCOPE)
    assert server.requests == []
    assert record.verified and record.summariser == "deterministic" and memory is not None


async def test_an_endpoint_failure_falls_back_and_is_counted(rel: Relational) -> None:
    with fake_llm() as server:
        server.default = 500
        compactor = await _compactor(rel, server.url, local_only=False)
        record, memory = await compactor(SCOPE)
    assert record.verified and record.summariser == "deterministic" and memory is not None
    assert compactor.counts["llm_fallback"] == 1
