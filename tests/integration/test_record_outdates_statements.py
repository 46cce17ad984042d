"""A tool record's new version outdates the agent's earlier prose and calls that stated its old values, not only
the record's older version (issue 17: "PO-… is draft now." stayed an active memory after a look-up showed the
order approved, and a Fetch could show it as the order's state). Embedded end to end, and the ingest use case
on Postgres."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from acm import topics
from acm.adapters.memory_cache import MemoryCache
from acm.adapters.tokenizer import TiktokenCounter
from acm.bootstrap import open_relational
from acm.client import AcmClient
from acm.domain.facts import RECORD_KIND
from acm.domain.models import Memory, MemoryStatus, Role, Turn
from acm.domain.scope import Scope
from acm.schemas import RepoSchemaSource
from acm.v1 import common_pb2, events_pb2
from acm_benchmarks.fleet_stack import create_database, drop_database
from acm_benchmarks.locomo import wait_until_indexed
from acm_benchmarks.traces import Message, ingest_message
from acm_cli.embedded import DEV_CLIENT, EmbeddedAcm, EmbeddedSettings
from acm_ingest.events import BusEvents
from acm_ingest.usecases import IngestTurn

PO = "PO-2026-0412"
AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _record(status: str, amount: str, approver: str) -> str:
    body = {"po_id": PO, "vendor": "Northwind Metals GmbH", "status": status, "amount": amount, "approver": approver}
    return json.dumps({"http_status": 200, "request_id": str(uuid.uuid4()), "data": [body]})


# (role, text, tool name)
SESSION = [
    ("user", f"Can you pull up {PO} for me?", ""),
    ("assistant", f'erp.get_purchase_order({{"po_id": "{PO}"}})', ""),
    ("tool", _record("draft", "1,200.00 EUR", "Dr. Ana Souza"), "erp.get_purchase_order"),
    ("assistant", f"{PO} is draft now.", ""),
    ("user", f"Is {PO} still draft?", ""),  # a question states nothing: never outdated
    ("assistant", f'erp.update_purchase_order({{"po_id": "{PO}", "amount": "1,450.00 EUR"}})', ""),
    ("tool", _record("approved", "1,450.00 EUR", "Dr. Ana Souza"), "erp.update_purchase_order"),
    ("assistant", f"{PO} is approved now.", ""),  # slotted "<id>|status": another shape than the record's slot
    ("assistant", f'erp.update_purchase_order({{"po_id": "{PO}", "amount": "1,980.00 EUR"}})', ""),
    ("tool", _record("ordered", "1,980.00 EUR", "Dr. Ana Souza"), "erp.update_purchase_order"),
]
OUTDATED = (
    f"assistant: {PO} is draft now.",  # by the second result (status draft → approved)
    f'assistant: erp.update_purchase_order({{"po_id": "{PO}", "amount": "1,450.00 EUR"}})',  # by the third
    f"assistant: {PO} is approved now.",  # by the third (approved → ordered)
)
STILL = (
    f"user: Is {PO} still draft?",
    f'assistant: erp.get_purchase_order({{"po_id": "{PO}"}})',
    f'assistant: erp.update_purchase_order({{"po_id": "{PO}", "amount": "1,980.00 EUR"}})',
)


def _check(facts: list[Memory]) -> None:
    by_text = {m.text: m for m in facts if m.kind != "turn"}
    records = sorted((m for m in facts if m.kind == RECORD_KIND), key=lambda m: m.created_at)
    current = [m for m in records if m.status is MemoryStatus.ACTIVE]
    assert len(current) == 1 and "status=ordered" in current[0].text
    for text in OUTDATED:
        m = by_text[text]
        assert m.status is MemoryStatus.STALE, text
        assert m.superseded_by in {r.memory_id for r in records}
    for text in STILL:
        assert by_text[text].status is MemoryStatus.ACTIVE, text


@pytest.fixture
async def acm(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    async with EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")) as running:
        yield running


async def test_a_new_record_version_outdates_earlier_statements_embedded(acm: EmbeddedAcm) -> None:
    scope_pb = common_pb2.Scope(customer_id="acme", user_id="alice", agent_id="bot", session_id="s1")
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client:
        for i, (role, text, tool) in enumerate(SESSION):
            job = await ingest_message(client, scope_pb, Message(role, text, tool), f"t{i}", AT + timedelta(minutes=i))
            await client.wait_job(scope_pb, job, timeout_s=60)
        await wait_until_indexed(acm)
        answer = await client.fetch(scope_pb, f"What is the state of {PO}?", budget_tokens=1000)
    scope = Scope(DEV_CLIENT, "acme", "alice", "bot", "s1")
    _check(await acm.stores["ingest"].memories.session_memories(scope, 100))
    # Retrieve's copy (what a Fetch reads) took the same statuses from the event.
    _check(await acm.stores["retrieve"].memories.session_memories(scope, 100))
    shown = [m.text for m in answer.memories]
    assert any("status=ordered" in t for t in shown)
    assert not any(t in shown for t in OUTDATED)


@pytest.fixture(scope="module")
def database(postgres_dsn: str) -> Iterator[str]:
    url = create_database(postgres_dsn)
    yield url
    drop_database(url)


class CapturingBus:
    def __init__(self) -> None:
        self.published: list[tuple[str, bytes]] = []

    async def publish(self, topic: str, key: str, value: bytes) -> None:
        self.published.append((topic, value))


async def test_a_new_record_version_outdates_earlier_statements_postgres(database: str) -> None:
    from acm.adapters.embedders import build_embedder

    rel = await open_relational(database)
    try:
        bus = CapturingBus()
        events = BusEvents(bus)  # type: ignore[arg-type]  # publish is all BusEvents uses
        # The ingest service's use case over the Postgres store (its own wiring: acm_ingest.app).
        stores = (rel.memories, rel.entities, MemoryCache(), events)
        ingest = IngestTurn(
            *stores, build_embedder("all-minilm-l6-v2"), TiktokenCounter(), RepoSchemaSource(rel.schemas), rel.audit
        )
        scope = Scope(f"c-{uuid.uuid4().hex[:6]}", "acme", "alice", "bot", "s1")
        for i, (role, text, tool) in enumerate(SESSION):
            turn = Turn(f"t{i}", scope, Role(role), text, AT + timedelta(minutes=i), tool_name=tool)
            await ingest(turn, f"job{i}", "")
        _check(await rel.memories.session_memories(scope, 100))
        # Each change went out in full on the memories topic, for retrieve's copy.
        went_stale = {
            m.text
            for topic, value in bus.published
            if topic == topics.MEMORIES
            for m in events_pb2.Envelope.FromString(value).memories_written.memories
            if m.stored.superseded_by
        }
        assert set(OUTDATED) <= went_stale
    finally:
        await rel.close()
