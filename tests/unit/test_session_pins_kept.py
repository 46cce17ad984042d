"""Issue 17, assembly speed: what a session-context Fetch keeps between Fetches changes no context.

A session's pins are made once per load (SessionState.pins) and, after a turn, continued from the earlier
load's pins when the new turns name no new id (engine.pins_as_of ``since``); a cut pin's attributes are kept
by content (pinned._truncated). Each test compares with the same thing made from scratch."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from acm.adapters.tokenizer import TiktokenCounter
from acm.domain.compaction import pinned as P
from acm.domain.compaction.engine import Rules, SessionTurn, WorkingMemory, _acted, _span, pins_as_of
from acm.domain.facts import RECORD_KIND
from acm.domain.models import Layer
from acm.domain.records import tool_records
from acm.domain.retrieved import Ranked, Retrieval, RetrievalQuery, RetrievedMemory
from acm.domain.scope import Scope, Tier
from acm.read.kept_sessions import KeptSessions
from acm.read.session import SessionState
from acm.read.session_context import SessionContext

COUNTER = TiktokenCounter()
T0 = datetime(2026, 6, 2, 9, 0, tzinfo=UTC)
SCOPE = Scope("acme", "globex", "u1", "agent", "s1")
BUDGETS = (500, 1000, 2000)


def _turn(i: int, role: str, text: str, tool: str = "") -> SessionTurn:
    speaker = f"tool[{tool}]" if tool else role
    full = f"{speaker}: {text}"
    return SessionTurn(f"t{i}", role, full, COUNTER.count(full), T0 + timedelta(minutes=i), tool, speaker)


def _records(ids: list[str], step: int) -> str:
    """A tool output as ingest renders it: one "KEY {k=v, …}" line a record."""
    rows = [
        {
            "order_ref": i,
            "status": ["open", "held", "shipped"][(step + n) % 3],
            "amount": 100 + 7 * step + n,
            "owner": f"Dr. Ana Lima {n}",
            "lines": [f"SKU-{step}{n}{k}" for k in range(4)],
            "note": "x" * (20 + n),
        }
        for n, i in enumerate(ids)
    ]
    return "\n".join(f"{r.key} {{{r.body()}}}" for r in tool_records(json.dumps(rows)))


def _session(steps: int = 14) -> list[SessionTurn]:
    """A tool-heavy session: the user names orders, the agent calls tools with them, the tools return records
    (some the user or agent never names), a later output changes values, the user names an id an earlier
    output listed (so an earlier record becomes acted on)."""
    turns: list[SessionTurn] = []
    for s in range(steps):
        listed = [f"ORD-{s}{n:02d}" for n in range(3 + s % 4)]
        asked = f"ORD-{s - 1}01" if s and s % 3 == 0 else listed[0]  # every third step: one listed before
        turns.append(_turn(len(turns), "user", f"Please check {asked} and tell me its status."))
        turns.append(_turn(len(turns), "assistant", f'get_order({{"order_id": "{asked}"}})'))
        turns.append(_turn(len(turns), "tool", _records(listed, s), "get_order"))
        turns.append(_turn(len(turns), "assistant", f"{asked} is listed; anything else?"))
    return turns


def test_pins_continued_after_new_turns_are_the_pins_made_from_scratch() -> None:
    turns, fields = _session(), ("status",)
    memory, since, continued, reread = WorkingMemory(), None, 0, 0
    for k in range(1, len(turns) + 1):
        if since is not None:
            newer = turns[since.turns : k]
            if _acted(_span(newer), fields) <= since.acted:
                continued += 1
            else:
                reread += 1
        kept = pins_as_of(memory, turns[:k], fields, since)
        fresh = pins_as_of(memory, turns[:k], fields)
        assert kept == fresh, k
        since = kept
    assert continued > 5 and reread > 5  # both paths were taken


def test_a_state_continues_only_a_load_it_extends() -> None:
    turns = _session(6)
    rules = Rules(pinned_fields=("status",))
    first = SessionState(WorkingMemory(), turns[:10], True, rules, False)
    first.pins()
    # One more turn at the end, naming no new id: continued.
    later = SessionState(WorkingMemory(), turns[:11], True, rules, False)
    later.follows(first)
    assert later._continued() is first._pins
    assert later.pins() == pins_as_of(WorkingMemory(), turns[:11], rules.pinned_fields).state
    # A turn inserted before the end (an older timestamp arriving late), a compaction (another working memory),
    # other pinned fields: read again from scratch.
    for tail, memory, fields in (
        ([*turns[:5], turns[11], *turns[5:10]], WorkingMemory(), ("status",)),
        (turns[:11], WorkingMemory(version=2), ("status",)),
        (turns[:11], WorkingMemory(), ("amount",)),
    ):
        other = SessionState(memory, tail, True, Rules(pinned_fields=fields), False)
        other.follows(first)
        assert other._continued() is None
        assert other.pins() == pins_as_of(memory, tail, fields).state
    # An earlier load whose pins were never made is not kept (no chain of loads).
    unused = SessionState(WorkingMemory(), turns[:10], True, rules, False)
    after = SessionState(WorkingMemory(), turns[:11], True, rules, False)
    after.follows(unused)
    assert after._earlier is None


def test_a_new_turn_naming_an_id_an_earlier_output_listed_pins_its_record() -> None:
    turns = _session(4)
    rules = Rules()
    listed = "ORD-201"  # listed by step 2's output, named by the user only at step 3
    at = next(i for i, t in enumerate(turns) if t.role == "user" and listed in t.text)
    before = SessionState(WorkingMemory(), turns[:at], True, rules, False)
    assert listed not in before.pins().entities
    after = SessionState(WorkingMemory(), turns[: at + 1], True, rules, False)
    after.follows(before)
    assert listed in after.pins().entities
    assert after.pins() == pins_as_of(WorkingMemory(), turns[: at + 1]).state


class _Sessions:
    """The session as a read side keeps it: each load follows the one before it (kept=True), or is fresh."""

    def __init__(self, kept: bool) -> None:
        self.kept = kept
        self.state: SessionState | None = None

    def load(self, turns: list[SessionTurn]) -> None:
        state = SessionState(WorkingMemory(), turns, True, Rules(pinned_fields=("status",)), False)
        if self.kept and self.state is not None:
            state.follows(self.state)
        self.state = state

    async def __call__(self, scope: Scope) -> tuple[SessionState, None]:
        assert self.state is not None
        return (self.state if self.kept else replace_state(self.state)), None


def replace_state(state: SessionState) -> SessionState:
    return SessionState(state.memory, list(state.tail), state.stored, state.rules, state.local_only)


class _Retriever:
    """The record memories of every id the query names, as ingest writes them (the latest output's values)."""

    def __init__(self, turns: list[SessionTurn]) -> None:
        self.memories: dict[str, RetrievedMemory] = {}
        for t in turns:
            if t.role != "tool":
                continue
            for line in t.body.splitlines():
                key = line.split(" ", 1)[0]
                self.memories[key] = RetrievedMemory(
                    f"m-{key}",
                    Tier.USER,
                    Layer.MID,
                    RECORD_KIND,
                    f"tool[get_order]: {line}",
                    (t.turn_id,),
                    COUNTER.count(line),
                    t.at,
                    t.at,
                )

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        items = [Ranked(m, 1.0) for k, m in self.memories.items() if k in query.text]
        return Retrieval(items, sum(r.memory.tokens for r in items), 0)

    async def keyword_ids(self, query: RetrievalQuery, limit: int) -> list[str]:
        return []


class _NoMemo(dict[tuple[object, ...], dict[str, str]]):
    def get(self, key: object, default: object = None) -> Any:
        return None


async def test_contexts_with_kept_pins_and_cuts_are_the_contexts_made_from_scratch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At budgets 500 / 1,000 / 2,000, before every agent call of the session (three Fetches a step, as the
    traces benchmark does), the context with what is kept equals the one made with nothing kept."""
    turns = _session()
    retriever = _Retriever(turns)
    kept, fresh = _Sessions(kept=True), _Sessions(kept=False)
    with_kept = SessionContext(cast(Any, retriever), COUNTER, cast(KeptSessions, kept))
    from_scratch = SessionContext(cast(Any, retriever), COUNTER, cast(KeptSessions, fresh))
    compared = 0
    for k, turn in enumerate(turns):
        if turn.role != "assistant" or not k:
            continue
        kept.load(turns[:k])
        fresh.load(turns[:k])
        for budget in BUDGETS:
            request = RetrievalQuery(SCOPE, "", budget, "o200k_base")
            ours = await with_kept(request)
            monkeypatch.setattr(P, "_CUTS", _NoMemo())
            theirs = await from_scratch(request)
            monkeypatch.undo()
            assert ours is not None and theirs is not None
            assert ours.context == theirs.context, (k, budget)
            assert ours.context_tokens == theirs.context_tokens <= budget
            compared += 1
    assert compared == 3 * sum(1 for k, t in enumerate(turns) if t.role == "assistant" and k)
