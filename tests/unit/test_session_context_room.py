"""Room at small budgets (issue 17, "room at 500"): the agent's latest call ranks with what it acted on, so its
inputs (what its next call most often repeats) are pinned even beside a large account record; and among the
memories a session-context Fetch shows, questions that state nothing come after statements."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from acm.adapters.tokenizer import TiktokenCounter
from acm.domain.compaction import pinned as P
from acm.domain.compaction.noise import clean
from acm.domain.models import Layer
from acm.domain.retrieved import Ranked, RetrievedMemory
from acm.domain.scope import Tier
from acm.read.session_context import asks, named_first

COUNTER = TiktokenCounter()
T0 = datetime(2026, 6, 2, 9, 0, tzinfo=UTC)


def o200k(text: str) -> int:
    return COUNTER.count(text, "o200k_base")


def _session(k: int) -> P.PinnedState:
    """A user names their account; the tool returns it with many fields; the agent looks up k bins by id and
    then lists stock for a site and a day."""
    account = {
        "member_id": "mbr_5120",
        "name": "Dr. Ana Souza",
        "addresses": [{"line": f"{n} Harbour Road", "city": "Porto", "zip": f"40{n:02d}"} for n in range(4)],
        "cards": {f"card_{n}": {"brand": "visa", "last_four": f"{1000 + n}"} for n in range(4)},
        "tier": "gold",
    }
    turns = [
        ("user", "Hi, I am mbr_5120 and I need stock moved to my site."),
        ("assistant", f"members.get({json.dumps({'member_id': 'mbr_5120'})})"),
        ("tool", json.dumps(account)),
    ]
    for n in range(k):
        turns += [
            ("assistant", f"bins.get({json.dumps({'bin_id': f'BIN-{n:04d}'})})"),
            ("tool", json.dumps({"bin_id": f"BIN-{n:04d}", "site": "BER-1", "aisle": f"A{n}", "qty": 40 + n})),
        ]
    turns += [("assistant", f"stock.list({json.dumps({'site': 'LIS-4', 'day': '2026-06-19', 'kind': 'pallet'})})")]
    state = P.PinnedState()
    for i, (role, text) in enumerate(turns):
        state = P.update(state, role, clean(text), f"t{i}", T0 + timedelta(minutes=i))
    return state


@pytest.mark.parametrize("k", [1, 3, 6])
def test_the_latest_call_ranks_with_what_was_acted_on(k: int) -> None:
    state = _session(k)
    ranked = [e.key for e in state.ranked()]
    assert ranked.index("stock.list()") < min(ranked.index(f"BIN-{n:04d}") for n in range(k))
    assert ranked.index("bins.get()") > ranked.index(f"BIN-{k - 1:04d}")  # older calls: as before
    # At a 500-token context's cap the call's inputs are shown beside the account.
    shown = state.within(o200k, 300, 40)
    text = shown.text
    assert "day=2026-06-19" in text and "site=LIS-4" in text and "mbr_5120" in text
    assert shown.tokens <= 300


def test_without_the_rule_the_latest_call_waits_behind_the_records(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(P, "LATEST_CALLS_RANKED", 0)
    ranked = [e.key for e in _session(3).ranked()]
    assert ranked.index("stock.list()") > ranked.index("BIN-0002")


def _memory(text: str, n: int, kind: str = "fact") -> RetrievedMemory:
    at = T0 + timedelta(minutes=n)
    return RetrievedMemory(f"m{n}", Tier.USER, Layer.MID, kind, text, (f"t{n}",), 0, at, at)


def test_questions_come_after_statements_named_records_first() -> None:
    question = _memory("user: Can you pull up BIN-0003 for me?", 1)
    statement = _memory("assistant: BIN-0003 holds 43 pallets at aisle A3.", 2)
    chinese = _memory("user: 你能查一下BIN-0004吗？", 3)
    record = _memory("tool[bins.get]: BIN-0004 {site=BER-1, aisle=A4, qty=44}", 4, kind="tool_record")
    ranked = [Ranked(m, 1.0) for m in (question, chinese, statement, record)]
    order = [r.memory.memory_id for r in named_first(ranked, ["BIN-0004"])]
    assert order == [record.memory_id, statement.memory_id, question.memory_id, chinese.memory_id]
    assert asks(question) and asks(chinese) and not asks(statement) and not asks(record)
    assert [r.memory.memory_id for r in named_first(ranked, [])][:1] == [statement.memory_id]
