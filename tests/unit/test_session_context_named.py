"""A session-context Fetch without a query (issue 17, third step): the records the latest user and agent turns
name come first among the memories, only with what the context does not show yet, cut to the room left when
they do not fit whole; what the pins or recent turns already show is not shown again."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from acm.adapters.tokenizer import TiktokenCounter
from acm.domain.compaction.engine import SessionTurn
from acm.domain.compaction.pinned import PinnedEntity
from acm.domain.facts import RECORD_KIND
from acm.domain.models import Layer
from acm.domain.records import tool_records
from acm.domain.retrieved import Ranked, Retrieval, RetrievalQuery, RetrievedMemory
from acm.domain.scope import Scope, Tier
from acm.read.kept_sessions import KeptSessions
from acm.read.session_context import (
    SessionContext,
    compact_record,
    cut_record,
    named_first,
    named_ids,
    packed,
    shown_elsewhere,
    shown_line,
)
from tests.unit.test_session_context_records import _Sessions

COUNTER = TiktokenCounter()
T0 = datetime(2026, 6, 2, 9, 0, tzinfo=UTC)
SCOPE = Scope("acme", "globex", "u1", "agent", "s1")


def _turn(i: int, role: str, text: str, tool: str = "") -> SessionTurn:
    speaker = f"tool[{tool}]" if tool else role
    full = f"{speaker}: {text}"
    return SessionTurn(f"t{i}", role, full, COUNTER.count(full), T0 + timedelta(minutes=i), tool, speaker)


def _record(key_field: str, fields: dict[str, Any], tool: str = "inventory.get", n: int = 0) -> RetrievedMemory:
    (record,) = tool_records(json.dumps({key_field: fields.pop("_key"), **fields}))
    text = f"tool[{tool}]: {record.render()}"
    at = T0 + timedelta(minutes=n)
    return RetrievedMemory(f"r{n}", Tier.USER, Layer.MID, RECORD_KIND, text, (f"x{n}",), 0, at, at, tool_name=tool)


def _fact(text: str, n: int) -> RetrievedMemory:
    at = T0 + timedelta(minutes=n)
    return RetrievedMemory(f"f{n}", Tier.USER, Layer.MID, "fact", text, (f"y{n}",), 0, at, at)


def _bin(key: str, n: int, **extra: Any) -> RetrievedMemory:
    fields = {"_key": key, "site": "BER-1", "aisle": f"A{n}", "qty": 40 + n, "owner": "Dr. Ana Souza", **extra}
    return _record("bin_id", fields, n=n)


def test_the_ids_of_the_latest_user_and_agent_turns_newest_first() -> None:
    turns = [
        _turn(0, "user", "Move stock from BIN-0007 please."),
        _turn(1, "tool", '{"bin_id": "BIN-0099", "qty": 3}', "inventory.get"),
        _turn(2, "assistant", 'inventory.get({"bin_id": "BIN-0042"})'),
    ]
    assert named_ids(turns) == ["BIN-0042", "BIN-0007"]  # a tool's output names nothing the agent chose


def test_named_records_come_first_in_the_order_they_were_named() -> None:
    other, first, second = _bin("BIN-0001", 1), _bin("BIN-0002", 2), _bin("BIN-0003", 3)
    prose = _fact("user: BIN-0003 is where the returns go.", 4)
    ranked = [Ranked(m, 1.0) for m in (other, prose, second, first)]
    order = [r.memory.memory_id for r in named_first(ranked, ["BIN-0002", "bin-0003"])]
    assert order == [first.memory_id, second.memory_id, other.memory_id, prose.memory_id]


def test_what_a_whole_pin_or_the_recent_turns_show_is_not_shown_again() -> None:
    memory = _bin("BIN-0002", 2)
    pin = PinnedEntity("BIN-0002", "bin", {"site": "BER-1", "aisle": "A2", "qty": "42", "owner": "Dr. Ana Souza"})
    assert shown_elsewhere(memory, [pin], "")
    stale_pin = PinnedEntity("BIN-0002", "bin", {"site": "BER-1", "aisle": "A2", "qty": "41"})
    assert not shown_elsewhere(memory, [stale_pin], "")
    call = _fact('assistant: inventory.get({"bin_id": "BIN-0002", "site": "BER-1"})', 5)
    assert shown_elsewhere(call, [], "pinned: bin-0002 at ber-1")
    assert not shown_elsewhere(call, [], "pinned: bin-0002")  # the site is said nowhere else
    prose = _fact("assistant: BIN-0002 holds the returns.", 6)
    assert not shown_elsewhere(prose, [], "bin-0002 holds the returns.")  # prose is never judged redundant


def test_a_record_shows_only_what_the_pins_do_not() -> None:
    memory = _bin("BIN-0002", 2)
    pin = PinnedEntity("BIN-0002", "bin", {"site": "BER-1", "qty": "41"})
    shown = compact_record(memory, [pin]).text
    # The key is not repeated as a field, the pin's same site is left out, its older qty is not.
    assert shown == "tool[inventory.get]: BIN-0002 {aisle=A2, qty=42, owner=Dr. Ana Souza}"


def test_a_named_record_too_long_for_the_room_is_cut_to_it_with_what_the_turns_ask_for_first() -> None:
    memory = _bin("BIN-0002", 2, notes="fragile; " * 30, supplier_ref="SUP-7781")
    whole = COUNTER.count(shown_line(memory))
    cut = cut_record(memory, 40, COUNTER.count, frozenset({"souza"}))
    assert cut is not None and whole > 40
    line = shown_line(cut)
    assert COUNTER.count(line) <= 40 and line.rstrip().endswith("…}")
    assert "owner=Dr. Ana Souza" in line and "SUP-7781" in line and "fragile" not in line
    assert cut_record(memory, 10, COUNTER.count, frozenset()) is None  # too little room says nothing


def test_packing_keeps_what_fits_whole_then_cuts_the_first_named_record_that_did_not() -> None:
    big = _bin("BIN-0002", 2, notes="fragile; " * 40)
    small = _fact("user: the dock closes at 6pm.", 3)
    ranked = [Ranked(big, 1.0), Ranked(small, 0.5)]
    budget = COUNTER.count(shown_line(small)) + 40
    kept = packed(ranked, budget, COUNTER.count, ["BIN-0002"])
    assert [r.memory.memory_id for r in kept] == [big.memory_id, small.memory_id]  # the cut one at its rank
    assert sum(COUNTER.count(shown_line(r.memory)) for r in kept) <= budget
    assert "…" in kept[0].memory.text and kept[0].memory.tokens == COUNTER.count(kept[0].memory.text)
    # Not named: the record that does not fit is left out, as before.
    assert [r.memory.memory_id for r in packed(ranked, budget, COUNTER.count)] == [small.memory_id]


class _Retriever:
    """Retrieval's order, whatever the query: a similar bin first, then the one the agent just named."""

    def __init__(self, memories: list[RetrievedMemory]) -> None:
        self.memories = memories
        self.asked: list[int] = []

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        self.asked.append(query.budget_tokens)
        items = [Ranked(m, 1.0 / (i + 1)) for i, m in enumerate(self.memories)]
        return Retrieval(items, 0, 0)


