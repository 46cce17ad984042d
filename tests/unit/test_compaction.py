"""Compaction domain: noise removal, atoms, pinned state, summary, verifier, back-off and assembly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from acm.adapters.tokenizer import TiktokenCounter
from acm.domain.compaction import atoms as A
from acm.domain.compaction import pinned as P
from acm.domain.compaction.engine import (
    Rules,
    SessionTurn,
    WorkingMemory,
    compact,
    fill,
    plan_context,
    working_tokens,
)
from acm.domain.compaction.noise import clean
from acm.domain.compaction.summary import span_turn, summarise
from acm.domain.compaction.verify import verify
from acm.domain.schema import SchemaInvalid, parse

COUNTER = TiktokenCounter()
T0 = datetime(2026, 10, 28, 9, 0, tzinfo=UTC)
PO = "PO-20261028-0098"
RAW = [
    ("user", "", "Raise a PO for 40 laptops from Acme Industrial Supply. We must stay under 130,000.00 CNY."),
    ("assistant", "", "Calling erp.create_po with vendor=Acme Industrial Supply."),
    (
        "tool",
        "erp.create_po",
        "HTTP/1.1 201 Created\nContent-Type: application/json\n"
        f'{{"po_id": "{PO}", "amount": "125,000.00 CNY", "status": "pending_approval", "approver": "Li Wei", '
        '"request_id": "REQ-99812", "debug": {"sql_ms": 12}, "created_at": "2026-10-28T09:02:11Z"}',
    ),
    ("user", "", "ok thanks, lovely weather today"),
    ("tool", "erp.get_po", f'{{"po_id": "{PO}", "status": "approved", "approved_by": "Li Wei", "trace_id": "abc"}}'),
    ("assistant", "", "It is now approved."),
    ("user", "", "Great. Now open a ticket for the delivery."),
    ("assistant", "", "Opening one."),
]


# A real tool output carries its protocol noise; compaction must shrink the context (a result no smaller than
# what it replaces is recorded as failed), so the scenarios below carry some.
NOISE = "".join(f"\n2026-10-28T09:02:{i:02d}Z DEBUG pool=erp-db conn={i} latency_ms={i * 7}" for i in range(12))
NOISY = [(role, tool, text + NOISE if role == "tool" else text) for role, tool, text in RAW]


def turns(raw: list[tuple[str, str, str]] = NOISY, start: int = 0) -> list[SessionTurn]:
    out = []
    for i, (role, tool, text) in enumerate(raw, start=start):
        speaker = f"tool[{tool}]" if tool else role
        full = f"{speaker}: {text}"
        out.append(SessionTurn(f"t{i}", role, full, COUNTER.count(full), T0 + timedelta(minutes=i), tool, speaker))
    return out


def test_clean_drops_protocol_noise_and_keeps_business_fields() -> None:
    cleaned = clean(RAW[2][2])
    assert "HTTP/1.1" not in cleaned and "Content-Type" not in cleaned
    assert "REQ-99812" not in cleaned and "sql_ms" not in cleaned  # request ids and debug fields are noise
    assert f"po_id={PO}" in cleaned and "amount=125,000.00 CNY" in cleaned and "approver=Li Wei" in cleaned


def test_atoms_are_normalised() -> None:
    found = A.fact_atoms(f"{PO} for CNY 125000 due 28 Oct 2026, 40 licenses, v2.14.3, approved by Li Wei")
    assert A.Atom("id", PO) in found
    assert A.Atom("amount", "125000 CNY") in A.fact_atoms("125,000.00 CNY") & found
    assert A.Atom("date", "2026-10-28") in found and A.Atom("quantity", "40 license") in found
    assert A.Atom("version", "v2.14.3") in found and A.Atom("name", "li wei") in found
    goals = A.turn_atoms("user", "", "We must stay under 130,000.00 CNY.")
    assert any(a.kind == "goal" for a in goals)
    assert A.Atom("tool", "erp.get_po -> approved") in A.turn_atoms("tool", "erp.get_po", "status=approved")


@pytest.mark.parametrize(
    ("sentence", "is_goal"),
    [
        ("We must stay under 130,000.00 CNY.", True),
        ("I need to ship v2.14 by Monday.", True),
        ("The report needs to be done by Friday.", True),
        ("Now I want to help people go through it too.", True),
        ("Make sure you copy finance on the approval.", True),
        ("There's something I want to tell you.", False),
        ("I want to know more about the adoption process.", False),
        ("Your experience really brought you to where you need to be.", False),
        ("That must have been fun!", False),
    ],
)
def test_goals_are_intents_and_limits_not_conversational_moves(sentence: str, is_goal: bool) -> None:
    assert bool(A.goal_sentences(sentence)) is is_goal


def test_pinned_state_is_updated_by_newer_facts_only() -> None:
    state = P.PinnedState()
    for t in turns():
        state = P.update(state, t.role, clean(t.body), t.turn_id, t.at)
    po = state.entities[PO]
    assert po.type == "purchase_order"
    assert po.attributes["status"] == "approved"  # the newer value replaced pending_approval
    assert po.attributes["amount"] == "125,000.00 CNY" and po.attributes["approver"] == "Li Wei"
    assert set(po.source_turn_ids) == {"t2", "t4"}
    assert "REQ-99812" not in state.entities  # an id in a noise field is not a business entity
    assert any("130,000.00 CNY" in g for g in state.entities[P.GOALS].attributes.values())


CODING = [
    ("user", "", "The login page redirects forever. I'm on branch: feature/login-fix."),
    (
        "tool",
        "pytest",
        '{"test_name": "test_login_redirect", "outcome": "failed", "error_message": "too many redirects"}',
    ),
    ("assistant", "", "The file_path is src/auth/session.py; the cookie is never set."),
    ("user", "", "Fixed it. Now I'm on branch: main. Ticket TCK-55120 status is resolved."),
]
CODING_FIELDS = ("file_path", "branch", "commit", "error_message", "test_name")


def test_the_schemas_pinned_fields_are_pinned_where_a_turn_states_them() -> None:
    state = P.PinnedState()
    for t in turns(CODING):
        state = P.update(state, t.role, clean(t.body), t.turn_id, t.at, CODING_FIELDS)
    session = state.entities[P.SESSION].attributes
    assert session["branch"] == "main"  # the newer value replaced feature/login-fix
    assert session["test_name"] == "test_login_redirect" and session["error_message"] == "too many redirects"
    assert session["file_path"] == "src/auth/session.py"
    assert state.entities["TCK-55120"].attributes["status"] == "resolved"
    # Without the fields (another agent's schema) none of them is pinned.
    other = P.PinnedState()
    for t in turns(CODING):
        other = P.update(other, t.role, clean(t.body), t.turn_id, t.at)
    assert P.SESSION not in other.entities and "TCK-55120" in other.entities


def test_compaction_and_assembly_pin_the_rules_fields() -> None:
    rules = Rules(budget_tokens=300, recent_turns_verbatim=1, target_ratio=0.3, pinned_fields=CODING_FIELDS)
    result = compact(WorkingMemory(), turns(CODING), rules, COUNTER)
    assert result.verified and result.memory is not None
    assert result.memory.pinned.entities[P.SESSION].attributes["test_name"] == "test_login_redirect"
    plan = plan_context(result.memory, [], 300, COUNTER, fields=CODING_FIELDS)
    assert "branch=main" in plan.pinned_text  # the last turn, still verbatim, updates the pinned state too


def test_summary_is_a_causal_chain_without_noise_or_chatter() -> None:
    lines = summarise([span_turn(t.turn_id, t.role, t.tool_name, t.body, t.speaker) for t in turns()])
    text = "\n".join(lines)
    assert "erp.create_po → pending_approval" in text and "erp.get_po → approved" in text
    assert " → " in lines[0] and lines[0].startswith("user: Raise a PO")
    assert "lovely weather" not in text and "HTTP" not in text and "trace_id" not in text


def test_verifier_finds_missing_and_invented_atoms() -> None:
    span = {A.Atom("id", PO), A.Atom("amount", "125000 CNY")}
    verdict = verify(span, "", [f"{PO} was created for 99,000.00 CNY"])
    assert A.Atom("amount", "125000 CNY") in verdict.missing
    assert A.Atom("amount", "99000 CNY") in verdict.unsupported
    assert verify(span, "", [f"{PO} for 125,000.00 CNY"]).ok


def test_compaction_is_verified_and_keeps_recent_turns_verbatim() -> None:
    rules = Rules(budget_tokens=400, recent_turns_verbatim=2, target_ratio=0.3)
    result = compact(WorkingMemory(), turns(), rules, COUNTER)
    assert result.outcome == "compacted" and result.verified and result.attempts == 1
    memory = result.memory
    assert memory is not None and memory.version == 1
    assert [t.turn_id for t in memory.recent] == ["t6", "t7"]
    assert memory.turns_compacted == 6 and result.turns_replaced == 6
    assert WorkingMemory.from_json(memory.to_json()) == memory


def test_a_rejected_draft_backs_off_to_a_verified_summary() -> None:
    rules = Rules(budget_tokens=400, recent_turns_verbatim=2, target_ratio=0.3)
    # An LLM draft that drops the goal and invents an amount: never accepted as it is.
    draft = [f"{PO} approved for 99,000.00 CNY"]
    result = compact(WorkingMemory(), turns(), rules, COUNTER, draft=draft)
    assert result.verified and result.attempts == 2
    assert result.memory is not None
    assert not any("99,000.00" in line for line in result.memory.episodes)


def test_an_unverifiable_compaction_never_replaces_memory() -> None:
    rules = Rules(budget_tokens=400, recent_turns_verbatim=2, target_ratio=0.3, max_attempts=1)
    result = compact(WorkingMemory(), turns(), rules, COUNTER, draft=["nothing useful"])
    assert result.outcome == "failed" and not result.verified and result.memory is None
    assert result.missing  # the record names what would have been lost


def test_a_turn_larger_than_the_budget_is_compacted_not_dropped() -> None:
    huge = [("tool", "erp.export", f'{{"po_id": "{PO}", "amount": "125,000.00 CNY", "blob": "{"x " * 3000}"}}')]
    result = compact(WorkingMemory(), turns(huge), Rules(budget_tokens=500), COUNTER)
    assert result.verified and result.memory is not None and not result.memory.recent
    assert result.memory.pinned.entities[PO].attributes["amount"] == "125,000.00 CNY"


def test_assembly_orders_parts_and_fits_the_budget() -> None:
    rules = Rules(budget_tokens=400, recent_turns_verbatim=2, target_ratio=0.3)
    memory = compact(WorkingMemory(), turns(), rules, COUNTER).memory
    assert memory is not None
    tail = turns([("user", "", "Also check the invoice.")], start=8)
    plan = plan_context(memory, tail, 300, COUNTER, memory_share=0.5)
    assert plan.memory_budget > 0 and plan.pinned_tokens > 0
    fill(plan, memory, tail, 0, COUNTER)
    assert plan.used <= 300
    assert [t.turn_id for t in plan.recent][-1] == "t8"  # the newest turn is always shown
    assert PO in plan.pinned_text and plan.summary_lines


def test_with_a_question_the_summary_gets_what_the_memories_leave() -> None:
    rules = Rules(budget_tokens=400, recent_turns_verbatim=2, target_ratio=0.3)
    memory = compact(WorkingMemory(), turns(), rules, COUNTER).memory
    assert memory is not None and memory.episodes
    tail = turns([("user", "", "Also check the invoice.")], start=8)
    first = plan_context(memory, tail, 300, COUNTER, memory_share=0.5)
    later = plan_context(memory, tail, 300, COUNTER, memory_share=0.5, lines_first=False)
    assert first.summary_lines and not later.summary_lines
    assert later.recent == first.recent  # the verbatim turns keep their place
    assert later.memory_budget == first.memory_budget + first.summary_tokens
    fill(later, memory, tail, 0, COUNTER)  # no memory retrieved: the summary takes the room
    assert later.summary_lines and later.used <= 300


def test_assembly_never_fails_it_drops_the_lowest_ranked_pins_first() -> None:
    memory = compact(WorkingMemory(), turns(), Rules(budget_tokens=400, target_ratio=0.3), COUNTER).memory
    assert memory is not None and len(memory.pinned.entities) >= 2
    for budget in (20, 40, 80, 300):
        plan = plan_context(memory, [], budget, COUNTER)
        assert plan.used <= budget
        assert len(plan.pins) + plan.pins_dropped == len(memory.pinned.entities)
    tight = plan_context(memory, [], 40, COUNTER)
    assert tight.pins_dropped and "lower-ranked pins" in tight.notice()
    # Goals rank first: the user's constraint is the last thing left out.
    assert next(e.key for e in plan_context(memory, [], 300, COUNTER).pins) == P.GOALS


def test_working_tokens_counts_every_part() -> None:
    ts = turns()
    assert working_tokens(WorkingMemory(), ts, COUNTER) == sum(t.tokens for t in ts)


def test_schema_compaction_rules_are_validated() -> None:
    rules = parse({"agent_id": "a", "compaction": {"hard_ratio": 1.2, "local_only": True}}).compaction
    assert rules.hard_ratio == 1.2 and rules.local_only
    with pytest.raises(SchemaInvalid, match="target_ratio"):
        parse({"agent_id": "a", "compaction": {"target_ratio": 0.9}})
    with pytest.raises(SchemaInvalid, match="hard_ratio"):
        parse({"agent_id": "a", "compaction": {"hard_ratio": 0.5}})


def test_turn_memories_become_working_turns() -> None:
    from acm.domain.models import Layer, Memory
    from acm.domain.scope import Scope, Tier
    from acm.read.session import session_turn

    owner = Scope("c1", "acme", "alice").owner(Tier.USER)

    def turn(text: str) -> SessionTurn:
        return session_turn(Memory("m1", owner, text, Layer.SHORT, "turn", ("t1",), T0, token_count=5))

    tool = turn('tool[erp.get_po]: {"status": "approved"}')
    assert (tool.role, tool.tool_name, tool.body, tool.turn_id) == (
        "tool",
        "erp.get_po",
        '{"status": "approved"}',
        "t1",
    )
    person = turn("Caroline: I went to the support group yesterday.")
    assert (person.role, person.speaker) == ("user", "Caroline")
    assert turn("assistant: Done.").role == "assistant" and turn("system: Be brief.").role == "system"


def test_a_compaction_never_swaps_in_a_context_that_is_not_smaller() -> None:
    # Short, fact-dense turns: the pins and the summary state as much as the turns themselves. Folding and then
    # archiving the summary's own oldest lines (declared: degraded) shrink it; if nothing does, it fails.
    dense = [
        ("user", "", f"PO-2026-{i:04d} is approved by Li Wei for {1000 + i},000.00 CNY, due 2026-11-{10 + i}.")
        for i in range(3)
    ]
    result = compact(WorkingMemory(), turns(dense), Rules(budget_tokens=60, target_ratio=0.1), COUNTER)
    assert result.outcome in ("degraded", "failed")
    if result.outcome == "failed":
        assert result.memory is None and "not smaller than before" in result.message
    else:
        assert result.tokens_after < result.tokens_before and result.memory is not None


@pytest.mark.parametrize("budget", [200, 500, 2000])
def test_a_plan_shows_the_record_memorys_newer_value_within_the_budget(budget: int) -> None:
    session = turns(RAW)
    plan = plan_context(WorkingMemory(), session, budget, COUNTER)
    assert "125,000.00 CNY" in plan.pinned_text
    # A later output (its record past the turn's clip) changed the amount: only the record memory has it.
    record = P.record_values(
        f"tool[erp.get_po]: {PO} {{amount=131,500.00 CNY, status=approved}}", T0 + timedelta(hours=1)
    )
    assert record is not None
    plan.hydrate([record], Rules(), COUNTER)
    pin = next(e for e in plan.pins if e.key == PO)
    assert pin.attributes["amount"] == "131,500.00 CNY" and "125,000.00 CNY" not in plan.pinned_text
    assert plan.pinned_tokens == COUNTER.count(plan.pinned_text) <= int(budget * 0.6)
    fill(plan, WorkingMemory(), session, 0, COUNTER)
    assert plan.used <= budget
