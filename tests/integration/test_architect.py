"""The architect end to end (embedded ACM over gRPC): DefineAgent from a description or an archetype,
overrides, GetAgent / ListAgents, invalid schemas naming the field, an LLM's malformed draft rejected
with the previous version still active, and the schema driving what ingest keeps, where and how long,
picked up by the running services without a restart."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from acm.client import AcmClient
from acm.domain.models import Layer, Memory
from acm.domain.placement import expires_at
from acm.domain.schema import AgentSchema
from acm.domain.scope import Scope, Tier
from acm.v1 import common_pb2
from acm_benchmarks.locomo import wait_until_indexed
from acm_cli.embedded import DEV_CLIENT, EmbeddedAcm, EmbeddedSettings
from tests.support.fake_llm import fake_llm

TURNS = [
    "I was charged twice and want a refund of $49.99 for order ORD-1234.",
    "The build fails in src/app.py with a KeyError on the main branch.",
    "We decided to use Postgres instead of MongoDB for the ledger.",
    "The weather in Lisbon was lovely this weekend.",
]

PARTS = ["logs", "config", "network", "database", "cache", "queue", "scheduler"]


def scope_pb(agent: str, session: str = "s1", user: str = "alice") -> common_pb2.Scope:
    return common_pb2.Scope(customer_id="acme", user_id=user, agent_id=agent, session_id=session)


@pytest.fixture
async def acm(tmp_path: Path) -> AsyncIterator[EmbeddedAcm]:
    async with EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")) as running:
        yield running


@pytest.fixture
async def client(acm: EmbeddedAcm) -> AsyncIterator[AcmClient]:
    async with AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as c:
        yield c


async def test_define_get_and_list_agents(client: AcmClient) -> None:
    support = await client.define_agent(scope_pb("helpdesk"), "Answers customers about refunds and invoices")
    assert (support.agent_id, support.version, support.archetype) == ("helpdesk", 1, "customer_support")
    assert "customer_support" in support.rationale
    coder = await client.define_agent(
        scope_pb("coder"), "", overrides_json='{"retention": {"mid_ttl_days": 3}}', archetype="coding_agent"
    )
    assert json.loads(coder.schema_json)["retention"]["mid_ttl_days"] == 3
    again = await client.define_agent(scope_pb("helpdesk"), "refunds", overrides_json='{"pinned_fields": ["sku"]}')
    assert again.version == 2
    assert (await client.get_agent(scope_pb("helpdesk"))).version == 2
    assert json.loads((await client.get_agent(scope_pb("helpdesk"), version=1)).schema_json)["pinned_fields"] != ["sku"]
    listed = await client.list_agents(scope_pb(""))
    assert [(a.agent_id, a.version) for a in listed.agents] == [("coder", 1), ("helpdesk", 2)]
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await client.get_agent(scope_pb("nobody"))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(
    ("overrides", "archetype", "field"),
    [
        ('{"category_tiers": {"billing": "galaxy"}}', "", "category_tiers.billing"),
        ('{"retention": {"short_ttl_days": -2}}', "", "retention.short_ttl_days"),
        ('{"retrieval": {"beta_recency": "soon"}}', "", "retrieval.beta_recency"),
        ("", "astrologer", "archetype"),
        ("[1, 2]", "", "overrides_json"),
        ("{not json", "", "overrides_json"),
    ],
)
async def test_an_invalid_schema_is_invalid_argument_naming_the_field(
    client: AcmClient, overrides: str, archetype: str, field: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await client.define_agent(scope_pb("helpdesk"), "refunds", overrides, archetype or "customer_support")
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in (failed.value.details() or "")


async def test_an_llm_drafts_the_schema_and_a_malformed_draft_keeps_the_previous_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fake_llm() as llm:
        monkeypatch.setenv("ACM_LLM_URL", llm.url)
        monkeypatch.setenv("ACM_LLM_MODEL", "test-model")
        settings = EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")
        async with (
            EmbeddedAcm(settings) as acm,
            AcmClient(f"127.0.0.1:{acm.port}", acm.api_key, timeout_s=60) as client,
        ):
            # An invalid answer is repaired on the second attempt (the reason is fed back).
            llm.answers += [
                {"archetype": "procurement", "categories": []},
                {
                    "archetype": "procurement",
                    "categories": [
                        {"name": "approval", "extract": "who approved what", "keywords": ["approved"], "tier": "user"},
                        {"name": "supplier", "extract": "suppliers", "keywords": ["vendor"], "tier": "customer"},
                    ],
                    "pinned_fields": ["po_number"],
                },
            ]
            v1 = await client.define_agent(scope_pb("buyer"), "approves purchase orders")
            assert (v1.version, v1.archetype) == (1, "custom")
            schema = json.loads(v1.schema_json)
            assert schema["category_tiers"]["supplier"] == "customer" and schema["pinned_fields"] == ["po_number"]
            assert "previous answer was invalid" in json.dumps(llm.requests[1])  # the repair prompt named the problem

            # Malformed twice (not JSON, then an unknown tier): rejected, version 1 stays active.
            llm.answers += [
                "this is not json",
                {"archetype": "x", "categories": [{"name": "a", "extract": "b", "tier": "galaxy"}]},
            ]
            with pytest.raises(grpc.aio.AioRpcError) as rejected:
                await client.define_agent(scope_pb("buyer"), "approves purchase orders, now with budgets")
            assert rejected.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "version 1 stays active" in (rejected.value.details() or "")
            assert (await client.get_agent(scope_pb("buyer"))).version == 1


async def _ingest(acm: EmbeddedAcm, client: AcmClient, scope: common_pb2.Scope, texts: list[str]) -> None:
    for text in texts:
        accepted = await client.ingest(scope, text)
        job = await client.wait_job(scope, accepted.job_id, timeout_s=60)
        assert job.error == ""
    await wait_until_indexed(acm)


async def _facts(acm: EmbeddedAcm, client: AcmClient, scope: common_pb2.Scope) -> list[Memory]:
    """Every fact the scope can see (all tiers), as stored."""
    found = await client.fetch(scope, " ".join(TURNS), budget_tokens=4000)
    ids = [m.memory_id for m in found.memories]
    reader = Scope(DEV_CLIENT, scope.customer_id, scope.user_id, scope.agent_id, scope.session_id)
    return await acm.stores["ingest"].memories.get(reader, ids)


async def test_the_schema_drives_what_is_kept_where_and_for_how_long(acm: EmbeddedAcm, client: AcmClient) -> None:
    await client.define_agent(scope_pb("helpdesk"), "", archetype="customer_support")
    await client.define_agent(scope_pb("coder"), "", archetype="coding_agent")
    await _ingest(acm, client, scope_pb("helpdesk", user="ann"), TURNS)
    await _ingest(acm, client, scope_pb("coder", user="bob"), TURNS)
    support = {m.kind: m for m in await _facts(acm, client, scope_pb("helpdesk", user="ann"))}
    coding = {m.kind: m for m in await _facts(acm, client, scope_pb("coder", user="bob"))}

    # Different memories kept: billing for support, the error and the decision for coding; small talk by neither.
    assert "billing" in support and "billing" not in coding
    assert {"error", "decision"} <= set(coding)
    assert not any("weather" in m.text for m in [*support.values(), *coding.values()])
    # Different tiers: the coding team's decision is shared with the customer organisation.
    assert coding["decision"].tier is Tier.CUSTOMER and support["billing"].tier is Tier.USER
    # Different retention: billing is kept long by support; a coding error lives 14 days in the mid layer.
    support_schema = await acm.stores["architect"].schemas.latest(Scope(DEV_CLIENT, "acme", "ann"), "helpdesk")
    coding_schema = await acm.stores["architect"].schemas.latest(Scope(DEV_CLIENT, "acme", "bob"), "coder")
    assert isinstance(support_schema, AgentSchema) and isinstance(coding_schema, AgentSchema)
    assert support["billing"].layer is Layer.LONG and coding["error"].layer is Layer.MID
    at = coding["error"].created_at
    assert (expires_at(coding_schema, coding["error"].layer, at) - at).days == 14
    assert (expires_at(support_schema, support["billing"].layer, at) - at).days == 365
    # Different pinned fields: after a compaction each agent's pinned state carries its own schema's fields.
    assert "refund_status" in support_schema.pinned_fields and "file_path" in coding_schema.pinned_fields
    assert not set(support_schema.pinned_fields) & set(coding_schema.pinned_fields)
    work = [
        "The build fails again; file_path: src/app.py, branch: release-2.4.",
        "The refund_status is pending for the duplicate charge.",
        *(f"Step {i}: we checked the {part} and it looks fine." for i, part in enumerate(PARTS)),
    ]
    pinned = {}
    for agent, user in (("helpdesk", "ann"), ("coder", "bob")):
        session = scope_pb(agent, session="pins", user=user)
        await _ingest(acm, client, session, work)
        compaction = await client.compact(session)
        assert compaction.outcome == "compacted" and compaction.verified, compaction
        fetched = await client.fetch(session, "", budget_tokens=2000)
        pinned[agent] = {e.key: dict(e.attributes) for e in fetched.pinned}
    assert pinned["coder"]["session"] == {"file_path": "src/app.py", "branch": "release-2.4"}
    assert pinned["helpdesk"]["session"] == {"refund_status": "pending for the duplicate charge"}
    # Every memory records the version it was written under.
    assert {m.schema_version for m in [*support.values(), *coding.values()]} == {1}


async def test_a_new_schema_version_applies_while_the_services_run(acm: EmbeddedAcm, client: AcmClient) -> None:
    scope = scope_pb("coder", user="carol")
    await client.define_agent(scope, "", archetype="coding_agent")
    await _ingest(acm, client, scope, [TURNS[0]])
    assert not [m for m in await _facts(acm, client, scope) if "refund" in m.text]  # v1 keeps no billing

    # v2 while everything runs: keep what matches no category as a code fact, in the client tier.
    overrides = {"fallback_category": "code_fact", "category_tiers": {"code_fact": "client"}}
    v2 = await client.define_agent(scope, "", overrides_json=json.dumps(overrides), archetype="coding_agent")
    assert v2.version == 2
    await _ingest(acm, client, scope_pb("coder", session="s2", user="carol"), [TURNS[0]])
    kept = [m for m in await _facts(acm, client, scope) if "refund" in m.text]
    assert [(m.kind, m.tier, m.schema_version) for m in kept] == [("code_fact", Tier.CLIENT, 2)]
