"""Room at small budgets (issue 17, "room at 500"): among the memories a session-context Fetch without a query
shows, questions that state nothing come after statements, the records the latest turns name first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from acm.domain.models import Layer
from acm.domain.retrieved import Ranked, RetrievedMemory
from acm.domain.scope import Tier
from acm.read.session_context import asks, named_first

T0 = datetime(2026, 6, 2, 9, 0, tzinfo=UTC)


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
