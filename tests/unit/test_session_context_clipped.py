"""A session-context Fetch without a query (issue 17, retention misses): a recent tool turn that the session
keeps cut ("… [N more records in memories]", acm_ingest.pipeline.shown_turn) does not show the records after the
cut, so their memories are not left out as already shown by the recent turns (the support session's latest
ticket values were in no part of the context: its pin cut by the pinned cap, its record cut from the turn)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any, cast

from acm.domain.facts import RECORD_KIND
from acm.domain.models import Layer
from acm.domain.records import tool_records
from acm.domain.retrieved import Ranked, Retrieval, RetrievalQuery, RetrievedMemory
from acm.domain.scope import Tier
from acm.read.kept_sessions import KeptSessions
from acm.read.session_context import SessionContext, shown_whole
from tests.unit.test_session_context_named import COUNTER, SCOPE, T0, _turn
from tests.unit.test_session_context_records import _Sessions


def _line(key: str, n: int) -> str:
    (record,) = tool_records(json.dumps({"case_id": key, "queue": "returns", "owner": f"Dr. Ana Souza {n}"}))
    return record.render()


class _Retriever:
    def __init__(self, memories: list[RetrievedMemory]) -> None:
        self.memories = memories

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        return Retrieval([Ranked(m, 1.0 / (i + 1)) for i, m in enumerate(self.memories)], 0, 0)


def _memory(turn_id: str, key: str, n: int) -> RetrievedMemory:
    at = T0 + timedelta(minutes=2)
    text = f"tool[cases.list]: {_line(key, n)}"
    return RetrievedMemory(f"m{n}", Tier.USER, Layer.MID, RECORD_KIND, text, (turn_id,), 0, at, at)


def test_a_turn_is_shown_whole_unless_the_session_cut_it() -> None:
    assert shown_whole(_turn(0, "tool", _line("CASE-1", 1), "cases.list"))
    assert not shown_whole(_turn(0, "tool", f"{_line('CASE-1', 1)}\n… [3 more records in memories]", "cases.list"))
    assert not shown_whole(_turn(0, "user", "the long question …\n… [the rest in memories]"))


async def test_records_cut_from_a_recent_tool_turn_are_shown_as_memories() -> None:
    kept = "\n".join(_line(f"CASE-{i}", i) for i in range(1, 3))
    turns = [
        _turn(0, "user", "Which cases are in the returns queue?"),
        _turn(1, "assistant", 'cases.list({"queue": "returns"})'),
        _turn(2, "tool", f"{kept}\n… [2 more records in memories]", "cases.list"),
    ]
    shown, cut = _memory("t2", "CASE-1", 1), _memory("t2", "CASE-4", 4)
    context = SessionContext(cast(Any, _Retriever([shown, cut])), COUNTER, cast(KeptSessions, _Sessions(turns)))
    bundle = await context(RetrievalQuery(SCOPE, "", 1000))
    assert bundle is not None and bundle.context_tokens <= 1000
    assert "CASE-4" in bundle.context and "Dr. Ana Souza 4" in bundle.context
    assert bundle.context.count("Dr. Ana Souza 1") == 1  # what the recent turn shows is not shown twice
