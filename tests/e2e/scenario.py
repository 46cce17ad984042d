"""One end-to-end scenario, run against embedded ACM and against the distributed processes."""

from __future__ import annotations

from datetime import UTC, datetime

import grpc
import pytest

from acm.client import AcmClient
from acm.domain.models import Role
from acm.v1 import common_pb2, gateway_pb2


def scope(customer: str, user: str, session: str = "s1") -> common_pb2.Scope:
    return common_pb2.Scope(customer_id=customer, user_id=user, agent_id="support-bot", session_id=session)


ALICE = scope("acme", "alice")
BOB = scope("acme", "bob")
CAROL = scope("globex", "carol")


async def run_scenario(addr: str, key_c1: str, key_c2: str, wait_s: float = 60.0) -> None:
    async with AcmClient(addr, key_c1) as c1, AcmClient(addr, key_c2) as c2:
        turns = [
            (ALICE, "I moved to Lisbon in May, the flat is near the river.", "t-alice-1"),
            (ALICE, "My invoice INV-20240611 for 129.00 EUR was charged twice.", "t-alice-2"),
            (BOB, "Please remember my Lisbon trip is a secret surprise for Alice.", "t-bob-1"),
            (CAROL, "Globex renewed the enterprise plan for Lisbon office.", "t-carol-1"),
        ]
        jobs = []
        for sc, text, turn_id in turns:
            response = await c1.ingest(
                sc, text, Role.USER, occurred_at=datetime(2024, 6, 12, 9, 0, tzinfo=UTC), turn_id=turn_id
            )
            assert response.job_id
            jobs.append((sc, response.job_id))
        # Client 2 writes under the very same customer/user ids: it must stay invisible to client 1.
        other = await c2.ingest(ALICE, "Client two's Alice lives in Lisbon too.", turn_id="t-c2-alice")
        jobs.append((ALICE, other.job_id))

        for sc, job_id in jobs:
            client = c2 if job_id == other.job_id else c1
            job = await client.wait_job(sc, job_id, timeout_s=wait_s)
            assert job.status == gateway_pb2.JOB_STATUS_DONE, job
            assert job.counts["turns"] == 1 and job.counts["facts"] >= 1

        # Alice finds her own memory, labelled with tier, source turn and token counts, in budget.
        found = await c1.fetch(ALICE, "Where did I move in May?", budget_tokens=200)
        texts = [m.text for m in found.memories]
        assert any("Lisbon in May" in t for t in texts), texts
        top = next(m for m in found.memories if "Lisbon in May" in m.text)
        assert top.tier == common_pb2.TIER_USER
        assert list(top.source_turn_ids) == ["t-alice-1"]
        assert top.token_count > 0
        assert found.total_tokens == sum(m.token_count for m in found.memories) <= 200
        # ...and nothing of Bob's (same customer), Carol's (other customer) or client 2's.
        assert not any("secret surprise" in t or "Globex" in t or "Client two" in t for t in texts), texts

        for sc, needle in ((BOB, "Lisbon"), (CAROL, "Lisbon")):
            seen = [m.text for m in (await c1.fetch(sc, needle, budget_tokens=500)).memories]
            assert not any("Lisbon in May" in t for t in seen), seen
        c2_view = [m.text for m in (await c2.fetch(ALICE, "Lisbon invoice", budget_tokens=500)).memories]
        assert c2_view and all("Client two" in t for t in c2_view), c2_view

        # A tight budget is honoured: memories alone fit 20 tokens; a session's context is whole at 64 (the
        # documented floor) and refused below it, with the numbers.
        tight = await c1.fetch(scope("acme", "alice", ""), "Lisbon invoice", budget_tokens=20)
        assert tight.total_tokens <= 20
        tight = await c1.fetch(ALICE, "Lisbon invoice", budget_tokens=64)
        assert tight.context_tokens <= 64 and tight.context
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await c1.fetch(ALICE, "Lisbon invoice", budget_tokens=20)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "at least 64" in str(refused.value)

        # Forget Alice: her memories are gone, Bob's stay.
        forget_job = await c1.forget(ALICE, "user")
        done = await c1.wait_job(ALICE, forget_job, timeout_s=wait_s)
        assert done.status == gateway_pb2.JOB_STATUS_DONE
        assert done.counts["memories_erased"] == 4  # two turns, one fact each
        after = await c1.fetch(ALICE, "Lisbon invoice May", budget_tokens=500)
        assert not after.memories
        bob_view = await c1.fetch(BOB, "Lisbon surprise", budget_tokens=500)
        assert any("secret surprise" in m.text for m in bob_view.memories)


async def check_bad_requests(addr: str, key: str) -> None:
    """Each bad request gets the right status and a message a person can act on."""
    async with AcmClient(addr, key) as good, AcmClient(addr, "acm_nope_wrongsecret") as wrong:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await wrong.ingest(ALICE, "hi")
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await good.ingest(common_pb2.Scope(), "hi")
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "customer_id is required" in (err.value.details() or "")

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await good.ingest(scope("acme corp!", "alice"), "hi")
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "malformed" in (err.value.details() or "")

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await good.ingest(ALICE, "x" * 70_000)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "over the limit" in (err.value.details() or "")

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await good.fetch(common_pb2.Scope(client_id="someone-else", customer_id="acme", user_id="alice"), "q")
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await good.get_job(ALICE, "no-such-job")
        assert err.value.code() == grpc.StatusCode.NOT_FOUND

    channel = grpc.aio.insecure_channel(addr)
    try:
        from acm.v1 import gateway_pb2_grpc

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await gateway_pb2_grpc.GatewayStub(channel).Fetch(gateway_pb2.FetchRequest(scope=ALICE, query="q"))
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "authorization" in (err.value.details() or "")
    finally:
        await channel.close()
