"""A session-context Fetch shows its pins with the current values of the records its retrieval returns
(issue 17): the record memory is ingest's merge of every tool output for the id, the pin read its values
from turns; a user's later statement still wins."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from acm.adapters.tokenizer import TiktokenCounter
from acm.domain.compaction.engine import Rules, SessionTurn, WorkingMemory
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
KEY = "REQ-58213"


def _turn(i: int, role: str, text: str, tool: str = "") -> SessionTurn:
    speaker = f"tool[{tool}]" if tool else role
    full = f"{speaker}: {text}"
    return SessionTurn(f"t{i}", role, full, COUNTER.count(full), T0 + timedelta(minutes=i), tool, speaker)


class _Sessions:
    def __init__(self, turns: list[SessionTurn]) -> None:
        self.state = SessionState(WorkingMemory(), turns, True, Rules(), False)

    async def __call__(self, scope: Scope) -> tuple[SessionState, None]:
        return self.state, None


class _Retriever:
    """Returns the record memory (as ingest writes it) for any query naming the record's id."""

    def __init__(self, fields: dict[str, Any], minute: int) -> None:
        (record,) = tool_records(json.dumps({"request_id_ref": KEY, **fields}))
        text = f"tool[requests.get]: {KEY} {{{record.body()}}}"
        at = T0 + timedelta(minutes=minute)
        self.memory = RetrievedMemory("m1", Tier.USER, Layer.MID, RECORD_KIND, text, ("tX",), 30, at, at)

    async def retrieve(self, query: RetrievalQuery) -> Retrieval:
        items = [Ranked(self.memory, 1.0)] if KEY in query.text else []
        return Retrieval(items, sum(r.memory.tokens for r in items), 0)


async def _pinned_line(turns: list[SessionTurn], retriever: _Retriever, budget: int) -> tuple[str, int]:
    context = SessionContext(cast(Any, retriever), COUNTER, cast(KeptSessions, _Sessions(turns)))
    bundle = await context(RetrievalQuery(SCOPE, "", budget))
    assert bundle is not None and bundle.context_tokens <= budget
    return next(line for line in bundle.context.splitlines() if line.startswith(f"- {KEY} (")), bundle.context_tokens


@pytest.mark.parametrize("budget", [300, 1000])
async def test_a_pin_shows_the_newer_value_its_record_memory_holds(budget: int) -> None:
    turns = [
        _turn(0, "assistant", f'requests.get({{"request_ref": "{KEY}"}})'),
        _turn(1, "tool", json.dumps({"request_id_ref": KEY, "quantity": 40, "state": "draft"}), "requests.get"),
        _turn(2, "user", "Thanks, what else is open?"),
    ]
    line, _ = await _pinned_line(turns, _Retriever({"quantity": 55, "state": "submitted"}, 30), budget)
    assert "quantity=55" in line and "state=submitted" in line and "quantity=40" not in line


async def test_an_older_record_does_not_override_what_the_user_said_later() -> None:
    turns = [
        _turn(0, "tool", json.dumps({"request_id_ref": KEY, "quantity": 40}), "requests.get"),
        _turn(5, "user", f"{KEY}: quantity=48, please."),
    ]
    line, _ = await _pinned_line(turns, _Retriever({"quantity": 44}, 3), 1000)
    assert "quantity=48" in line and "quantity=44" not in line
