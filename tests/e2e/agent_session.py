"""A tool-heavy agent session through the public API (issue 17), run against embedded ACM and against the
distributed processes on real Kafka, Postgres, Neo4j and Redis.

The session is generated here, the way agent tools answer (listings of 6-14 records with noise fields, ids of
several formats, a record whose amount changes, an owner introduced with an honorific, a 64 KiB dump), not
from ACM's rules. Each failure the issue lists is checked: the context never overflows nor fails at any budget
from the documented floor up, compaction keeps running while the session grows, a listing's records are not
pinned, an honorific stays with its name, a superseded value is never shown as current, an exact id comes first,
and every memory of a huge output fits a small budget."""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field

from acm.adapters.tokenizer import TiktokenCounter
from acm.client import AcmClient
from acm.domain.identifiers import mentions_identifier
from acm.domain.models import Role
from acm.v1 import common_pb2, gateway_pb2

COUNTER = TiktokenCounter()
PO = "PO-20261103-0042"
BUDGET = 1500  # the agent's working-memory budget: small, so that compaction runs several times


def o200k(text: str) -> int:
    return COUNTER.count(text, "o200k_base")


@dataclass
class Session:
    turns: list[tuple[Role, str, str]] = field(default_factory=list)  # role, tool name, content
    listed: set[str] = field(default_factory=set)  # SKUs only a listing returned
    picked: set[str] = field(default_factory=set)  # SKUs the agent acted on
    deep_sku: str = ""  # a record deep inside the 64 KiB dump


def generate(seed: int = 17) -> Session:
    rng = random.Random(seed)
    s = Session()

    def call(name: str, args: dict[str, object]) -> None:
        s.turns.append((Role.ASSISTANT, "", f"{name}({json.dumps(args)})"))

    def tool(name: str, payload: object) -> None:
        s.turns.append((Role.TOOL, name, json.dumps(payload)))

    s.turns.append(
        (
            Role.USER,
            "",
            "I need to restock docking stations for the Berlin office and keep it under 4,000.00 EUR. "
            f"The owner of {PO} is Dr. Ana Souza. She signs off on anything above budget.",
        )
    )
    for page in range(12):
        call("inventory.search", {"query": "docking station", "warehouse": "BER-1", "page": page})
        rows = [
            {
                "sku": f"SKU-{rng.randint(10000, 99999)}",
                "title": rng.choice(["USB-C dock", "Thunderbolt dock", "travel dock", "dual-HDMI dock"]),
                "on_hand": rng.randint(0, 90),
                "unit_price": {"amount": round(rng.uniform(40, 380), 2), "currency": "EUR"},
                "request_id": f"req_{rng.getrandbits(32):08x}",
            }
            for _ in range(rng.randint(6, 14))
        ]
        tool("inventory.search", {"items": rows, "total": len(rows), "latency_ms": rng.randint(5, 90)})
        pick = rows[rng.randrange(len(rows))]["sku"]
        s.picked.add(str(pick))
        s.listed |= {str(r["sku"]) for r in rows} - {str(pick)}
        call("cart.add", {"sku": pick, "qty": rng.randint(1, 4)})
        tool("cart.add", {"cart_id": "cart_8812", "sku": pick, "status": "added", "trace_id": "abc"})
        s.turns.append((Role.USER, "", rng.choice(["ok, next page", "fine, keep going", "go on"])))
    call("erp.get_po", {"po_id": PO})
    tool("erp.get_po", {"po_id": PO, "amount": "18,400.00 EUR", "status": "pending_approval", "vendor": "Dockly"})
    tickets = [
        {"ticket": f"INC-{i}", "title": f"dock firmware issue {i}", "status": rng.choice(["open", "resolved"])}
        for i in range(1, 21)
    ]
    call("tickets.list", {"component": "docks"})
    tool("tickets.list", {"tickets": tickets, "count": 20})
    call("erp.update_po", {"po_id": PO, "amount": "21,150.00 EUR"})
    tool("erp.update_po", {"po_id": PO, "amount": "21,150.00 EUR", "http_status": 200})
    dump = [
        {"sku": f"SKU-{900000 + i}", "bin": f"B{i:04d}", "note": "pallet " + "x" * 130, "qty": i % 40}
        for i in range(300)
    ]
    s.deep_sku = f"SKU-{900000 + 271}"
    call("warehouse.export", {"warehouse": "BER-1"})
    tool("warehouse.export", {"rows": dump, "count": len(dump)})
    s.turns.append((Role.USER, "", "Thanks. Where do we stand?"))
    return s