async def test_a_fetch_without_a_query_shows_the_record_the_agent_just_named_within_the_budget() -> None:
    listing = json.dumps([{"bin_id": f"BIN-00{i:02d}", "site": "BER-1", "qty": i} for i in range(10, 22)])
    turns = [
        _turn(0, "user", "Which bins at BER-1 hold the returns?"),
        _turn(1, "assistant", 'inventory.list({"site": "BER-1"})'),
        _turn(2, "tool", listing, "inventory.list"),
        _turn(3, "user", "thanks " * 60),
        _turn(4, "assistant", 'inventory.get({"bin_id": "BIN-0017"})'),
    ]
    similar = _bin("BIN-0016", 6, notes="overflow " * 20)
    named = _bin("BIN-0017", 7, notes="returns " * 20, supplier_ref="SUP-7781")
    retriever = _Retriever([similar, named])
    context = SessionContext(cast(Any, retriever), COUNTER, cast(KeptSessions, _Sessions(turns)))
    budget = 250  # room for one of the two records
    bundle = await context(RetrievalQuery(SCOPE, "", budget))
    assert bundle is not None and bundle.context_tokens <= budget
    assert COUNTER.count(bundle.context) <= budget
    assert "BIN-0017 {" in bundle.context and "SUP-7781" in bundle.context
    assert "BIN-0016 {" not in bundle.context  # the similar one came first in retrieval's order, not here
    assert retriever.asked and all(b > 0 for b in retriever.asked)
