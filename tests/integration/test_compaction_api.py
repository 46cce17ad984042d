"""Compaction through the public API of an embedded ACM: the soft limit triggers a verified compaction,
Fetch assembles pinned state / memories / summary / recent turns within the budget, and each bad input of
the issue has a defined outcome (turn larger than the budget, only system messages, missing or forgotten
session, concurrent compactions)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from acm.client import AcmClient
from acm.domain.models import Role
from acm.domain.schema import default_schema
from acm.domain.scope import Scope
from acm.read.session import LoadSession
from acm.schemas import RepoSchemaSource
from acm.v1 import common_pb2
from acm_cli.embedded import DEV_CLIENT, EmbeddedAcm, EmbeddedSettings

PO = "PO-20261028-0098"
# What an ERP answers besides the business fields: compaction drops it, so compacting shrinks the session.
DEBUG = ', "debug": {"sql": "SELECT * FROM po JOIN vendor USING (vendor_id) WHERE po_id = $1", "timings_ms": ' + (
    "[3, 4, 1, 7, 2, 9, 4, 4, 6, 1, 3, 8]"
) + ', "node": "erp-db-7f9c", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}'
TURNS = [
    (Role.USER, "user", "Raise a purchase order for 40 laptops. We must stay under 130,000.00 CNY."),
    (
        Role.TOOL,
        "tool[erp.create_po]",
        f'{{"po_id": "{PO}", "amount": "125,000.00 CNY", "status": "pending_approval", '
        '"approver": "Li Wei", "request_id": "req_1"' + DEBUG + "}",
    ),
    (
        Role.ASSISTANT,
        "assistant",
        f"{PO} was created for 125,000.00 CNY and waits for Li Wei. I checked the order against the framework "
        "agreement and everything looks consistent with what you asked for. Approvers usually respond within a "
        "working day, and I will keep an eye on it so you do not have to chase anyone yourself.",
    ),
    (Role.USER, "user", "Please also note that delivery for it is due 2026-11-20 at the Shanghai warehouse."),
    (Role.TOOL, "tool[erp.get_po]", f'{{"po_id": "{PO}", "status": "approved", "approved_by": "Li Wei"' + DEBUG + "}"),
    (
        Role.ASSISTANT,
        "assistant",
        f"Good news: {PO} status is now approved by Li Wei. That was quicker than usual, which is great for "
        "your timeline. The next step on our side is simply to wait for the vendor's confirmation, and I will "
        "let you know as soon as anything changes or if anything looks off in their reply.",
    ),
    (Role.USER, "user", "Next, open a support ticket with the vendor about the delivery window for the laptops."),
    (Role.ASSISTANT, "assistant", "I opened TCK-55120 with the vendor; it is assigned to Sarah Chen."),
]


@pytest.fixture
async def acm(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    settings = EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0", embedder="wordllama")
    async with EmbeddedAcm(settings) as embedded:
        yield embedded


async def _agent(acm: EmbeddedAcm, agent_id: str, budget: int, soft: float = 0.7) -> None:
    schema = default_schema(agent_id)
    rules = schema.compaction
    from dataclasses import replace

    compaction = replace(rules, budget_tokens=budget, soft_ratio=soft, target_ratio=min(rules.target_ratio, soft / 2))
    assert await acm.stores["architect"].schemas.put(DEV_CLIENT, replace(schema, compaction=compaction))


def _scope(agent: str, session: str) -> common_pb2.Scope:
    return common_pb2.Scope(customer_id="acme", user_id="alice", agent_id=agent, session_id=session)


def _domain(scope: common_pb2.Scope) -> Scope:
    return Scope(DEV_CLIENT, scope.customer_id, scope.user_id, scope.agent_id, scope.session_id)


async def _ingest(client: AcmClient, scope: common_pb2.Scope, turns: list[tuple[Role, str, str]]) -> None:
    jobs = []
    for i, (role, speaker, text) in enumerate(turns):
        response = await client.ingest(
            scope, text, role, metadata={"speaker": speaker}, turn_id=f"{scope.session_id}-{i}"
        )
        jobs.append(response.job_id)
    for job_id in jobs:
        job = await client.wait_job(scope, job_id, timeout_s=60)
        assert not job.error, job.error


async def test_soft_limit_compacts_and_fetch_assembles_the_parts_in_order(acm: EmbeddedAcm) -> None:
    await _agent(acm, "clerk", budget=300)
    scope = _scope("clerk", "s1")
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=30) as client:
        await _ingest(client, scope, TURNS)
        deadline = time.monotonic() + 30
        while (stored := await acm.stores["compact"].working.get(_domain(scope))) is None:
            assert time.monotonic() < deadline, "the soft limit did not trigger a compaction"
            await asyncio.sleep(0.1)
        records = await acm.stores["compact"].working.compactions(_domain(scope))
        assert records and all(r.verified for r in records) and records[0].ratio > 0
        response = await client.fetch(scope, "Who approved the purchase order?", 600)
    names = [p.name for p in response.parts]
    assert names == [n for n in ("pinned", "memories", "summary", "recent") if n in names]
    assert names[0] == "pinned" and "recent" in names
    assert response.context_tokens <= 600
    assert abs(sum(p.tokens for p in response.parts) - response.context_tokens) <= 2 * len(names)
    assert response.total_tokens == sum(m.token_count for m in response.memories)
    pinned = {e.key: e for e in response.pinned}
    assert pinned[PO].attributes["status"] == "approved" and pinned[PO].type == "purchase_order"
    assert "125,000.00 CNY" in response.context and "TCK-55120" in response.context
    # Each memory shown is under the day it was said: one date line per day, then its memories.
    lines = next(p.text for p in response.parts if p.name == "memories").splitlines()[1:]
    assert lines and re.fullmatch(r"\[\d{1,2} [A-Z][a-z]+ \d{4}\]", lines[0]), lines
    assert all(re.fullmatch(r"\[\d{1,2} [A-Z][a-z]+ \d{4}\]", line) or line.startswith("- ") for line in lines), lines
    assert sum(line.startswith("- ") for line in lines) == len(response.memories)
    assert stored.version >= 1
    assert response.last_compaction.verified and response.last_compaction.ratio > 0


async def test_bad_inputs_have_defined_outcomes(acm: EmbeddedAcm) -> None:
    await _agent(acm, "big", budget=100_000)  # no automatic compaction: every step here is explicit
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=30) as client:
        # No session in the scope.
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await client.compact(_scope("big", ""))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "session_id" in (err.value.details() or "")
        # A session that never existed.
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await client.compact(_scope("big", "nobody"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND

        # Only system messages: nothing is compacted, and the record says why.
        system = _scope("big", "sys")
        await _ingest(client, system, [(Role.SYSTEM, "system", "You are a procurement assistant for Acme.")] * 1)
        compaction = await client.compact(system, 10)
        assert compaction.outcome == "unchanged" and "system" in compaction.message

        # A turn larger than the budget: Fetch shows it clipped and says so; Compact makes the session fit.
        huge = _scope("big", "huge")
        filler = " ".join(f"line {i} of the attached delivery note lists pallet contents." for i in range(150))
        await _ingest(client, huge, [(Role.USER, "user", f"Delivery note for {PO} (125,000.00 CNY): {filler}")])
        response = await client.fetch(huge, "what is in the delivery note?", 300)
        assert response.context_tokens <= 300 and "clipped" in response.notice
        assert all("[clipped" in t.content for t in response.recent_turns)
        compaction = await client.compact(huge, 300)
        assert compaction.outcome == "compacted" and compaction.verified and compaction.turns_replaced == 1
        response = await client.fetch(huge, "what is in the delivery note?", 300)
        assert response.context_tokens <= 300 and "125,000.00 CNY" in response.context
        assert response.parts[0].name == "pinned" and "clipped" not in response.notice
        # Below the documented floor (MIN_BUDGET_TOKENS): RESOURCE_EXHAUSTED with the numbers.
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await client.fetch(huge, "what is in the delivery note?", 12)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "budget is 12" in (err.value.details() or "") and "at least 64" in (err.value.details() or "")

        # A forgotten session.
        job_id = await client.forget(huge, "session")
        await client.wait_job(huge, job_id, timeout_s=30)
        deadline = time.monotonic() + 30
        while await acm.stores["compact"].working.get(_domain(huge)) is not None:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await client.compact(huge)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND


async def test_concurrent_compactions_one_wins_and_no_turn_is_lost(acm: EmbeddedAcm) -> None:
    await _agent(acm, "big", budget=100_000)
    scope = _scope("big", "race")
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=30) as client:
        await _ingest(client, scope, TURNS)
        results = await asyncio.gather(*(client.compact(scope, 250) for _ in range(4)))
    outcomes = sorted(r.outcome for r in results)
    assert outcomes.count("compacted") + outcomes.count("degraded") >= 1
    assert set(outcomes) <= {"compacted", "degraded", "superseded", "unchanged"}
    schemas = RepoSchemaSource(acm.stores["architect"].schemas)
    state = await LoadSession(acm.memories, acm.compactor, schemas, 100)(_domain(scope))
    seen = state.memory.turns_compacted + len(state.memory.recent) + len(state.tail)
    assert seen == len(TURNS)  # every turn is either compacted, kept verbatim, or still to come
    records = await acm.stores["compact"].working.compactions(_domain(scope))
    assert len(records) == len(results)  # every attempt is on record, losers included


async def test_fetch_never_serves_a_session_older_than_its_last_write(acm: EmbeddedAcm) -> None:
    """The gateway keeps a loaded session between Fetches; a new turn, a compaction and a Forget each show at
    once, even right after a Fetch that loaded (and kept) the session."""
    from dataclasses import replace

    # A schema that keeps no facts: a turn then changes nothing but the session (no prefetch generation moves).
    schema = default_schema("quiet")
    quiet = replace(
        schema,
        categories=("ticket",),
        category_keywords={"ticket": ("zzz-no-such-cue",)},
        category_tiers={},
        category_layers={},
        related_categories={},
        fallback_category="",
    )
    assert await acm.stores["architect"].schemas.put(DEV_CLIENT, quiet)
    scope = _scope("quiet", "memo")
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key) as client:
        await _ingest(client, scope, TURNS[:2])
        for _ in range(2):  # the second Fetch is served from what the first kept
            first = await client.fetch(scope, "", 2000)
            assert [t.turn_id for t in first.recent_turns] == ["memo-0", "memo-1"]
            assert not first.HasField("last_compaction")

        response = await client.ingest(
            scope, TURNS[2][2], TURNS[2][0], metadata={"speaker": "assistant"}, turn_id="memo-2"
        )
        await client.wait_job(scope, response.job_id, timeout_s=60)
        after_turn = await client.fetch(scope, "", 2000)
        assert [t.turn_id for t in after_turn.recent_turns][-1] == "memo-2"

        compaction = await client.compact(scope, 2000)
        after_compaction = await client.fetch(scope, "", 2000)
        assert after_compaction.last_compaction.compaction_id == compaction.compaction_id

        job_id = await client.forget(scope, "session")
        await client.wait_job(scope, job_id, timeout_s=30)
        deadline = time.monotonic() + 30
        while await acm.stores["compact"].working.get(_domain(scope)) is not None:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        after_forget = await client.fetch(scope, "", 2000)
        assert not after_forget.recent_turns and not after_forget.summary and not after_forget.pinned