def _scope(session: str, user: str = "agent-user") -> common_pb2.Scope:
    return common_pb2.Scope(customer_id="dockworks", user_id=user, agent_id="procurement-agent", session_id=session)


async def _settled(client: AcmClient, scope: common_pb2.Scope, wait_s: float) -> gateway_pb2.FetchResponse:
    """The session context once compaction stopped changing it (compaction runs behind ingest)."""
    deadline = time.monotonic() + wait_s
    last = ""
    while True:
        response = await client.fetch(scope, "", 100_000, "o200k_base")
        current = response.last_compaction.compaction_id
        if current and current == last:
            return response
        assert time.monotonic() < deadline, "compaction did not settle"
        last = current
        await asyncio.sleep(1.0)


async def run_agent_session(addr: str, key: str, wait_s: float = 60.0) -> None:
    session = generate()
    scope = _scope(f"tools-{random.getrandbits(32):08x}")
    async with AcmClient(addr, key, timeout_s=60) as client:
        await client.define_agent(
            scope, "procurement assistant", json.dumps({"compaction": {"budget_tokens": BUDGET}})
        )
        seen_compactions: set[str] = set()
        for i, (role, tool_name, content) in enumerate(session.turns):
            accepted = await client.ingest(scope, content, role, turn_id=f"turn-{i}", tool_name=tool_name)
            job = await client.wait_job(scope, accepted.job_id, timeout_s=wait_s)
            assert job.status == gateway_pb2.JOB_STATUS_DONE, job.error
            if i % 10 == 9:
                # Every budget from the documented floor up gives a context within it, never an error.
                for budget in (64, 200, 500, 2000):
                    response = await client.fetch(scope, "", budget, "o200k_base")
                    counted = o200k(response.context)
                    assert response.context_tokens <= budget and counted <= budget, (budget, counted, response.notice)
                seen_compactions.add(response.last_compaction.compaction_id)
        final = await _settled(client, scope, wait_s)
        seen_compactions.add(final.last_compaction.compaction_id)

        # Compaction kept running as the session grew (not once, then never again), each one verified and
        # each one shrinking what it replaced.
        assert len(seen_compactions - {""}) >= 3, seen_compactions
        last = final.last_compaction
        swapped = last.outcome in ("compacted", "degraded") and last.verified and last.ratio < 1.0
        assert swapped or (last.outcome == "failed" and "not smaller" in last.message), last
        # The working context (pins, summary, recent turns) stays near the agent's budget.
        working = sum(p.tokens for p in final.parts if p.name != "memories")
        assert working <= BUDGET * 1.5, [(p.name, p.tokens) for p in final.parts]

        # Records a listing merely returned are not pins; what the agent acted on is.
        pinned = {e.key: e for e in final.pinned}
        assert not session.listed & set(pinned), session.listed & set(pinned)
        small = await client.fetch(scope, "", 2000, "o200k_base")
        assert {e.key for e in small.pinned} & session.picked, [e.key for e in small.pinned]
        # "Dr. Ana Souza" stays whole (the honorific is not a sentence end), and the PO's amount is current.
        po = pinned[PO].attributes
        assert po.get("owner") == "Dr. Ana Souza", po
        assert po.get("amount") == "21,150.00 EUR", po

        # The superseded amount is never shown as current.
        about_po = await client.fetch(scope, f"what is the amount of {PO}?", 800, "o200k_base")
        assert "21,150.00" in about_po.context, about_po.context
        assert not any("18,400.00" in m.text for m in about_po.memories), [m.text for m in about_po.memories]

        # An exact id comes first: INC-7, not INC-17 or INC-70 (memories only: no session).
        exact = await client.fetch(_scope(""), "INC-7", 60, "o200k_base")
        assert exact.memories and mentions_identifier(exact.memories[0].text, "INC-7"), [
            m.text for m in exact.memories
        ]
        assert exact.total_tokens <= 60, exact.total_tokens

        # The 64 KiB dump is records, each within a small budget, each found by its id.
        deep = await client.fetch(_scope(""), f"{session.deep_sku} quantity", 300, "o200k_base")
        assert deep.memories and mentions_identifier(deep.memories[0].text, session.deep_sku), [
            m.text[:80] for m in deep.memories
        ]
        assert all(o200k(m.text) <= 300 for m in deep.memories)
